package ui

import (
	"attractorlab/sim"
	"attractorlab/sim/mnist"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// The sidebar: one function per group of controls. Ranges, defaults and
// names come from sim's settings; controls send changes to the engine and
// showSettings sets them back from each snapshot.

// controls are the sidebar's widgets.
type controls struct {
	split      *keySelect
	dataset    *keySelect        // the data set the digits come from
	datasets   map[string]string // the picker's labels' data sets
	index      *keyEntry
	labelSel   *keySelect
	kind       *choice
	level      *keySlider
	levelLabel *widget.Label
	seed       *keyEntry
	modelCheck []*keyCheck // one per model of the catalogue, in menu order
	modelBox   *fyne.Container
	// modelChanged is the model checks' handler
	modelChanged func(bool)
	knobs        []*knobControl // one per model parameter (sim.ParamKnobs)
	attn         *choice
	async        *keyCheck
	gridCheck    *keyCheck
	logCheck     *keyCheck  // the MSE plot's log y axis
	scaleSel     *keySelect // the attention maps' colour scale
	themeSel     *keySelect
	ownHint      fyne.CanvasObject // shown when the digit is the person's own
	maskHint     fyne.CanvasObject // shown under masking
	noiseHint    fyne.CanvasObject // shown under noise
}

// digitControls builds the split, index, label filter, Random and Gallery.
func (m *Main) digitControls() fyne.CanvasObject {
	// MNIST, Fashion-MNIST and the folders of pictures in the cache
	// (attractorlab data --dataset FOLDER), by the names people read.
	m.side.datasets = map[string]string{}
	var names []string
	for _, d := range append(slices.Clone(mnist.Datasets), sim.Folders()...) {
		names = append(names, mnist.DatasetLabel(d))
		m.side.datasets[mnist.DatasetLabel(d)] = d
	}
	m.side.dataset = newKeySelect(names, func(s string) {
		d, ok := m.side.datasets[s]
		if !ok || m.snap == nil || m.snap.Settings.DatasetName() == d {
			return
		}
		if d == mnist.MNISTName {
			d = "" // settings name MNIST by naming none
		}
		m.send(func(st *sim.Settings) { st.Dataset, st.Index, st.Own = d, 0, nil })
	}, m.handleKey)
	m.side.split = newKeySelect(sim.Splits, func(s string) {
		sp, err := sim.ParseSplit(s)
		if err != nil {
			m.setError(err.Error())
			return
		}
		m.send(func(st *sim.Settings) { st.Split, st.Index = sp, 0 })
	}, m.handleKey)
	m.side.index = newKeyEntry(func() {
		m.win.Canvas().Unfocus()
		if m.snap != nil {
			m.side.index.SetText(strconv.Itoa(m.snap.Settings.Index))
		}
	})
	m.side.index.OnSubmitted = submitOnFyne(func(s string) {
		// The field shows the digit the engine has, after this change or
		// after refusing it (the status says why).
		m.win.Canvas().Unfocus()
		k, err := strconv.Atoi(s)
		if err != nil {
			m.setError(fmt.Sprintf("%q is not a digit index", s))
			if m.snap != nil {
				m.side.index.SetText(strconv.Itoa(m.snap.Settings.Index))
			}
			return
		}
		m.send(func(st *sim.Settings) { st.Index = k })
	})
	labels := []string{"any"}
	for d := 0; d <= 9; d++ {
		labels = append(labels, strconv.Itoa(d))
	}
	m.side.labelSel = newKeySelect(labels, func(string) { m.nextOfLabel() }, m.handleKey)
	m.side.labelSel.SetSelected("any")
	random := newKeyButton("Random", theme.ViewRefreshIcon(), m.randomDigit, m.handleKey)
	gallery := newKeyButton("Gallery", theme.GridIcon(), m.showGallery, m.handleKey)
	draw := newKeyButton("Draw", theme.DocumentCreateIcon(), m.showDraw, m.handleKey)
	picture := newKeyButton("Picture", theme.FileImageIcon(), m.openPicture, m.handleKey)
	m.side.ownHint = hint("your own digit is the clean digit; choose a stored digit above to go back")
	m.side.ownHint.Hide()
	digit := container.NewVBox(heading("Digit"),
		container.NewBorder(nil, nil, widget.NewLabel("data"), nil, m.side.dataset),
		container.NewGridWithColumns(2, m.side.split, m.side.index),
		container.NewBorder(nil, nil, widget.NewLabel("label"), nil, m.side.labelSel),
		container.NewGridWithColumns(2, random, gallery),
		container.NewGridWithColumns(2, draw, picture),
		m.side.ownHint)
	return digit
}

// corruptionControls builds mask or noise, its level, the seed and Re-roll.
func (m *Main) corruptionControls() fyne.CanvasObject {
	m.side.kind = newChoice(sim.Tasks, func(s string) {
		k, err := sim.ParseKind(s)
		if err != nil {
			m.setError(err.Error())
			return
		}
		m.send(func(st *sim.Settings) { st.Corruption.Kind = k })
	}, m.handleKey)
	m.side.level = newKeySlider(0, 1, 0.05, m.handleKey)
	m.side.levelLabel = widget.NewLabel("")
	m.side.level.OnChangeEnded = func(v float64) {
		m.send(func(st *sim.Settings) { sim.LevelKnob(st.Corruption.Kind).Set(st, v) })
	}
	m.side.level.OnChanged = func(v float64) { m.showLevel(v) }
	m.side.seed = newKeyEntry(func() {
		m.win.Canvas().Unfocus()
		if m.snap != nil {
			m.side.seed.SetText(strconv.FormatUint(m.snap.Settings.Corruption.Seed, 10))
		}
	})
	m.side.seed.OnSubmitted = submitOnFyne(func(s string) {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			m.setError(fmt.Sprintf("seed %q is not a non-negative integer", s))
			return
		}
		m.send(func(st *sim.Settings) { st.Corruption.Seed = v })
	})
	reroll := newKeyButton("Re-roll", theme.MediaReplayIcon(), func() {
		m.send(func(st *sim.Settings) { st.Corruption.Seed++ })
	}, m.handleKey)
	m.side.maskHint = hint("click a patch of the input to mask or unmask it")
	m.side.noiseHint = hint("every pixel gets noise of variance σ²; Re-roll draws new noise")
	corr := container.NewVBox(heading("Corruption"), m.side.kind.box,
		m.side.levelLabel, m.side.level,
		container.NewBorder(nil, nil, widget.NewLabel("seed"), reroll, m.side.seed),
		m.side.maskHint, m.side.noiseHint)
	return corr
}

// modelControls builds the models to run (1 to 4 compare in lockstep).
func (m *Main) modelControls() fyne.CanvasObject {
	changed := func(bool) {
		if m.updating {
			return
		}
		var lanes []string
		for k, c := range m.side.modelCheck {
			if c.Checked {
				lanes = append(lanes, m.infos[k].Name)
			}
		}
		if len(lanes) == 0 || len(lanes) > sim.MaxLanes {
			m.setError(fmt.Sprintf("choose 1 to %d models (more than one compares them in lockstep)", sim.MaxLanes))
			m.apply(m.snap)
			return
		}
		m.send(func(st *sim.Settings) { st.Lanes = lanes })
	}
	m.side.modelBox = container.NewVBox()
	m.side.modelChanged = changed
	m.fillModels()
	return m.side.modelBox
}

// fillModels lists the catalogue's models (m.infos) in the sidebar.
func (m *Main) fillModels() {
	box := m.side.modelBox
	box.RemoveAll()
	box.Add(heading("Models"))
	m.side.modelCheck = nil
	for k, md := range m.infos {
		c := newKeyCheck(fmt.Sprintf("%d  %s", k+1, md.Label), m.side.modelChanged, m.handleKey)
		m.side.modelCheck = append(m.side.modelCheck, c)
		box.Add(c)
	}
	box.Add(hint(fmt.Sprintf("tick 2–%d to compare in lockstep; keys 1–%d choose one", sim.MaxLanes, len(m.infos))))
}

// refreshModels reads the catalogue's models again (a model trained in
// the Training window joined it) and lists them.
func (m *Main) refreshModels() {
	m.infos = m.source().Catalogue.Available()
	m.fillModels()
	if m.snap != nil {
		m.apply(m.snap)
	}
}

// parameterControls builds a group per family of models with parameters:
// a control for each knob the family reads (sim.ParamKnobs, in their
// order), and the bare self-attention's attention kind and paper
// defaults and the classical network's update rule, which are choices
// rather than numbers.
func (m *Main) parameterControls() fyne.CanvasObject {
	m.side.attn = newChoice(sim.Attentions, func(s string) {
		a, err := sim.ParseAttention(s)
		if err != nil {
			m.setError(err.Error())
			return
		}
		m.send(func(st *sim.Settings) { st.Dyn.Attn = a })
	}, m.handleKey)
	m.side.async = newKeyCheck("asynchronous sweeps", func(b bool) { m.send(func(st *sim.Settings) { st.Hop.Async = b }) }, m.handleKey)
	var families []string
	byFamily := map[string][]fyne.CanvasObject{}
	m.side.knobs = nil
	for _, k := range sim.ParamKnobs() {
		kc, obj := m.knobControl(k)
		m.side.knobs = append(m.side.knobs, kc)
		fam := "other parameters"
		if f := k.Families(); len(f) > 0 {
			fam = f[0]
		}
		if _, ok := byFamily[fam]; !ok {
			families = append(families, fam)
		}
		byFamily[fam] = append(byFamily[fam], obj)
	}
	bsa, classic := sim.Lambda.Families()[0], sim.StoredK.Families()[0]
	defaults := newKeyButton("Paper defaults", nil, func() {
		m.send(func(st *sim.Settings) {
			for _, k := range sim.ParamKnobs() {
				if slices.Contains(k.Families(), bsa) {
					k.Set(st, k.Default)
				}
			}
			st.Dyn.Attn = sim.DefaultDynamics().Attn
		})
	}, m.handleKey)
	byFamily[bsa] = append(byFamily[bsa], m.side.attn.box, defaults)
	byFamily[classic] = append(byFamily[classic], m.side.async)
	box := container.NewVBox()
	for k, fam := range families {
		if k > 0 {
			box.Add(widget.NewSeparator())
		}
		box.Add(heading(strings.ToUpper(fam[:1]) + fam[1:]))
		for _, obj := range byFamily[fam] {
			box.Add(obj)
		}
	}
	return box
}

// knobControl is the sidebar's control of a model parameter: a slider
// under its label when the knob has a slider step, else a field for
// whole numbers beside its symbol.
type knobControl struct {
	k      *sim.Knob
	label  *widget.Label
	slider *keySlider
	entry  *keyEntry
}

// knobControl builds k's control; its changes go to the engine.
func (m *Main) knobControl(k *sim.Knob) (*knobControl, fyne.CanvasObject) {
	kc := &knobControl{k: k}
	if k.Step > 0 {
		kc.slider = m.rangeSlider(k.Range)
		kc.label = widget.NewLabel("")
		kc.slider.OnChanged = func(v float64) { kc.label.SetText(paramText(k, kc.value(v))) }
		kc.slider.OnChangeEnded = func(v float64) { m.send(func(st *sim.Settings) { k.Set(st, kc.value(v)) }) }
		return kc, container.NewVBox(kc.label, kc.slider)
	}
	kc.entry = newKeyEntry(func() {
		m.win.Canvas().Unfocus()
		if m.snap != nil {
			kc.entry.SetText(strconv.FormatFloat(k.Get(m.snap.Settings), 'g', -1, 64))
		}
	})
	kc.entry.OnSubmitted = submitOnFyne(func(s string) {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err == nil {
			err = k.Check(v, sim.ViaName)
		}
		if err != nil {
			what := "a number"
			if k.Integer {
				what = "a whole number"
			}
			m.setError(fmt.Sprintf("%s = %q: %s must be %s in %s", k.Symbol, s, k.Name, what, k.Allowed()))
			return
		}
		m.send(func(st *sim.Settings) { k.Set(st, v) })
	})
	return kc, container.NewBorder(nil, nil, widget.NewLabel(k.Label()), nil, kc.entry)
}

// value is the setting at slider position v (10^v on a log slider), and
// position its inverse.
func (kc *knobControl) value(v float64) float64 {
	if kc.k.Log {
		return math.Pow(10, v)
	}
	return v
}

func (kc *knobControl) position(v float64) float64 {
	if kc.k.Log {
		return math.Log10(v)
	}
	return v
}

// show sets the control to st's value (a field being typed in is left).
func (kc *knobControl) show(st sim.Settings, focused fyne.Focusable) {
	v := kc.k.Get(st)
	if kc.slider != nil {
		kc.slider.SetValue(kc.position(v))
		setText(kc.label, paramText(kc.k, v))
		return
	}
	if focused != kc.entry {
		entryTo(kc.entry, strconv.FormatFloat(v, 'g', -1, 64))
	}
}

// viewControls builds the patch grid, theme, presentation, export and open.
func (m *Main) viewControls() fyne.CanvasObject {
	m.side.gridCheck = newKeyCheck("patch grid", func(b bool) {
		m.showGrid = b
		m.app.Preferences().SetBool("grid", b)
		m.redrawImages()
	}, m.handleKey)
	m.side.gridCheck.SetChecked(m.showGrid)
	m.side.themeSel = newKeySelect(themeChoices, func(s string) {
		m.themeChoice = s
		m.app.Preferences().SetString("theme", s)
		m.setTheme(newTheme(s, m.typeScale()))
		m.lastPlotKey = ""
		if m.snap != nil {
			m.apply(m.snap)
		}
	}, m.handleKey)
	m.side.themeSel.SetSelected(m.themeChoice)
	m.side.logCheck = newKeyCheck("log MSE axis (L)", func(b bool) {
		m.logY = b
		if m.snap != nil {
			m.apply(m.snap)
		}
	}, m.handleKey)
	m.side.scaleSel = newKeySelect(attnScaleNames, func(s string) {
		for k, n := range attnScaleNames {
			if n == s {
				m.attnScale = attnScale(k)
			}
		}
		if m.snap != nil {
			m.apply(m.snap)
		}
	}, m.handleKey)
	m.side.scaleSel.SetSelected(attnScaleNames[m.attnScale])
	// In the page F11 is the browser's own full screen: P is the key there.
	presentLabel := "Presentation (F11)"
	if inBrowser() {
		presentLabel = "Presentation (P)"
	}
	present := newKeyButton(presentLabel, theme.ViewFullScreenIcon(), m.togglePresentation, m.handleKey)
	demo := newKeyButton("Paper demo", theme.MediaPlayIcon(), m.PaperDemo, m.handleKey)
	view := container.NewVBox(heading("View"),
		container.NewBorder(nil, nil, widget.NewLabel("theme (D)"), nil, m.side.themeSel), m.side.gridCheck,
		m.side.logCheck,
		container.NewBorder(nil, nil, widget.NewLabel("attention colour (A)"), nil, m.side.scaleSel),
		demo, present, hint("File menu: open, save and export (Ctrl+O, Ctrl+S, Ctrl+E)"))
	return view
}

func heading(s string) fyne.CanvasObject {
	return widget.NewLabelWithStyle(s, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
}

// hint is a small explanation under a group of controls. A wrapping label
// reports the height of one line to its container, so a scrolled column of
// them ends short of its last controls (Export… and Open scenario… could
// not be reached at 1280×800): the lines it needs are measured and its
// height reserved.
func hint(s string) fyne.CanvasObject {
	l := widget.NewLabel(s)
	l.Importance = widget.LowImportance
	l.Wrapping = fyne.TextWrapWord
	size := fyne.MeasureText(s, theme.TextSize(), fyne.TextStyle{})
	avail := float32(sidebarWidth) - sidebarGutter - 4*theme.InnerPadding()
	lines := float32(math.Ceil(float64(size.Width/avail))) + 0.5 // word breaks waste part of a line
	reserve := canvas.NewRectangle(color.Transparent)
	reserve.SetMinSize(fyne.NewSize(0, lines*(size.Height+theme.LineSpacing())+2*theme.InnerPadding()))
	return container.NewStack(reserve, l)
}

// rangeSlider is a slider over a setting's range (log10 of it for a log
// range).
func (m *Main) rangeSlider(r sim.Range) *keySlider {
	lo, hi := r.Min, r.Max
	if r.Log {
		lo, hi = math.Log10(lo), math.Log10(hi)
	}
	return newKeySlider(lo, hi, r.Step, m.handleKey)
}

// paramText labels a knob's value (its group names whose it is),
// marking the paper's value.
func paramText(r *sim.Knob, v float64) string {
	txt := fmt.Sprintf("%s %.3g", r.Label(), v)
	if math.Abs(v-r.Default) <= 1e-3*math.Abs(r.Default) {
		txt += " (paper)"
	}
	return txt
}

func (m *Main) showLevel(v float64) {
	if m.side.kind.Selected == "noise" {
		setText(m.side.levelLabel, fmt.Sprintf("σ² %.2f", v))
	} else {
		setText(m.side.levelLabel, fmt.Sprintf("%2.0f%% masked", 100*v))
	}
}

// selectTo and entryTo set a control to what the settings say, only when
// it differs: Fyne's setters redraw the control (and a Select tells its
// OnChanged) even for the value it has, and showSettings runs for every
// snapshot, each step of a run.
func selectTo(s *keySelect, v string) {
	if s.Selected != v {
		s.SetSelected(v)
	}
}

func entryTo(e *keyEntry, v string) {
	if e.Text != v {
		e.SetText(v)
	}
}

// showSettings sets the controls to a snapshot's settings (their
// callbacks send nothing meanwhile: apply sets m.updating).
func (m *Main) showSettings(sn *sim.Snapshot) {
	st := sn.Settings
	if st.Corruption.Kind == sim.Noise {
		m.side.maskHint.Hide()
		m.side.noiseHint.Show()
	} else {
		m.side.noiseHint.Hide()
		m.side.maskHint.Show()
	}
	if st.Own != nil {
		m.side.ownHint.Show()
	} else {
		m.side.ownHint.Hide()
	}
	selectTo(m.side.split, st.Split.String())
	if lbl := mnist.DatasetLabel(st.DatasetName()); !slices.Contains(m.side.dataset.Options, lbl) {
		// A folder data set opened by a link or scenario, cached since
		// the window started.
		m.side.datasets[lbl] = st.DatasetName()
		m.side.dataset.Options = append(m.side.dataset.Options, lbl)
		m.side.dataset.Refresh()
	}
	selectTo(m.side.dataset, mnist.DatasetLabel(st.DatasetName()))
	if sn.Source != nil {
		// The label filter offers the data set's classes.
		opts := append([]string{"any"}, sn.Source.Data.Classes()...)
		if !slices.Equal(opts, m.side.labelSel.Options) {
			m.side.labelSel.Options = opts
			if !slices.Contains(opts, m.side.labelSel.Selected) {
				m.side.labelSel.Selected = "any"
			}
			m.side.labelSel.Refresh()
		}
	}
	if !m.side.index.Disabled() && m.win.Canvas().Focused() != m.side.index {
		entryTo(m.side.index, strconv.Itoa(st.Index))
	}
	m.side.kind.SetSelected(st.Corruption.Kind.String())
	lk := sim.LevelKnob(st.Corruption.Kind)
	m.side.level.Min, m.side.level.Max, m.side.level.Step = lk.Min, lk.Max, lk.Step
	m.side.level.SetValue(lk.Get(st))
	m.showLevel(m.side.level.Value)
	if m.win.Canvas().Focused() != m.side.seed {
		entryTo(m.side.seed, strconv.FormatUint(st.Corruption.Seed, 10))
	}
	for k, c := range m.side.modelCheck {
		// A model whose weights are being fetched is chosen too.
		on := slices.ContainsFunc(sn.Lanes, func(l sim.Lane) bool { return l.Info.Name == m.infos[k].Name }) ||
			slices.Contains(sn.Waiting, m.infos[k].Name)
		if c.Checked != on {
			c.SetChecked(on)
		}
	}
	for _, kc := range m.side.knobs {
		kc.show(st, m.win.Canvas().Focused())
	}
	m.side.attn.SetSelected(st.Dyn.Attn.String())
	m.side.async.SetChecked(st.Hop.Async)
	// Labels set here change the column's height; a scroll container only
	// measures its content when refreshed, and would otherwise stop short
	// of the last controls.
	if sc := m.sideScroll; sc != nil && sc.Content.MinSize().Height != sc.Content.Size().Height {
		sc.Refresh()
	}
}
