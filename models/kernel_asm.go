//go:build amd64 && !goexperiment.simd && !purego

package models

// A plain amd64 build (without GOEXPERIMENT=simd) has no Go-SIMD kernels,
// but the assembly ones need no experiment: init points the matrix
// product, the bare model's scores and softmax for d = 8 (the shipped
// models' embedding) and the search's quantised dot products at them when
// the CPU has AVX-512, each with its portable twin for the shapes the
// assembly does not cover. The other kernels stay portable.
func init() {
	avx512, vnni := cpuAVX512()
	if !avx512 {
		kernelWhy = "this CPU has no AVX-512"
		return
	}
	kernelName = "avx512-asm"
	kernelWhy = "a build without GOEXPERIMENT=simd runs the assembly kernels (matrix products, the bare model's scores and softmax, the search's dot products) and the portable Go ones for the rest (make build, or GOEXPERIMENT=simd go build ./app, builds them all)"
	gemm, chunkScores, chunkSoftmax = gemmASM, chunkScoresASM, chunkSoftmaxASM
	if vnni {
		quantDots, quantAllPreds = quantDotsVNNI, true
	}
}

// cpuid and xgetbv are the instructions (cpu_amd64.s).
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
func xgetbv() (eax, edx uint32)

// cpuAVX512 reports whether the CPU has AVX-512 F, CD, BW, DQ and VL and
// the operating system saves the vector and mask registers; vnni whether
// it has AVX-512 VNNI too.
func cpuAVX512() (avx512, vnni bool) {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false, false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const osxsave = 1 << 27
	if ecx1&osxsave == 0 {
		return false, false
	}
	// XCR0: SSE (1), AVX (2), opmask (5), the upper halves of ZMM0–15 (6)
	// and ZMM16–31 (7).
	xcr0, _ := xgetbv()
	const zmmState = 1<<1 | 1<<2 | 1<<5 | 1<<6 | 1<<7
	if xcr0&zmmState != zmmState {
		return false, false
	}
	_, ebx7, ecx7, _ := cpuid(7, 0)
	const f, dq, cd, bw, vl = 1 << 16, 1 << 17, 1 << 28, 1 << 30, 1 << 31
	if ebx7&(f|dq|cd|bw|vl) != f|dq|cd|bw|vl {
		return false, false
	}
	return true, ecx7&(1<<11) != 0
}

// hasASM reports whether the assembly kernels run here (for tests).
func hasASM() bool { return kernelName == "avx512-asm" }

// gemmASM runs the assembly tiles on every 64 columns of C and gemmGo on
// the columns left.
func gemmASM(m, n, k int, a []float32, lda int, aT bool, b []float32, ldb int, c []float32, ldc int) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	sa, sk := lda, 1
	if aT {
		sa, sk = 1, lda
	}
	j := gemm64(m, n, k, a, sa, sk, b, ldb, c, ldc)
	if j < n {
		gemmGo(m, n-j, k, a, lda, aT, b[j:], ldb, c[j:], ldc)
	}
}

// chunkScoresASM is the assembly kernel for d = 8, chunkScoresGo
// otherwise.
func chunkScoresASM(jb, xh, xi, v, s []float32, n, d int) {
	if d != 8 || n == 0 {
		chunkScoresGo(jb, xh, xi, v, s, n, d)
		return
	}
	_ = jb[n*d*d-1]
	_ = xh[n*d*Lanes-1]
	_ = v[n*d*Lanes-1]
	_ = s[n*Lanes-1]
	_ = xi[d*Lanes-1]
	chunkScores8ASM(&jb[0], &xh[0], &xi[0], &v[0], &s[0], n)
}

// chunkSoftmaxASM is the assembly kernel with weigh for d = 8,
// chunkSoftmaxGo otherwise.
func chunkSoftmaxASM(s, v, out []float32, m *[Lanes]float32, lambda float32, n, d int, weigh bool) (sum [Lanes]float32) {
	if !weigh || d != 8 || n == 0 {
		return chunkSoftmaxGo(s, v, out, m, lambda, n, d, weigh)
	}
	_ = s[n*Lanes-1]
	_ = v[n*d*Lanes-1]
	_ = out[d*Lanes-1]
	c := newSoftmaxConsts(lambda)
	chunkSoftmax8ASM(&s[0], &v[0], &out[0], n, &c, m, &sum)
	return sum
}
