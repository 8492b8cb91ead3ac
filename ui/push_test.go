package ui

import (
	"math"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"

	"attractorlab/sim"
	"attractorlab/sim/figures"
)

// TestPushWindow: patches chosen on the state by a click and a drag are
// erased at the step shown; the pushed run is drawn beside the run (its
// own panel and a dashed curve); Ctrl+K kicks; the menu's undo takes the
// last push back and Remove every push the rest.
func TestPushWindow(t *testing.T) {
	m, w := newTestMain(t)
	m.Engine.Restore(sim.PaperDemo(), 30)
	m.Engine.Settle()
	menuItem(t, w, "Push", "Push the state at t (choose patches)…").Action()
	pw := m.pushWin
	if pw == nil || !strings.Contains(pw.title.Text, "t = 30") || !pw.push.Disabled() {
		t.Fatalf("push window: %v, title %q, Push enabled with no patch chosen", pw != nil, pw.title.Text)
	}
	v := pw.view
	v.Resize(fyne.NewSize(280, 280))
	cell := float32(280) / 28
	at := func(px, py int) fyne.Position { // the middle of pixel (px, py)
		return fyne.NewPos((float32(px)+0.5)*cell, (float32(py)+0.5)*cell)
	}
	v.Tapped(&fyne.PointEvent{Position: at(14, 14)}) // patch 7·14 + 7 = 105 on the 2×2 grid
	for x := 4; x <= 9; x++ {                        // a drag over pixels 4 … 9 of row 20: patches 142, 143, 144
		v.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: at(x, 20)}})
	}
	v.DragEnd()
	v.Tapped(&fyne.PointEvent{Position: at(9, 20)}) // and 144 left out again
	if pw.push.Disabled() || len(pw.chosen) != 3 || !pw.chosen[105] || !pw.chosen[142] || !pw.chosen[143] {
		t.Fatalf("chosen %v", pw.chosen)
	}
	pw.push.OnTapped()
	sn := m.snap
	if len(sn.Settings.Pushes) != 1 {
		t.Fatalf("%d pushes", len(sn.Settings.Pushes))
	}
	p := sn.Settings.Pushes[0]
	if p.T != 30 || p.Kind != sim.Erase || len(p.Patches) != 3 {
		t.Fatalf("push %+v", p)
	}
	l := sn.Lanes[0]
	b := l.BranchAt(30)
	if b == nil || m.pushedView.Pixels == nil || &m.pushedView.Pixels[0] != &b.Image[0] {
		t.Fatal("the pushed run's state is not shown beside the run's")
	}
	for _, q := range []int{14*28 + 14, 20*28 + 4} {
		if b.Image[q] != 0 {
			t.Fatalf("pixel %d of an erased patch is %g", q, b.Image[q])
		}
	}
	if !strings.Contains(m.pushedTitle.Text, "pushed · MSE") || !strings.Contains(pw.made.Text, "1. erase 3 patches at t = 30") {
		t.Fatalf("pushed panel %q, pushes made %q", m.pushedTitle.Text, pw.made.Text)
	}
	var pushed *figures.Series
	for _, s := range mseSeries(sn) {
		if s.Name == "pushed" {
			pushed = &s
		}
	}
	if pushed == nil || !pushed.Dashed || !math.IsNaN(pushed.Values[29]) || pushed.Values[30] != b.MSE {
		t.Fatalf("the MSE plot's pushed run: %+v", pushed)
	}
	// Ctrl+K from the push window kicks at the step shown.
	typeKey(w, fyne.KeyRight)
	m.kick()
	if got := m.snap.Settings.Pushes; len(got) != 2 || got[1].Kind != sim.Kick || got[1].T != 31 {
		t.Fatalf("after the kick: %+v", got)
	}
	menuItem(t, w, "Push", "Undo the last push").Action()
	if got := m.snap.Settings.Pushes; len(got) != 1 || got[0].Kind != sim.Erase {
		t.Fatalf("undo took back the wrong push: %+v", got)
	}
	menuItem(t, w, "Push", "Remove every push").Action()
	if len(m.snap.Settings.Pushes) != 0 || !pw.undo.Disabled() {
		t.Fatal("Remove every push left some")
	}
	// Compare mode: each model's panel shows its pushed run and the table
	// has its row.
	m.Engine.Update(func(s *sim.Settings) { s.Lanes = []string{"bsa-p2", "bsa-p4"} })
	m.Engine.Seek(30)
	m.kick()
	m.Engine.Settle()
	if !strings.Contains(m.stateTitles[1].Text, "bsa-p4 pushed") {
		t.Fatalf("compare title %q", m.stateTitles[1].Text)
	}
	var cells []string
	for _, o := range m.answers.Objects {
		if sw, ok := o.(*swatchLabel); ok {
			cells = append(cells, sw.label.Text)
		}
	}
	if strings.Join(cells, ",") != "bsa-p2,bsa-p2 pushed,bsa-p4,bsa-p4 pushed" {
		t.Fatalf("table rows %v", cells)
	}
	pw.w.Close()
	if m.pushWin != nil {
		t.Fatal("closing kept the window")
	}
}

// TestBranchColumn: a pushed run's values sit at their steps, NaN (not
// drawn) before the first push.
func TestBranchColumn(t *testing.T) {
	l := sim.Lane{Branch: []*sim.Frame{{T: 2, Measures: sim.Measures{MSE: 0.5}}, {T: 3, Measures: sim.Measures{MSE: 0.25}}}}
	v := branchColumn(l, func(f *sim.Frame) float64 { return f.MSE })
	if len(v) != 4 || !math.IsNaN(v[0]) || !math.IsNaN(v[1]) || v[2] != 0.5 || v[3] != 0.25 {
		t.Fatalf("column %v", v)
	}
	if bt, bm := branchBest(l); bt != 3 || bm != 0.25 {
		t.Fatalf("best %d %g", bt, bm)
	}
}

// TestMenuShortcutsReachable: Fyne's drivers turn Ctrl+Z, Y, V, C, X, A
// and Insert into their own shortcuts (Undo, Redo, Paste, …) before the
// menu sees them, so a menu item given such a key as a custom shortcut
// would never run; Undo the last push answers Fyne's Undo.
func TestMenuShortcutsReachable(t *testing.T) {
	_, w := newTestMain(t)
	taken := map[fyne.KeyName]string{fyne.KeyZ: "Undo", fyne.KeyY: "Redo", fyne.KeyV: "Paste", fyne.KeyC: "Copy",
		fyne.KeyX: "Cut", fyne.KeyA: "SelectAll", fyne.KeyInsert: "Copy"}
	for _, mn := range w.MainMenu().Items {
		for _, it := range mn.Items {
			if sc, ok := it.Shortcut.(*desktop.CustomShortcut); ok && sc.Modifier == fyne.KeyModifierShortcutDefault {
				if name, bad := taken[sc.KeyName]; bad {
					t.Errorf("%s → %s: Ctrl+%s reaches the window as Fyne's %s shortcut, never as this item's", mn.Label, it.Label, sc.KeyName, name)
				}
			}
		}
	}
	if it := menuItem(t, w, "Push", "Undo the last push"); it.Shortcut == nil || it.Shortcut.ShortcutName() != (&fyne.ShortcutUndo{}).ShortcutName() {
		t.Fatalf("Undo the last push answers %v, not Ctrl+Z (Fyne's Undo)", it.Shortcut)
	}
}

// TestSideBySideUnpushed: with two models a push shows each pushed run in
// its panel (titled "pushed"); Ctrl+J shows the runs as they were (titled
// "unpushed"), and back.
func TestSideBySideUnpushed(t *testing.T) {
	m, w := newTestMain(t)
	m.Engine.Update(func(s *sim.Settings) { s.Lanes = []string{"bsa-p2", "hopfield"} })
	m.Engine.Settle()
	m.Engine.Seek(5)
	m.Engine.AddPush(sim.Push{T: 5, Kind: sim.Kick, Sigma2: 0.5, Seed: 1})
	m.Engine.Settle()
	m.Engine.Seek(12)
	sn := m.snap
	l := sn.Lanes[0]
	b := l.BranchAt(sn.T)
	if b == nil {
		t.Fatal("no pushed run at t = 12")
	}
	same := func(a, c []float32) bool { return slices.Equal(a, c) }
	if !same(m.states[0].Pixels, b.Image) || !strings.Contains(m.stateTitles[0].Text, "pushed") {
		t.Fatalf("before Ctrl+J: panel %q does not show the pushed run", m.stateTitles[0].Text)
	}
	menuItem(t, w, "Push", "Side by side: the pushed runs ⇄ the runs as they were").Action()
	if !same(m.states[0].Pixels, l.At(sn.T).Image) || !strings.Contains(m.stateTitles[0].Text, "unpushed") {
		t.Fatalf("after Ctrl+J: panel %q does not show the run as it was", m.stateTitles[0].Text)
	}
	menuItem(t, w, "Push", "Side by side: the pushed runs ⇄ the runs as they were").Action()
	if !same(m.states[0].Pixels, b.Image) {
		t.Fatal("Ctrl+J again: not the pushed run")
	}
}
