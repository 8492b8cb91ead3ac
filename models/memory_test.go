package models

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDots4x32MatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	fs := []func(*[4][]float32, []float32, int, int, *[128]float32){dots4x32Go}
	if hasAVX512() {
		fs = append(fs, dots4x32AVX512)
	}
	for fi, f := range fs {
		for _, q := range []int{1, 7, 784} {
			var y [4][]float32
			for r := range y {
				y[r] = guarded(rng, q)
			}
			tb := guarded(rng, q*48)
			var got, want [128]float32
			f(&y, tb, 48, q, &got)
			dots4x32Naive(&y, tb, 48, q, &want)
			for k := range want {
				if !closeTo(float64(got[k]), float64(want[k]), 1e-4) {
					t.Fatalf("impl %d q=%d: out[%d]=%g want %g", fi, q, k, got[k], want[k])
				}
			}
		}
	}
}

func TestMemoryNearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	rows := make([][]float32, 300)
	for k := range rows {
		rows[k] = make([]float32, 50)
		for q := range rows[k] {
			rows[k][q] = rng.Float32()
		}
	}
	mem := NewMemory(rows)
	preds := [][]float32{rows[17], rows[299], make([]float32, 50), guarded(rng, 50)}
	for q := range preds[0] {
		preds[0][q] = preds[0][q]*2 + 1 // correlation is affine invariant
	}
	idx := make([]int, 4)
	corr := make([]float32, 4)
	mem.Nearest(preds, idx, corr)
	if idx[0] != 17 || math.Abs(float64(corr[0])-1) > 1e-5 || idx[1] != 299 {
		t.Fatalf("nearest of stored rows: idx %v corr %v", idx, corr)
	}
	if corr[2] != 0 {
		t.Fatalf("constant prediction has correlation %g", corr[2])
	}
	// brute force for the random prediction
	best, bi := -2.0, -1
	z := standardize(preds[3])
	for k, r := range rows {
		zr := standardize(r)
		var s float64
		for q := range z {
			s += float64(z[q]) * float64(zr[q])
		}
		if s > best {
			best, bi = s, k
		}
	}
	if idx[3] != bi || math.Abs(float64(corr[3])-best) > 1e-5 {
		t.Fatalf("random prediction: got %d (%g), want %d (%g)", idx[3], corr[3], bi, best)
	}
}
