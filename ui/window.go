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
	"math/rand/v2"
	"slices"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"attractorlab/models"
	"attractorlab/sim"
)

// Deps is what the window needs: the data, the stored memories and the
// model catalogue.
type Deps struct {
	Data     *sim.Data
	Memories *sim.Memories
	Models   []sim.Model
}

// Main is the main window's content and its state. All fields are touched
// only on the Fyne goroutine; the engine runs in its own goroutine and
// reaches the view through fyne.Do.
type Main struct {
	app    fyne.App
	win    fyne.Window
	deps   Deps
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

	// widgets
	root       *fyne.Container
	sidebar    fyne.CanvasObject
	split      *widget.Select
	index      *widget.Entry
	labelSel   *widget.Select
	kind       *widget.RadioGroup
	level      *widget.Slider
	levelLabel *widget.Label
	seed       *widget.Entry
	modelCheck *widget.CheckGroup
	lambda     *widget.Slider
	lambdaLbl  *widget.Label
	gamma      *widget.Slider
	gammaLbl   *widget.Label
	attn       *widget.RadioGroup
	beta       *widget.Slider
	betaLbl    *widget.Label
	kEntry     *widget.Entry
	async      *widget.Check
	gridCheck  *widget.Check
	themeSel   *widget.Select

	clean, input *PixelView
	states       []*PixelView
	stateTitles  []*widget.Label
	nearest      *PixelView
	nearestLbl   *widget.Label
	heat         []*Heatmap
	patterns     map[int]*PatternsView
	heatTitles   []*widget.Label
	msePlot      *PlotView
	mseLegend    *fyne.Container
	energyPlot   *PlotView
	hist         *Histogram
	center       *fyne.Container

	playBtn   *widget.Button
	transport *fyne.Container
	speed     *widget.Slider
	speedLbl  *widget.Label
	timeline  *widget.Slider
	tLabel    *widget.Label
	status    *widget.Label

	updating bool // true while apply sets widget values (their callbacks must not send commands)
}

// NewMain builds the window content for w and starts the engine, which
// stops when ctx ends (the window closes). settings are the initial ones.
func NewMain(ctx context.Context, a fyne.App, w fyne.Window, deps Deps, settings sim.Settings) *Main {
	m := &Main{app: a, win: w, deps: deps, query: -1}
	m.themeChoice = a.Preferences().StringWithFallback("theme", "System")
	m.showGrid = a.Preferences().BoolWithFallback("grid", true)
	a.Settings().SetTheme(newTheme(m.themeChoice, false))
	m.build()
	m.Engine = sim.NewEngine(sim.EngineConfig{Data: deps.Data, Memories: deps.Memories, Models: deps.Models,
		Settings: settings, OnSnap: func(sn *sim.Snapshot) { fyne.Do(func() { m.apply(sn) }) }})
	go m.Engine.Run(ctx)
	return m
}

// NewMainSync is NewMain with a synchronous engine, for tests: commands
// take effect before they return.
func NewMainSync(a fyne.App, w fyne.Window, deps Deps, settings sim.Settings) *Main {
	m := &Main{app: a, win: w, deps: deps, query: -1, themeChoice: "System", showGrid: true}
	m.build()
	m.Engine = sim.NewEngine(sim.EngineConfig{Data: deps.Data, Memories: deps.Memories, Models: deps.Models,
		Settings: settings, Synchronous: true, OnSnap: m.apply})
	m.Engine.Settle()
	return m
}

// Content is the window's root object.
func (m *Main) Content() fyne.CanvasObject { return m.root }

func heading(s string) fyne.CanvasObject {
	return widget.NewLabelWithStyle(s, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
}

func (m *Main) build() {
	// Digit.
	m.split = widget.NewSelect([]string{"test", "train"}, func(s string) {
		m.send(func(st *sim.Settings) {
			st.Split = sim.TestSplit
			if s == "train" {
				st.Split = sim.TrainSplit
			}
			st.Index = 0
		})
	})
	m.index = widget.NewEntry()
	m.index.OnSubmitted = func(s string) {
		k, err := strconv.Atoi(s)
		if err != nil {
			m.setStatus(fmt.Sprintf("%q is not a digit index", s))
			return
		}
		m.send(func(st *sim.Settings) { st.Index = k })
	}
	labels := []string{"any"}
	for d := 0; d <= 9; d++ {
		labels = append(labels, strconv.Itoa(d))
	}
	m.labelSel = widget.NewSelect(labels, func(string) {})
	m.labelSel.SetSelected("any")
	random := widget.NewButtonWithIcon("Random", theme.ViewRefreshIcon(), m.randomDigit)
	gallery := widget.NewButtonWithIcon("Gallery", theme.GridIcon(), m.showGallery)
	digit := container.NewVBox(heading("Digit"),
		container.NewGridWithColumns(2, m.split, m.index),
		container.NewBorder(nil, nil, widget.NewLabel("label"), nil, m.labelSel),
		container.NewGridWithColumns(2, random, gallery))

	// Corruption.
	m.kind = widget.NewRadioGroup([]string{"mask", "noise"}, func(s string) {
		k, _ := sim.ParseKind(s)
		m.send(func(st *sim.Settings) { st.Corruption.Kind = k })
	})
	m.kind.Horizontal = true
	m.level = widget.NewSlider(0, 1)
	m.level.Step = 0.05
	m.levelLabel = widget.NewLabel("")
	m.level.OnChangeEnded = func(v float64) {
		m.send(func(st *sim.Settings) {
			if st.Corruption.Kind == sim.Mask {
				st.Corruption.Fraction = min(v, 0.95)
			} else {
				st.Corruption.Sigma2 = v
			}
		})
	}
	m.level.OnChanged = func(v float64) { m.showLevel(v) }
	m.seed = widget.NewEntry()
	m.seed.OnSubmitted = func(s string) {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			m.setStatus(fmt.Sprintf("seed %q is not a non-negative integer", s))
			return
		}
		m.send(func(st *sim.Settings) { st.Corruption.Seed = v })
	}
	reroll := widget.NewButtonWithIcon("Re-roll", theme.MediaReplayIcon(), func() {
		m.send(func(st *sim.Settings) { st.Corruption.Seed++ })
	})
	corr := container.NewVBox(heading("Corruption"), m.kind,
		m.levelLabel, m.level,
		container.NewBorder(nil, nil, widget.NewLabel("seed"), reroll, m.seed),
		hint("click a patch of the input to mask or unmask it"))

	// Models.
	var names []string
	for _, md := range m.deps.Models {
		names = append(names, md.Info().Label)
	}
	m.modelCheck = widget.NewCheckGroup(names, func(sel []string) {
		if m.updating {
			return
		}
		if len(sel) == 0 || len(sel) > 4 {
			m.setStatus("choose 1 to 4 models (more than one compares them in lockstep)")
			m.apply(m.snap)
			return
		}
		var lanes []string
		for _, md := range m.deps.Models {
			if slices.Contains(sel, md.Info().Label) {
				lanes = append(lanes, md.Info().Name)
			}
		}
		m.send(func(st *sim.Settings) { st.Lanes = lanes })
	})
	models_ := container.NewVBox(heading("Models"), m.modelCheck, hint("tick 2–4 to compare in lockstep"))

	// Dynamics.
	m.lambda = widget.NewSlider(0.1, 5)
	m.lambda.Step = 0.1
	m.lambdaLbl = widget.NewLabel("")
	m.lambda.OnChanged = func(v float64) { m.lambdaLbl.SetText(paramText("λ", v, 1)) }
	m.lambda.OnChangeEnded = func(v float64) { m.send(func(st *sim.Settings) { st.Dyn.Lambda = float32(v) }) }
	m.gamma = widget.NewSlider(0, 2)
	m.gamma.Step = 0.05
	m.gammaLbl = widget.NewLabel("")
	m.gamma.OnChanged = func(v float64) { m.gammaLbl.SetText(paramText("γ", v, 0.5)) }
	m.gamma.OnChangeEnded = func(v float64) { m.send(func(st *sim.Settings) { st.Dyn.Gamma = float32(v) }) }
	m.attn = widget.NewRadioGroup([]string{"softmax", "relu/seqlen"}, func(s string) {
		m.send(func(st *sim.Settings) {
			st.Dyn.Attn = models.Softmax
			if s == "relu/seqlen" {
				st.Dyn.Attn = models.ReluSeqlen
			}
		})
	})
	m.attn.Horizontal = true
	defaults := widget.NewButton("Paper defaults", func() {
		m.send(func(st *sim.Settings) { st.Dyn = models.DefaultDynamics() })
	})
	dyn := container.NewVBox(heading("Dynamics (BSA)"),
		m.lambdaLbl, m.lambda, m.gammaLbl, m.gamma,
		m.attn, defaults)

	// Hopfield comparators.
	m.beta = widget.NewSlider(-2, 1)
	m.beta.Step = 0.05
	m.betaLbl = widget.NewLabel("")
	m.beta.OnChanged = func(v float64) { m.betaLbl.SetText(betaText(math.Pow(10, v))) }
	m.beta.OnChangeEnded = func(v float64) {
		m.send(func(st *sim.Settings) { st.Hop.Beta = float32(math.Pow(10, v)) })
	}
	m.kEntry = widget.NewEntry()
	m.kEntry.OnSubmitted = func(s string) {
		k, err := strconv.Atoi(s)
		if err != nil || k < 1 || k > 1000 {
			m.setStatus(fmt.Sprintf("K = %q: stored digits must be 1..1000", s))
			return
		}
		m.send(func(st *sim.Settings) { st.Hop.K = k })
	}
	m.async = widget.NewCheck("asynchronous sweeps", func(b bool) { m.send(func(st *sim.Settings) { st.Hop.Async = b }) })
	hop := container.NewVBox(heading("Hopfield"), m.betaLbl, m.beta,
		container.NewBorder(nil, nil, widget.NewLabel("classical K"), nil, m.kEntry), m.async)

	// View and export.
	m.gridCheck = widget.NewCheck("patch grid", func(b bool) {
		m.showGrid = b
		m.app.Preferences().SetBool("grid", b)
		m.redrawImages()
	})
	m.gridCheck.SetChecked(m.showGrid)
	m.themeSel = widget.NewSelect(themeChoices, func(s string) {
		m.themeChoice = s
		m.app.Preferences().SetString("theme", s)
		m.app.Settings().SetTheme(newTheme(s, m.presentation))
		m.lastPlotKey = ""
		if m.snap != nil {
			m.apply(m.snap)
		}
	})
	m.themeSel.SetSelected(m.themeChoice)
	present := widget.NewButtonWithIcon("Presentation (F11)", theme.ViewFullScreenIcon(), m.togglePresentation)
	exportBtn := widget.NewButtonWithIcon("Export…", theme.DocumentSaveIcon(), m.showExport)
	openBtn := widget.NewButtonWithIcon("Open scenario…", theme.FolderOpenIcon(), m.openScenario)
	view := container.NewVBox(heading("View"), container.NewGridWithColumns(2, m.gridCheck, m.themeSel), present,
		exportBtn, openBtn)

	// The scroll bar overlays the right edge: keep the controls clear of it.
	gutter := canvas.NewRectangle(color.Transparent)
	gutter.SetMinSize(fyne.NewSize(10, 0))
	m.sidebar = container.NewVScroll(container.NewBorder(nil, nil, nil, gutter,
		container.NewVBox(digit, widget.NewSeparator(), corr, widget.NewSeparator(),
			models_, widget.NewSeparator(), dyn, widget.NewSeparator(), hop, widget.NewSeparator(), view)))

	// Images.
	m.clean = NewPixelView()
	m.clean.OnHover = func(q int) { m.hover(describe("clean", m.clean.Pixels, q)) }
	m.input = NewPixelView()
	m.input.OnTapped = func(i int) { m.Engine.TogglePatch(i) }
	m.input.OnHover = func(q int) { m.hover(describe("input", m.input.Pixels, q)) }
	m.nearest = NewPixelView()
	m.nearestLbl = widget.NewLabel("")
	m.nearestLbl.Truncation = fyne.TextTruncateEllipsis

	m.msePlot = NewPlotView()
	m.msePlot.OnSeek = func(t int) { m.Engine.Seek(t) }
	m.energyPlot = NewPlotView()
	m.energyPlot.OnSeek = func(t int) { m.Engine.Seek(t) }
	m.hist = NewHistogram()
	m.center = container.NewStack()

	// Transport.
	m.playBtn = widget.NewButtonWithIcon("Play", theme.MediaPlayIcon(), func() { m.Engine.TogglePlay() })
	back := widget.NewButtonWithIcon("", theme.MediaSkipPreviousIcon(), func() { m.Engine.Back() })
	step := widget.NewButtonWithIcon("", theme.MediaSkipNextIcon(), func() { m.Engine.Step() })
	reset := widget.NewButtonWithIcon("Reset", theme.MediaReplayIcon(), func() { m.Engine.Reset() })
	best := widget.NewButton("t*", func() { m.Engine.SeekBest() })
	m.speed = widget.NewSlider(1, 120)
	m.speed.SetValue(10)
	m.speed.Step = 1
	m.speedLbl = widget.NewLabel("")
	m.speed.OnChanged = func(v float64) {
		m.speedLbl.SetText(fmt.Sprintf("%3.0f steps/s", v))
		if !m.updating {
			m.Engine.SetSpeed(v)
		}
	}
	m.timeline = widget.NewSlider(0, 100)
	m.timeline.Step = 1
	m.timeline.OnChanged = func(v float64) {
		if !m.updating {
			m.Engine.Seek(int(v))
		}
	}
	m.tLabel = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	m.status = widget.NewLabel("")
	m.status.Truncation = fyne.TextTruncateEllipsis
	speedBox := container.NewBorder(nil, nil, nil, m.speedLbl, container.NewGridWrap(fyne.NewSize(120, 36), m.speed))
	m.transport = container.NewBorder(nil, nil,
		container.NewHBox(reset, back, m.playBtn, step, best), speedBox, m.timeline)
	bottom := container.NewVBox(m.transport, container.NewBorder(nil, nil, m.tLabel, nil, m.status))

	m.sidebar = container.New(fixedWidth(sidebarWidth), m.sidebar)
	m.root = container.NewBorder(nil, bottom, m.sidebar, nil, m.center)
	m.win.Canvas().SetOnTypedKey(m.typedKey)
}

// sidebarWidth is the controls column's width (it scrolls vertically).
const sidebarWidth = 300

func hint(s string) fyne.CanvasObject {
	l := widget.NewLabel(s)
	l.Importance = widget.LowImportance
	l.Wrapping = fyne.TextWrapWord
	return l
}

func paramText(name string, v, def float64) string {
	if math.Abs(v-def) < 1e-6 {
		return fmt.Sprintf("%s %.2f (paper)", name, v)
	}
	return fmt.Sprintf("%s %.2f", name, v)
}

func betaText(b float64) string {
	if math.Abs(b-float64(sim.DefaultHopfield().Beta)) < 1e-3*b {
		return fmt.Sprintf("modern β %.3g (default)", b)
	}
	return fmt.Sprintf("modern β %.3g", b)
}

func (m *Main) showLevel(v float64) {
	if m.kind.Selected == "noise" {
		m.levelLabel.SetText(fmt.Sprintf("σ² %.2f", v))
	} else {
		m.levelLabel.SetText(fmt.Sprintf("%2.0f%% masked", 100*v))
	}
}

// send applies a settings change unless the view itself is updating.
func (m *Main) send(f func(*sim.Settings)) {
	if m.updating || m.Engine == nil {
		return
	}
	m.Engine.Update(f)
}

func (m *Main) setStatus(s string) { m.status.SetText(s) }

func (m *Main) hover(s string) {
	m.hoverText = s
	m.status.SetText(s)
}

// typedKey implements the keyboard shortcuts.
func (m *Main) typedKey(k *fyne.KeyEvent) {
	switch k.Name {
	case fyne.KeySpace:
		m.Engine.TogglePlay()
	case fyne.KeyRight:
		m.Engine.Step()
	case fyne.KeyLeft:
		m.Engine.Back()
	case fyne.KeyHome:
		m.Engine.Reset()
	case fyne.KeyT:
		m.Engine.SeekBest()
	case fyne.KeyH:
		m.cycleHead()
	case fyne.KeyF11:
		m.togglePresentation()
	case fyne.KeyEscape:
		if m.presentation {
			m.togglePresentation()
		}
	case fyne.Key1, fyne.Key2, fyne.Key3, fyne.Key4, fyne.Key5, fyne.Key6:
		k := int(k.Name[0] - '1')
		if k < len(m.deps.Models) {
			name := m.deps.Models[k].Info().Name
			m.Engine.Update(func(st *sim.Settings) { st.Lanes = []string{name} })
		}
	}
}

// cycleHead shows the next attention head of multi-head models (the
// transformers): average, head 1, …, head H, average.
func (m *Main) cycleHead() {
	heads := 0
	for _, md := range m.deps.Models {
		heads = max(heads, md.Info().Heads)
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

// shownAttention is the part of a frame's attention the window shows: the
// selected head (or the head average) of a multi-head model, else all of it.
func (m *Main) shownAttention(f *sim.Frame, info sim.ModelInfo) []float32 {
	if f == nil || f.Attn == nil || info.Tokens == 0 {
		return f.Attn
	}
	n := info.Tokens * info.Tokens
	h := 0
	if info.Heads > 1 {
		h = min(m.head, info.Heads)
	}
	if len(f.Attn) < (h+1)*n {
		return f.Attn[:n]
	}
	return f.Attn[h*n : (h+1)*n]
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
	m.app.Settings().SetTheme(newTheme(m.themeChoice, m.presentation))
	m.win.SetFullScreen(m.presentation)
	m.lastPlotKey = ""
	if m.snap != nil {
		m.layoutCenter(len(m.snap.Lanes))
		m.apply(m.snap)
	}
	m.root.Refresh()
}

// chosenSet is the digit set of the split selector and the label filter
// (−1 for any label).
func (m *Main) chosenSet() (*sim.Set, int) {
	set := m.deps.Data.Test
	if m.split.Selected == "train" {
		set = m.deps.Data.Train
	}
	want := -1
	if m.labelSel.Selected != "any" {
		want, _ = strconv.Atoi(m.labelSel.Selected)
	}
	return set, want
}

func (m *Main) randomDigit() {
	set, want := m.chosenSet()
	for range 100000 {
		k := rand.IntN(set.Len())
		if want < 0 || int(set.Labels[k]) == want {
			m.send(func(st *sim.Settings) { st.Index = k })
			return
		}
	}
}

// showGallery opens a grid of thumbnails (filtered by label) to click.
func (m *Main) showGallery() {
	set, want := m.chosenSet()
	var idx []int
	for k := 0; k < set.Len() && len(idx) < 120; k++ {
		if want < 0 || int(set.Labels[k]) == want {
			idx = append(idx, k)
		}
	}
	var d dialog.Dialog
	grid := container.NewGridWrap(fyne.NewSize(64, 64))
	for _, k := range idx {
		img := canvas.NewImageFromImage(grayImage(set.Clean(k, sim.PixelGain)))
		img.ScaleMode = canvas.ImageScalePixels
		k := k
		b := newTapImage(img, func() {
			m.send(func(st *sim.Settings) { st.Index = k })
			d.Hide()
		})
		grid.Add(b)
	}
	scroll := container.NewVScroll(grid)
	scroll.SetMinSize(fyne.NewSize(700, 460))
	d = dialog.NewCustom(fmt.Sprintf("%s digits (label %s): click one", m.split.Selected, m.labelSel.Selected), "Close", scroll, m.win)
	d.Show()
}

// plotKey identifies what the plots show, so they re-render only when it changes.
func plotKey(sn *sim.Snapshot) string {
	k := fmt.Sprintf("%+v|%d", sn.Settings, sn.Horizon)
	for _, l := range sn.Lanes {
		k += fmt.Sprintf("|%s:%d", l.Info.Name, len(l.Frames))
	}
	return k
}

// apply draws a snapshot. It runs on the Fyne goroutine.
func (m *Main) apply(sn *sim.Snapshot) {
	if sn == nil {
		return
	}
	prev := m.snap
	m.snap = sn
	m.updating = true
	defer func() { m.updating = false }()
	st := sn.Settings

	// Controls reflect the settings.
	m.split.SetSelected(st.Split.String())
	if !m.index.Disabled() && m.win.Canvas().Focused() != m.index {
		m.index.SetText(strconv.Itoa(st.Index))
	}
	m.kind.SetSelected(st.Corruption.Kind.String())
	if st.Corruption.Kind == sim.Mask {
		m.level.Min, m.level.Max, m.level.Step = 0, 0.9, 0.05
		m.level.SetValue(st.Corruption.Fraction)
	} else {
		m.level.Min, m.level.Max, m.level.Step = 0, 2, 0.05
		m.level.SetValue(st.Corruption.Sigma2)
	}
	m.showLevel(m.level.Value)
	if m.win.Canvas().Focused() != m.seed {
		m.seed.SetText(strconv.FormatUint(st.Corruption.Seed, 10))
	}
	var sel []string
	for _, l := range sn.Lanes {
		sel = append(sel, l.Info.Label)
	}
	m.modelCheck.SetSelected(sel)
	m.lambda.SetValue(float64(st.Dyn.Lambda))
	m.lambdaLbl.SetText(paramText("λ", float64(st.Dyn.Lambda), 1))
	m.gamma.SetValue(float64(st.Dyn.Gamma))
	m.gammaLbl.SetText(paramText("γ", float64(st.Dyn.Gamma), 0.5))
	m.attn.SetSelected(st.Dyn.Attn.String())
	m.beta.SetValue(math.Log10(float64(st.Hop.Beta)))
	m.betaLbl.SetText(betaText(float64(st.Hop.Beta)))
	if m.win.Canvas().Focused() != m.kEntry {
		m.kEntry.SetText(strconv.Itoa(st.Hop.K))
	}
	m.async.SetChecked(st.Hop.Async)
	m.speed.SetValue(sn.Speed)
	m.speedLbl.SetText(fmt.Sprintf("%3.0f steps/s", sn.Speed))
	if sn.Playing {
		m.playBtn.SetText("Pause")
		m.playBtn.SetIcon(theme.MediaPauseIcon())
	} else {
		m.playBtn.SetText("Play")
		m.playBtn.SetIcon(theme.MediaPlayIcon())
	}
	maxT := 0
	for _, l := range sn.Lanes {
		maxT = max(maxT, len(l.Frames)-1)
	}
	if mx := float64(max(maxT, 1)); m.timeline.Max != mx {
		// SetValue does not redraw when t is unchanged (ViT at t = 5 →
		// block at t = 5), so a new range is drawn here.
		m.timeline.Max = mx
		m.timeline.Refresh()
	}
	m.timeline.SetValue(float64(sn.T))

	if prev == nil || !slices.Equal(prev.Settings.Lanes, sn.Settings.Lanes) || len(m.states) != len(sn.Lanes) {
		m.layoutCenter(len(sn.Lanes))
	}
	if m.lane >= len(sn.Lanes) {
		m.lane = 0
	}
	m.redrawImages()
	m.drawPlots(sn)
	m.drawText(sn)
	if sn.Err != "" {
		m.setStatus(sn.Err)
	}
}

type tapImage struct {
	widget.BaseWidget
	img *canvas.Image
	tap func()
}

func newTapImage(img *canvas.Image, tap func()) *tapImage {
	t := &tapImage{img: img, tap: tap}
	t.ExtendBaseWidget(t)
	return t
}

func (t *tapImage) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(t.img) }
func (t *tapImage) Tapped(*fyne.PointEvent)             { t.tap() }
func (t *tapImage) Cursor() desktop.Cursor              { return desktop.PointerCursor }

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

// Warn shows a problem (a weights file that did not load) in a dialog and
// the status line; the window stays usable with what did load.
func (m *Main) Warn(msg string) {
	m.setStatus(msg)
	dialog.ShowError(errors.New(msg), m.win)
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
