package ui

import (
	"testing"

	"fyne.io/fyne/v2"

	"attractorlab/sim"
)

// BenchmarkStepRedraw: one step of four models in lockstep (bsa-p2,
// bsa-p4, the block and the modern Hopfield network: every panel kind) at
// 1280×800, every panel brought up to date and its image made. "panels":
// the plots keep their curves and only their markers move (as in use, where
// a curve grows once per 100 steps); "+plots": every plot drawn again each
// step (the worst case). In the benchmark the engine computes the step in line;
// in the window it runs on its own goroutine, ahead of the display. With
// "paint", Fyne's software painter then draws the whole window as well (a
// GPU draws it in the real window).
func BenchmarkStepRedraw(b *testing.B) {
	for _, c := range []struct {
		name         string
		plots, paint bool
	}{{"panels", false, false}, {"panels+plots", true, false}, {"panels+plots+paint", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			m, w := newTestMain(b)
			m.Engine.Update(func(st *sim.Settings) {
				st.Lanes = []string{"bsa-p2", "bsa-p4", "block", "hopfield"}
			})
			m.Engine.Settle()
			if len(m.snap.Lanes) != 4 {
				b.Fatalf("%d lanes", len(m.snap.Lanes))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if m.snap.T >= 90 {
					typeKey(w, fyne.KeyHome)
				}
				if c.plots {
					m.lastPlotKey = "" // the step's snapshot redraws them
				}
				typeKey(w, fyne.KeyRight)
				// The images a painter asks the panels for, at their size
				// on screen (Fyne calls these generators when it draws).
				for _, v := range append([]*PixelView{m.clean, m.input, m.nearest}, m.states...) {
					v.draw(int(v.Size().Width), int(v.Size().Height))
				}
				m.hist.draw(int(m.hist.Size().Width), int(m.hist.Size().Height))
				if c.paint {
					w.Canvas().Capture()
				}
			}
		})
	}
}
