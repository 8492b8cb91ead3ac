package ui

import (
	"fmt"
	"image"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"attractorlab/sim"
	"attractorlab/sim/figures"
)

// The per-token energy window (View → Per-token energy…): the bare
// self-attention's energy is a sum over tokens, E = Σ e_i (docs/maths.md
// §4), and each step lowers the tokens' own e_i rather than E as a whole.
// It shows, on the patch grid, e_i at the step shown and its change since
// the step before, following the main window.
type tokenWin struct {
	m          *Main
	w          fyne.Window
	now, delta *canvas.Image
	nowLbl     *widget.Label
	deltaLbl   *widget.Label
	title      *widget.Label
}

func (m *Main) showTokenEnergy() {
	if m.tokens != nil {
		m.tokens.w.Show()
		m.tokens.w.RequestFocus()
		return
	}
	tw := &tokenWin{m: m, w: m.newWindow("Per-token energy — Attractor Lab")}
	img := func() *canvas.Image {
		c := canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
		c.FillMode = canvas.ImageFillContain
		c.ScaleMode = canvas.ImageScalePixels
		c.SetMinSize(fyne.NewSize(280, 280))
		return c
	}
	tw.now, tw.delta = img(), img()
	label := func() *widget.Label {
		l := widget.NewLabel("")
		l.Wrapping = fyne.TextWrapWord
		l.Alignment = fyne.TextAlignCenter
		return l
	}
	tw.nowLbl, tw.deltaLbl, tw.title = label(), label(), label()
	m.fitWindow(tw.w, container.NewBorder(tw.title, nil, nil, nil, container.NewGridWithColumns(2,
		container.NewBorder(nil, tw.nowLbl, nil, nil, tw.now),
		container.NewBorder(nil, tw.deltaLbl, nil, nil, tw.delta))), fyne.NewSize(760, 520))
	tw.w.Canvas().SetOnTypedKey(keyOnFyne(func(k *fyne.KeyEvent) {
		if !m.handleKey(k) { // the main window's keys step the run from here too
			m.escCloses(k)
		}
	}))
	tw.w.SetOnClosed(func() { m.tokens = nil })
	m.tokens = tw
	if m.snap != nil {
		tw.draw(m.snap)
	}
	tw.w.Show()
}

// draw shows the first model with token energies at the snapshot's step.
func (tw *tokenWin) draw(sn *sim.Snapshot) {
	var lane *sim.Lane
	for k := range sn.Lanes {
		if f := sn.Lanes[k].At(sn.T); f != nil && f.TokenEnergy != nil {
			lane = &sn.Lanes[k]
			break
		}
	}
	if lane == nil {
		tw.title.SetText("No model shown has token energies: choose the bare self-attention (keys 1, 2).")
		tw.now.Image, tw.delta.Image = image.NewRGBA(image.Rect(0, 0, 1, 1)), image.NewRGBA(image.Rect(0, 0, 1, 1))
		tw.nowLbl.SetText("")
		tw.deltaLbl.SetText("")
		tw.now.Refresh()
		tw.delta.Refresh()
		return
	}
	f := lane.At(sn.T)
	side := int(math.Round(math.Sqrt(float64(len(f.TokenEnergy)))))
	tw.title.SetText(fmt.Sprintf("%s at t = %d: E = Σ e_i = %.2f over %d tokens. Each step lowers the tokens' own energies e_i, not E as a whole.",
		lane.Info.Label, f.T, f.Energy, len(f.TokenEnergy)))
	var lo, hi float64
	tw.now.Image, lo, hi = figures.SpanImage(f.TokenEnergy, side)
	tw.nowLbl.SetText(fmt.Sprintf("e_i on the patch grid: %.3f (dark, most predictable from the others) to %.3f (yellow)", lo, hi))
	tw.now.Refresh()
	if f.T == 0 {
		tw.delta.Image = image.NewRGBA(image.Rect(0, 0, 1, 1))
		tw.deltaLbl.SetText("change since t − 1: none at t = 0")
		tw.delta.Refresh()
		return
	}
	prev := lane.At(f.T - 1)
	d := make([]float64, len(f.TokenEnergy))
	bound, lowered := 0.0, 0
	for i := range d {
		d[i] = f.TokenEnergy[i] - prev.TokenEnergy[i]
		bound = max(bound, math.Abs(d[i]))
		if d[i] < 0 {
			lowered++
		}
	}
	tw.delta.Image = figures.DivergingImage(d, side, bound)
	tw.deltaLbl.SetText(fmt.Sprintf("change since t − 1: blue lowered, red raised (±%.3g at the ends); %d of %d tokens lowered their e_i", bound, lowered, len(d)))
	tw.delta.Refresh()
}
