package ui

import (
	"testing"

	"fyne.io/fyne/v2"

	"attractorlab/sim"
)

// BenchmarkStepRedraw: one step of four models in lockstep (bsa-p2,
// bsa-p4, the block and the modern Hopfield network: every panel kind) at
// 1280×800, every panel brought up to date, the plots drawn again each time
// (the worst case: in use they are redrawn only when a curve grows). With
// "paint", Fyne's software painter then draws the whole window as well (a
// GPU draws it in the real window).
func BenchmarkStepRedraw(b *testing.B) {
	for _, c := range []struct {
		name  string
		paint bool
	}{{"panels", false}, {"panels+paint", true}} {
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
				typeKey(w, fyne.KeyRight)
				m.lastPlotKey = ""
				m.apply(m.snap)
				if c.paint {
					w.Canvas().Capture()
				}
			}
		})
	}
}
