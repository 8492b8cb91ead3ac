package sim

import (
	"context"
	"testing"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// trajectories returns the bare model's predictions at t = 0..steps for
// the first n test digits under c, one slice per digit.
func trajectories(t testing.TB, data *mnist.Data, m *models.BSA, c Corruption, n, steps int) [][][]float32 {
	t.Helper()
	inputs := make([]*Corrupted, n)
	for k := range inputs {
		inputs[k] = c.Apply(data.Test.Clean(k, mnist.PixelGain), m.Patches, k)
	}
	out := make([][][]float32, n)
	for b := range out {
		out[b] = make([][]float32, steps+1)
	}
	err := RunBSA(context.Background(), m, DefaultDynamics(), inputs, steps, models.NewCrew(0), func(tt, b int, pred []float32, _ float64) {
		out[b][tt] = append([]float32(nil), pred...)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNearestPrunedOnDigits: on real trajectories (digits, transient
// memories, the global attractor's blob) the pruned search of the 10,000
// training digits returns the brute force's memory and correlation, bit
// for bit, in one call and state by state (a Trail, as the window
// searches its frames).
func TestNearestPrunedOnDigits(t *testing.T) {
	if raceOn || underNode {
		t.Skip("single-goroutine numerics: checked natively without the race detector (make test-portable, test-simd)")
	}
	data, mem, m := benchData(t)
	if !mem.Search().Pruned() {
		t.Fatal("the training digits' memory is searched by brute force")
	}
	n := 6
	if testing.Short() {
		n = 2
	}
	for _, c := range []Corruption{DefaultMask, DefaultNoise} {
		for b, preds := range trajectories(t, data, m, c, n, 100) {
			idx, corr := make([]int, len(preds)), make([]float32, len(preds))
			bidx, bcorr := make([]int, len(preds)), make([]float32, len(preds))
			mem.Search().Nearest(preds, idx, corr)
			mem.Search().NearestBrute(preds, bidx, bcorr)
			trail := mem.Search().NewTrail()
			for tt := range preds {
				if idx[tt] != bidx[tt] || corr[tt] != bcorr[tt] {
					t.Fatalf("%s digit %d t=%d: pruned %d (%g), brute %d (%g)", c.Kind, b, tt, idx[tt], corr[tt], bidx[tt], bcorr[tt])
				}
				if k, cr := trail.Nearest(preds[tt]); k != bidx[tt] || cr != bcorr[tt] {
					t.Fatalf("%s digit %d t=%d: trail %d (%g), brute %d (%g)", c.Kind, b, tt, k, cr, bidx[tt], bcorr[tt])
				}
			}
		}
	}
}

// BenchmarkNearestTrajectory: one digit's 101 predictions (noise, the
// bare model) against the 10,000 training digits, pruned, state by state
// through a Trail (as the window searches its frames), and brute force.
func BenchmarkNearestTrajectory(b *testing.B) {
	data, mem, m := benchData(b)
	preds := trajectories(b, data, m, DefaultNoise, 8, 100)
	idx, corr := make([]int, 101), make([]float32, 101)
	for _, s := range []struct {
		name string
		f    func([][]float32, []int, []float32)
	}{{"pruned", mem.Search().Nearest}, {"trail", func(preds [][]float32, idx []int, corr []float32) {
		tr := mem.Search().NewTrail()
		for t, p := range preds {
			idx[t], corr[t] = tr.Nearest(p)
		}
	}}, {"brute", mem.Search().NearestBrute}} {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			k := 0
			for b.Loop() {
				s.f(preds[k%len(preds)], idx, corr)
				k++
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*101), "µs/prediction")
		})
	}
}

// BenchmarkNewMemories: preparing the nearest-memory search of the 10,000
// training digits (cleaning, standardising, the 8-bit rows) on every
// core, as every run starts.
func BenchmarkNewMemories(b *testing.B) {
	data, err := mnist.LoadData("")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		NewMemories(data.Train).Search()
	}
}
