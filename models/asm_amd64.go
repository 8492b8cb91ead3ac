//go:build amd64 && !purego

package models

import "unsafe"

// The assembly kernels (*_amd64.s). They are built in every amd64 build
// but purego, with or without the SIMD experiment: the experiment's build
// (kernel_simd.go) runs them beside its Go-SIMD kernels, a plain build
// (kernel_asm.go) on their own.

// gemm64 runs the assembly tiles on every whole 64 columns of C (A(i,p)
// at a[i·sa+p·sk]; m, n, k ≥ 1) and returns the first column left.
func gemm64(m, n, k int, a []float32, sa, sk int, b []float32, ldb int, c []float32, ldc int) int {
	// Every index the tiles touch is below these bounds.
	_ = a[(m-1)*sa+(k-1)*sk]
	_ = b[(k-1)*ldb+n-1]
	_ = c[(m-1)*ldc+n-1]
	j := 0
	for ; j+64 <= n; j += 64 {
		for i := 0; i < m; i += 6 {
			r := min(6, m-i)
			gemmTiles[r-1](k, &a[i*sa], sa, sk, &b[j], ldb, &c[i*ldc+j], ldc)
		}
	}
	return j
}

// gemmTiles are the assembly tiles of 1 … 6 rows × 64 columns
// (gemm_amd64.s), indexed by rows − 1.
var gemmTiles = [6]func(k int, a *float32, sa, sk int, b *float32, ldb int, c *float32, ldc int){
	gemm1x64ASM, gemm2x64ASM, gemm3x64ASM, gemm4x64ASM, gemm5x64ASM, gemm6x64ASM,
}

//go:noescape
func gemm1x64ASM(k int, a *float32, sa, sk int, b *float32, ldb int, c *float32, ldc int)

//go:noescape
func gemm2x64ASM(k int, a *float32, sa, sk int, b *float32, ldb int, c *float32, ldc int)

//go:noescape
func gemm3x64ASM(k int, a *float32, sa, sk int, b *float32, ldb int, c *float32, ldc int)

//go:noescape
func gemm4x64ASM(k int, a *float32, sa, sk int, b *float32, ldb int, c *float32, ldc int)

//go:noescape
func gemm5x64ASM(k int, a *float32, sa, sk int, b *float32, ldb int, c *float32, ldc int)

//go:noescape
func gemm6x64ASM(k int, a *float32, sa, sk int, b *float32, ldb int, c *float32, ldc int)

// chunkScores8ASM is chunkScoresGo for d = 8 (bsachunk_amd64.s); the
// caller has checked the lengths.
//
//go:noescape
func chunkScores8ASM(jb, xh, xi, v, s *float32, n int)

// softmaxConsts are chunkSoftmax8ASM's constants in the order it reads
// them: λ, invalidBelow, exp16's range, log₂e, −ln 2 in two parts, the
// Taylor coefficients 1/720 … 1, invalidScore.
type softmaxConsts [14]float32

func newSoftmaxConsts(lambda float32) softmaxConsts {
	return softmaxConsts{lambda, invalidBelow, -87.3, 88.3, 1.4426950408889634, -0.693145751953125,
		-1.428606765330187e-06, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1, invalidScore}
}

// chunkSoftmax8ASM is chunkSoftmaxGo with weigh for d = 8
// (bsachunk_amd64.s); it writes each image's largest score to mx and the
// sum of the weights to sum. The caller has checked the lengths.
//
//go:noescape
func chunkSoftmax8ASM(s, v, out *float32, n int, c *softmaxConsts, mx, sum *[Lanes]float32)

// quantDotsASM is quantDotsGo with AVX-512 VNNI (quant_amd64.s).
//
//go:noescape
func quantDotsASM(p *int8, pstride int, packed *uint8, gstride, steps int, out *int32, ostride int)

// quantDotsVNNI checks the extents quantDotsGo reads, then runs the VNNI
// kernel.
func quantDotsVNNI(p []int8, pstride int, packed []uint8, gstride, steps int, out []int32, ostride int) {
	if steps == 0 {
		return
	}
	_ = p[(quantPreds-1)*pstride+4*steps-1]
	_ = packed[(quantGroups-1)*gstride+64*steps-1]
	_ = out[(quantPreds-1)*ostride+16*quantGroups-1]
	quantDotsASM(unsafe.SliceData(p), pstride, unsafe.SliceData(packed), gstride, steps, unsafe.SliceData(out), ostride)
}
