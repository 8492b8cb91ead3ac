package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
	"gonum.org/v1/plot"

	"attractorlab/sim"
	"attractorlab/sim/dynamics"
	"attractorlab/sim/figures"
)

// The dynamics window (View → Dynamics…): why the memory is transient.
// For the main window's first model with a map (the bare self-attention),
// at the step t the main window shows: the leading eigenvalues of the
// step's Jacobian; along the run, the spectral radius, the unstable
// directions and the step size beside the MSE; from t, the escape
// direction over k steps as a picture; and a push along it and along a
// random direction, beside the linear prediction. Everything is computed
// off the Fyne goroutine, each job cancelled when what it computes for
// changes; the keys go to the main window.
type dynWin struct {
	m    *Main
	w    fyne.Window
	tabs *container.AppTabs
	note *widget.Label

	spec     *PlotView
	specNote *widget.Label

	alongR, alongU, alongS, alongM *PlotView
	alongNote                      *widget.Label

	kEntry   *widget.Entry
	escImgs  [3]*canvas.Image
	escCaps  [3]*widget.Label
	escNote  *widget.Label
	epsEntry *widget.Entry
	pushPlot *PlotView
	pushNote *widget.Label

	// The run analysed: the lane's model, its states X(0 … T) in float64
	// (the per-image engine's, recomputed here), its MSE and t*.
	key    string
	model  string
	f      dynamics.Stepper
	sys    *dynamics.System
	states [][]float64
	mse    []float64
	best   int
	t      int // the step shown (t ≥ 1 has a spectrum)

	along    map[int]dynamics.Spectrum
	esc      *dynamics.Escape // the last escape computed (its T and K)
	pushedAt int              // the step of the last push test shown (−1: none)

	// One cancel per job; a new job of a kind cancels the last one.
	cancel map[string]context.CancelFunc
	// gen counts the runs analysed: a job's result for an older run is
	// dropped.
	gen int
	// ready, in tests, is told on the Fyne goroutine after each job's
	// result is shown (its kind).
	ready func(kind string)
}

// alongMax, when above 0, bounds the steps "Along the run" computes.
var alongMax = 0

// Dynamics tab names.
const (
	dynTabSpectrum = "Spectrum at t"
	dynTabAlong    = "Along the run"
	dynTabEscape   = "Escape direction"
	dynTabPush     = "Push test"
)

// alongSteps are the steps of a run of T steps whose spectrum "Along the
// run" computes: every step to 100, then every tenth (at most alongMax,
// when set: tests keep the job short).
func alongSteps(T int) []int {
	if alongMax > 0 {
		T = min(T, alongMax)
	}
	var ts []int
	for t := 1; t <= T; t++ {
		if t <= 100 || t%10 == 0 || t == T {
			ts = append(ts, t)
		}
	}
	return ts
}

// ShowDynamics opens View → Dynamics… at tab (one of the dynTab names).
func (m *Main) ShowDynamics(tab string) {
	if m.dyn == nil {
		m.newDynWin()
	}
	m.dyn.w.Show()
	m.dyn.w.RequestFocus()
	for _, it := range m.dyn.tabs.Items {
		if it.Text == tab {
			m.dyn.tabs.Select(it)
		}
	}
}

func (m *Main) showDynamics() { m.ShowDynamics(dynTabSpectrum) }

// specAbout heads the spectrum's note; the system adds what its state is.
const specAbout = "Each point is one of the 10 eigenvalues of ∂X(t+1)/∂X(t) largest in modulus. Outside the unit circle a direction grows step by step, inside it shrinks."

func (m *Main) newDynWin() {
	d := &dynWin{m: m, w: m.newWindow("Dynamics — Attractor Lab"), cancel: map[string]context.CancelFunc{}, along: map[int]dynamics.Spectrum{}, ready: m.dynReady, pushedAt: -1}
	wrap := func(s string) *widget.Label {
		l := widget.NewLabel(s)
		l.Wrapping = fyne.TextWrapWord
		return l
	}
	d.note = wrap("")
	d.spec = NewPlotView()
	d.spec.HideT = true
	d.specNote = wrap(specAbout)
	seek := func(t int) { m.Engine.Seek(t) }
	d.alongR, d.alongU, d.alongS, d.alongM = NewPlotView(), NewPlotView(), NewPlotView(), NewPlotView()
	for _, p := range []*PlotView{d.alongR, d.alongU, d.alongS, d.alongM} {
		p.OnSeek = seek
	}
	d.alongNote = wrap("")
	d.kEntry = widget.NewEntry()
	d.kEntry.OnSubmitted = submitOnFyne(func(string) { d.computeEscape() })
	d.escNote = wrap("")
	for i := range d.escImgs {
		d.escImgs[i] = canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 28, 28)))
		d.escImgs[i].FillMode = canvas.ImageFillContain
		d.escImgs[i].ScaleMode = canvas.ImageScalePixels
		d.escImgs[i].SetMinSize(fyne.NewSize(150, 150))
		d.escCaps[i] = widget.NewLabel("")
		d.escCaps[i].Alignment = fyne.TextAlignCenter
	}
	d.epsEntry = widget.NewEntry()
	d.epsEntry.SetText(strconv.FormatFloat(dynamics.EpsRange.Default, 'g', -1, 64))
	d.epsEntry.OnSubmitted = submitOnFyne(func(string) { d.pushTest() })
	d.pushPlot = NewPlotView()
	d.pushPlot.HideT = true
	d.pushNote = wrap("")

	spectrum := container.NewBorder(nil, d.specNote, nil, nil, d.spec)
	along := container.NewBorder(nil, d.alongNote, nil, nil, container.NewGridWithRows(4, d.alongM, d.alongR, d.alongU, d.alongS))
	pics := container.NewGridWithColumns(3)
	for i := range d.escImgs {
		pics.Add(container.NewBorder(nil, d.escCaps[i], nil, nil, d.escImgs[i]))
	}
	escape := container.NewBorder(container.NewBorder(nil, nil, widget.NewLabel("k (steps ahead):"), widget.NewButton("Compute", d.computeEscape), d.kEntry),
		d.escNote, nil, nil, pics)
	push := container.NewBorder(container.NewBorder(nil, nil, widget.NewLabel("ε (of the state's norm):"), widget.NewButton("Push both", d.pushTest), d.epsEntry),
		d.pushNote, nil, nil, d.pushPlot)
	d.tabs = container.NewAppTabs(
		container.NewTabItem(dynTabSpectrum, spectrum),
		container.NewTabItem(dynTabAlong, along),
		container.NewTabItem(dynTabEscape, escape),
		container.NewTabItem(dynTabPush, push),
	)
	d.tabs.OnSelected = func(it *container.TabItem) {
		switch {
		case it.Text == dynTabEscape && d.escStale():
			d.computeEscape()
		case it.Text == dynTabPush && d.pushedAt != d.t:
			d.pushTest()
		}
	}
	m.fitWindow(d.w, container.NewBorder(d.note, nil, nil, nil, d.tabs), fyne.NewSize(900, 760))
	d.w.Canvas().SetOnTypedKey(keyOnFyne(func(k *fyne.KeyEvent) {
		if !m.handleKey(k) {
			m.escCloses(k)
		}
	}))
	d.w.SetOnClosed(func() {
		for _, c := range d.cancel {
			c()
		}
		m.dyn = nil
	})
	m.dyn = d
	if m.snap != nil {
		d.draw(m.snap)
	}
}

// start runs job off the Fyne goroutine as the kind's only job (the last
// one of that kind is cancelled); its result is shown by the function it
// returns, on the Fyne goroutine, unless the run changed meanwhile.
func (d *dynWin) start(kind string, job func(ctx context.Context) (func(), error)) {
	if c := d.cancel[kind]; c != nil {
		c()
	}
	ctx, cancel := context.WithCancel(d.m.ctx)
	d.cancel[kind] = cancel
	gen := d.gen
	go func() {
		show, err := job(ctx)
		if ctx.Err() != nil {
			return
		}
		fyne.Do(func() {
			if d.m.dyn != d || d.gen != gen || ctx.Err() != nil {
				return
			}
			if err != nil {
				d.note.SetText(err.Error())
			} else if show != nil {
				show()
			}
			if d.ready != nil {
				d.ready(kind)
			}
		})
	}()
}

// lane is the snapshot's first lane whose model has a map, its system,
// and why there is none.
func (d *dynWin) lane(sn *sim.Snapshot) (*sim.Lane, *dynamics.System, error) {
	var why []string
	for i := range sn.Lanes {
		l := &sn.Lanes[i]
		mdl, err := d.m.deps.Catalogue.Model(l.Info.Name, sn.Settings)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		sys, err := dynamics.SystemOf(mdl, sn.Settings.Corruption.Kind)
		if err == nil {
			return l, sys, nil
		}
		why = append(why, err.Error())
	}
	return nil, nil, fmt.Errorf("none of the models shown has a map this view linearises (%s). Add BSA P=2, P=4, the recycled block or the modern Hopfield network to the models compared", strings.Join(why, "; "))
}

// draw follows the main window: a new run is recomputed, a new step gets
// its spectrum.
func (d *dynWin) draw(sn *sim.Snapshot) {
	l, sys, err := d.lane(sn)
	if err != nil {
		d.gen++
		d.key, d.states = "", nil
		d.note.SetText(err.Error())
		return
	}
	key := fmt.Sprintf("%s %d", l.Info.Name, sn.Horizon)
	if len(l.Frames) > 0 {
		key += fmt.Sprintf(" %p", l.Frames[0])
	}
	if key != d.key {
		d.newRun(sn, l, sys, key)
	}
	d.best = l.Best
	d.mse = d.mse[:0]
	for _, f := range l.Frames {
		d.mse = append(d.mse, f.MSE)
	}
	if sn.T != d.t || d.states == nil {
		d.t = sn.T
		d.showStep()
	}
}

// newRun recomputes the lane's states and starts the run's jobs.
func (d *dynWin) newRun(sn *sim.Snapshot, l *sim.Lane, sys *dynamics.System, key string) {
	for _, c := range d.cancel {
		c()
	}
	d.gen++
	d.key, d.model, d.states = key, l.Info.Name, nil
	d.along = map[int]dynamics.Spectrum{}
	d.esc, d.pushedAt = nil, -1
	d.sys = sys
	d.specNote.SetText(specAbout + " " + sys.About)
	in := sn.InputFor(sys.Patches)
	T := max(sn.Horizon, 1)
	pushed := ""
	if len(l.Branch) > 0 {
		pushed = " The pushed run is not analysed here: these are the states of the run as it was."
	}
	d.note.SetText(fmt.Sprintf("%s: recomputing the run's states t = 0 … %d…%s", d.model, T, pushed))
	d.start("run", func(ctx context.Context) (func(), error) {
		f := sys.Stepper()
		states, err := sys.Trajectory(ctx, in, T)
		if err != nil {
			return nil, err
		}
		return func() {
			d.f, d.states = f, states
			d.kEntry.SetText("")
			d.showStep()
			d.startAlong()
		}, nil
	})
}

// showStep computes the spectrum at the step shown.
func (d *dynWin) showStep() {
	if d.states == nil {
		return
	}
	t := d.t
	for _, p := range []*PlotView{d.alongR, d.alongU, d.alongS, d.alongM} {
		p.T = float64(t)
		p.TStar = float64(d.best)
		p.Refresh()
	}
	if t < 1 || t >= len(d.states) {
		why := "t = 0 is the input: the first step follows its own rules (masked keys left out, statistics over the visible tokens), so the map — and its Jacobian — starts at t = 1. Step forward."
		if t >= len(d.states) {
			why = fmt.Sprintf("t = %d is beyond the run's %d steps.", t, len(d.states)-1)
		}
		d.note.SetText(fmt.Sprintf("%s at t = %d: %s", d.model, t, why))
		d.spec.SetPlot(func() (*plot.Plot, error) { return nil, errors.New("no spectrum at this step") })
		return
	}
	if sp, ok := d.along[t]; ok {
		d.showSpectrum(sp)
	} else {
		d.note.SetText(fmt.Sprintf("%s at t = %d: computing the leading eigenvalues…", d.model, t))
	}
	f, x := d.f, d.states[t]
	d.start("spectrum", func(ctx context.Context) (func(), error) {
		sp, err := dynamics.SpectrumAt(ctx, f, x, t, nil)
		if err != nil {
			return nil, err
		}
		return func() { d.showSpectrum(sp) }, nil
	})
	if sel := d.tabs.Selected(); sel != nil {
		switch sel.Text {
		case dynTabEscape:
			d.computeEscape()
		case dynTabPush:
			d.pushTest()
		}
	}
}

// spectrumText says a spectrum in words.
func spectrumText(model string, sp dynamics.Spectrum, best int) string {
	where := ""
	switch {
	case sp.T == best:
		where = " (its t*)"
	case sp.T < best:
		where = fmt.Sprintf(" (%d before t* = %d)", best-sp.T, best)
	default:
		where = fmt.Sprintf(" (%d after t* = %d)", sp.T-best, best)
	}
	un := fmt.Sprintf("%d of the %d leading eigenvalues outside the unit circle", sp.Unstable, dynamics.Eigs)
	switch {
	case sp.Unstable == 0:
		un = "every leading eigenvalue inside the unit circle: nearby states converge here (locally stable)"
	case sp.Unstable == dynamics.Eigs:
		un = fmt.Sprintf("all %d leading eigenvalues outside the unit circle (at least %d directions grow)", dynamics.Eigs, dynamics.Eigs)
	}
	conv := ""
	if !sp.Converged {
		conv = " (not converged to the tolerance)"
	}
	return fmt.Sprintf("%s at t = %d%s: spectral radius %.4f%s, %s; step size ‖X(t+1) − X(t)‖/‖X(t)‖ = %.4f.",
		model, sp.T, where, sp.Radius, conv, un, sp.StepSize)
}

func (d *dynWin) showSpectrum(sp dynamics.Spectrum) {
	if sp.T != d.t {
		return
	}
	d.note.SetText(spectrumText(d.model, sp, d.best))
	vals := make([]complex128, len(sp.Eigs))
	for k, e := range sp.Eigs {
		vals[k] = e.Value
	}
	title := fmt.Sprintf("%s: leading eigenvalues of ∂X(t+1)/∂X(t) at t = %d", d.model, sp.T)
	label := fmt.Sprintf("t = %d (radius %.4f)", sp.T, sp.Radius)
	d.spec.SetPlot(func() (*plot.Plot, error) {
		return figures.SpectrumPlot(title, []figures.EigGroup{{Label: label, Values: vals}})
	})
}

// startAlong computes the spectrum at every step of the run (alongSteps),
// drawing the curves as they fill in.
func (d *dynWin) startAlong() {
	f, states := d.f, d.states
	ts := alongSteps(len(states) - 1)
	var mu sync.Mutex
	got := map[int]dynamics.Spectrum{}
	start := time.Now()
	d.alongNote.SetText(fmt.Sprintf("computing the spectrum at %d steps…", len(ts)))
	d.start("along", func(ctx context.Context) (func(), error) {
		last := time.Now()
		flush := func(done bool) {
			mu.Lock()
			snap := make(map[int]dynamics.Spectrum, len(got))
			for k, v := range got {
				snap[k] = v
			}
			mu.Unlock()
			gen := d.gen
			fyne.Do(func() {
				if d.m.dyn != d || d.gen != gen || ctx.Err() != nil {
					return
				}
				d.along = snap
				d.drawAlong(len(ts), time.Since(start), done)
			})
		}
		err := dynamics.AlongRun(ctx, f, states, ts, 0, func(sp dynamics.Spectrum) {
			mu.Lock()
			got[sp.T] = sp
			mu.Unlock()
			if time.Since(last) > 500*time.Millisecond {
				last = time.Now()
				flush(false)
			}
		})
		if err != nil {
			return nil, err
		}
		flush(true)
		return nil, nil
	})
}

// drawAlong draws the along-the-run curves from the spectra computed.
func (d *dynWin) drawAlong(total int, took time.Duration, done bool) {
	ts := make([]int, 0, len(d.along))
	for t := range d.along {
		ts = append(ts, t)
	}
	sort.Ints(ts)
	x := make([]float64, len(ts))
	rad, un, step := make([]float64, len(ts)), make([]float64, len(ts)), make([]float64, len(ts))
	for i, t := range ts {
		sp := d.along[t]
		x[i], rad[i], un[i], step[i] = float64(t), sp.Radius, float64(sp.Unstable), sp.StepSize
	}
	maxT := len(d.states) - 1
	mt := make([]float64, len(d.mse))
	for t := range mt {
		mt[t] = float64(t)
	}
	mse := append([]float64(nil), d.mse...)
	model := d.model
	input := math.NaN()
	if len(mse) > 0 {
		input = mse[0]
	}
	d.alongM.SetPlot(func() (*plot.Plot, error) {
		return figures.AlongPlot(model+": MSE (t* marked)", "MSE", mt, mse, input, "the input's MSE", maxT)
	})
	d.alongR.SetPlot(func() (*plot.Plot, error) {
		return figures.AlongPlot("spectral radius |λ₁|", "|λ₁|", x, rad, 1, "the unit circle", maxT)
	})
	d.alongU.SetPlot(func() (*plot.Plot, error) {
		return figures.AlongPlot(fmt.Sprintf("eigenvalues outside the unit circle (of the %d leading)", dynamics.Eigs), "unstable", x, un, math.NaN(), "", maxT)
	})
	d.alongS.SetPlot(func() (*plot.Plot, error) {
		return figures.AlongPlot("step size ‖X(t+1) − X(t)‖/‖X(t)‖", "step", x, step, math.NaN(), "", maxT)
	})
	state := fmt.Sprintf("%d of %d steps computed (%.1f s)", len(ts), total, took.Seconds())
	if done {
		state = fmt.Sprintf("all %d steps computed in %.1f s", total, took.Seconds())
	}
	d.alongNote.SetText(state + ". " + alongReading(d.along, d.best))
}

// alongReading says where the state is slowest and where it stops being
// unstable, next to t*.
func alongReading(along map[int]dynamics.Spectrum, best int) string {
	if len(along) == 0 {
		return ""
	}
	slow, fast := -1, -1
	stable := -1
	ts := make([]int, 0, len(along))
	for t := range along {
		ts = append(ts, t)
	}
	sort.Ints(ts)
	for _, t := range ts {
		sp := along[t]
		if slow < 0 || sp.StepSize < along[slow].StepSize {
			slow = t
		}
		if fast < 0 || sp.StepSize > along[fast].StepSize {
			fast = t
		}
		if stable < 0 && sp.Unstable == 0 {
			stable = t
		}
	}
	s := fmt.Sprintf("The largest step is at t = %d and the smallest at t = %d, against t* = %d.", fast, slow, best)
	if stable > 0 {
		s += fmt.Sprintf(" From t = %d every leading eigenvalue is inside the unit circle.", stable)
	} else {
		s += " Some direction grows at every step computed."
	}
	return s
}

// kFor is the default horizon: from t to the step where the MSE climbs
// back above the input's (10 when it never does within the run).
func (d *dynWin) kFor(t int) int {
	if len(d.mse) > 0 {
		for s := max(t, d.best) + 1; s < len(d.mse); s++ {
			if d.mse[s] > d.mse[0] {
				return min(s-t, dynamics.MaxK)
			}
		}
	}
	return int(dynamics.KRange.Default)
}

// horizon reads the k entry (empty: the default).
func (d *dynWin) horizon() (int, error) {
	txt := strings.TrimSpace(d.kEntry.Text)
	if txt == "" {
		return d.kFor(d.t), nil
	}
	k, err := strconv.Atoi(txt)
	if err != nil {
		return 0, fmt.Errorf("k = %q is not a whole number (allowed %s)", txt, dynamics.KRange.Allowed())
	}
	if err := dynamics.KRange.CheckInt(k, sim.ViaName); err != nil {
		return 0, err
	}
	return k, nil
}

func (d *dynWin) escStale() bool {
	k, err := d.horizon()
	return err == nil && (d.esc == nil || d.esc.T != d.t || d.esc.K != k)
}

// computeEscape computes the escape direction from t over k steps.
func (d *dynWin) computeEscape() {
	if d.states == nil || d.t < 1 || d.t >= len(d.states) {
		d.escNote.SetText("The escape direction starts from a step t ≥ 1 of the run (the map starts at t = 1): step forward.")
		return
	}
	k, err := d.horizon()
	if err != nil {
		d.escNote.SetText(err.Error())
		return
	}
	t, f, x, sys, model := d.t, d.f, d.states[d.t], d.sys, d.model
	d.escNote.SetText(fmt.Sprintf("computing the perturbations at t = %d that grow most by t = %d…", t, t+k))
	d.start("escape", func(ctx context.Context) (func(), error) {
		ch, err := dynamics.NewChain(ctx, f, x, k)
		if err != nil {
			return nil, err
		}
		e, err := dynamics.EscapeFrom(ctx, ch, t, 3, nil)
		if err != nil {
			return nil, err
		}
		// Each picture on its own scale: its largest pixel change is
		// full colour.
		var pics [3]*image.RGBA
		ims := make([][]float64, len(e.Dirs))
		for i, v := range e.Dirs {
			ims[i] = sys.Picture(x, v)
			var bound float64
			for _, p := range ims[i] {
				bound = max(bound, math.Abs(p))
			}
			pics[i] = figures.DivergingImage(ims[i], 28, bound)
		}
		return func() {
			d.esc = &e
			for i := range d.escImgs {
				if i < len(ims) {
					d.escImgs[i].Image = pics[i]
					d.escCaps[i].SetText(fmt.Sprintf("direction %d: ×%.3f in %d steps", i+1, e.Growth[i], k))
				} else {
					d.escImgs[i].Image = image.NewRGBA(image.Rect(0, 0, 28, 28))
					d.escCaps[i].SetText("")
				}
				d.escImgs[i].Refresh()
			}
			conv := ""
			if !e.Converged {
				conv = " (the iteration did not reach its tolerance)"
			}
			grow := "grows"
			if e.Growth[0] < 1 {
				grow = "shrinks least"
			}
			d.escNote.SetText(fmt.Sprintf("%s from t = %d over k = %d steps: the perturbation that %s changes ×%.3f%s, the next ×%.3f and ×%.3f. "+
				"Each picture is that direction seen through the decoder at t = %d, on its own scale: red pixels brighten, blue darken as the state moves along it — what the memory loses first. "+
				"An empty k is the default: the steps until the MSE climbs back above the input's.", model, t, k, grow, e.Growth[0], conv, e.Growth[1], e.Growth[2], t))
		}, nil
	})
}

// pushTest pushes X(t) by ε along the escape direction and along a random
// one, and draws both pushed runs beside their linear predictions.
func (d *dynWin) pushTest() {
	if d.states == nil || d.t < 1 || d.t >= len(d.states) {
		d.pushNote.SetText("The push test starts from a step t ≥ 1 of the run: step forward.")
		return
	}
	txt := strings.TrimSpace(d.epsEntry.Text)
	eps, err := strconv.ParseFloat(txt, 64)
	if err != nil || !(eps >= dynamics.EpsRange.Min && eps <= dynamics.EpsRange.Max) {
		d.pushNote.SetText(fmt.Sprintf("ε = %q is not a number in %s (a fraction of the state's norm).", txt, dynamics.EpsRange.Allowed()))
		return
	}
	k, err := d.horizon()
	if err != nil {
		d.pushNote.SetText(err.Error())
		return
	}
	t, f, x, model := d.t, d.f, d.states[d.t], d.model
	d.pushNote.SetText(fmt.Sprintf("pushing X(%d) by ε = %g along the escape direction and along a random one, %d steps…", t, eps, k))
	d.start("push", func(ctx context.Context) (func(), error) {
		ch, err := dynamics.NewChain(ctx, f, x, k)
		if err != nil {
			return nil, err
		}
		e, err := dynamics.EscapeFrom(ctx, ch, t, 1, nil)
		if err != nil {
			return nil, err
		}
		pe, err := dynamics.Push(ctx, ch, e.Dirs[0], eps)
		if err != nil {
			return nil, err
		}
		pr, err := dynamics.Push(ctx, ch, dynamics.RandomDirection(f.Size(), uint64(t)), eps)
		if err != nil {
			return nil, err
		}
		runs := []figures.PushSeries{{Name: "escape direction", Real: pe.Real, Predicted: pe.Predicted}, {Name: "random direction", Real: pr.Real, Predicted: pr.Predicted}}
		title := fmt.Sprintf("%s: X(%d) pushed by ε = %g, %d steps", model, t, eps, k)
		return func() {
			d.pushedAt = t
			d.pushPlot.SetPlot(func() (*plot.Plot, error) { return figures.PushPlot(title, runs) })
			gap := func(p dynamics.PushTest) float64 {
				return math.Abs(p.Real[k]-p.Predicted[k]) / p.Predicted[k]
			}
			verdict := "the linearisation holds (both pushed runs follow their predictions)"
			if max(gap(pe), gap(pr)) > 0.1 {
				verdict = "the linearisation fails at this ε: a smaller ε brings the runs back onto their predictions"
			}
			further := "the escape push ends further from the run"
			if pe.Real[k] <= pr.Real[k] {
				further = "the random push ends as far or further"
			}
			d.pushNote.SetText(fmt.Sprintf("After %d steps the escape push is %.3g from the run (predicted %.3g), the random push %.3g (predicted %.3g): %s; %s. Solid: the pushed run; dashed: the linear prediction.",
				k, pe.Real[k], pe.Predicted[k], pr.Real[k], pr.Predicted[k], further, verdict))
		}, nil
	})
}

// pushAlong opens the push test (Push → along the escape direction).
func (m *Main) pushAlong() {
	m.ShowDynamics(dynTabPush)
	m.dyn.pushTest()
}
