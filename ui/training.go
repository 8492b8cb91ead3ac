package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"gonum.org/v1/plot"

	"attractorlab/sim"
	"attractorlab/sim/figures"
	"attractorlab/sim/mnist"
)

// The Training window (Ctrl+I) trains the bare self-attention by
// pseudo-likelihood (docs/maths.md §5) on the embedded training subset
// while the person watches: the loss and validation per epoch, the main
// window's digit re-run with the couplings as they are, and the couplings
// themselves. The run is sim.TrainBSA, the one `attractorlab train` runs,
// so the same settings give the same couplings, bit for bit. It trains on
// goroutines of its own; everything below that touches a widget runs on
// Fyne's goroutine.

// trainImageChoices are the training set sizes offered (sim.TrainImages'
// range): a capacity experiment.
var trainImageChoices = []string{"100", "200", "500", "1000", "2000", "5000", "10000"}

// trainStarts are where the couplings start.
var trainStarts = []string{"random couplings", "the shipped weights"}

// trainDigitSteps is how far the digit is re-run.
const trainDigitSteps = 100

// updater hands a window's updates from background goroutines to Fyne's
// goroutine in order, through one goroutine of its own (so the test
// driver, which runs fyne.Do on the caller, sees them one at a time too).
// In the page each update runs in a task of the page's own, the page
// having had its turn since the last (sim.Yield): handed over together,
// a training run's re-run of the digit, its epoch's curves and its
// progress ran in one task of up to 270 ms.
//
// An update that only shows the latest of something (the progress, a
// re-run of the digit) is posted with postLatest: in the page, where each
// update waits for a turn of the page's (a painted frame, 50-80 ms with
// software WebGL), such updates queued faster than they ran, and the window
// showed a training run seconds behind the worker.
type updater struct {
	mu     sync.Mutex
	ch     chan func()
	closed bool
	// latest holds, by key, the update postLatest queued and that has
	// not run yet (in the page); lmu guards it.
	lmu    sync.Mutex
	latest map[string]*func()
}

func newUpdater() *updater {
	u := &updater{ch: make(chan func(), 64)}
	go func() {
		for f := range u.ch {
			if !inBrowser() {
				fyne.Do(f)
				continue
			}
			fyne.DoAndWait(f)
			sim.Yield()
		}
	}()
	return u
}

// post queues f; after close it is dropped.
func (u *updater) post(f func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.closed {
		u.ch <- f
	}
}

// postLatest queues f as post does; in the page, an update with the same
// key still waiting to run is given f instead, in its place in the queue.
func (u *updater) postLatest(key string, f func()) {
	if !inBrowser() {
		u.post(f)
		return
	}
	u.lmu.Lock()
	if slot, ok := u.latest[key]; ok {
		*slot = f
		u.lmu.Unlock()
		return
	}
	slot := &f
	if u.latest == nil {
		u.latest = map[string]*func(){}
	}
	u.latest[key] = slot
	u.lmu.Unlock()
	u.post(func() {
		u.lmu.Lock()
		g := *slot
		delete(u.latest, key)
		u.lmu.Unlock()
		g()
	})
}

// wait runs f in turn with the updates and returns once it ran.
func (u *updater) wait(f func()) {
	done := make(chan struct{})
	u.post(func() { f(); close(done) })
	<-done
}

func (u *updater) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.closed {
		u.closed = true
		close(u.ch)
	}
}

type trainWin struct {
	m  *Main
	w  fyne.Window
	ui *updater
	// lessonCap shows the lesson slide's title and caption (hidden
	// outside a lesson)
	lessonCap *widget.RichText
	fields    *fyne.Container // the form's fields, hidden under a lesson's caption
	// curEpoch and curBatch are the run's place (1-based epoch, batches
	// done in it), batches an epoch's count; viewWatch the run's view,
	// which re-runs the digit with the couplings a Cancel keeps
	curEpoch, curBatch, batches int
	viewWatch                   sim.Watch
	// halveEvery is the form's learning-rate halving ("" the recipe's): a
	// lesson sets it; the command the window shows carries it.
	halveEvery string

	patch, start, images, attn  *widget.Select
	lambda, d, epochs, lr, seed *widget.Entry

	startBtn, pauseBtn, cancelBtn, useBtn, saveBtn *widget.Button
	prog                                           *widget.ProgressBar
	status                                         *wrapLabel

	loss, val, digit, locality *PlotView
	couplings, displacement    *canvas.Image
	// The readouts that change during a run are wrapLabels (Fyne's
	// wrapped Label measures its text again at many cuts for each change).
	couplingsLbl, digitLbl *wrapLabel
	// couplingsKey says how the couplings are drawn; couplingsLbl, short,
	// what changes with each re-run.
	couplingsKey        *widget.Label
	input, atStar, last *PixelView
	atStarLbl, lastLbl  *widget.Label

	// The run (Fyne goroutine).
	running  bool
	stop     context.CancelFunc
	paused   atomic.Bool
	set      sim.BSATraining
	ran      sim.TrainingForm // the form the run was started with
	src      *sim.Source      // the data set the run trains on
	stats    []sim.EpochStats
	trained  *sim.BSA // the last finished epoch's couplings
	name     string   // its name in the catalogue, once there
	ref      *sim.DigitRun
	shipName string
	began    time.Time
	// queued is a lesson slide's training that waits for the run under
	// way (a previous slide's, cancelled) to end; finish starts it.
	queued *sim.TrainingForm
	// note, when set, is what the status says once the run under way has
	// ended (a lesson's slide stopped it), instead of its own report.
	note string
	// after, in tests, is told on the Fyne goroutine once a run ended.
	after func()
	// viewed, in tests, is told on the Fyne goroutine after each re-run of
	// the digit is drawn.
	viewed func(epoch, batch int)
}

// pendingTrain is a lesson slide's training waiting for the slide's
// scenario to reach the window.
type pendingTrain struct {
	form   sim.TrainingForm
	ticket int64 // the engine's cue of the slide
}

// startPendingTrain starts the waiting training once the snapshot shows
// its slide's cue: the Training window opens with the slide's form and
// starts. A run under way (a previous slide's) is cancelled first and the
// slide's starts when it has ended (issue 31: slide 3's 100-image run
// never started while slide 2's was still training, and its answer was
// read off slide 2's curve).
func (m *Main) startPendingTrain() {
	pt := m.pendingTrain
	if pt == nil || m.snap == nil || m.snap.Cue < pt.ticket {
		return
	}
	m.pendingTrain = nil
	m.showTraining()
	tw := m.train
	if tw.running {
		f := pt.form
		tw.queued = &f
		tw.stopRun()
		return
	}
	tw.setForm(pt.form)
	tw.begin()
}

// stopRun cancels the run under way (finish reports it).
func (tw *trainWin) stopRun() {
	if tw.running && tw.stop != nil {
		tw.paused.Store(false)
		tw.stop()
	}
}

// setForm fills the form's fields.
func (tw *trainWin) setForm(f sim.TrainingForm) {
	tw.patch.SetSelectedIndex((f.Patch - 2) / 2)
	start := 0
	if f.FromShipped {
		start = 1
	}
	tw.start.SetSelectedIndex(start)
	if !slices.Contains(tw.images.Options, f.Images) {
		tw.images.Options = append(tw.images.Options, f.Images)
	}
	tw.images.SetSelected(f.Images)
	tw.attn.SetSelected(f.Attn)
	tw.lambda.SetText(f.Lambda)
	tw.d.SetText(f.D)
	tw.epochs.SetText(f.Epochs)
	tw.lr.SetText(f.LR)
	tw.seed.SetText(f.Seed)
	tw.halveEvery = f.HalveEvery // no field of its own: the command shown says it
}

// showTraining opens (or raises) the training window.
func (m *Main) showTraining() {
	if m.train != nil {
		m.train.w.Show()
		m.train.w.RequestFocus()
		return
	}
	tw := &trainWin{m: m, w: m.newWindow("Training — Attractor Lab"), ui: newUpdater()}
	// 740 px high at most (build): the window fits a 1366×768 screen as
	// well as 1280×800 (it opened 800 high and lost its bottom row on a
	// 768-px screen); smaller still where the main window is.
	tw.build()
	// A lesson's keys (→ next, ← back, Esc leaves) work here too: a slide
	// that trains opens this window over the main one, and → did nothing
	// until the window manager gave the main window the keyboard.
	tw.w.Canvas().SetOnTypedKey(keyOnFyne(func(k *fyne.KeyEvent) {
		if m.lesson != nil && m.lessonKey(k) {
			return
		}
		// Return starts a run, as the Start button does.
		if (k.Name == fyne.KeyReturn || k.Name == fyne.KeyEnter) && !tw.running {
			tw.begin()
			return
		}
		m.escCloses(k)
	}))
	tw.w.SetOnClosed(func() {
		if tw.stop != nil {
			tw.stop()
		}
		tw.ui.close()
		m.train = nil
	})
	m.train = tw
	if lr := m.lesson; lr != nil && m.barText != "" {
		tw.showLesson(lr.l.Slides[lr.slide].Title, m.barText)
	}
	tw.w.Show()
}

func (tw *trainWin) build() {
	tw.patch = widget.NewSelect([]string{"P = 2", "P = 4"}, nil)
	tw.patch.SetSelectedIndex(0)
	tw.start = widget.NewSelect(trainStarts, nil)
	tw.start.SetSelectedIndex(0)
	def := sim.DefaultTrainingForm()
	if tw.m.source().Data.Name() != mnist.MNISTName {
		// A data set without shipped weights: trained here on first use,
		// long enough to be near the full recipe (sim.FirstUseEpochs).
		def.Epochs = fmt.Sprint(sim.FirstUseEpochs)
	}
	tw.images = widget.NewSelect(trainImageChoices, nil)
	tw.images.SetSelected(def.Images)
	tw.attn = widget.NewSelect(sim.Attentions, nil)
	tw.attn.SetSelected(def.Attn)
	entry := func(v string) *widget.Entry {
		e := widget.NewEntry()
		e.SetText(v)
		return e
	}
	tw.lambda = entry(def.Lambda)
	tw.d = entry(def.D)
	tw.d.SetPlaceHolder("2·P²")
	tw.epochs = entry(def.Epochs)
	tw.lr = entry(def.LR)
	tw.seed = entry(def.Seed)
	field := func(name string, w fyne.CanvasObject) fyne.CanvasObject {
		return container.NewBorder(nil, nil, widget.NewLabel(name), nil, w)
	}
	// Three columns: five were 1,417 px wide at presentation type size,
	// wider than a 1280-px screen.
	form := container.NewGridWithColumns(3,
		field("model", tw.patch), field("start from", tw.start), field("images", tw.images),
		field("λ", tw.lambda), field("attention", tw.attn),
		field("d", tw.d), field("epochs", tw.epochs), field("lr", tw.lr), field("seed", tw.seed))

	tw.startBtn = widget.NewButtonWithIcon("Start", theme.MediaPlayIcon(), tw.begin)
	tw.startBtn.Importance = widget.HighImportance
	tw.pauseBtn = widget.NewButtonWithIcon("Pause", theme.MediaPauseIcon(), tw.togglePause)
	tw.cancelBtn = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() {
		if tw.stop != nil {
			tw.paused.Store(false)
			tw.stop()
		}
	})
	tw.useBtn = widget.NewButton("Run it in the main window", tw.use)
	tw.saveBtn = widget.NewButtonWithIcon("Save weights…", theme.DocumentSaveIcon(), tw.save)
	tw.prog = widget.NewProgressBar()
	tw.status = newWrapLabel("Trains the bare self-attention without backpropagation: each token's couplings follow the pseudo-likelihood of the " +
		"clean training digits. The main window's digit is re-run as the couplings change.")
	tw.setButtons()

	tw.loss = NewPlotView()
	tw.loss.HideT = true
	tw.val = NewPlotView()
	tw.val.HideT = true
	tw.digit = NewPlotView()
	tw.digit.HideT = true
	tw.locality = NewPlotView()
	tw.locality.HideT = true
	tw.couplings = canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
	tw.couplings.FillMode = canvas.ImageFillContain
	tw.couplings.ScaleMode = canvas.ImageScalePixels
	tw.couplings.SetMinSize(fyne.NewSize(150, 150))
	tw.displacement = canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
	tw.displacement.FillMode = canvas.ImageFillContain
	tw.displacement.ScaleMode = canvas.ImageScalePixels
	tw.displacement.SetMinSize(fyne.NewSize(150, 150))
	tw.couplingsLbl = newWrapLabel("")
	tw.couplingsKey = widget.NewLabel("Left: query token i (row) by key token j (column). Middle: their mean by where the key's patch lies " +
		"from the query's (centre: the query itself, grey). Right: the mean by patch distance. Dark is the lowest, yellow the highest.")
	tw.couplingsKey.Wrapping = fyne.TextWrapWord
	tw.digitLbl = newWrapLabel("")
	tw.input, tw.atStar, tw.last = NewPixelView(), NewPixelView(), NewPixelView()
	tw.atStarLbl, tw.lastLbl = widget.NewLabel("at t*"), widget.NewLabel(fmt.Sprintf("at t = %d", trainDigitSteps))
	pic := func(l *widget.Label, v *PixelView) fyne.CanvasObject {
		l.Alignment = fyne.TextAlignCenter
		return container.NewBorder(l, nil, nil, nil, v)
	}
	images := container.NewGridWithColumns(3, pic(widget.NewLabel("input"), tw.input), pic(tw.atStarLbl, tw.atStar), pic(tw.lastLbl, tw.last))

	buttons := container.NewHBox(tw.startBtn, tw.pauseBtn, tw.cancelBtn, tw.useBtn, tw.saveBtn)
	// In a lesson the slide's title and caption head this window, so the
	// room reads them while the training runs over the main window.
	tw.lessonCap = widget.NewRichText()
	tw.lessonCap.Wrapping = fyne.TextWrapWord
	tw.lessonCap.Hide()
	tw.fields = form
	top := container.NewVBox(tw.lessonCap, form, container.NewBorder(nil, nil, buttons, nil, tw.prog), tw.status)
	// Three columns, each as tall as the body: the learning curves, the
	// digit re-run, the couplings. Two columns stacked four plots, and at
	// presentation type size under a slide's caption the loss and
	// validation plots were left no height to draw in (the validation
	// plot's axes piled up and its curve vanished), the couplings cut off.
	left := container.NewGridWithRows(2, tw.loss, tw.val)
	digit := container.NewGridWithRows(2, tw.digit, container.NewBorder(tw.digitLbl, nil, nil, nil, images))
	// Each map keeps a short title, also under a lesson's caption (where
	// the long label below is hidden and they were two unnamed squares).
	titled := func(title string, img fyne.CanvasObject) fyne.CanvasObject {
		l := widget.NewLabel(title)
		l.Alignment = fyne.TextAlignCenter
		l.Truncation = fyne.TextTruncateEllipsis
		return container.NewBorder(l, nil, nil, nil, img)
	}
	maps := container.NewGridWithColumns(2, titled("‖J_ij‖: i ↓, j →", tw.couplings), titled("by key offset", tw.displacement))
	coup := container.NewBorder(nil, container.NewVBox(tw.couplingsLbl, tw.couplingsKey), nil, nil, container.NewGridWithRows(2, maps, tw.locality))
	body := container.NewGridWithColumns(3, left, digit, coup)
	tw.m.fitPage(tw.w, container.NewBorder(top, nil, nil, nil, body), fyne.NewSize(1280, 740))
	tw.drawDigitInput()
	tw.drawCurves()
	tw.patch.OnChanged = func(string) { tw.preview() }
	tw.preview()
}

// watch is the live view's request for the main window's digit as a
// model with patch side p receives it, with the main window's dynamics.
func (tw *trainWin) watch(p int) (sim.Watch, error) {
	sn := tw.m.snap
	if sn == nil {
		return sim.Watch{}, errors.New("the main window has no digit yet")
	}
	in, err := sn.InputForPatch(p)
	if err != nil {
		return sim.Watch{}, err
	}
	return sim.Watch{Input: in, Dyn: sn.Settings.Dyn, Mem: tw.m.source().Memories, Steps: trainDigitSteps, Every: sim.TrainViewEvery}, nil
}

// preview shows, before a run, the shipped model of the chosen patch side
// on the main window's digit, and its couplings: what training from
// random couplings is to arrive at.
func (tw *trainWin) preview() {
	if tw.running {
		return
	}
	p := 2 + 2*tw.patch.SelectedIndex()
	w, err := tw.watch(p)
	if err != nil {
		return
	}
	tw.ref = nil
	tw.shipName = sim.ShippedName(p)
	tw.drawDigitInput()
	net, err := tw.m.deps.Catalogue.Shipped(p)
	if err != nil {
		tw.digitLbl.SetText(err.Error())
		return
	}
	show := func(v sim.TrainingView) {
		tw.ui.post(func() {
			if tw.running || tw.shipName != sim.ShippedName(v.Patch) {
				return
			}
			tw.ref = &v.Run
			tw.drawView(v, "the shipped "+tw.shipName+", before training", false)
		})
	}
	if tr := tw.m.trainer(tw.m.source()); tr != nil {
		// In a worker (the page): the re-run does not hold the page.
		job, err := sim.NewTrainJob(sim.BSATraining{Patch: p}, tw.m.source().Data.Name(), w)
		if err != nil {
			return
		}
		job.Preview = true
		ahead := w
		ahead.OnView = show
		go tr.Train(context.Background(), job, ahead)
		return
	}
	go func() { show(w.View(context.Background(), net)) }()
}

// setButtons enables what fits the run's state.
func (tw *trainWin) setButtons() {
	enable := func(b *widget.Button, on bool) {
		if on {
			b.Enable()
		} else {
			b.Disable()
		}
	}
	enable(tw.startBtn, !tw.running)
	enable(tw.pauseBtn, tw.running)
	enable(tw.cancelBtn, tw.running)
	enable(tw.useBtn, !tw.running && tw.trained != nil)
	enable(tw.saveBtn, !tw.running && tw.trained != nil)
	if tw.paused.Load() {
		tw.pauseBtn.SetText("Resume")
		tw.pauseBtn.SetIcon(theme.MediaPlayIcon())
	} else {
		tw.pauseBtn.SetText("Pause")
		tw.pauseBtn.SetIcon(theme.MediaPauseIcon())
	}
}

// form is the window's form as typed.
func (tw *trainWin) form() sim.TrainingForm {
	return sim.TrainingForm{Patch: 2 + 2*tw.patch.SelectedIndex(), FromShipped: tw.start.SelectedIndex() == 1,
		Images: tw.images.Selected, Lambda: tw.lambda.Text, D: tw.d.Text, Attn: tw.attn.Selected,
		Epochs: tw.epochs.Text, LR: tw.lr.Text, Seed: tw.seed.Text, HalveEvery: tw.halveEvery, Dataset: tw.m.source().Data.Name()}
}

// drawDigitInput shows the main window's input as the digit the run
// re-runs.
func (tw *trainWin) drawDigitInput() {
	if sn := tw.m.snap; sn != nil {
		tw.input.Pixels, tw.input.Mask = sn.Input, sn.PixelMask
		tw.input.Refresh()
	}
}

// begin starts a run with the form's settings.
func (tw *trainWin) begin() {
	if tw.running {
		return
	}
	s, err := tw.form().Settings(tw.m.deps.Catalogue)
	if err != nil {
		tw.status.SetText("cannot train: " + err.Error())
		return
	}
	watch, err := tw.watch(s.Patch)
	if err != nil {
		tw.status.SetText("cannot train: " + err.Error())
		return
	}
	// The main window's data set: MNIST's embedded sample (the recipe's
	// 10,000 training digits), or the training pictures of another.
	src := tw.m.source()
	train, test, err := mnist.Sample()
	if src.Data.Name() != mnist.MNISTName {
		train, test = src.Data.Train, src.Data.Test
	}
	if err != nil {
		tw.status.SetText("cannot train: " + err.Error())
		return
	}
	tw.src = src
	tw.set, tw.ran, tw.stats, tw.running, tw.began = s, tw.form(), nil, true, time.Now()
	tw.paused.Store(false)
	tw.drawDigitInput()
	tw.drawCurves()
	ctx, stop := context.WithCancel(context.Background())
	tw.stop = stop
	tw.setButtons()
	tw.prog.SetValue(0)
	tw.shipName = sim.ShippedName(s.Patch)

	tw.status.SetText(fmt.Sprintf("training BSA P=%d, d=%d, from %s on %d %s images, λ %g, %s, %d epochs…",
		s.Patch, s.Dim(), tw.start.Selected, min(s.Images, train.Len()), mnist.DatasetLabel(src.Data.Name()), s.Lambda, s.Attn, s.Config.Epochs))
	// The widgets are set; from here on the run's goroutines update them
	// through tw.ui only.
	batches := (min(s.Images, train.Len()) + s.Config.Batch - 1) / s.Config.Batch
	total := float64(s.Config.Epochs * batches)
	watch.Paused = tw.paused.Load
	watch.OnEpoch = func(st sim.EpochStats) {
		tw.ui.post(func() {
			tw.stats = append(tw.stats, st)
			tw.drawCurves()
		})
	}
	tw.batches = batches
	tw.viewWatch = watch
	watch.OnBatch = func(epoch, batch int) {
		v := float64((epoch-1)*batches+batch) / total
		tw.ui.postLatest("progress", func() {
			tw.curEpoch, tw.curBatch = epoch, batch
			// A batch that would not change the bar's percent leaves it
			// (in the page each change repaints the window on the page's
			// thread, time the training worker needs).
			if barPercent(v) != barPercent(tw.prog.Value) {
				tw.prog.SetValue(v)
			}
		})
	}
	watch.OnView = func(v sim.TrainingView) {
		when := fmt.Sprintf("trained here, epoch %d, batch %d", v.Epoch, v.Batch)
		if v.Batch == 0 {
			when = fmt.Sprintf("trained here, end of epoch %d", v.Epoch)
		}
		// The digit's run and the couplings are two updates: in the
		// page, two tasks (updater), each showing the latest re-run.
		tw.ui.postLatest("run", func() { tw.drawRun(v, when, true) })
		tw.ui.postLatest("couplings", func() { tw.drawCouplings(v, when) })
	}
	go func() {
		var net *sim.BSA
		var epochs int
		if tr := tw.m.trainer(src); tr != nil {
			// In a worker (the page): the worker also runs the shipped
			// model's curve on the digit, for comparison.
			watch.OnReference = func(r sim.DigitRun) { tw.ui.post(func() { tw.ref = &r }) }
			var job sim.TrainJob
			if job, err = sim.NewTrainJob(s, src.Data.Name(), watch); err == nil {
				job.Reference = true
				net, epochs, err = tr.Train(ctx, job, watch)
			}
		} else {
			// The shipped model's curve on the same digit, for comparison.
			if net, err := tw.m.deps.Catalogue.Shipped(s.Patch); err == nil {
				if r, err := sim.RunDigit(ctx, net, watch.Dyn, watch.Input, watch.Mem, trainDigitSteps); err == nil {
					tw.ui.post(func() { tw.ref = &r })
				}
			}
			net, epochs, err = sim.TrainWatched(ctx, train, test, s, watch)
		}
		tw.ui.post(func() { tw.finish(net, epochs, err) })
	}()
}

// togglePause holds the run after its current batch, or lets it go on.
func (tw *trainWin) togglePause() {
	if !tw.running {
		return
	}
	tw.paused.Store(!tw.paused.Load())
	if tw.paused.Load() {
		// The epoch under way and the finished ones, by the numbers the
		// plots show ("paused after 5 epochs" read wrong beside a curve
		// labelled epoch 6).
		where := fmt.Sprintf("in epoch %d, after batch %d of %d", tw.curEpoch, tw.curBatch, tw.batches)
		if tw.curBatch >= tw.batches {
			where = fmt.Sprintf("at the end of epoch %d", tw.curEpoch)
		}
		tw.status.SetText(fmt.Sprintf("paused %s; %d finished (Resume goes on; Cancel keeps the %d finished)", where, len(tw.stats), len(tw.stats)))
	} else {
		tw.status.SetText("training…")
	}
	tw.setButtons()
}

// finish ends a run: the last finished epoch's couplings join the
// catalogue as TrainedName(P) (after Cancel too), the rest says why not.
func (tw *trainWin) finish(net *sim.BSA, epochs int, err error) {
	tw.running, tw.stop = false, nil
	tw.paused.Store(false)
	took := time.Since(tw.began).Seconds()
	cancelled := errors.Is(err, context.Canceled)
	switch {
	case err != nil && !cancelled:
		tw.status.SetText(fmt.Sprintf("training failed after %d epochs: %v", epochs, err))
	case net == nil:
		tw.status.SetText("cancelled before the first epoch finished: nothing was trained")
	default:
		// The weights say what they were trained on; the model joins
		// the catalogue of that data set.
		sim.RecordDataset(net.Meta, tw.src.Data.Name())
		tw.trained = net
		tw.name = tw.src.Catalogue.SetTrained(sim.CloneBSA(net))
		tw.m.refreshModels()
		how := "trained"
		if cancelled {
			how = fmt.Sprintf("cancelled in epoch %d; kept the finished ones:", epochs+1)
			// The digit shown was re-run with couplings from the epoch
			// under way; show it with those kept, labelled so.
			if w := tw.viewWatch; w.Input != nil {
				kept := sim.CloneBSA(net)
				go func() {
					v := w.View(context.Background(), kept)
					v.Epoch = epochs
					tw.ui.post(func() { tw.drawView(v, fmt.Sprintf("kept: the end of epoch %d", epochs), true) })
				}()
			}
		} else {
			tw.prog.SetValue(1)
		}
		tw.status.SetText(fmt.Sprintf("%s %d epochs in %.1f s. %s is in the main window's model list (it compares, runs ensembles and basin maps like the others); Save weights… writes it as safetensors.",
			how, epochs, took, tw.name))
	}
	tw.setButtons()
	if tw.note != "" {
		tw.status.SetText(tw.note)
		tw.note = ""
	}
	if tw.after != nil {
		tw.after()
	}
	if f := tw.queued; f != nil {
		tw.queued = nil
		tw.setForm(*f)
		tw.begin()
	}
}

// use runs the trained model in the main window (beside the shipped one
// it started from when that is shown).
func (tw *trainWin) use() {
	if tw.name == "" {
		return
	}
	name, ship := tw.name, tw.shipName
	tw.m.Engine.Update(func(st *sim.Settings) { st.Lanes = []string{ship, name} })
	tw.m.win.RequestFocus()
}

// save writes the trained couplings as safetensors (they load with
// --weights and in PyTorch).
func (tw *trainWin) save() {
	if tw.trained == nil {
		return
	}
	var buf bytes.Buffer
	m := sim.CloneBSA(tw.trained)
	f := tw.ran
	f.Epochs = m.Meta["epochs_done"] // a cancelled run's epochs: the first epochs of any longer run
	m.Meta["command"] = f.Command()
	if err := m.WriteBSA(&buf); err != nil {
		tw.m.showErrorIn(tw.w, err)
		return
	}
	tw.m.saveAsIn(tw.w, fmt.Sprintf("bsa-p%d-trained.safetensors", tw.set.Patch), buf.Bytes())
}

// drawCurves draws the loss and validation per epoch.
func (tw *trainWin) drawCurves() {
	n := len(tw.stats)
	loss, val := make([]float64, n), make([]float64, n)
	for k, st := range tw.stats {
		loss[k], val[k] = st.Loss, st.ValMSE
	}
	xs := figures.Steps(n)
	if n == 0 {
		none := func() (*plot.Plot, error) { return nil, errors.New("no epoch has finished yet") }
		tw.loss.SetPlot(none)
		tw.val.SetPlot(none)
		return
	}
	tw.loss.SetPlot(func() (*plot.Plot, error) {
		return figures.LinePlot("loss (mean token energy)", "epoch", "loss", xs, false,
			[]figures.Series{{Values: loss}})
	})
	tw.val.SetPlot(func() (*plot.Plot, error) {
		return figures.LinePlot(fmt.Sprintf("masked MSE at t = 5, %d digits", int(sim.ValDigits.Default)),
			"epoch", "masked MSE", xs, false, []figures.Series{{Values: val, Color: figures.Palette[1]}})
	})
}

// drawView shows one re-run of the digit and the couplings it used, named
// when; withRef draws the shipped model's curve beside it.
func (tw *trainWin) drawView(r sim.TrainingView, when string, withRef bool) {
	tw.drawRun(r, when, withRef)
	tw.drawCouplings(r, when)
}

// drawRun shows one re-run of the digit (drawView's first half: its
// curve and pictures).
func (tw *trainWin) drawRun(r sim.TrainingView, when string, withRef bool) {
	if r.Err != nil {
		return
	}
	run := r.Run
	// The trained model in its own colour (as in the main window), the
	// shipped one dashed in its own.
	col := figures.ModelColor(sim.TrainedName(r.Patch))
	if !withRef {
		col = figures.ModelColor(tw.shipName)
	}
	series := []figures.Series{{Name: when, Values: run.MSE, Color: col}}
	if withRef && tw.ref != nil {
		series = append(series, figures.Series{Name: "shipped " + tw.shipName, Values: tw.ref.MSE, Dashed: true, Color: figures.ModelColor(tw.shipName)})
	}
	input := run.MSE[0]
	// t* is marked, and the picture named for it, only where it beats
	// the input (the one rule; at epoch 1 the "t* = 1" marked the input).
	mark, starLbl := -1, fmt.Sprintf("best t = %d", run.TStar)
	if sim.Improves(run.MSEStar, input) {
		mark, starLbl = run.TStar, fmt.Sprintf("at t* = %d", run.TStar)
	}
	tw.digit.SetPlot(func() (*plot.Plot, error) {
		return figures.MSEPlot("this digit, re-run", series, input, mark)
	})
	memory := "no transient memory yet (the error does not dip below the input's and rise again)"
	if run.Transient {
		memory = fmt.Sprintf("a transient memory at t* = %d: MSE %.4f against the input's %.4f, rising to %.4f by t = %d",
			run.TStar, run.MSEStar, input, run.MSE[len(run.MSE)-1], len(run.MSE)-1)
	} else if sim.Improves(run.MSEStar, input) {
		memory = fmt.Sprintf("repairs the input (best MSE %.4f at t = %d) without rising again by t = %d", run.MSEStar, run.TStar, len(run.MSE)-1)
	}
	near := ""
	if run.NearLabel >= 0 {
		near = fmt.Sprintf(" · nearest stored digit at t*: a %d (r %.2f) · state at t = %d against the average digit: r %.2f",
			run.NearLabel, run.NearCorr, len(run.MSE)-1, run.MeanCorr)
	}
	tw.digitLbl.SetText(when + ": " + memory + near)
	tw.atStar.Pixels, tw.last.Pixels = run.AtStar, run.Last
	tw.atStarLbl.SetText(starLbl)
	tw.atStar.Refresh()
	tw.last.Refresh()
}

// drawCouplings shows the couplings a re-run used (drawView's second
// half), and tells viewed.
func (tw *trainWin) drawCouplings(r sim.TrainingView, when string) {
	if r.Err != nil {
		return
	}
	side := r.Side
	tw.couplings.Image = figures.NormsImage(r.Norms, side*side)
	tw.couplings.Refresh()
	var dlo, dhi float64
	tw.displacement.Image, dlo, dhi = figures.SpanImage(r.Displacement, 2*side-1)
	tw.displacement.Refresh()
	hi := 0.0
	for _, v := range r.Norms {
		hi = max(hi, v)
	}
	tw.couplingsLbl.SetText(fmt.Sprintf("‖J_ij‖ (%s): left 0 to %.3g, middle %.3g to %.3g.", when, hi, dlo, dhi))
	dist := r.ByDistance
	tw.locality.SetPlot(func() (*plot.Plot, error) {
		return figures.LinePlot("‖J_ij‖ by distance", "distance (patches)", "mean ‖J_ij‖", figures.Steps(len(dist)), false,
			[]figures.Series{{Values: dist, Color: figures.Palette[2]}})
	})
	if tw.viewed != nil {
		tw.viewed(r.Epoch, r.Batch)
	}
}

// showLesson heads the window with a lesson slide's title and text (md,
// as the lesson bar shows it); "" hides it.
func (tw *trainWin) showLesson(title, md string) {
	if md == "" {
		if tw.lessonCap.Visible() {
			tw.lessonCap.Hide()
			tw.fields.Show()
			tw.digitLbl.Show()
			tw.couplingsLbl.Show()
			tw.couplingsKey.Show()
		}
		return
	}
	tw.lessonCap.Segments = captionSegments("**" + title + "**\n" + md)
	tw.lessonCap.Refresh()
	tw.lessonCap.Show()
	// The slide sets the form, and the status line says what it runs;
	// the plots' legends carry the readouts' numbers: the form's rows and
	// the long readouts go to the plots (at presentation size under the
	// caption the window was taller than a 800-px screen).
	tw.fields.Hide()
	tw.digitLbl.Hide()
	tw.couplingsLbl.Hide()
	tw.couplingsKey.Hide()
}
