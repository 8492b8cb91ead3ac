package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"attractorlab/sim"
	"attractorlab/sim/figures"
	"attractorlab/sim/lesson"
	"attractorlab/sim/mnist"
	"attractorlab/sim/sweep"
)

// Deps is what the window needs: the data, the stored memories and the
// model catalogue.
type Deps struct {
	Data      *mnist.Data
	Memories  *sim.Memories
	Catalogue *sim.Catalogue
	Version   string // shown by Help → About ("0.1.0 (build 1)")
	// WorkArea is the screen's room for windows (less its panels), when
	// the driver can tell it (nil or false: not known, as in the page,
	// where the main window is the page).
	WorkArea func() (fyne.Size, bool)
	// Sources opens the data sets other than Data's (the data set
	// picker, a scenario or link that names one); nil: Data's only.
	Sources sim.Sources
	// Remote runs the population jobs' digits elsewhere (the web build's
	// Web Workers: the page's thread only draws); nil runs them here.
	Remote sweep.Remote
	// Trainer runs the Training window's runs elsewhere (the same
	// workers); nil runs them here.
	Trainer sim.TrainRemote
	// Ahead records the engine's look-ahead elsewhere (the same workers;
	// sim.EngineConfig.Ahead); nil records it here.
	Ahead sim.AheadRemote
	// Space places the stored digits in the State space window's plane
	// elsewhere (the same workers); nil, or no worker free, places them
	// here.
	Space sim.StateSpaceRemote
	// Hold keeps the engine's background recording waiting until it is
	// closed (sim.EngineConfig.Hold; nil: it starts at once).
	Hold <-chan struct{}
}

// source is the data set the window shows (the snapshot's), Data's
// before the first snapshot.
func (m *Main) source() *sim.Source {
	if m.snap != nil && m.snap.Source != nil {
		return m.snap.Source
	}
	return &sim.Source{Data: m.deps.Data, Memories: m.deps.Memories, Catalogue: m.deps.Catalogue}
}

// sourceFor is the Source of a data set by name: the window's own, or
// one Deps.Sources opens.
func (m *Main) sourceFor(dataset string) (*sim.Source, error) {
	if mnist.DatasetOrMNIST(dataset) == m.deps.Data.Name() {
		return &sim.Source{Data: m.deps.Data, Memories: m.deps.Memories, Catalogue: m.deps.Catalogue}, nil
	}
	if cur := m.source(); mnist.DatasetOrMNIST(dataset) == cur.Data.Name() {
		return cur, nil
	}
	if m.deps.Sources == nil {
		return nil, fmt.Errorf("%s is not open here: this window runs %s", mnist.DatasetLabel(dataset), mnist.DatasetLabel(m.deps.Data.Name()))
	}
	return m.deps.Sources(mnist.DatasetOrMNIST(dataset))
}

// Main is the main window's content and its state. All fields are touched
// only on the Fyne goroutine; the engine runs in its own goroutine and
// reaches the view through fyne.Do.
type Main struct {
	app fyne.App
	win fyne.Window
	// ctx ends when the window closes: the window's own jobs (a slow
	// export) stop with it.
	ctx    context.Context
	halted atomic.Bool // set by Halt: no snapshot is drawn any more
	deps   Deps
	infos  []sim.ModelInfo // the catalogue's models that loaded, in menu order
	Engine *sim.Engine
	snap   *sim.Snapshot

	presentation bool
	themeChoice  string
	showGrid     bool
	query        int // selected query patch (−1: none)
	head         int // attention head shown for multi-head models (0: their average)
	lane         int // lane whose attention row is painted
	hoverText    string
	lastPlotKey  string
	logY         bool      // the MSE plot's y axis is logarithmic
	attnScale    attnScale // how attention weights map to colour
	statusErr    bool      // the status line shows a problem

	// widgets
	root       *fyne.Container
	sidebar    fyne.CanvasObject
	side       controls          // the sidebar's widgets (sidebar.go)
	sideScroll *container.Scroll // the sidebar's scrolling column

	clean, input *PixelView
	states       []*PixelView
	stateTitles  []*Lines
	nearest      *PixelView
	nearestLbl   *Lines
	pushedView   *PixelView // one model alone: its pushed run's state, beside the run's
	pushedTitle  *Lines     // what the pushed run is and its numbers
	cleanTitle   *Lines     // "clean" and what the picture is (its class)
	pushWin      *pushWin   // the push window, when open (push.go)
	pushSigma2   float64    // the σ² a push's noise last used (the push window, Ctrl+K)
	heat         []*Heatmap
	patterns     map[int]*PatternsView
	heatTitles   []*Lines
	msePlot      *PlotView
	mseLegend    *fyne.Container
	energyPlot   *PlotView
	energyNote   *canvas.Text    // says E(X₀) of a masking run is measured apart
	answers      *fyne.Container // compare mode: a row per model (drawAnswers)
	answersWidth float32         // the width the table's text needs (answerNatural)
	hist         *Histogram
	center       *fyne.Container
	body         *fyne.Container   // the lesson bar above the panels
	panels       *container.Scroll // the panels (center), scrolled where the window is too small for them

	playBtn   *keyButton
	transport *fyne.Container
	speed     *keySlider
	speedLbl  *widget.Label
	timeline  *keySlider
	tLabel    *Lines
	status    *widget.Label
	readout   *fyne.Container // tLabel and status side by side (readoutRow)
	readoutW  float32         // the width tLabel's text needs, as last laid out

	updating bool // true while apply sets widget values (their callbacks must not send commands)

	dialogs []dialog.Dialog // the dialogs open, the last shown last (Esc closes it)

	// population windows (population.go): nil when closed
	ens   *ensembleWin
	basin *basinWin
	train *trainWin
	// tokens is the per-token energy window, when open
	tokens *tokenWin
	// space is the state-space window, when open; spaceReady, in tests,
	// is given to the next one (told once its plane is drawn)
	space      *spaceWin
	spaceReady func()
	// barHeight is the lesson bar's minimum height when last laid out.
	barHeight float32
	// dyn is the dynamics window, when open; dynReady, in tests, is told
	// of each of its jobs' results shown.
	dyn      *dynWin
	dynReady func(kind string)
	// coverWatch is true while, in the page, a goroutine looks whether a
	// window still covers the hidden main content (pagecover.go).
	coverWatch bool
	coverTicks <-chan time.Time // the watch's clock, in tests; nil: every coverEvery
	// themeGen counts the page's themes set in place; themeLeft is the
	// parts of the window still to refresh for the last (setThemeRefreshing).
	// afterFrame, in tests, takes the next part instead of a goroutine.
	themeGen, themeLeft int
	afterFrame          func(func())
	// unpushed shows, side by side, each model's run as it was instead
	// of its pushed run (Push → Show the runs as they were, Ctrl+J)
	unpushed bool
	// exportDone, in tests, is told on Fyne's goroutine when a slow export
	// has ended (saved, failed or cancelled)
	exportDone func()
	// pendingTrain is a lesson slide's live training, started once the
	// engine has taken the slide's cue
	pendingTrain *pendingTrain

	// lessons (lesson.go)
	lesson     *lessonRun // nil outside a lesson
	bar        *lessonBar
	barText    string // the markdown the bar shows
	shipped    []*lesson.Lesson
	shippedErr error
	OnLesson   func(string) // told each slide shown ("lesson NAME: slide 2 / 5, answer") and when a lesson ends
	OnApplied  func()       // told on Fyne's goroutine after each snapshot is drawn (the web page's Shown)
}

// NewMain builds the window content for w and starts the engine, which
// stops when ctx ends (the window closes). settings are the initial ones.
func NewMain(ctx context.Context, a fyne.App, w fyne.Window, deps Deps, settings sim.Settings) *Main {
	m := &Main{app: a, win: w, ctx: ctx, deps: deps, infos: deps.Catalogue.Available(), query: -1}
	m.themeChoice = a.Preferences().StringWithFallback("theme", "System")
	m.showGrid = a.Preferences().BoolWithFallback("grid", true)
	a.Settings().SetTheme(newTheme(m.themeChoice, 1))
	m.usePlotFont()
	m.build()
	// Snapshots are coalesced: at most one waits for Fyne's goroutine,
	// and it draws the newest. A snapshot a drawing does not keep up with
	// is skipped, not queued: with four models and 32 pushes each drawing
	// took long enough that the queue grew, keys and Quit waited behind it
	// (SIGTERM took 11.7 s) and the window fell further and further behind.
	var waiting atomic.Pointer[sim.Snapshot]
	m.Engine = sim.NewEngine(sim.EngineConfig{Data: deps.Data, Memories: deps.Memories, Catalogue: deps.Catalogue, Sources: deps.Sources,
		Settings: settings, Hold: deps.Hold, Ahead: deps.Ahead, OnSnap: func(sn *sim.Snapshot) {
			if m.halted.Load() {
				return
			}
			if waiting.Swap(sn) == nil {
				fyne.Do(func() { m.apply(waiting.Swap(nil)) })
			}
		}})
	go m.Engine.Run(ctx)
	return m
}

// NewMainSync is NewMain with a synchronous engine, for tests: commands
// take effect before they return.
func NewMainSync(a fyne.App, w fyne.Window, deps Deps, settings sim.Settings) *Main {
	m := &Main{app: a, win: w, ctx: context.Background(), deps: deps, infos: deps.Catalogue.Available(), query: -1, themeChoice: "System", showGrid: true}
	m.usePlotFont()
	m.build()
	m.Engine = sim.NewEngine(sim.EngineConfig{Data: deps.Data, Memories: deps.Memories, Catalogue: deps.Catalogue, Sources: deps.Sources,
		Settings: settings, Synchronous: true, OnSnap: m.apply})
	m.Engine.Settle()
	return m
}

// usePlotFont draws the plots in the theme's text font, as the controls.
func (m *Main) usePlotFont() {
	if err := figures.UseFont("DejaVu Sans Condensed", textFont.Content()); err != nil {
		fyne.LogError("plots keep gonum's font", err) // the window works on
	}
}

// Halt stops the window drawing snapshots, for good: called as the app
// quits (the window closes, a signal, Quit), before Fyne's loop stops.
// Once the loop has stopped, fyne.Do runs its function on the caller's
// goroutine: a snapshot the engine published then was drawn from the
// engine's goroutine (attack 4: 18 "Error in Fyne call thread" from the
// sidebar, with a slow model).
func (m *Main) Halt() { m.halted.Store(true) }

// Content is the window's root object.
func (m *Main) Content() fyne.CanvasObject { return m.root }

// build makes the window's parts: the sidebar of controls (sidebar.go),
// the panels (panels.go) and the transport bar.
func (m *Main) build() {
	// The scroll bar overlays the right edge: keep the controls clear of it.
	gutter := canvas.NewRectangle(color.Transparent)
	gutter.SetMinSize(fyne.NewSize(sidebarGutter, 0))
	m.sideScroll = container.NewVScroll(container.NewBorder(nil, nil, nil, gutter,
		container.NewVBox(m.digitControls(), widget.NewSeparator(), m.corruptionControls(), widget.NewSeparator(),
			m.modelControls(), widget.NewSeparator(), m.parameterControls(), widget.NewSeparator(), m.viewControls())))
	m.sidebar = m.sideScroll

	// Images.
	m.clean = NewPixelView()
	m.clean.OnHover = func(q int) { m.hover(describe("clean", m.clean.Pixels, q)) }
	m.input = NewPixelView()
	m.input.OnTapped = func(i int) { m.Engine.TogglePatch(i) }
	m.input.OnHover = func(q int) { m.hover(describe("input", m.input.Pixels, q)) }
	m.nearest = NewPixelView()
	m.pushedView = NewPixelView()
	m.pushedTitle = newTitle("")
	m.pushedTitle.Truncation = fyne.TextTruncateOff
	m.pushSigma2 = sim.PushSigma2.Default
	m.nearestLbl = NewLines("", fyne.TextAlignLeading, fyne.TextStyle{})
	m.nearestLbl.Truncation = fyne.TextTruncateEllipsis
	m.nearestLbl.Glyphs = true // its r changes every step

	m.msePlot = NewPlotView()
	m.msePlot.OnSeek = func(t int) { m.Engine.Seek(t) }
	m.energyPlot = NewPlotView()
	m.energyPlot.OnSeek = func(t int) { m.Engine.Seek(t) }
	m.hist = NewHistogram()
	m.center = container.NewStack()

	// Transport.
	m.playBtn = newKeyButton("Play", theme.MediaPlayIcon(), func() { m.Engine.TogglePlay() }, m.handleKey)
	back := newKeyButton("", theme.MediaSkipPreviousIcon(), func() { m.Engine.Back() }, m.handleKey)
	step := newKeyButton("", theme.MediaSkipNextIcon(), func() { m.Engine.Step() }, m.handleKey)
	reset := newKeyButton("Reset", theme.MediaReplayIcon(), func() { m.Engine.Reset() }, m.handleKey)
	best := newKeyButton("t*", nil, func() { m.Engine.SeekBest() }, m.handleKey)
	m.speed = newKeySlider(speedSteps[0], speedSteps[len(speedSteps)-1], 1, m.handleKey)
	m.speed.SetValue(10)
	m.speed.Step = 1
	m.speedLbl = widget.NewLabel("")
	m.speed.OnChanged = func(v float64) {
		m.speedLbl.SetText(fmt.Sprintf("%3.0f steps/s", v))
		if !m.updating {
			m.Engine.SetSpeed(v)
		}
	}
	m.timeline = newKeySlider(0, 100, 1, m.handleKey)
	m.timeline.Step = 1
	m.timeline.OnChanged = func(v float64) {
		if !m.updating {
			m.Engine.Seek(int(v))
		}
	}
	m.tLabel = NewLines("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	m.status = widget.NewLabel("")
	// The speed slider stands apart from the timeline, labelled, and the
	// play button keeps the width of "Pause" so nothing shifts.
	speedBox := container.NewBorder(nil, nil, widget.NewLabel("  speed"), m.speedLbl, container.NewGridWrap(fyne.NewSize(120, 36), m.speed))
	pauseWidth := newKeyButton("Pause", theme.MediaPauseIcon(), nil, m.handleKey).MinSize()
	play := container.NewGridWrap(pauseWidth, m.playBtn)
	m.transport = container.NewBorder(nil, nil,
		container.NewHBox(reset, back, play, step, best), speedBox,
		container.NewBorder(nil, nil, widget.NewLabel("t"), nil, m.timeline))
	// The readout takes the width its text needs; the status line the
	// rest, wrapping onto a second line rather than being cut.
	m.tLabel.Truncation = fyne.TextTruncateEllipsis
	m.tLabel.Lead = readoutLead
	m.readout = container.New(readoutRow{}, m.tLabel, m.statusCell())
	bottom := container.NewVBox(m.transport, m.readout)

	m.sidebar = container.New(fixedWidth(sidebarWidth), m.sidebar)
	m.bar = newLessonBar()
	// The panels scroll where the window is narrower (or shorter) than they
	// need (an 800 × 600 screen, a small page): cut off, the nearest
	// memory and the plots' right edge were out of reach.
	m.panels = container.NewScroll(m.center)
	m.body = container.NewBorder(m.bar.box, nil, nil, nil, m.panels)
	m.root = container.New(&sizeWatch{on: m.resized}, container.NewBorder(nil, bottom, m.sidebar, nil, m.body))
	m.win.Canvas().SetOnTypedKey(m.typedKey)
	m.win.Canvas().SetOnTypedRune(func(r rune) {
		if ev := runeKey(r); ev != nil { // the browser's letter keys
			onFyne(func() { m.handleKey(ev) })()
		}
	})
	m.win.SetMainMenu(m.menu())
}

// sidebarWidth is the controls column's width (it scrolls vertically), and
// sidebarGutter the strip on its right kept clear for the scroll bar.
const (
	sidebarWidth  = 300
	sidebarGutter = 10
)

// send applies a settings change unless the view itself is updating.
func (m *Main) send(f func(*sim.Settings)) {
	if m.updating || m.Engine == nil {
		return
	}
	m.Engine.Update(f)
}

// setStatus shows information; setError a problem, which stays until the
// next change the engine accepts.
func (m *Main) setStatus(s string) { m.statusErr = false; m.setStatusText(s) }
func (m *Main) setError(s string)  { m.statusErr = true; m.setStatusText(s) }

func (m *Main) hover(s string) {
	m.hoverText = s
	m.setStatusText(s)
}

// setStatusText shows s on the status line, laying the readout row out
// again when the status line's width changes (readoutRow).
func (m *Main) setStatusText(s string) {
	if m.status.Text == s {
		return
	}
	old := readoutWidth(m.status)
	m.status.SetText(s)
	if m.readout != nil && readoutWidth(m.status) != old {
		m.readout.Refresh()
	}
}

// typedKey receives the keys typed while nothing has the focus.
//
// Fyne's web driver calls it on a goroutine of its own rather than
// Fyne's: there the key is handed to Fyne's goroutine.
func (m *Main) typedKey(k *fyne.KeyEvent) { onFyne(func() { m.handleKey(k) })() }

// handleKey implements the window's keys, whatever control has the focus
// (keys.go), and reports whether k is one of them.
func (m *Main) handleKey(k *fyne.KeyEvent) bool {
	if k.Name == fyne.KeyEscape && m.closeDialog() {
		return true
	}
	if m.lessonKey(k) {
		return true
	}
	switch k.Name {
	case fyne.KeySpace:
		m.Engine.TogglePlay()
	case fyne.KeyRight, fyne.KeyPageDown:
		m.Engine.Step()
	case fyne.KeyLeft, fyne.KeyPageUp:
		m.Engine.Back()
	case fyne.KeyHome, fyne.Key0:
		m.Engine.Reset()
	case fyne.KeyT:
		m.Engine.SeekBest()
	case fyne.KeyH:
		m.cycleHead()
	case fyne.KeyL:
		m.side.logCheck.SetChecked(!m.logY)
	case fyne.KeyA:
		m.side.scaleSel.SetSelectedIndex((int(m.attnScale) + 1) % len(attnScaleNames))
	case fyne.KeyD:
		m.toggleDark()
	case fyne.KeyLeftBracket:
		m.stepSpeed(-1)
	case fyne.KeyRightBracket:
		m.stepSpeed(+1)
	case fyne.KeyF11, fyne.KeyP:
		m.togglePresentation()
	case fyne.KeyEscape:
		if !m.presentation {
			return false
		}
		m.togglePresentation()
	case fyne.Key1, fyne.Key2, fyne.Key3, fyne.Key4, fyne.Key5, fyne.Key6, fyne.Key7, fyne.Key8, fyne.Key9:
		// Key n chooses the catalogue's n-th model alone.
		if n := int(k.Name[0] - '1'); n < len(m.infos) {
			name := m.infos[n].Name
			m.Engine.Update(func(st *sim.Settings) { st.Lanes = []string{name} })
		}
	default:
		return false
	}
	return true
}

// speedSteps are the play speeds [ and ] move between (steps a second),
// within the speed slider's 1 … 120.
var speedSteps = []float64{1, 2, 3, 5, 10, 15, 20, 30, 45, 60, 90, 120}

// stepSpeed sets the play speed to the next of speedSteps above (dir > 0)
// or below (dir < 0) the speed now, staying put at either end.
func (m *Main) stepSpeed(dir int) {
	v := m.speed.Value
	next := v
	if dir > 0 {
		for _, s := range speedSteps {
			if s > v {
				next = s
				break
			}
		}
	} else {
		for k := len(speedSteps) - 1; k >= 0; k-- {
			if speedSteps[k] < v {
				next = speedSteps[k]
				break
			}
		}
	}
	if next != v {
		m.speed.SetValue(next) // its OnChanged tells the engine
	}
	m.setStatus(fmt.Sprintf("play speed %.0f steps/s ([ slower, ] faster)", next))
}

// darkShown reports whether the window is drawn dark: the theme chosen,
// or the system's where it follows the system.
func (m *Main) darkShown() bool {
	if t, ok := m.app.Settings().Theme().(*appTheme); ok && t.variant != nil {
		return *t.variant == theme.VariantDark
	}
	return m.app.Settings().ThemeVariant() == theme.VariantDark
}

// toggleDark switches the theme between light and dark (D): from the
// system's, to the other of the two it shows. The theme selector says
// so and remembers it, as when it is chosen there.
func (m *Main) toggleDark() {
	next := "Dark"
	if m.darkShown() {
		next = "Light"
	}
	m.side.themeSel.SetSelected(next)
	m.setStatus(fmt.Sprintf("theme: %s (D switches light and dark)", next))
}

// cycleHead shows the next attention head of multi-head models (the
// transformers): average, head 1, …, head H, average.
func (m *Main) cycleHead() {
	heads := 0
	for _, md := range m.infos {
		heads = max(heads, md.Heads)
	}
	if heads <= 1 {
		return
	}
	m.head = (m.head + 1) % (heads + 1)
	if m.snap != nil {
		m.redrawImages()
		m.drawText(m.snap)
	}
}

// shownAttention is the part of the attention of f's step (a frame the
// snapshot shows on lane l) the window shows: the selected head (or the
// head average) of a multi-head model, else all of it.
func (m *Main) shownAttention(l sim.Lane, f *sim.Frame) []float32 {
	attn, info := l.AttnOf(f), l.Info
	if attn == nil || info.Tokens == 0 {
		return attn
	}
	n := info.Tokens * info.Tokens
	h := 0
	if info.Heads > 1 {
		h = min(m.head, info.Heads)
	}
	if len(attn) < (h+1)*n {
		return attn[:n]
	}
	return attn[h*n : (h+1)*n]
}

// headLabel names what shownAttention returns for info.
func (m *Main) headLabel(info sim.ModelInfo) string {
	if info.Heads <= 1 {
		return ""
	}
	if h := min(m.head, info.Heads); h > 0 {
		return fmt.Sprintf(", head %d of %d", h, info.Heads)
	}
	return fmt.Sprintf(" (mean of %d heads)", info.Heads)
}

func (m *Main) togglePresentation() {
	m.presentation = !m.presentation
	// Presentation: larger type, controls hidden (the keyboard still works).
	for _, o := range []fyne.CanvasObject{m.sidebar, m.transport} {
		if m.presentation {
			o.Hide()
		} else {
			o.Show()
		}
	}
	// Turning it on sets the window's content again (below), which
	// refreshes every object in it: in the page, where each refresh costs
	// (Fyne's goroutine check reads the stack), the theme's change leaves
	// the content to that refresh instead of refreshing it twice (Main
	// .togglePresentation was 380 ms of a 460-ms task in the page's
	// profile, 115 ms of it the content set again).
	m.setThemeRefreshing(newTheme(m.themeChoice, m.typeScale()), !m.presentation)
	m.readout.Objects[1] = m.statusCell()
	if m.presentation {
		m.win.SetMainMenu(nil)
		// Fyne's window keeps the content below where the menu bar was
		// (an empty band at the top) until the content is set again.
		m.win.SetContent(m.root)
	} else {
		m.refreshMenu()
	}
	if !inBrowser() {
		// In the page, full screen is the browser's own (F11); asked
		// for by the app, Fyne's web driver breaks (a JavaScript
		// error, then its GL context is gone).
		m.win.SetFullScreen(m.presentation)
	}
	m.lastPlotKey = ""
	if m.snap != nil {
		m.layoutCenter(panelCount(m.snap))
		m.apply(m.snap)
	}
	if !inBrowser() {
		// (In the page setTheme has refreshed every object already.)
		m.root.Refresh()
	}
}

// sizeWatch lays its one object over the whole space and tells on when
// that space changes size (on Fyne's goroutine, during layout): the
// window's content, which follows the window.
type sizeWatch struct {
	on   func(fyne.Size)
	last fyne.Size
}

func (l *sizeWatch) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(s)
	}
	if s != l.last {
		l.last = s
		if l.on != nil {
			l.on(s)
		}
	}
}

func (l *sizeWatch) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var m fyne.Size
	for _, o := range objs {
		m = m.Max(o.MinSize())
	}
	return m
}

// resized follows the window's size: in presentation mode the type grows
// with it (presentScale). The theme is changed after the layout that
// told the size, not inside it.
func (m *Main) resized(fyne.Size) {
	if !m.presentation {
		return
	}
	cur, ok := m.app.Settings().Theme().(*appTheme)
	want := m.typeScale()
	if !ok || math.Abs(float64(cur.scale-want)) < 0.02 {
		return
	}
	go fyne.Do(func() {
		if m.presentation && m.typeScale() == want {
			m.setTheme(newTheme(m.themeChoice, want))
			m.lastPlotKey = ""
			if m.snap != nil {
				m.apply(m.snap)
			}
		}
	})
}

// setTheme makes t the window's theme. In the browser Fyne 2.7's web
// driver cannot take a new theme once it has drawn (it frees the text
// textures through a GL context it no longer holds, and the page's Go
// program dies), so there the theme in force is changed in place and
// every object of the window is refreshed and laid out again.
func (m *Main) setTheme(t *appTheme) { m.setThemeRefreshing(t, true) }

// setThemeRefreshing is setTheme; in the page, content false leaves the
// window's content to a refresh that follows anyway (SetContent, which
// refreshes every object in it), refreshing only the overlays.
func (m *Main) setThemeRefreshing(t *appTheme, content bool) {
	cur, ok := m.app.Settings().Theme().(*appTheme)
	if !inBrowser() || !ok {
		m.app.Settings().SetTheme(t)
		return
	}
	*cur = *t
	var list []fyne.CanvasObject
	if content {
		list = postOrder(list, m.win.Content())
	}
	for _, o := range m.win.Canvas().Overlays().List() {
		list = postOrder(list, o)
	}
	m.refreshInParts(list)
}

// themeParts and themeGap: in the page a new theme refreshes the
// window's objects in parts, a frame apart. Refreshed all at once, the
// refresh and the next frame's text drawn again in the new colours (every
// label's texture made anew) were one task of 150–160 ms in the page's
// profile; in three parts each frame makes about a third of them. Two
// parts still left tasks of 100–160 ms, four made the switch slower
// (docs/browser.md). A frame or two shows some objects in the new colours
// and some in the old.
const (
	themeParts = 3
	themeGap   = 10 * time.Millisecond
)

// refreshInParts refreshes list (in post order, see refreshAll) in
// themeParts parts, each on Fyne's goroutine a frame after the one
// before. A newer theme's refresh stops an older one's: it refreshes
// everything again.
func (m *Main) refreshInParts(list []fyne.CanvasObject) {
	m.themeGen++
	gen, n := m.themeGen, len(list)
	if n == 0 {
		m.themeLeft = 0
		return
	}
	next := m.afterFrame
	if next == nil {
		next = func(f func()) {
			go func() {
				time.Sleep(themeGap)
				fyne.Do(f)
			}()
		}
	}
	var part func(k int)
	part = func(k int) {
		if m.themeGen != gen {
			return
		}
		refreshList(list[k*n/themeParts : (k+1)*n/themeParts])
		m.themeLeft = themeParts - 1 - k
		if m.themeLeft > 0 {
			next(func() { part(k + 1) })
		}
	}
	part(0)
}

// refreshAll refreshes o and, through containers, everything in it, each
// object once: a container's objects first, then the container is laid
// out again for their new sizes. (fyne.Container.Refresh refreshes its
// objects itself, so refreshing each container after its objects, as this
// did, refreshed an object d containers deep d+1 times; in the page each
// refresh pays Fyne's check of the goroutine it comes from, 43% of the
// page's long tasks while presentation mode was turned on and off.) A
// scroller's bars follow its content at the next layout. The objects are
// listed first and refreshed from this one frame: the check reads the
// goroutine's stack, frame by frame, and refreshing from inside the walk
// made it as many frames deeper as the window nests containers.
func refreshAll(o fyne.CanvasObject) { refreshList(postOrder(nil, o)) }

// refreshList refreshes the objects of list, in its order, as refreshAll.
func refreshList(list []fyne.CanvasObject) {
	for _, o := range list {
		switch c := o.(type) {
		case *fyne.Container:
			if c.Layout != nil {
				c.Layout.Layout(c.Objects, c.Size())
			}
			canvas.Refresh(c)
		case *container.Scroll:
			canvas.Refresh(c)
		default:
			o.Refresh()
		}
	}
}

// postOrder appends o's tree to list through containers and scrollers,
// what each holds before it.
func postOrder(list []fyne.CanvasObject, o fyne.CanvasObject) []fyne.CanvasObject {
	if o == nil {
		return list
	}
	switch c := o.(type) {
	case *fyne.Container:
		for _, k := range c.Objects {
			list = postOrder(list, k)
		}
	case *container.Scroll:
		list = postOrder(list, c.Content)
	}
	return append(list, o)
}

// plotKey identifies what the plots show, so they re-render only when it changes.
func plotKey(sn *sim.Snapshot) string {
	k := fmt.Sprintf("%+v|%d|%v", sn.Settings, sn.Horizon, sn.Waiting)
	for _, l := range sn.Lanes {
		k += fmt.Sprintf("|%s:%d:%d", l.Info.Name, len(l.Frames), len(l.Branch))
	}
	return k
}

// apply draws a snapshot. It runs on the Fyne goroutine.
func (m *Main) apply(sn *sim.Snapshot) {
	if sn == nil || m.halted.Load() {
		return
	}
	if m.OnApplied != nil {
		defer m.OnApplied()
	}
	prev := m.snap
	m.snap = sn
	m.updating = true
	defer func() { m.updating = false }()
	if prev != nil && sn.Source != prev.Source && sn.Source != nil {
		// Another data set: its catalogue's models (one trained on it
		// in the window is there, not in MNIST's).
		m.infos = sn.Source.Catalogue.Available()
		m.fillModels()
	}
	defer m.startPendingTrain()
	if m.tokens != nil {
		defer m.tokens.draw(sn)
	}
	if m.space != nil {
		defer m.space.draw(sn)
	}
	if m.dyn != nil {
		defer m.dyn.draw(sn)
	}
	if m.pushWin != nil {
		defer m.pushWin.draw(sn)
	}

	m.showSettings(sn)
	m.speed.SetValue(sn.Speed)
	setText(m.speedLbl, fmt.Sprintf("%3.0f steps/s", sn.Speed))
	// Only when it changes: a button's setters redraw it (each step).
	if sn.Playing && m.playBtn.Text != "Pause" {
		m.playBtn.SetText("Pause")
		m.playBtn.SetIcon(theme.MediaPauseIcon())
	} else if !sn.Playing && m.playBtn.Text != "Play" {
		m.playBtn.SetText("Play")
		m.playBtn.SetIcon(theme.MediaPlayIcon())
	}
	maxT := 0
	for _, l := range sn.Lanes {
		maxT = max(maxT, len(l.Frames)-1)
		if len(l.Branch) > 0 {
			maxT = max(maxT, l.Branch[len(l.Branch)-1].T)
		}
	}
	if mx := float64(max(maxT, 1)); m.timeline.Max != mx {
		// SetValue does not redraw when t is unchanged (ViT at t = 5 →
		// block at t = 5), so a new range is drawn here.
		m.timeline.Max = mx
		m.timeline.Refresh()
	}
	m.timeline.SetValue(float64(sn.T))

	if prev == nil || !sameModels(prev, sn) {
		// A selected patch is a patch of the model it was made on:
		// another model (or patch size, or set of lanes) has other
		// patches, and the selection ends with it.
		m.query, m.lane = -1, 0
	}
	if prev == nil || !slices.Equal(prev.Settings.Lanes, sn.Settings.Lanes) || len(m.states) != panelCount(sn) ||
		(len(sn.Lanes) == 1 && pushedPanel(prev) != pushedPanel(sn)) {
		m.layoutCenter(panelCount(sn))
	}
	if m.lane >= len(sn.Lanes) {
		m.query, m.lane = -1, 0
	}
	m.redrawImages()
	m.drawPlots(sn)
	m.drawText(sn)
	m.drawLesson()
	switch {
	case sn.Err != "":
		m.setError(sn.Err)
	case m.statusErr && prev != nil && !reflect.DeepEqual(prev.Settings, sn.Settings):
		m.setStatus("") // an accepted change ends the last problem
	case prev != nil && prev.Playing && !sn.Playing && sn.End > 0 && sn.T >= sn.End:
		m.setStatus(fmt.Sprintf("playback stopped at t = %d, the last step a run goes to here; %s restarts, ← steps back", sn.End, restartKey()))
	}
}

// restartKey names the key that goes back to t = 0.
func restartKey() string {
	if inBrowser() {
		return "0"
	}
	return "Home (or 0)"
}

// sameModels reports whether a and b show the same models in the same
// lanes, with the same tokens (a selection made on a stays valid on b).
func sameModels(a, b *sim.Snapshot) bool {
	if len(a.Lanes) != len(b.Lanes) {
		return false
	}
	for k := range a.Lanes {
		x, y := a.Lanes[k].Info, b.Lanes[k].Info
		if x.Name != y.Name || x.Patch != y.Patch || x.Tokens != y.Tokens {
			return false
		}
	}
	return true
}

// writePNG encodes an image (used by exports).
func writePNG(w io.Writer, img image.Image) error { return png.Encode(w, img) }

// SavePreferences remembers the current scenario for the next run.
func (m *Main) SavePreferences() {
	if m.snap == nil {
		return
	}
	var b bytes.Buffer
	if err := sim.WriteScenario(&b, m.snap); err == nil {
		m.app.Preferences().SetString("last_scenario", b.String())
	}
}

// fitWindow gives a secondary window its content and its size: want, or
// the main window's size or the screen's where that is smaller (a
// laptop's page, a small screen). Content whose least size exceeds that scrolls inside the window
// rather than pushing the window's bottom off the screen.
//
// The window's Content is then the scroll, not content.
func (m *Main) fitWindow(w fyne.Window, content fyne.CanvasObject, want fyne.Size) {
	room := m.win.Canvas().Size()
	if room.Width <= 0 || room.Height <= 0 {
		room = want
	}
	if m.deps.WorkArea != nil {
		// The main window can be wider than a small screen (its least
		// width): the screen bounds a new window too.
		if area, ok := m.deps.WorkArea(); ok {
			const title = 40 // the window manager's title bar, about
			room = fyne.NewSize(min(room.Width, area.Width), min(room.Height, area.Height-title))
		}
	}
	// Always in a scroll: a content's least size can grow after it is
	// laid out (wrapped text at a narrower width), and the scroll fills
	// the window like the content alone where there is room.
	w.SetContent(container.NewScroll(content))
	w.Resize(fyne.NewSize(min(want.Width, room.Width), min(want.Height, room.Height)))
}

// Warn shows a problem (a weights file that did not load) in a dialog and
// the status line; the window stays usable with what did load.
func (m *Main) Warn(msg string) {
	m.setStatus(msg)
	m.showError(errors.New(msg))
}

// showError shows a problem in a dialog whose text wraps at a readable
// width (Fyne's error dialog lays a long message over its icon).
func (m *Main) showError(err error) {
	l := widget.NewLabel(err.Error())
	l.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustom("Error", "Close", l, m.win)
	d.Resize(fyne.NewSize(min(560, m.win.Canvas().Size().Width-40), d.MinSize().Height+
		fyne.MeasureText(err.Error(), theme.TextSize(), fyne.TextStyle{}).Width/480*theme.TextSize()*1.5))
	m.showDialog(d)
}

// readoutRow lays out the readout (t and each model's answer) at the
// width its text needs, leaving the status line what its text needs up to
// readoutStatusMin (two equal halves cut the readout with "…" while the
// status line was empty).
type readoutRow struct{}

func (readoutRow) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	if len(objs) != 2 {
		return
	}
	w := min(max(readoutWidth(objs[0]), s.Width/2), s.Width-min(readoutWidth(objs[1]), readoutStatusMin))
	objs[0].Move(fyne.NewPos(0, 0))
	objs[0].Resize(fyne.NewSize(w, s.Height))
	objs[1].Move(fyne.NewPos(w, 0))
	objs[1].Resize(fyne.NewSize(s.Width-w, s.Height))
}

func (readoutRow) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var sz fyne.Size
	for _, o := range objs {
		sz.Width += o.MinSize().Width
		sz.Height = max(sz.Height, o.MinSize().Height)
	}
	return sz
}

// statusCell is the status line's place beside the readout: two lines
// it wraps onto, or in presentation (where every line of the projector
// counts, and the focus layout sizes the images to what is left) one line
// ending in "…" when it is too long — the readout beside it is never cut.
func (m *Main) statusCell() fyne.CanvasObject {
	if m.presentation {
		m.status.Wrapping = fyne.TextWrapOff
		m.status.Truncation = fyne.TextTruncateEllipsis
		return m.status
	}
	return twoLines(m.status)
}

// readoutStatusMin is the width the status line keeps beside a long
// readout (the status line's text is cut, the readout's is not).
const readoutStatusMin = 150

// readoutWidth is the width a label needs to show its text whole.
func readoutWidth(o fyne.CanvasObject) float32 {
	var text string
	var style fyne.TextStyle
	switch l := o.(type) {
	case *widget.Label:
		text, style = l.Text, l.TextStyle
	case *Lines:
		if !strings.Contains(l.Text, "\n") {
			return l.lineSize(l.Text, true, theme.TextSize()).Width + 2*theme.InnerPadding() + 1
		}
		text, style = l.Text, l.TextStyle
	default:
		return o.MinSize().Width
	}
	return fyne.MeasureText(text, theme.TextSize(), style).Width + 2*theme.InnerPadding() + 1
}

// fixedWidth lays out its objects at a fixed width and the full height.
type fixedWidth float32

func (f fixedWidth) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(fyne.NewSize(float32(f), s.Height))
	}
}

func (f fixedWidth) MinSize(objs []fyne.CanvasObject) fyne.Size {
	h := float32(0)
	for _, o := range objs {
		h = max(h, min(o.MinSize().Height, 200))
	}
	return fyne.NewSize(float32(f), h)
}
