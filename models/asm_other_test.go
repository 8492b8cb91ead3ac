//go:build !(amd64 && !goexperiment.simd && !purego)

package models

// plainGemm: only a plain amd64 build runs the assembly gemm on its own
// (the SIMD build's gemmAVX512 runs the same tiles).
func plainGemm() (func(m, n, k int, a []float32, lda int, aT bool, b []float32, ldb int, c []float32, ldc int), bool) {
	return nil, false
}
