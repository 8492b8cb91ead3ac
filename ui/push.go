package ui

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"attractorlab/sim"
	"attractorlab/sim/figures"
)

// A push mid-run (Push menu; docs/maths.md §2): at the step shown, erase
// patches of the state, add noise to them, or kick every pixel. Every
// model's run branches there: the run stays as it was and the pushed run
// is drawn beside it, dashed. The push window chooses the patches by
// clicking or painting on the state; Ctrl+K kicks at once; Ctrl+Z takes
// the last push back.

// pushedColor is a single model's pushed run in the plots (sky: no other
// line of a one-model plot uses it).
var pushedColor = figures.Palette[4]

// pushedPanel reports whether the snapshot has pushes (a pushed run to
// show).
func pushedPanel(sn *sim.Snapshot) bool { return sn != nil && len(sn.Settings.Pushes) > 0 }

// pushAt reports whether a push was made at step t.
func pushAt(sn *sim.Snapshot, t int) bool {
	return slices.ContainsFunc(sn.Settings.Pushes, func(p sim.Push) bool { return p.T == t })
}

// pushMask marks the pixels of the patches pushed at step t (nil when
// only kicks were: they touch every pixel).
func pushMask(sn *sim.Snapshot, t int) []bool {
	var out []bool
	pt, err := sim.NewGrid(sn.MaskGrid)
	if err != nil {
		return nil
	}
	for _, p := range sn.Settings.Pushes {
		if p.T != t || p.Kind == sim.Kick {
			continue
		}
		if out == nil {
			out = make([]bool, sim.Pixels)
		}
		pt.MarkPixels(out, p.Patches...)
	}
	return out
}

// branchColumn is lane l's pushed run as values indexed by t (NaN before
// the first push: not drawn), nil without one.
func branchColumn(l sim.Lane, f func(*sim.Frame) float64) []float64 {
	if len(l.Branch) == 0 {
		return nil
	}
	out := make([]float64, l.Branch[len(l.Branch)-1].T+1)
	for t := range out {
		out[t] = math.NaN()
	}
	for _, fr := range l.Branch {
		out[fr.T] = f(fr)
	}
	return out
}

// branchBest is the pushed run's lowest error after the first push (its
// step, or −1 when no step after it is recorded).
func branchBest(l sim.Lane) (int, float64) {
	if len(l.Branch) < 2 {
		return -1, 0
	}
	// The one rule (sim.BestStep) over the pushed run's steps after the
	// push: its k-th step is Branch[k].
	k, bm := sim.BestStep(len(l.Branch), func(k int) float64 { return l.Branch[k].MSE })
	if k < 1 {
		return -1, 0
	}
	return l.Branch[k].T, bm
}

// pushedText is the title of a single model's pushed-run panel.
func (m *Main) pushedText(sn *sim.Snapshot) string {
	l := sn.Lanes[0]
	b := l.BranchAt(sn.T)
	if b == nil {
		return fmt.Sprintf("pushed run\nfrom t = %d", sn.Settings.Pushes[0].T)
	}
	txt := fmt.Sprintf("pushed · MSE %.4f", b.MSE)
	if m.source().Memories != nil {
		txt += fmt.Sprintf("\n#%d: %s %s r %.2f", b.NearIdx, sn.ClassName(b.NearLbl), labelMark(b.NearLbl, sn.Label), b.NearCorr)
	}
	return txt
}

// kick pushes noise of the last σ² onto every pixel of the state shown.
func (m *Main) kick() {
	if m.snap == nil {
		return
	}
	t := m.snap.T
	m.Engine.AddPush(sim.Push{T: t, Kind: sim.Kick, Sigma2: m.pushSigma2})
	m.setStatus(fmt.Sprintf("kicked the state at t = %d (noise σ² %g everywhere): the dashed curve is the pushed run; Ctrl+Z takes it back", t, m.pushSigma2))
}

// undoPush takes the last push back.
func (m *Main) undoPush() {
	if !pushedPanel(m.snap) {
		m.setStatus("no push to take back")
		return
	}
	m.Engine.UndoPush()
	m.setStatus("took the last push back")
}

// clearPushes takes every push back.
func (m *Main) clearPushes() {
	m.Engine.ClearPushes()
	m.setStatus("every push taken back")
}

// pushWin is the push window: the state at the step shown, its patches
// chosen by clicking or painting, what to do to them, and the pushes made.
type pushWin struct {
	m        *Main
	w        fyne.Window
	view     *patchPainter
	title    *widget.Label
	kind     *widget.RadioGroup
	sigma    *widget.Slider
	sigmaLbl *widget.Label
	push     *widget.Button
	undo     *widget.Button
	clear    *widget.Button
	made     *widget.Label
	chosen   map[int]bool // patches of the mask grid
	grid     int
}

// pushKinds are the push window's choices, in the order of sim.PushKind.
var pushKinds = []string{"Erase the chosen patches", "Add noise to the chosen patches", "Kick: noise on every pixel"}

func (m *Main) showPush() {
	if m.pushWin != nil {
		m.pushWin.w.Show()
		m.pushWin.w.RequestFocus()
		return
	}
	pw := &pushWin{m: m, w: m.newWindow("Push the state — Attractor Lab"), chosen: map[int]bool{}}
	pw.view = newPatchPainter(pw.paint)
	pw.title = widget.NewLabel("")
	pw.title.Wrapping = fyne.TextWrapWord
	pw.kind = widget.NewRadioGroup(pushKinds, nil)
	pw.kind.SetSelected(pushKinds[0])
	pw.kind.Required = true
	pw.sigmaLbl = widget.NewLabel("")
	pw.sigma = widget.NewSlider(sim.PushSigma2.Step, sim.PushSigma2.Max)
	pw.sigma.Step = sim.PushSigma2.Step
	pw.sigma.SetValue(m.pushSigma2)
	pw.sigma.OnChanged = func(v float64) {
		m.pushSigma2 = v
		pw.sigmaLbl.SetText(fmt.Sprintf("noise variance σ² = %.2f (%s)", v, sim.PushSigma2.Allowed()))
	}
	pw.sigma.OnChanged(pw.sigma.Value)
	pw.push = widget.NewButton("Push", pw.doPush)
	pw.push.Importance = widget.HighImportance
	pw.undo = widget.NewButton("Undo the last push (Ctrl+Z)", m.undoPush)
	pw.clear = widget.NewButton("Remove every push", m.clearPushes)
	none := widget.NewButton("Choose no patch", func() {
		clear(pw.chosen)
		pw.redraw()
	})
	pw.made = widget.NewLabel("")
	pw.made.Wrapping = fyne.TextWrapWord
	pw.kind.OnChanged = func(string) { pw.refreshButtons() } // the buttons exist now
	controls := container.NewVBox(pw.kind, pw.sigmaLbl, pw.sigma, none, pw.push, widget.NewSeparator(),
		widget.NewLabelWithStyle("Pushes made", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), pw.made, pw.undo, pw.clear)
	m.fitWindow(pw.w, container.NewBorder(pw.title, nil, nil, container.NewPadded(controls), pw.view), fyne.NewSize(760, 520))
	pw.w.Canvas().SetOnTypedKey(keyOnFyne(func(k *fyne.KeyEvent) {
		if !m.handleKey(k) { // the main window's keys step the run from here too
			m.escCloses(k)
		}
	}))
	pw.w.Canvas().AddShortcut(&fyne.ShortcutUndo{}, func(fyne.Shortcut) { onFyne(m.undoPush)() })
	pw.w.Canvas().AddShortcut(ctrl(fyne.KeyK), func(fyne.Shortcut) { onFyne(m.kick)() })
	pw.w.SetOnClosed(func() { m.pushWin = nil })
	m.pushWin = pw
	if m.snap != nil {
		pw.draw(m.snap)
	}
	pw.w.Show()
}

// paint chooses patch i (on) or leaves it out.
func (pw *pushWin) paint(i int, on bool) {
	if on {
		pw.chosen[i] = true
	} else {
		delete(pw.chosen, i)
	}
	pw.redraw()
}

func (pw *pushWin) kindNow() sim.PushKind {
	return sim.PushKind(max(slices.Index(pushKinds, pw.kind.Selected), 0))
}

// doPush makes the push at the step shown.
func (pw *pushWin) doPush() {
	sn := pw.m.snap
	if sn == nil {
		return
	}
	p := sim.Push{T: sn.T, Kind: pw.kindNow(), Sigma2: pw.m.pushSigma2}
	if p.Kind == sim.Erase {
		p.Sigma2 = 0 // an erase adds no noise
	}
	if p.Kind != sim.Kick {
		for i := range pw.chosen {
			p.Patches = append(p.Patches, i)
		}
		slices.Sort(p.Patches)
	}
	pw.m.Engine.AddPush(p)
	pw.m.setStatus("pushed: " + p.Describe() + " — the dashed curve is the pushed run; Ctrl+Z takes it back")
	clear(pw.chosen)
	pw.redraw()
}

// draw follows the main window: the state of the selected model at the
// step shown (its pushed run's, once there is one at that step).
func (pw *pushWin) draw(sn *sim.Snapshot) {
	if sn.MaskGrid != pw.grid {
		clear(pw.chosen) // patches of another grid
		pw.grid = sn.MaskGrid
	}
	pw.redraw()
}

func (pw *pushWin) redraw() {
	sn := pw.m.snap
	if sn == nil || len(sn.Lanes) == 0 {
		return
	}
	l := sn.Lanes[min(pw.m.lane, len(sn.Lanes)-1)]
	f, which := l.At(sn.T), "its run"
	if b := l.BranchAt(sn.T); b != nil {
		f, which = b, "its pushed run"
	}
	v := pw.view
	v.Pixels, v.Grid = f.Image, sn.MaskGrid
	v.Mask = nil
	if len(pw.chosen) > 0 {
		v.Mask = make([]bool, sim.Pixels)
		if pt, err := sim.NewGrid(sn.MaskGrid); err == nil {
			for i := range pw.chosen {
				pt.MarkPixels(v.Mask, i)
			}
		}
	}
	v.Refresh()
	pw.title.SetText(fmt.Sprintf("The state of %s at t = %d (%s, MSE %.4f). Click or paint the patches to push (outlined; again to leave one out), choose what to do, then Push: every model's run branches at t = %d, drawn dashed beside it.",
		l.Info.Label, sn.T, which, f.MSE, sn.T))
	pw.push.SetText(fmt.Sprintf("Push at t = %d", sn.T))
	var made []string
	for k, p := range sn.Settings.Pushes {
		made = append(made, fmt.Sprintf("%d. %s", k+1, p.Describe()))
	}
	if len(made) == 0 {
		made = []string{"none yet"}
	}
	pw.made.SetText(strings.Join(made, "\n"))
	pw.refreshButtons()
}

// refreshButtons enables what can be done: a push of patches needs one.
func (pw *pushWin) refreshButtons() {
	if pw.kindNow() != sim.Kick && len(pw.chosen) == 0 {
		pw.push.Disable()
	} else {
		pw.push.Enable()
	}
	if pushedPanel(pw.m.snap) {
		pw.undo.Enable()
		pw.clear.Enable()
	} else {
		pw.undo.Disable()
		pw.clear.Disable()
	}
	if pw.kindNow() == sim.Erase {
		pw.sigma.Disable()
	} else {
		pw.sigma.Enable()
	}
}

// patchPainter is a PixelView on which a click chooses or leaves out a
// patch and a drag paints: every patch it passes is chosen, or left out
// when the drag started on a chosen one.
type patchPainter struct {
	PixelView
	paint    func(patch int, on bool)
	dragging bool
	on       bool
}

func newPatchPainter(paint func(int, bool)) *patchPainter {
	p := &patchPainter{paint: paint}
	p.Selected = -1
	p.ExtendBaseWidget(p)
	return p
}

// patchAt is the patch of the grid under pos (−1: outside the image).
func (p *patchPainter) patchAt(pos fyne.Position) int {
	q := p.pixelAt(pos)
	if q < 0 {
		return -1
	}
	g := max(p.Grid, 1)
	return (q/28/g)*(28/g) + (q%28)/g
}

// chosen reports whether patch i is outlined now.
func (p *patchPainter) chosen(i int) bool {
	g := max(p.Grid, 1)
	q := (i/(28/g))*g*28 + (i%(28/g))*g
	return p.Mask != nil && q < len(p.Mask) && p.Mask[q]
}

func (p *patchPainter) Tapped(e *fyne.PointEvent) {
	if i := p.patchAt(e.Position); i >= 0 {
		p.paint(i, !p.chosen(i))
	}
}

func (p *patchPainter) Dragged(e *fyne.DragEvent) {
	i := p.patchAt(e.Position)
	if i < 0 {
		return
	}
	if !p.dragging {
		p.dragging, p.on = true, !p.chosen(i)
	}
	if p.chosen(i) != p.on {
		p.paint(i, p.on)
	}
}

func (p *patchPainter) DragEnd() { p.dragging = false }

// toggleUnpushed switches what the models' state panels show side by side
// after a push: each pushed run (the default) or the run as it was. The
// panels' titles say which ("pushed", "unpushed"); the plots show both.
func (m *Main) toggleUnpushed() {
	m.unpushed = !m.unpushed
	what := "the pushed runs"
	if m.unpushed {
		what = "the runs as they were, without the pushes"
	}
	m.setStatus("side by side the state panels show " + what + " (Ctrl+J switches)")
	if m.snap != nil {
		m.apply(m.snap)
	}
}
