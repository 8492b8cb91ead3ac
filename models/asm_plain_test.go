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
			checkChunkKernels(t, rng, chunkScoresASM, chunkSoftmaxASM, d, n, true)
		}
	}
}
