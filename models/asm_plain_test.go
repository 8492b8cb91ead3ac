//go:build amd64 && !goexperiment.simd && !purego

package models

import (
	"math/rand/v2"
	"testing"
)

// plainGemm is the plain build's assembly gemm, when this CPU runs it.
func plainGemm() (func(m, n, k int, a []float32, lda int, aT bool, b []float32, ldb int, c []float32, ldc int), bool) {
	return gemmASM, hasASM()
}

// TestChunkAssemblyMatchesGo: a plain build's chunk kernels (the assembly
// for d = 8, the portable twin for other widths) equal the portable ones
// on random inputs, with an excluded key, weighted and not.
func TestChunkAssemblyMatchesGo(t *testing.T) {
	if !hasASM() {
		t.Skipf("no assembly kernels to test: %s", kernelWhy)
	}
	rng := rand.New(rand.NewPCG(15, 16))
	for _, d := range []int{8, 5} {
		for _, n := range []int{49, 196, 1} {
			r := func(k int) []float32 { return randn(rng, k) }
			jb, xh, xi := r(n*d*d), r(n*d*Lanes), r(d*Lanes)
			v1, v2 := make([]float32, n*d*Lanes), make([]float32, n*d*Lanes)
			s1, s2 := make([]float32, n*Lanes), make([]float32, n*Lanes)
			chunkScoresGo(jb, xh, xi, v1, s1, n, d)
			chunkScoresASM(jb, xh, xi, v2, s2, n, d)
			if e := maxRel(v1, v2); e > 1e-6 {
				t.Fatalf("d=%d n=%d: v differs by %g", d, n, e)
			}
			if e := maxRel(s1, s2); e > 1e-5 {
				t.Fatalf("d=%d n=%d: s differs by %g", d, n, e)
			}
			s1[(n-1)*Lanes+2] = invalidScore // an excluded key
			for _, weigh := range []bool{true, false} {
				copy(s2, s1)
				var m1, m2 [Lanes]float32
				o1, o2 := make([]float32, d*Lanes), make([]float32, d*Lanes)
				sum1 := chunkSoftmaxGo(s1, v1, o1, &m1, 0.7, n, d, weigh)
				sum2 := chunkSoftmaxASM(s2, v1, o2, &m2, 0.7, n, d, weigh)
				if e := maxRel(o1, o2); e > 1e-5 {
					t.Fatalf("d=%d n=%d weigh=%v: weighted sums differ by %g", d, n, weigh, e)
				}
				if e := maxRel(sum1[:], sum2[:]); e > 1e-5 || m1 != m2 {
					t.Fatalf("d=%d n=%d weigh=%v: sums %v / %v, largest scores %v / %v", d, n, weigh, sum1, sum2, m1, m2)
				}
			}
		}
	}
}
