package ui

import (
	"math"
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"attractorlab/sim"
)

// TestDrawOwnDigit: a stroke dragged on the pad paints ink along it (a
// round brush), erasing takes it away, and the digit it makes becomes
// the window's clean digit: no label, so the nearest memory has no ✓/✗,
// the sidebar says how to go back, and choosing a stored digit does.
func TestDrawOwnDigit(t *testing.T) {
	m, _ := newTestMain(t)
	pad := newDrawPad()
	pad.Resize(fyne.NewSize(padSide, padSide)) // one pad pixel per point
	changes := 0
	pad.OnChange = func() { changes++ }
	// A vertical stroke at x = 96 from y = 30 to 160, in three drags.
	for _, y := range []float32{70, 120, 160} {
		pad.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(96, y)}, Dragged: fyne.NewDelta(0, 40)})
	}
	pad.DragEnd()
	at := func(x, y int) float64 { return pad.Ink[y*padSide+x] }
	if changes != 3 || at(96, 100) != 1 || at(96+int(pad.Radius)+2, 100) != 0 || at(96, 15) != 0 {
		t.Fatalf("%d changes; ink on the stroke %g, beside it %g, above it %g", changes, at(96, 100), at(96+int(pad.Radius)+2, 100), at(96, 15))
	}
	pad.Erase = true
	pad.Tapped(&fyne.PointEvent{Position: fyne.NewPos(96, 100)})
	if at(96, 100) != 0 || at(96, 140) != 1 {
		t.Fatal("erasing did not take the ink under the brush away, or took more")
	}
	own := sim.PrepareDigit(pad.Ink, padSide, padSide)
	m.UseOwnDigit(own, "drawn")
	m.Engine.Settle()
	if sn := m.snap; sn.Settings.Own == nil || sn.Label != sim.NoLabel {
		t.Fatal("the drawn digit is not the clean digit")
	}
	if txt := m.nearestLbl.Text; strings.ContainsAny(txt, "✓✗") || !m.side.ownHint.Visible() {
		t.Fatalf("nearest %q, hint shown %v", txt, m.side.ownHint.Visible())
	}
	m.send(func(st *sim.Settings) { st.Index = 5 })
	m.Engine.Settle()
	if m.snap.Settings.Own != nil || m.side.ownHint.Visible() || !strings.ContainsAny(m.nearestLbl.Text, "✓✗") {
		t.Fatal("choosing digit 5 kept the drawn digit")
	}
}

// TestTokenEnergyWindow: the window follows the main window's step: e_i
// of the bare model at t and its change since t − 1 on the patch grid,
// none at t = 0; without a bare model it says to choose one.
func TestTokenEnergyWindow(t *testing.T) {
	m, w := newTestMain(t)
	m.Engine.Restore(sim.PaperDemo(), 5)
	m.Engine.Settle()
	m.showTokenEnergy()
	tw := m.tokens
	if !strings.Contains(tw.title.Text, "t = 5") || !strings.Contains(tw.deltaLbl.Text, "tokens lowered") || tw.delta.Image.Bounds().Dx() != 14 || tw.now.Image.Bounds().Dx() != 14 {
		t.Fatalf("title %q, change %q, images %v %v", tw.title.Text, tw.deltaLbl.Text, tw.now.Image.Bounds(), tw.delta.Image.Bounds())
	}
	typeKey(w, fyne.KeyRight)
	if !strings.Contains(tw.title.Text, "t = 6") {
		t.Fatalf("after →: %q", tw.title.Text)
	}
	m.Engine.Seek(0)
	m.Engine.Settle()
	if !strings.Contains(tw.deltaLbl.Text, "none at t = 0") {
		t.Fatalf("t = 0: %q", tw.deltaLbl.Text)
	}
	m.Engine.Update(func(s *sim.Settings) { s.Lanes = []string{"hopfield"} })
	m.Engine.Settle()
	if !strings.Contains(tw.title.Text, "No model shown has token energies") {
		t.Fatalf("Hopfield: %q", tw.title.Text)
	}
	tw.w.Close()
	if m.tokens != nil {
		t.Fatal("closing kept the window")
	}
}

// TestStateSpaceWindow: the plane is computed once in the background, then
// each model's recorded states are a path in it (as many points as
// frames), redrawn as the main window moves.
func TestStateSpaceWindow(t *testing.T) {
	m, w := newTestMain(t)
	m.Engine.Restore(sim.PaperDemo(), 30)
	m.Engine.Update(func(s *sim.Settings) { s.Lanes = []string{"bsa-p2", "hopfield"} })
	m.Engine.Settle()
	done := make(chan struct{})
	m.spaceReady = func() { close(done) }
	m.showStateSpace()
	sw := m.space
	<-done
	paths := sw.paths(m.snap)
	if len(paths) != 2 || len(paths[0].Points) != len(m.snap.Lanes[0].Frames) || paths[0].Best != m.snap.Lanes[0].Best {
		t.Fatalf("%d paths", len(paths))
	}
	if sw.plot.Build == nil || !strings.Contains(sw.note.Text, "dot at t = 30") {
		t.Fatalf("note %q", sw.note.Text)
	}
	if _, err := sw.plot.Build(); err != nil {
		t.Fatal(err)
	}
	typeKey(w, fyne.KeyRight)
	if !strings.Contains(sw.note.Text, "dot at t = 31") {
		t.Fatalf("after →: %q", sw.note.Text)
	}
	sw.w.Close()
	if m.space != nil {
		t.Fatal("closing kept the window")
	}
}

// TestStateSpaceClickLoads: a tap on the map loads the stored digit whose
// point is nearest — here the tap is placed on stored digit 17's point
// through the plot's own pixel mapping.
func TestStateSpaceClickLoads(t *testing.T) {
	m, _ := newTestMain(t)
	done := make(chan struct{})
	m.spaceReady = func() { close(done) }
	m.showStateSpace()
	<-done
	sw := m.space
	sw.w.Resize(fyne.NewSize(900, 760))
	sw.plot.Resize(fyne.NewSize(880, 680))
	sw.plot.Refresh()
	if sw.plot.toData == nil {
		t.Fatal("the map was not drawn")
	}
	target := sw.space.Points[17]
	// The pixel over stored digit 17, by the plot's own mapping.
	var pos fyne.Position
	bestD := math.Inf(1)
	for py := float32(0); py < 680; py++ {
		for px := float32(0); px < 880; px++ {
			x, y := sw.plot.toData(float64(px*sw.plot.scale), float64(py*sw.plot.scale))
			if d := math.Hypot(x-target[0], y-target[1]); d < bestD {
				bestD, pos = d, fyne.NewPos(px, py)
			}
		}
	}
	sw.plot.Tapped(&fyne.PointEvent{Position: pos})
	m.Engine.Settle()
	s := m.snap.Settings
	got := sw.space.Points[s.Index]
	if s.Split != sim.TrainSplit || math.Hypot(got[0]-target[0], got[1]-target[1]) > 0.05 {
		t.Fatalf("loaded %s digit %d at %v, clicked near digit 17 at %v", s.Split, s.Index, got, target)
	}
	if !strings.Contains(m.status.Text, "loaded stored digit") {
		t.Fatalf("status %q", m.status.Text)
	}
}
