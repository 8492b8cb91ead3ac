package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"

	"attractorlab/sim"
)

// hoverEverywhere moves the pointer over every pixel of every state view
// (and every cell of every attention map), as a user sweeping the mouse
// across the panels does.
func hoverEverywhere(t *testing.T, m *Main) {
	t.Helper()
	for _, v := range m.states {
		s := v.Size()
		side := min(s.Width, s.Height)
		ox, oy := (s.Width-side)/2, (s.Height-side)/2
		for y := 0; y < 28; y++ {
			for x := 0; x < 28; x++ {
				p := fyne.NewPos(ox+(float32(x)+0.5)*side/28, oy+(float32(y)+0.5)*side/28)
				v.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: p}})
			}
		}
	}
	for k := range m.heat {
		for r := 0; r < 200; r += 7 {
			m.hoverHeat(k, r, r)
		}
	}
}

// TestSelectionDoesNotOutliveItsModel: a patch selected on the BSA P=2
// state (196 patches) must not be read as a patch of the model chosen
// next (P=4: 49 patches; the block; the ViT), nor after the lanes change
// in number: hovering the new state once panicked with "index out of
// range [7864] with length 2401" in hoverState.
func TestSelectionDoesNotOutliveItsModel(t *testing.T) {
	for _, key := range []fyne.KeyName{fyne.Key2, fyne.Key3, fyne.Key4, fyne.Key5} {
		t.Run(string(key), func(t *testing.T) {
			m, w := newTestMain(t)
			typeKey(w, fyne.Key1) // BSA P=2 alone
			typeKey(w, fyne.KeyRight)
			if m.snap.Lanes[0].Info.Tokens != 196 {
				t.Fatalf("key 1: %s with %d tokens", m.snap.Lanes[0].Info.Name, m.snap.Lanes[0].Info.Tokens)
			}
			// A patch near the bottom right: index 160 and more do not
			// exist on a coarser grid.
			s := m.states[0].Size()
			side := min(s.Width, s.Height)
			test.TapAt(m.states[0], fyne.NewPos((s.Width-side)/2+side*0.95, (s.Height-side)/2+side*0.95))
			if m.query < 160 {
				t.Fatalf("tapping the bottom right selected patch %d", m.query)
			}
			typeKey(w, key)
			typeKey(w, fyne.KeyRight)
			hoverEverywhere(t, m) // panicked here
			if m.query >= 0 {
				t.Fatalf("the selection %d outlived BSA P=2 (now %s)", m.query, m.snap.Lanes[0].Info.Name)
			}
		})
	}
}

// TestSelectionAcrossLaneChanges: a patch selected on the fourth model of
// a comparison does not survive the comparison shrinking, and a selection
// kept by a change that leaves the models alone (another digit) stays.
func TestSelectionAcrossLaneChanges(t *testing.T) {
	m, w := newTestMain(t)
	m.Engine.Update(func(st *sim.Settings) { st.Lanes = []string{"bsa-p4", "block", "vit", "bsa-p2"} })
	m.Engine.Settle()
	typeKey(w, fyne.KeyRight)
	m.selectQuery(3, 190) // on bsa-p2
	if m.query != 190 || m.lane != 3 {
		t.Fatalf("selection %d on lane %d", m.query, m.lane)
	}
	m.Engine.Update(func(st *sim.Settings) { st.Index = 5 })
	if m.query != 190 || m.lane != 3 {
		t.Fatalf("another digit dropped the selection: %d on lane %d", m.query, m.lane)
	}
	m.Engine.Update(func(st *sim.Settings) { st.Lanes = []string{"bsa-p4", "bsa-p2"} })
	typeKey(w, fyne.KeyRight)
	hoverEverywhere(t, m)
	if m.query >= 0 || m.lane != 0 {
		t.Fatalf("the selection outlived its lane: %d on lane %d", m.query, m.lane)
	}
	// A selection out of a model's range is refused, not stored.
	m.selectQuery(0, 190) // bsa-p4 has 49 patches
	if m.query >= 0 {
		t.Fatalf("patch 190 of a 49-patch model was selected")
	}
	hoverEverywhere(t, m)
}
