package sim

import (
	"context"
	"math"
	"testing"

	"attractorlab/sim/mnist"
)

// TestFramesMeasureAsCurves: the window's frames and a batch run's curve
// measure states the same way — for each model (through its batched path
// where it has one) and both tasks, the mean over three digits of the
// engine's frames equals the curve's row at every step, measure by
// measure (the batched and the one-image runs add in other orders: equal
// to 1e-5). It found the batch runs correlating and searching the
// unclamped states of the transformers and of a noisy Hopfield input.
func TestFramesMeasureAsCurves(t *testing.T) {
	if raceOn || underNode {
		t.Skip("a synchronous engine's numerics on one goroutine: checked natively, with the web build's portable kernels too (make test-portable, test-simd)")
	}
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	mem := NewMemories(data.Train)
	cat := NewCatalogue(data.Train, WeightFiles{})
	const n, steps = 3, 10
	for _, name := range ModelNames {
		for _, task := range []Corruption{DefaultMask, DefaultNoise} {
			set := DefaultSettings()
			set.Lanes, set.Corruption = []string{name}, task
			if info, _ := cat.Info(name); info.Patch == 0 && task.Kind == Mask {
				// A pixel-level model alone masks 2×2 patches in the
				// window and 4×4 ones in a batch run (docs/maths.md §2):
				// beside a P = 4 model the window's mask is the batch
				// run's.
				set.Lanes = append(set.Lanes, "bsa-p4")
			}
			model, err := cat.Model(name, set)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Reproduce(context.Background(), data, mem, ReproduceConfig{Model: model, Corruption: task, N: n, Steps: steps})
			if err != nil {
				t.Fatal(err)
			}
			e := NewEngine(EngineConfig{Data: data, Memories: mem, Catalogue: cat, Horizon: steps, MaxT: steps,
				Settings: set, Synchronous: true})
			sum := make([][8]float64, len(c.Rows))
			for b := 0; b < n; b++ {
				e.Update(func(st *Settings) { st.Index = b })
				e.Settle()
				frames := e.Snapshot().Lanes[0].Frames
				if len(frames) != len(c.Rows) {
					t.Fatalf("%s %s: %d frames, %d rows", name, task.Kind, len(frames), len(c.Rows))
				}
				for k, f := range frames {
					match := 0.0
					if f.NearLbl == data.Test.Labels[b] {
						match = 1
					}
					for j, v := range [8]float64{f.MSE, f.MSEMask, f.MSEOther, f.Energy, f.CorrClean, f.NearCorr, match, f.CorrMean} {
						sum[k][j] += v / n
					}
				}
			}
			for k, r := range c.Rows {
				for j, want := range [8]float64{r.MSE, r.MSEMasked, r.MSEUnmasked, r.Energy, r.CorrClean, r.NearestCorr, r.LabelMatch, r.CorrMean} {
					got := sum[k][j]
					if math.IsNaN(want) != math.IsNaN(got) || math.Abs(got-want) > 1e-5*max(1, math.Abs(want)) {
						t.Errorf("%s %s t=%d measure %s: frames' mean %.8g, curve %.8g", name, task.Kind, k, CurveColumns[1+j], got, want)
					}
				}
			}
		}
	}
}
