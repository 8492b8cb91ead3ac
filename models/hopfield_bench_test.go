package models

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkHopfieldStep: one step of the modern network over 10,000 stored
// 784-pixel patterns (the training subset's size), and one synchronous
// and one asynchronous sweep of the classical network with K = 10.
func BenchmarkHopfieldStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	rows := make([][]float32, 10000)
	for k := range rows {
		rows[k] = make([]float32, Pixels)
		for q := range rows[k] {
			rows[k][q] = rng.Float32()
		}
	}
	h := NewHopfield(rows)
	xi := make([]float32, Pixels)
	copy(xi, rows[3])
	p := make([]float32, h.M+16)
	b.Run("modern/M10000", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			copy(xi, rows[3])
			h.Step(xi, p, 1)
		}
	})
	c := NewClassicHopfield(rows[:10])
	bin := Binarize(rows[7])
	b.Run("classic/K10/sync", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			x := append([]float32(nil), bin...)
			c.StepSync(x)
		}
	})
	b.Run("classic/K10/async-sweep", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			x := append([]float32(nil), bin...)
			c.StepAsync(x, rng)
		}
	})
}
