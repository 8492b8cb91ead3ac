//go:build goexperiment.simd && amd64 && !purego

package models

import (
	"math"
	"simd/archsimd"
	"unsafe"
)

// at reads a[k] without a bounds check (gemmAVX512 checks extents once).
func at(a []float32, k int) float32 {
	return *(*float32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(a)), k*4))
}

// vecU and storeU are vec and store without the bounds check.
func vecU(p []float32, k int) archsimd.Float32x16 {
	return archsimd.LoadFloat32x16((*[16]float32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(p)), k*4)))
}

func storeU(x archsimd.Float32x16, p []float32, k int) {
	x.Store((*[16]float32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(p)), k*4)))
}

// gemmAVX512 tiles C into 6 rows × 64 columns (24 accumulators, in
// assembly: Go's compiler keeps 16 vector registers) and
// 8 rows × 16 columns, with a scalar tail for n not a multiple of 16.
func gemmAVX512(m, n, k int, a []float32, lda int, aT bool, b []float32, ldb int, c []float32, ldc int) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	sa, sk := lda, 1
	if aT {
		sa, sk = 1, lda
	}
	j := gemm64(m, n, k, a, sa, sk, b, ldb, c, ldc)
	for ; j+16 <= n; j += 16 {
		i := 0
		for ; i+8 <= m; i += 8 {
			gemm8x16(k, a, i*sa, sa, sk, b, j, ldb, c, i*ldc+j, ldc)
		}
		for ; i < m; i++ {
			gemm1x16(k, a, i*sa, sk, b, j, ldb, c, i*ldc+j)
		}
	}
	if j < n {
		for i := 0; i < m; i++ {
			for jj := j; jj < n; jj++ {
				var s float32
				for p := 0; p < k; p++ {
					s += at(a, i*sa+p*sk) * at(b, p*ldb+jj)
				}
				c[i*ldc+jj] += s
			}
		}
	}
}

func gemm8x16(k int, a []float32, ao, sa, sk int, b []float32, bo, ldb int, c []float32, co, ldc int) {
	var c0, c1, c2, c3, c4, c5, c6, c7 archsimd.Float32x16
	for p := 0; p < k; p++ {
		bv := vecU(b, bo)
		c0 = archsimd.BroadcastFloat32x16(at(a, ao)).MulAdd(bv, c0)
		c1 = archsimd.BroadcastFloat32x16(at(a, ao+sa)).MulAdd(bv, c1)
		c2 = archsimd.BroadcastFloat32x16(at(a, ao+2*sa)).MulAdd(bv, c2)
		c3 = archsimd.BroadcastFloat32x16(at(a, ao+3*sa)).MulAdd(bv, c3)
		c4 = archsimd.BroadcastFloat32x16(at(a, ao+4*sa)).MulAdd(bv, c4)
		c5 = archsimd.BroadcastFloat32x16(at(a, ao+5*sa)).MulAdd(bv, c5)
		c6 = archsimd.BroadcastFloat32x16(at(a, ao+6*sa)).MulAdd(bv, c6)
		c7 = archsimd.BroadcastFloat32x16(at(a, ao+7*sa)).MulAdd(bv, c7)
		ao += sk
		bo += ldb
	}
	for r, x := range [8]archsimd.Float32x16{c0, c1, c2, c3, c4, c5, c6, c7} {
		o := co + r*ldc
		storeU(vecU(c, o).Add(x), c, o)
	}
}

// gemm1x16 is one row of gemm8x16: one accumulator summed in p order, as
// each of gemm8x16's rows is, so that a row's bits do not depend on
// whether it fell in a block of 8 (a batch cut anywhere steps its states
// to the same bits: TestGemmRowsIndependent).
func gemm1x16(k int, a []float32, ao, sk int, b []float32, bo, ldb int, c []float32, co int) {
	var c0 archsimd.Float32x16
	for p := 0; p < k; p++ {
		c0 = archsimd.BroadcastFloat32x16(at(a, ao)).MulAdd(vecU(b, bo), c0)
		ao += sk
		bo += ldb
	}
	storeU(vecU(c, co).Add(c0), c, co)
}

// geluAVX512 evaluates Φ(x) = ½erfc(−x/√2) with erfcPoly on 16 lanes and
// φ(x) with exp16; the tail goes to the naive twin.
func geluAVX512(g, dg, h []float32) {
	n := len(h)
	_, _ = g[n-1], dg[n-1]
	one := archsimd.BroadcastFloat32x16(1)
	half := archsimd.BroadcastFloat32x16(0.5)
	zero := archsimd.BroadcastFloat32x16(0)
	invSqrt2 := archsimd.BroadcastFloat32x16(1 / math.Sqrt2)
	invSqrt2Pi := archsimd.BroadcastFloat32x16(float32(1 / math.Sqrt(2*math.Pi)))
	var c [10]archsimd.Float32x16
	for k, v := range erfcPoly {
		c[k] = archsimd.BroadcastFloat32x16(v)
	}
	k := 0
	for ; k+16 <= n; k += 16 {
		x := vecU(h, k)
		neg := x.Less(zero)
		z := x.Max(zero.Sub(x)).Mul(invSqrt2)
		t := one.Div(z.MulAdd(half, one))
		p := c[9]
		for q := 8; q >= 0; q-- {
			p = p.MulAdd(t, c[q])
		}
		erfc := t.Mul(exp16(p.Sub(z.Mul(z))))
		hc := erfc.Mul(half)
		cdf := hc.Merge(one.Sub(hc), neg) // neg: ½erfc(|x|/√2); else 1 − that
		pdf := exp16(x.Mul(x).Mul(archsimd.BroadcastFloat32x16(-0.5))).Mul(invSqrt2Pi)
		storeU(x.Mul(cdf), g, k)
		storeU(x.MulAdd(pdf, cdf), dg, k)
	}
	if k < n {
		geluNaive(g[k:n], dg[k:n], h[k:n])
	}
}

// GELU's erfc: Numerical Recipes' erfcc (fractional error < 1.2e-7):
// erfc(z) = t·exp(−z² + P(t)), t = 1/(1 + z/2), z ≥ 0.
var erfcPoly = [10]float32{-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
	0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277}
