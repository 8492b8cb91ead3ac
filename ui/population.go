package ui

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"image"
	"io"
	"math"
	"strconv"
	"strings"
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
	"attractorlab/sim/sweep"
)

// job runs one background computation of a population window: progress,
// cancel, and its result handed to the Fyne goroutine. The engine and the
// main window keep answering meanwhile (the job has its own goroutines).
type job struct {
	run, cancel *widget.Button
	prog        *widget.ProgressBar
	status      *widget.Label
	stop        context.CancelFunc
	done        atomic.Int64
	after       func() // tests: told on the Fyne goroutine once a job has finished
}

func newJob(label string, start func()) *job {
	j := &job{prog: widget.NewProgressBar(), status: widget.NewLabel("")}
	j.status.Wrapping = fyne.TextWrapWord
	j.run = widget.NewButton(label, start)
	j.run.Importance = widget.HighImportance
	j.cancel = widget.NewButton("Cancel", func() {
		if j.stop != nil {
			j.stop()
		}
	})
	j.cancel.Disable()
	return j
}

// begin starts work in the background; finish runs on the Fyne goroutine
// with work's error (nil, context.Canceled, …). One monitor goroutine
// posts the progress and then the end, so the window's updates come in
// order from one place (and nothing outlives the job).
func (j *job) begin(total int64, work func(ctx context.Context) error, finish func(err error, took time.Duration)) {
	ctx, stop := context.WithCancel(context.Background())
	j.stop = stop
	j.done.Store(0)
	j.run.Disable()
	j.cancel.Enable()
	j.prog.SetValue(0)
	start := time.Now()
	result := make(chan error, 1)
	go func() { result <- work(ctx) }()
	go func() {
		tick := time.NewTicker(progressEvery())
		defer tick.Stop()
		shown := -1 // the bar's percent shown last
		for {
			select {
			case <-tick.C:
				v := min(float64(j.done.Load())/float64(max(1, total)), 1)
				// A value that would not change the bar's percent is not
				// sent (each change repaints the window).
				if pc := barPercent(v); pc != shown {
					shown = pc
					fyne.Do(func() { j.prog.SetValue(v) })
				}
			case err := <-result:
				stop()
				took := time.Since(start)
				fyne.Do(func() {
					j.run.Enable()
					j.cancel.Disable()
					j.stop = nil
					if err == nil {
						j.prog.SetValue(1)
					}
					finish(err, took)
					if j.after != nil {
						j.after()
					}
				})
				return
			}
		}
	}()
}

// barPercent is the whole percent a progress bar shows for v (Fyne's
// ProgressBar rounds).
func barPercent(v float64) int { return int(math.Round(v * 100)) }

// progressEvery is how often a job's progress is looked at: ten times a
// second on the desktop; twice in the page, where each change repaints
// the whole window on the page's thread (50–80 ms with software WebGL),
// time the workers running the job need (the page, the workers and the
// painter share the machine's cores).
func progressEvery() time.Duration {
	if inBrowser() {
		return 500 * time.Millisecond
	}
	return 100 * time.Millisecond
}

func (j *job) bar() fyne.CanvasObject {
	return container.NewBorder(nil, nil, container.NewHBox(j.run, j.cancel), nil, j.prog)
}

// ensembleSteps is how far the ensemble runs: the engine's horizon.
const ensembleSteps = 100

// EnsembleDigits are the choices of the ensemble's size.
var EnsembleDigits = []string{"50", "200", "500", "1000", "2000", "5000", "10000"}

// popDefault is the population windows' default size: desktop, or web in
// the browser, where the work runs on the page's one thread (it yields
// so the page keeps answering, but takes several times longer).
func popDefault(desktop, web int) int {
	if inBrowser() {
		return web
	}
	return desktop
}

// ensembleChoices are the sizes an ensemble can have on data with have
// test digits: the choices up to have, and have itself (all of them).
func ensembleChoices(have int) []string {
	var out []string
	for _, s := range EnsembleDigits {
		if n, _ := strconv.Atoi(s); n < have {
			out = append(out, s)
		}
	}
	return append(out, strconv.Itoa(have))
}

// ensembleWin is the Population → Ensemble window: for the main window's
// corruption and models, the median MSE over N test digits with its
// interquartile band, and the histogram of the digits' own t*.
type ensembleWin struct {
	m     *Main
	w     fyne.Window
	n     *widget.Select
	over  *widget.Select // the band's spread: over the digits, or over kept training seeds
	job   *job
	band  *PlotView
	hist  *PlotView
	bands []sweep.Band
	set   sim.Settings
	// the figures of the last ensemble, as drawn and exported
	bandPlot, histPlot func() (*plot.Plot, error)
}

// showEnsemble opens (or raises) the ensemble window.
func (m *Main) showEnsemble() {
	if m.ens != nil {
		m.ens.w.Show()
		m.ens.w.RequestFocus()
		return
	}
	e := &ensembleWin{m: m, w: m.newWindow("Ensemble — Attractor Lab")}
	have := m.source().Data.Test.Len()
	e.n = widget.NewSelect(ensembleChoices(have), nil)
	// 200 digits by default; 50 in the browser, whose kernels are the
	// portable ones (and whose workers are as many as the machine's cores,
	// at most 4).
	e.n.SetSelected(e.n.Options[min(popDefault(1, 0), len(e.n.Options)-1)])
	e.job = newJob("Run", e.start)
	e.band = NewPlotView()
	e.band.HideT = true
	e.hist = NewPlotView()
	e.hist.HideT = true
	e.hist.OnSeek = e.loadDigit
	e.over = widget.NewSelect([]string{overDigits, overSeeds}, nil)
	e.over.SetSelected(overDigits)
	e.job.status.SetText("Runs the main window's models and corruption on the first N test digits for 100 steps. " +
		"The band shows the spread over the digits, or (for the bare self-attention) over the training seeds kept by reproduce --train-seeds.")
	// The data decide how many digits there are: the embedded sample has
	// 1,000 test digits, the full MNIST 10,000.
	export := widget.NewButtonWithIcon("Export…", theme.DocumentSaveIcon(), func() { m.exportFrom(e.w, e.exports()) })
	top := container.NewVBox(container.NewBorder(nil, nil,
		container.NewHBox(widget.NewLabel(fmt.Sprintf("test digits (of %d loaded)", have)), e.n, widget.NewLabel("band over"), e.over), export, e.job.bar()), e.job.status)
	m.fitWindow(e.w, container.NewBorder(top, nil, nil, nil, container.NewGridWithColumns(2, e.band, e.hist)), fyne.NewSize(1100, 520))
	e.w.Canvas().SetOnTypedKey(keyOnFyne(func(k *fyne.KeyEvent) {
		// Return runs the ensemble, as the Run button does.
		if (k.Name == fyne.KeyReturn || k.Name == fyne.KeyEnter) && !e.job.run.Disabled() {
			e.start()
			return
		}
		m.escCloses(k)
	}))
	e.w.SetOnClosed(func() {
		if e.job.stop != nil {
			e.job.stop()
		}
		m.ens = nil
	})
	m.ens = e
	e.w.Show()
}

func (e *ensembleWin) start() {
	if e.m.snap == nil {
		return
	}
	n, _ := strconv.Atoi(e.n.Selected)
	set := e.m.snap.Settings
	set.Toggled = nil // the ensemble draws each digit's own seeded mask
	names := append([]string(nil), set.Lanes...)
	src := e.m.source()
	env := e.m.populationEnv(src)
	nd := min(n, env.Data.Test.Len())
	total := int64(0)
	for _, name := range names {
		steps := ensembleSteps
		for _, in := range e.m.infos {
			if in.Name == name && in.MaxSteps > 0 {
				steps = min(steps, in.MaxSteps)
			}
		}
		total += int64(nd * (steps + 1))
	}
	// Over training seeds: each bare model runs once per kept seed.
	seeds := map[string][]sim.KeptSeed{}
	if e.over.Selected == overSeeds {
		dir, _ := sim.SeedCache()
		var none []string
		for _, name := range names {
			p, bare := bareSide(name)
			if !bare {
				continue
			}
			if seeds[name] = sim.KeptSeeds(dir, p, src.Data.Train); len(seeds[name]) == 0 {
				none = append(none, name)
			} else {
				total += int64(len(seeds[name])-1) * int64(nd*(ensembleSteps+1))
			}
		}
		if len(none) > 0 || len(seeds) == 0 {
			why := "none of the chosen models is the bare self-attention, the one model trained with seeds here"
			if len(none) > 0 {
				why = fmt.Sprintf("no training seeds of %s are kept: attractorlab reproduce --model bsa --patch P --train-seeds 0-4 trains and keeps them (about 3 minutes a seed)", strings.Join(none, ", "))
			}
			e.job.status.SetText("cannot band over training seeds: " + why)
			return
		}
	}
	e.job.status.SetText(fmt.Sprintf("running %s on %d test digits…", strings.Join(names, ", "), nd))
	var bands []sweep.Band
	e.job.begin(total, func(ctx context.Context) error {
		for _, name := range names {
			step := func() { e.job.done.Add(1) }
			if ks := seeds[name]; len(ks) > 0 {
				b, err := sweep.SeedBand(ctx, env, set, name, ks, nd, ensembleSteps, step)
				if err != nil {
					return err
				}
				bands = append(bands, b)
				continue
			}
			b, err := sweep.Ensemble(ctx, env, set, name, nd, ensembleSteps, step)
			if err != nil {
				return err
			}
			bands = append(bands, b)
		}
		return nil
	}, func(err error, took time.Duration) {
		switch {
		case err == context.Canceled:
			e.job.status.SetText("cancelled; the plots show the last finished ensemble")
			return
		case err != nil:
			e.job.status.SetText("ensemble failed: " + err.Error())
			return
		}
		e.bands, e.set = bands, set
		// Each model's median curve by the one rule, beside the input's,
		// and how many digits' own best step beats their input.
		var res []string
		for _, b := range bands {
			best := sim.BestOf(len(b.Median), func(t int) float64 { return b.Median[t] })
			beat := 0
			for _, d := range b.Digits {
				if d.TStar >= 1 && sim.Improves(d.MSETStar, d.MSE0) {
					beat++
				}
			}
			what := "digits"
			if b.Seeds > 0 {
				what = fmt.Sprintf("runs (%d digits × %d seeds)", b.N, b.Seeds)
			}
			res = append(res, fmt.Sprintf("%s median %s, %d of %d %s beat their input", b.Model, best, beat, len(b.Digits), what))
		}
		noun := "models"
		if len(names) == 1 {
			noun = "model"
		}
		e.job.status.SetText(fmt.Sprintf("%d test digits × %d %s in %.1f s: %s. %s. Click a bar of the histogram to load a digit with that t*.",
			nd, len(names), noun, took.Seconds(), describeCorruption(set.Corruption), strings.Join(res, "; ")))
		e.draw()
	})
}

// populationEnv is what a population job runs on: src's digits and
// models, here or in Deps.Remote's workers (offPage).
func (m *Main) populationEnv(src *sim.Source) sweep.Env {
	env := sweep.Env{Data: src.Data, Cat: src.Catalogue}
	if offPage(src) {
		env.Remote = m.deps.Remote
	}
	return env
}

// offPage tells whether src's jobs may go to the workers, which load the
// data sets themselves: a folder of pictures is only this session's, so
// its jobs run here.
func offPage(src *sim.Source) bool {
	return !strings.HasPrefix(src.Data.Name(), mnist.FolderPrefix)
}

// trainer is what runs the Training window's jobs on src elsewhere (the
// page's workers), nil to run them here.
func (m *Main) trainer(src *sim.Source) sim.TrainRemote {
	if m.deps.Trainer == nil || !offPage(src) {
		return nil
	}
	return m.deps.Trainer
}

// The ensemble's band choices.
const (
	overDigits = "digits"
	overSeeds  = "training seeds"
)

// bareSide is the patch side of a bare self-attention's name (the shipped
// bsa-p2 or bsa-p4), and whether it is one.
func bareSide(name string) (int, bool) {
	for _, p := range []int{2, 4} {
		if name == sim.ShippedName(p) {
			return p, true
		}
	}
	return 0, false
}

func describeCorruption(c sim.Corruption) string {
	if c.Kind == sim.Noise {
		return fmt.Sprintf("noise σ² %s, seed %d", strconv.FormatFloat(c.Sigma2, 'g', 4, 64), c.Seed)
	}
	return fmt.Sprintf("mask %s, seed %d", strconv.FormatFloat(c.Fraction, 'g', 4, 64), c.Seed)
}

func (e *ensembleWin) draw() {
	var fb []figures.Band
	var names []string
	var ts [][]int
	maxT := 1
	for _, b := range e.bands {
		fb = append(fb, figures.Band{Name: b.Model, Q25: b.Q25, Median: b.Median, Q75: b.Q75})
		names = append(names, b.Model)
		var t []int
		for _, d := range b.Digits {
			t = append(t, d.TStar)
		}
		ts = append(ts, t)
		maxT = max(maxT, len(b.Median)-1)
	}
	n := 0
	if len(e.bands) > 0 {
		n = e.bands[0].N
	}
	title := fmt.Sprintf("MSE over %d test digits: median, middle half shaded", n)
	for _, b := range e.bands {
		if b.Seeds > 0 {
			title = fmt.Sprintf("MSE over %d test digits: median; shaded: the middle half of the digits, or (training seeds) the lowest to highest seed", n)
		}
	}
	e.bandPlot = func() (*plot.Plot, error) {
		return figures.BandPlot(title, fb)
	}
	e.histPlot = func() (*plot.Plot, error) {
		return figures.TStarHistogram("each digit's own t*", names, ts, maxT)
	}
	e.band.SetPlot(e.bandPlot)
	e.hist.SetPlot(e.histPlot)
}

// loadDigit loads, in the main window, a digit of the first model whose
// own t* is t (or nearest), under the ensemble's settings, at its t*.
func (e *ensembleWin) loadDigit(t int) {
	if len(e.bands) == 0 {
		return
	}
	b := e.bands[0]
	idx := b.WithTStar(t)
	if idx < 0 {
		return
	}
	set := e.set
	set.Split, set.Index = sim.TestSplit, idx
	e.m.Engine.Restore(set, 0)
	e.m.Engine.ShowBest()
	e.job.status.SetText(fmt.Sprintf("loaded test digit %d: its own t* under %s is %d (clicked t* %d)", idx, b.Model, b.Digits[idx].TStar, t))
}

// basinWin is the Population → Basin map window: a sweep of corruption
// level × the model's parameter over N digits and seeds, as heatmaps of
// MSE(t*), t* and the escape step; a click on a cell loads its setting.
type basinWin struct {
	m              *Main
	w              fyne.Window
	model          *widget.Select
	levels, values *widget.Entry
	valuesItem     *widget.FormItem
	form           *widget.Form
	n, seeds       *widget.Entry
	job            *job
	view           *basinView
	cfg            sweep.Config
	results        []sweep.Result
}

// defaultValues are the parameter values a basin map starts with (the
// knob's Values).
func defaultValues(p sweep.Param) string {
	if p.Knob() == nil {
		return ""
	}
	return listText(p.Knob().Values)
}

// defaultLevels are the corruption levels a basin map starts with.
func defaultLevels(k sim.Kind) string { return listText(sim.LevelKnob(k).Values) }

// listText writes numbers as a basin map's fields take them: "0.1, 0.3".
func listText(vs []float64) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, csvNum(v))
	}
	return strings.Join(parts, ", ")
}

func (m *Main) showBasin() {
	if m.basin != nil {
		m.basin.w.Show()
		m.basin.w.RequestFocus()
		return
	}
	b := &basinWin{m: m, w: m.newWindow("Basin map — Attractor Lab")}
	var names []string
	for _, in := range m.infos {
		names = append(names, in.Name)
	}
	kind := sim.Noise
	if m.snap != nil {
		kind = m.snap.Settings.Corruption.Kind
	}
	b.values = widget.NewEntry()
	b.valuesItem = widget.NewFormItem("values", b.values)
	b.model = widget.NewSelect(names, func(name string) {
		p := sweep.ParamOf(name)
		if p == sweep.NoParam {
			b.valuesItem.Text = "(no parameter)"
			b.values.SetText("")
			b.values.Disable()
		} else {
			b.valuesItem.Text = p.Symbol() + " values"
			b.values.Enable()
			b.values.SetText(defaultValues(p))
		}
		if b.form != nil {
			b.form.Refresh()
		}
	})
	if m.snap != nil {
		b.model.SetSelected(m.snap.Settings.Lanes[0])
	} else if len(names) > 0 {
		b.model.SetSelected(names[0])
	}
	b.levels = widget.NewEntry()
	b.levels.SetText(defaultLevels(kind))

	b.n = widget.NewEntry()
	b.n.SetText(strconv.Itoa(popDefault(32, 8))) // fewer in the browser, as the ensemble
	b.seeds = widget.NewEntry()
	b.seeds.SetText("1")
	b.job = newJob("Run", b.start)
	b.job.status.SetText("Each cell runs the model on the first N test digits (for each seed) for 100 steps, under the main window's task (mask or noise).")
	b.view = newBasinView()
	b.view.OnCell = b.loadCell
	levelsName := "mask fractions"
	if kind == sim.Noise {
		levelsName = "noise σ² levels"
	}
	b.form = widget.NewForm(
		widget.NewFormItem("model", b.model),
		widget.NewFormItem(levelsName, b.levels),
		b.valuesItem,
		widget.NewFormItem("test digits", b.n),
		widget.NewFormItem("seeds", b.seeds),
	)
	// The three maps' names, in words.
	legend := widget.NewLabel("MSE(t*): the cell's lowest mean error · t*: its step · escape step: the first step after t* " +
		"where the mean error is worse than the input's again (grey: never within the run)")
	legend.Wrapping = fyne.TextWrapWord
	export := widget.NewButtonWithIcon("Export…", theme.DocumentSaveIcon(), func() { m.exportFrom(b.w, b.exports()) })
	top := container.NewVBox(b.form, container.NewBorder(nil, nil, nil, export, b.job.bar()), b.job.status,
		container.NewBorder(nil, nil, nil, newInfoTip(escapeTip), legend))
	m.fitPage(b.w, container.NewBorder(top, nil, nil, nil, b.view), fyne.NewSize(1280, 800))
	b.w.Canvas().SetOnTypedKey(keyOnFyne(m.escCloses))
	b.w.SetOnClosed(func() {
		if b.job.stop != nil {
			b.job.stop()
		}
		m.basin = nil
	})
	m.basin = b
	b.w.Show()
}

// parseList reads comma-separated numbers, naming the field at fault.
func parseList(field, s string) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		v, err := strconv.ParseFloat(part, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a number", field, part)
		}
		out = append(out, v)
	}
	return out, nil
}

func (b *basinWin) config() (sweep.Config, error) {
	if b.m.snap == nil {
		return sweep.Config{}, fmt.Errorf("the main window has not started")
	}
	set := b.m.snap.Settings
	set.Toggled = nil
	cfg := sweep.Config{Models: []string{b.model.Selected}, Task: set.Corruption.Kind, Steps: ensembleSteps, Base: set}
	var err error
	if cfg.Levels, err = parseList("levels", b.levels.Text); err != nil {
		return cfg, err
	}
	cfg.Param = sweep.ParamOf(b.model.Selected)
	if cfg.Param != sweep.NoParam {
		if cfg.Values, err = parseList(cfg.Param.Symbol()+" values", b.values.Text); err != nil {
			return cfg, err
		}
	}
	if cfg.N, err = strconv.Atoi(strings.TrimSpace(b.n.Text)); err != nil {
		return cfg, fmt.Errorf("test digits: %q is not a whole number (allowed %s)", b.n.Text, sim.Digits.Allowed())
	}
	if have := b.m.source().Data.Test.Len(); cfg.N > have {
		return cfg, fmt.Errorf("test digits: %d, but the loaded data has %d test digits (allowed 1 to %d here)", cfg.N, have, have)
	}
	if cfg.Seeds, err = strconv.Atoi(strings.TrimSpace(b.seeds.Text)); err != nil {
		return cfg, fmt.Errorf("seeds: %q is not a whole number (allowed %s)", b.seeds.Text, sweep.Seeds.Allowed())
	}
	if err := cfg.Validate(); err != nil {
		// The window's fields, not the command line's flags.
		msg := err.Error()
		for _, r := range [][2]string{{"--levels", "levels"}, {"--lambda", "λ values"}, {"--beta", "β values"}, {"--k", "K values"},
			{"--n", "test digits"}, {"--seeds", "seeds"}} {
			msg = strings.ReplaceAll(msg, r[0], r[1])
		}
		return cfg, fmt.Errorf("%s", msg)
	}
	return cfg, nil
}

func (b *basinWin) start() {
	cfg, err := b.config()
	if err != nil {
		b.job.status.SetText("cannot run: " + err.Error())
		return
	}
	cells := cfg.Cells()
	src := b.m.source()
	nd := min(cfg.N, src.Data.Test.Len())
	env := b.m.populationEnv(src)
	b.job.status.SetText(fmt.Sprintf("running %d cells × %d test digits…", len(cells), nd))
	var rs []sweep.Result
	b.job.begin(int64(len(cells)), func(ctx context.Context) error {
		var err error
		rs, err = cfg.Run(ctx, env, cells, func(done, _ int) { b.job.done.Store(int64(done)) })
		return err
	}, func(err error, took time.Duration) {
		switch {
		case err == context.Canceled:
			b.job.status.SetText("cancelled; the map shows the last finished sweep")
			return
		case err != nil:
			b.job.status.SetText("basin map failed: " + err.Error())
			return
		}
		b.cfg, b.results = cfg, rs
		b.job.status.SetText(fmt.Sprintf("%d cells × %d test digits in %.1f s. Click a cell to load its setting on its representative digit (its own t* nearest the cell's).",
			len(cells), nd, took.Seconds()))
		b.view.SetBasin(sweep.Map(cfg, rs, cfg.Models[0]))
	})
}

// loadCell loads the clicked cell's level and parameter in the main window
// on the cell's representative digit (seed 0), at its t*.
func (b *basinWin) loadCell(col, row int) {
	if len(b.results) == 0 {
		return
	}
	bm := b.view.basin
	level, param := bm.X[col], bm.Y[row]
	for _, r := range b.results {
		if r.Level != level || r.Seed != 0 || (b.cfg.Param != sweep.NoParam && r.Param != param) {
			continue
		}
		set := b.cfg.Settings(r.Cell)
		set.Lanes = []string{r.Model}
		set.Split, set.Index = sim.TestSplit, r.Representative()
		b.m.Engine.Restore(set, 0)
		b.m.Engine.ShowBest()
		b.view.SetMark(col, row)
		what := ""
		if b.cfg.Param != sweep.NoParam {
			what = fmt.Sprintf(", %s %s", b.cfg.Param.Symbol(), strconv.FormatFloat(param, 'g', 4, 64))
		}
		cell := sim.Best{T: r.TStar, MSE: r.MSETStar, Input: r.MSE0, Improves: r.Improves}
		b.job.status.SetText(fmt.Sprintf("loaded %s at %s %s%s on test digit %d (the cell's mean: %s%s; %s)",
			r.Model, sweep.LevelRange(b.cfg.Task).Name, strconv.FormatFloat(level, 'g', 4, 64), what, set.Index, cell, maskedText(r), escapeText(r.Escape)))
		return
	}
}

// maskedText is, under masking, a cell's mean error on the masked pixels
// and on the visible ones at t* beside the input's ("" without them).
func maskedText(r sweep.Result) string {
	if math.IsNaN(r.Masked0) {
		return ""
	}
	if math.IsNaN(r.MaskedTStar) {
		return fmt.Sprintf("; masked pixels: input %.4f", r.Masked0)
	}
	return fmt.Sprintf("; masked pixels %.4f against the input's %.4f, visible %.4f against 0", r.MaskedTStar, r.Masked0, r.VisibleTStar)
}

// escapeText says when a cell's mean error became worse than the input's
// again after t* (the escape step).
func escapeText(e int) string {
	if e < 0 {
		return "never worse than the input again"
	}
	return "worse than the input again from t = " + strconv.Itoa(e)
}

// basinView draws a basin map at its size and reports clicks on cells.
type basinView struct {
	widget.BaseWidget
	OnCell func(col, row int)
	basin  figures.Basin
	has    bool
	img    *canvas.Image
	msg    *widget.Label
	cell   figures.Cell
	scale  float32
	built  fyne.Size
}

func newBasinView() *basinView {
	v := &basinView{}
	v.ExtendBaseWidget(v)
	return v
}

// SetBasin shows b.
func (v *basinView) SetBasin(b figures.Basin) {
	v.basin, v.has = b, true
	v.built = fyne.Size{}
	v.Refresh()
}

// SetMark outlines cell (col, row), the setting loaded from the map.
func (v *basinView) SetMark(col, row int) {
	v.basin.Mark = &[2]int{col, row}
	v.built = fyne.Size{}
	v.Refresh()
}

func (v *basinView) CreateRenderer() fyne.WidgetRenderer {
	v.img = canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
	v.img.FillMode = canvas.ImageFillStretch
	v.msg = widget.NewLabel("No map yet: choose the grid above and press Run.")
	v.msg.Alignment = fyne.TextAlignCenter
	return &basinRenderer{v: v}
}

type basinRenderer struct{ v *basinView }

func (r *basinRenderer) Layout(s fyne.Size) {
	r.v.img.Resize(s)
	r.v.msg.Resize(s)
	r.render()
}

func (r *basinRenderer) render() {
	v := r.v
	s := v.Size()
	if !v.has || s.Width < 50 || s.Height < 50 {
		v.msg.Show()
		return
	}
	v.msg.Hide()
	if s == v.built {
		return
	}
	scale := float32(1)
	if c := fyne.CurrentApp(); c != nil && c.Driver() != nil {
		if cv := c.Driver().CanvasForObject(v); cv != nil {
			scale = cv.Scale()
		}
	}
	plots, err := v.basin.Plots()
	if err != nil {
		v.msg.SetText(err.Error())
		v.msg.Show()
		return
	}
	for _, p := range plots {
		styleForTheme(p)
	}
	img, cell := v.basin.Render(plots, texturePixels(s.Width, scale), texturePixels(s.Height, scale), 96*float64(scale))
	v.img.Image, v.cell, v.scale, v.built = img, cell, scale, s
	v.img.Refresh()
}

func (r *basinRenderer) MinSize() fyne.Size { return fyne.NewSize(600, 300) }
func (r *basinRenderer) Refresh() {
	r.v.built = fyne.Size{}
	r.render()
}
func (r *basinRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.v.img, r.v.msg} }
func (r *basinRenderer) Destroy()                     {}

// Tapped reports the cell under the pointer.
func (v *basinView) Tapped(e *fyne.PointEvent) {
	if v.cell == nil || v.OnCell == nil {
		return
	}
	if _, col, row, ok := v.cell(float64(e.Position.X*v.scale), float64(e.Position.Y*v.scale)); ok {
		v.OnCell(col, row)
	}
}

// escCloses is a population window's key handler: Esc closes the dialog
// shown last (an export, an error).
func (m *Main) escCloses(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape {
		m.closeDialog()
	}
}

// errNoEnsemble says why there is nothing to export yet.
var errNoEnsemble = errors.New("nothing to export yet: no run has finished (press Run and let it end)")

// exports are what the ensemble window writes: its two figures as the
// window shows them and their numbers.
func (e *ensembleWin) exports() []exportItem {
	png := func(build func() (*plot.Plot, error)) func(io.Writer) error {
		return func(w io.Writer) error {
			if len(e.bands) == 0 {
				return errNoEnsemble
			}
			p, err := build()
			if err != nil {
				return err
			}
			return writePNG(w, figures.RenderLegendRight(p, 1200, 700, 120))
		}
	}
	n := 0
	if len(e.bands) > 0 {
		n = e.bands[0].N
	}
	return []exportItem{
		{"MSE band (PNG)", fmt.Sprintf("ensemble-mse-n%d.png", n), png(e.bandPlot), nil},
		{"Histogram of t* (PNG)", fmt.Sprintf("ensemble-tstar-n%d.png", n), png(e.histPlot), nil},
		{"MSE band (CSV: model, t, q25, median, q75)", fmt.Sprintf("ensemble-mse-n%d.csv", n), e.writeBands, nil},
		{"Each digit's t* (CSV)", fmt.Sprintf("ensemble-digits-n%d.csv", n), e.writeDigits, nil},
	}
}

func csvNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// writeBands writes each model's quartiles of the digits' MSE at every t.
func (e *ensembleWin) writeBands(w io.Writer) error {
	if len(e.bands) == 0 {
		return errNoEnsemble
	}
	cw := csv.NewWriter(w)
	cw.Write([]string{"model", "task", "level", "seed", "n", "t", "mse_q25", "mse_median", "mse_q75"})
	task, level := e.task()
	for _, b := range e.bands {
		for t := range b.Median {
			cw.Write([]string{b.Model, task, level, strconv.FormatUint(e.set.Corruption.Seed, 10), strconv.Itoa(b.N), strconv.Itoa(t),
				csvNum(b.Q25[t]), csvNum(b.Median[t]), csvNum(b.Q75[t])})
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeDigits writes each digit's own t* and errors, per model.
func (e *ensembleWin) writeDigits(w io.Writer) error {
	if len(e.bands) == 0 {
		return errNoEnsemble
	}
	cw := csv.NewWriter(w)
	cw.Write([]string{"model", "task", "level", "seed", "test_index", "label", "t_star", "mse_t_star", "mse_0"})
	task, level := e.task()
	for _, b := range e.bands {
		for _, d := range b.Digits {
			cw.Write([]string{b.Model, task, level, strconv.FormatUint(e.set.Corruption.Seed, 10), strconv.Itoa(d.Index), strconv.Itoa(d.Label),
				strconv.Itoa(d.TStar), csvNum(d.MSETStar), csvNum(d.MSE0)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// task names the ensemble's corruption and its level.
func (e *ensembleWin) task() (string, string) {
	c := e.set.Corruption
	if c.Kind == sim.Noise {
		return c.Kind.String(), csvNum(c.Sigma2)
	}
	return c.Kind.String(), csvNum(c.Fraction)
}

// exports are what the basin window writes: the map as shown and the
// sweep's table (the columns of the sweep command's sweep.csv).
func (b *basinWin) exports() []exportItem {
	name := "basin"
	if len(b.results) > 0 {
		name = "basin-" + b.cfg.Models[0]
	}
	return []exportItem{
		{"Basin map (PNG)", name + ".png", func(w io.Writer) error {
			if len(b.results) == 0 {
				return errNoEnsemble
			}
			return b.view.basin.WritePNG(w, 1600, 700)
		}, nil},
		{"Sweep table (CSV)", name + ".csv", func(w io.Writer) error {
			if len(b.results) == 0 {
				return errNoEnsemble
			}
			return sweep.WriteCSV(w, b.cfg.Task, b.results)
		}, nil},
	}
}
