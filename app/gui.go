package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"attractorlab/assets"
	"attractorlab/sim"
	"attractorlab/sim/lesson"
	"attractorlab/sim/mnist"
	"attractorlab/ui"
)

// guiOptions are the window's flags.
type guiOptions struct {
	files  sim.WeightFiles
	lesson string // a shipped lesson's name or a lesson file ("" none)
	link   string // a link to open (sim.ParseLink; "" none)
	// dataset is the data set the window opens on ("" the one the
	// session or link names, MNIST for the first window).
	dataset string
}

// parseGUIFlags reads the window's flags. --lesson and --link both say
// what the window opens on: one of them at most. The window takes no
// arguments (a link goes after --link).
func parseGUIFlags(args []string) (guiOptions, error) {
	fs := newFlags("gui", "[gui] [--lesson NAME|FILE | --link URL] [--weights-p2 FILE] …")
	// A weights flag for every model the registry gives one.
	given := map[string]*string{}
	for _, sp := range sim.Registry {
		if sp.WeightsFlag != "" {
			given[sp.Name] = fs.String(sp.WeightsFlag, "", "weights for "+sp.Name+" ("+sp.Family+"; default: the embedded ones; a block's or ViT's serve both tasks)")
		}
	}
	weights := fs.String("weights", "", "alias of --weights-p2")
	lessonArg := fs.String("lesson", "", "start a lesson: a shipped lesson's name (attractorlab lesson list) or a lesson file")
	link := fs.String("link", "", "open the scenario or the shipped lesson a link carries (File → Copy link makes one); a bad link is reported in the window")
	dataset := fs.String("dataset", "", "open on this data set: "+strings.Join(mnist.Datasets, " or ")+" (fashion-mnist: after attractorlab data --dataset fashion-mnist; default: the one the last session used)")
	if err := parseFlags(fs, args); err != nil {
		return guiOptions{}, err
	}
	if fs.NArg() > 0 {
		return guiOptions{}, fmt.Errorf("gui takes no arguments (got %q): a link goes after --link", fs.Arg(0))
	}
	if *lessonArg != "" && *link != "" {
		return guiOptions{}, errors.New("--lesson and --link both say what the window opens on: give one")
	}
	files := sim.WeightFiles{}
	for name, f := range given {
		if *f != "" {
			files[name] = *f
		}
	}
	if *weights != "" && files["bsa-p2"] == "" {
		files["bsa-p2"] = *weights
	}
	if *dataset != "" && !slices.Contains(mnist.Datasets, *dataset) {
		if f, ok := strings.CutPrefix(*dataset, mnist.FolderPrefix); !ok || sim.CheckFolderName(f) != nil {
			return guiOptions{}, unknownDataset(*dataset)
		}
	}
	return guiOptions{files: files, lesson: *lessonArg, link: *link, dataset: *dataset}, nil
}

func runGUI(ctx context.Context, args []string) error {
	opts, err := parseGUIFlags(args)
	if err != nil {
		return err
	}
	start := time.Now()
	// The start's parts, printed with "window ready" (the page's test
	// prints them). In the page each is named on the loading screen as it
	// begins (pagePhase), which costs a frame's pause.
	var parts []string
	var paused time.Duration
	lap := func(what, doing string) func() {
		paused += pagePhase(doing)
		t0 := time.Now()
		return func() { parts = append(parts, fmt.Sprintf("%s %.2f", what, time.Since(t0).Seconds())) }
	}
	done := lap("digits", "Reading the sample digits…")
	data, err := mnist.LoadCached()
	if err != nil {
		return err
	}
	done()
	files := opts.files
	done = lap("weights", "Reading the models' weights…")
	cat := sim.NewCatalogue(data.Train, files)
	problems, err := cat.LoadAll()
	if err != nil {
		return err
	}
	done()
	if data.Warning != "" {
		problems = append(problems, data.Warning)
	}
	var les *lesson.Lesson
	if opts.lesson != "" {
		// A bad lesson stops here, before any window opens.
		if les, err = lesson.Load(opts.lesson, lessonLimitsWith(data, cat, files)); err != nil {
			return fmt.Errorf("--lesson: %w", err)
		}
	}
	a := app.NewWithID("org.attractorlab.app")
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.Icon))
	w := a.NewWindow("Attractor Lab")
	// Fyne's driver turns SIGINT/SIGTERM into Quit only once ShowAndRun
	// has started listening: a signal that came before (stopOnSignal took
	// it, and ended ctx) left the window open for good. The window quits
	// when ctx ends, whenever that is.
	//
	// Fyne's driver quits on the same signal by itself, so the two can
	// race: a Quit asked of a loop that has already stopped (GLFW
	// terminated) panicked with "The GLFW library is not initialized"
	// (seen with a slow model, 2 runs in 5). Quit is asked only of a
	// running loop; a signal before the loop ran quits it as it starts.
	var running, stopped atomic.Bool
	quitIfRunning := func() {
		if running.Load() && !stopped.Load() {
			stopped.Store(true)
			a.Quit()
		}
	}
	a.Lifecycle().SetOnStarted(func() {
		running.Store(true)
		if ctx.Err() != nil {
			quitIfRunning()
			return
		}
		// A size that suits the screen, known only now (issue 31: on a
		// 1920×1080 screen the window opened at 1280×800).
		if area, ok := workArea(w); ok {
			if sz := openingSize(area); sz != w.Canvas().Size() {
				w.Resize(sz)
				w.CenterOnScreen()
			}
		}
	})
	outer := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The first window opens on the phenomenon (the paper demo at t*); later
	// ones where the last session left off.
	settings, demo, savedT := sim.PaperDemo(), true, 0
	if st, t, ok, problem := savedSession(a.Preferences().String("last_scenario"), cat); ok {
		settings, demo, savedT = st, false, t
	} else if problem != "" {
		problems = append(problems, problem)
	}
	if opts.dataset != "" && mnist.DatasetOrMNIST(settings.Dataset) != opts.dataset {
		// Another data set than the session's: its first test picture.
		settings.Dataset, settings.Split, settings.Index, settings.Own = opts.dataset, sim.TestSplit, 0, nil
		settings.Toggled, settings.Pushes, savedT = nil, nil, 0
		if opts.dataset == mnist.MNISTName {
			settings.Dataset = ""
		}
	}
	// In the page the engine records the horizon once the first frame is
	// painted (pageReady lets it go): on the page's one thread it would
	// delay that frame.
	href, base, inPage := pageAddress()
	var hold chan struct{}
	if inPage {
		hold = make(chan struct{})
	}
	done = lap("stored digits", "Preparing the stored digits…")
	mems := sim.NewMemories(data.Train)
	done()
	deps := ui.Deps{Hold: hold, Data: data, Memories: mems, Catalogue: cat, Version: versionText(),
		WorkArea: func() (fyne.Size, bool) { return workArea(w) },
		Sources:  openSources(data, files)}
	pageWorkers(&deps)
	done = lap("window", "Building the window…")
	m := ui.NewMain(ctx, a, w, deps, settings)
	done()
	m.OnLesson = func(s string) { fmt.Println(s) }
	// The window stops drawing first (Halt: from here on, before Fyne's
	// loop stops), then the loop is asked to quit.
	stopQuit := context.AfterFunc(outer, func() { m.Halt(); fyne.Do(quitIfRunning) })
	defer stopQuit()
	w.SetContent(m.Content())
	w.Resize(fyne.NewSize(1280, 800))
	w.SetOnClosed(func() {
		m.SavePreferences()
		m.Halt()
		cancel()
	})
	// Quit (the menu, Ctrl+Q) and SIGINT/SIGTERM (which Fyne's driver
	// turns into Quit) stop the app without closing the window: the
	// session is saved then too, before Fyne writes the preferences.
	var saved atomic.Bool
	a.Lifecycle().SetOnStopped(func() {
		stopped.Store(true)
		m.Halt()
		m.SavePreferences()
		saved.Store(true)
		cancel()
	})
	// What the window opens on: the warnings, a lesson or the demo at t*,
	// the link.
	opening := func() {
		for _, p := range problems {
			m.Warn(p)
		}
		switch {
		case les != nil:
			m.StartLesson(les)
		case demo:
			m.Engine.ShowBest()
		case savedT > 0:
			// The step shown when the session was saved (a reload of
			// the page, the window opened again).
			m.Engine.Seek(savedT)
		}
		if opts.link != "" {
			// A bad link is reported over the window it would have replaced.
			m.OpenLink(opts.link)
		}
	}
	if inPage {
		// The web build: links are made to this page, and the page's own
		// address opens the scenario or lesson it carries. Fyne's loop
		// runs on a goroutine of its own there: the window is filled in
		// on it once it runs.
		if err := m.SetLinkBase(base); err != nil {
			problems = append(problems, "this page's address cannot start links ("+err.Error()+"): File → Link address… sets one")
		}
		if opts.link == "" && sim.IsLink(href) {
			opts.link = href
		}
		go pageReady(ctx, m, opening, hold)
	} else {
		opening()
	}
	if paused > 0 {
		// Other goroutines run in the pauses (in the page, the stored
		// digits' search is prepared in one): not all of it is waiting.
		parts = append(parts, fmt.Sprintf("pauses to show them %.2f", paused.Seconds()))
	}
	fmt.Printf("window ready %.2fs after start (%s s)\n", time.Since(start).Seconds(), strings.Join(parts, ", "))
	// Fyne's loop paints the whole window first, which takes the page
	// seconds before its first frame.
	pagePhase("Drawing the window…")
	if os.Getenv("ATTRACTORLAB_BENCH") == "window" {
		benchWindow(a, m, start)
	}
	w.ShowAndRun()
	// Fyne 2.7.3 can drop the stopped hook: it is queued to run on the
	// loop just as the loop drains its queue, and the drain acknowledges
	// a queued function without running it (a SIGTERM in CI, 1 run in
	// about 10, ended the window without saving the session). The loop
	// has ended here, so the session is saved on this goroutine, and the
	// preference's change writes the file at once.
	if !saved.Load() {
		m.Halt()
		m.SavePreferences()
	}
	return nil
}

// benchWindow times the window for `make bench-commands`
// (ATTRACTORLAB_BENCH=window): the first snapshot drawn after start; a
// second later (as a person would, once the window has settled), View →
// State space… until its plane and paths are drawn; then playback from
// t = 0 at 10, 20 and 30 steps/s for 2.5 s each, the steps and the frames
// drawn per second. It prints each and quits.
func benchWindow(a fyne.App, m *ui.Main, start time.Time) {
	first := true
	frames := 0
	m.OnApplied = func() {
		frames++
		if !first {
			return
		}
		first = false
		fmt.Printf("bench: first frame %.3f s after start\n", time.Since(start).Seconds())
		time.AfterFunc(time.Second, func() {
			fyne.Do(func() {
				asked := time.Now()
				m.ShowStateSpace(func() {
					fmt.Printf("bench: state space drawn %.3f s after asked\n", time.Since(asked).Seconds())
					go benchPlayback(a, m, &frames)
				})
			})
		})
	}
}

// benchPlayback plays the run from t = 0 at each speed and says how many
// steps and frames a second the window showed.
func benchPlayback(a fyne.App, m *ui.Main, frames *int) {
	for _, speed := range []float64{10, 20, 30} {
		m.Engine.Reset()
		m.Engine.SetSpeed(speed)
		time.Sleep(300 * time.Millisecond)
		var t0, n0 int
		fyne.DoAndWait(func() { t0, n0 = m.Shown().T, *frames })
		began := time.Now()
		m.Engine.Play()
		time.Sleep(2500 * time.Millisecond)
		var t1, n1 int
		fyne.DoAndWait(func() { t1, n1 = m.Shown().T, *frames })
		el := time.Since(began).Seconds()
		m.Engine.Reset()
		fmt.Printf("bench: playback at %g steps/s: %.1f steps/s shown, %.1f frames/s drawn\n", speed, float64(t1-t0)/el, float64(n1-n0)/el)
	}
	fyne.Do(a.Quit)
}

// savedSession reads the session the window saved (its preference
// "last_scenario") and the step it showed, checked as a scenario file is: a session saved by
// another version, or edited, is set aside with a warning (problem).
func savedSession(last string, cat *sim.Catalogue) (st sim.Settings, t int, ok bool, problem string) {
	if last == "" {
		return st, 0, false, ""
	}
	st, t, err := cat.ReadScenario(strings.NewReader(last), "saved session")
	if err != nil {
		return st, 0, false, err.Error() + ": opened the paper demo instead"
	}
	return st, t, true, ""
}

// openSources opens the data sets other than MNIST for the window (the
// data set picker, a session, link or scenario that names one), each
// once: its pictures from the app's cache, its nearest-memory search and
// the models, whose Hopfield networks store its training pictures and
// whose learned weights are the window's own (trained on MNIST unless
// the files say otherwise).
func openSources(home *mnist.Data, files sim.WeightFiles) sim.Sources {
	var mu sync.Mutex
	opened := map[string]*sim.Source{}
	_, _, inPage := pageAddress()
	return func(name string) (*sim.Source, error) {
		mu.Lock()
		defer mu.Unlock()
		if src, ok := opened[name]; ok {
			if f, isFolder := strings.CutPrefix(name, mnist.FolderPrefix); !isFolder || folderUnchanged(f, src) {
				return src, nil
			}
		}
		if inPage && strings.HasPrefix(name, mnist.FolderPrefix) {
			return nil, fmt.Errorf("the page has no folders of pictures: %s is in the desktop app (attractorlab --dataset %s)", mnist.DatasetLabel(name), name)
		}
		var data *mnist.Data
		var err error
		switch name {
		case home.Name():
			data = home
		case mnist.FashionName:
			if data, err = mnist.LoadFashionData(""); err != nil {
				return nil, fmt.Errorf("Fashion-MNIST cannot open here: %w", err)
			}
		default:
			f, ok := strings.CutPrefix(name, mnist.FolderPrefix)
			if !ok {
				return nil, unknownDataset(name)
			}
			if data, err = sim.LoadFolderData(f); err != nil {
				return nil, fmt.Errorf("%s cannot open here: %w", mnist.DatasetLabel(name), err)
			}
		}
		cat := sim.NewCatalogue(data.Train, files)
		if _, err := cat.LoadAll(); err != nil {
			return nil, fmt.Errorf("%s: %w", mnist.DatasetLabel(name), err)
		}
		src := &sim.Source{Data: data, Memories: sim.NewMemories(data.Train), Catalogue: cat}
		opened[name] = src
		return src, nil
	}
}

// folderUnchanged reports whether folder data set name is still what src
// was opened from (its training pictures' md5): converted again (File →
// Open a folder, data --dataset), it is opened anew.
func folderUnchanged(name string, src *sim.Source) bool {
	md5, err := sim.FolderTrainMD5(name)
	return err == nil && md5 == src.Data.TrainMD5
}
