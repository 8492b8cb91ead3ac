package models

import (
	"math/rand/v2"
	"testing"
)

func randomImages(n int, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([][]float32, n)
	for k := range out {
		out[k] = make([]float32, Pixels)
		for q := range out[k] {
			if rng.IntN(4) == 0 {
				out[k][q] = rng.Float32()
			}
		}
	}
	return out
}

// BenchmarkStep is one BSA step of one image on one goroutine (P=2, d=8
// and P=4, d=32), the unit of the window's playback.
func BenchmarkStep(b *testing.B) {
	for _, cfg := range []struct {
		name string
		p, d int
	}{{"P2d8", 2, 8}, {"P4d32", 4, 32}} {
		b.Run(cfg.name, func(b *testing.B) {
			m, err := NewBSA(cfg.p, cfg.d, 1)
			if err != nil {
				b.Fatal(err)
			}
			st := m.NewState(randomImages(1, 2)[0], nil)
			w := m.NewWorkspace(1)
			alpha := [][]float32{make([]float32, m.N*m.N)}
			e := make([]float64, 1)
			states := []*State{st}
			b.ReportAllocs()
			for b.Loop() {
				m.Step(w, states, DefaultDynamics(), alpha, e)
			}
		})
	}
}

// BenchmarkTrain is one AdamW step of pseudo-likelihood training on a batch
// of 256 images with both cores (the recipe's one random row, or all rows);
// it reports images/s.
func BenchmarkTrain(b *testing.B) {
	m, _ := NewBSA(2, 8, 1)
	imgs := randomImages(256, 3)
	xs := make([][]float32, len(imgs))
	for k := range xs {
		xs[k] = make([]float32, m.N*m.D)
		m.Encode(xs[k], imgs[k], nil)
	}
	tr := NewTrainer(m, DefaultTrainConfig())
	for _, all := range []bool{false, true} {
		name := map[bool]string{false: "one-row", true: "all-rows"}[all]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			k := 0
			for b.Loop() {
				if all {
					tr.Gradient(xs)
				} else {
					tr.GradientRow(xs, k%m.N)
				}
				tr.Update(5e-4)
				k++
			}
			b.ReportMetric(float64(b.N*len(xs))/b.Elapsed().Seconds(), "images/s")
		})
	}
}
