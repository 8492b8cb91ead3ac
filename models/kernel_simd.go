//go:build goexperiment.simd && amd64

package models

import (
	"simd/archsimd"
	"unsafe"
)

func init() {
	if archsimd.X86.AVX512() {
		scores = scoresAVX512
		wsum = wsumAVX512
		grad = gradAVX512
		expShift = expShiftAVX512
		maxf = maxfAVX512
		kernelName = "avx512"
	}
}

// hasAVX512 reports whether the AVX-512 kernels can run here (for tests).
func hasAVX512() bool { return archsimd.X86.AVX512() }

func scoresAVX512(jt, xh, xi, v, s []float32, d, np int) {
	if d == 8 {
		scores8AVX512(jt, xh, xi, v, s, np)
		return
	}
	_ = jt[d*d*np-1]
	_ = xh[d*np-1]
	_ = v[d*np-1]
	_ = s[np-1]
	for c := 0; c < np; c += 16 {
		var sacc archsimd.Float32x16
		for r := 0; r < d; r++ {
			var acc0, acc1 archsimd.Float32x16
			base := r*d*np + c
			e := 0
			for ; e+1 < d; e += 2 {
				j0 := archsimd.LoadFloat32x16Slice(jt[base+e*np:])
				x0 := archsimd.LoadFloat32x16Slice(xh[e*np+c:])
				j1 := archsimd.LoadFloat32x16Slice(jt[base+(e+1)*np:])
				x1 := archsimd.LoadFloat32x16Slice(xh[(e+1)*np+c:])
				acc0 = j0.MulAdd(x0, acc0)
				acc1 = j1.MulAdd(x1, acc1)
			}
			if e < d {
				j0 := archsimd.LoadFloat32x16Slice(jt[base+e*np:])
				x0 := archsimd.LoadFloat32x16Slice(xh[e*np+c:])
				acc0 = j0.MulAdd(x0, acc0)
			}
			acc := acc0.Add(acc1)
			acc.StoreSlice(v[r*np+c:])
			sacc = archsimd.BroadcastFloat32x16(xi[r]).MulAdd(acc, sacc)
		}
		sacc.StoreSlice(s[c:])
	}
}

func hsum(x archsimd.Float32x16) float32 {
	var b [16]float32
	x.Store(&b)
	var s float32
	for _, v := range b {
		s += v
	}
	return s
}

func wsumAVX512(a, v, out []float32, d, np int) {
	_ = a[np-1]
	_ = v[d*np-1]
	for r := 0; r < d; r++ {
		var acc0, acc1 archsimd.Float32x16
		c := 0
		for ; c+32 <= np; c += 32 {
			acc0 = archsimd.LoadFloat32x16Slice(a[c:]).MulAdd(archsimd.LoadFloat32x16Slice(v[r*np+c:]), acc0)
			acc1 = archsimd.LoadFloat32x16Slice(a[c+16:]).MulAdd(archsimd.LoadFloat32x16Slice(v[r*np+c+16:]), acc1)
		}
		if c < np {
			acc0 = archsimd.LoadFloat32x16Slice(a[c:]).MulAdd(archsimd.LoadFloat32x16Slice(v[r*np+c:]), acc0)
		}
		out[r] = hsum(acc0.Add(acc1))
	}
}

func gradAVX512(g, xh, a, c []float32, d, np int) {
	_ = g[d*d*np-1]
	_ = xh[d*np-1]
	_ = a[np-1]
	_ = c[d-1]
	for k := 0; k < np; k += 16 {
		av := archsimd.LoadFloat32x16Slice(a[k:])
		for e := 0; e < d; e++ {
			w := av.Mul(archsimd.LoadFloat32x16Slice(xh[e*np+k:]))
			for r := 0; r < d; r++ {
				o := (r*d+e)*np + k
				gv := archsimd.LoadFloat32x16Slice(g[o:])
				archsimd.BroadcastFloat32x16(c[r]).MulAdd(w, gv).StoreSlice(g[o:])
			}
		}
	}
}

// exp16 is exp on 16 lanes: x = n·ln2 + r, |r| ≤ ln2/2, e^r by a degree-6
// polynomial, then scaled by 2^n (VSCALEFPS). Relative error ≈ 2e-7.
func exp16(x archsimd.Float32x16) archsimd.Float32x16 {
	x = x.Max(archsimd.BroadcastFloat32x16(-87.3)).Min(archsimd.BroadcastFloat32x16(88.3))
	n := x.Mul(archsimd.BroadcastFloat32x16(1.4426950408889634)).RoundToEvenScaled(0)
	r := n.MulAdd(archsimd.BroadcastFloat32x16(-0.693145751953125), x)
	r = n.MulAdd(archsimd.BroadcastFloat32x16(-1.428606765330187e-06), r)
	p := archsimd.BroadcastFloat32x16(1.0 / 720)
	p = p.MulAdd(r, archsimd.BroadcastFloat32x16(1.0/120))
	p = p.MulAdd(r, archsimd.BroadcastFloat32x16(1.0/24))
	p = p.MulAdd(r, archsimd.BroadcastFloat32x16(1.0/6))
	p = p.MulAdd(r, archsimd.BroadcastFloat32x16(0.5))
	p = p.MulAdd(r, archsimd.BroadcastFloat32x16(1))
	p = p.MulAdd(r, archsimd.BroadcastFloat32x16(1))
	return p.Scale(n)
}

func expShiftAVX512(dst, s []float32, lambda, shift float32) float32 {
	n := len(dst)
	_ = s[n-1]
	lv := archsimd.BroadcastFloat32x16(lambda)
	sv := archsimd.BroadcastFloat32x16(shift)
	lim := archsimd.BroadcastFloat32x16(invalidBelow)
	var acc archsimd.Float32x16
	j := 0
	for ; j+16 <= n; j += 16 {
		x := archsimd.LoadFloat32x16Slice(s[j:])
		ok := x.Greater(lim)
		y := exp16(x.Mul(lv).Sub(sv)).Masked(ok)
		y.StoreSlice(dst[j:])
		acc = acc.Add(y)
	}
	sum := hsum(acc)
	if j < n {
		sum += expShiftGo(dst[j:], s[j:n], lambda, shift)
	}
	return sum
}

func init() {
	if archsimd.X86.AVX512() {
		dots4x32 = dots4x32AVX512
	}
}

func dots4x32AVX512(y *[4][]float32, tb []float32, stride, q int, out *[128]float32) {
	y0, y1, y2, y3 := y[0][:q], y[1][:q], y[2][:q], y[3][:q]
	_ = tb[(q-1)*stride+31]
	var a00, a01, a10, a11, a20, a21, a30, a31 archsimd.Float32x16
	for k := 0; k < q; k++ {
		t0 := archsimd.LoadFloat32x16Slice(tb[k*stride:])
		t1 := archsimd.LoadFloat32x16Slice(tb[k*stride+16:])
		b0 := archsimd.BroadcastFloat32x16(y0[k])
		b1 := archsimd.BroadcastFloat32x16(y1[k])
		b2 := archsimd.BroadcastFloat32x16(y2[k])
		b3 := archsimd.BroadcastFloat32x16(y3[k])
		a00 = b0.MulAdd(t0, a00)
		a01 = b0.MulAdd(t1, a01)
		a10 = b1.MulAdd(t0, a10)
		a11 = b1.MulAdd(t1, a11)
		a20 = b2.MulAdd(t0, a20)
		a21 = b2.MulAdd(t1, a21)
		a30 = b3.MulAdd(t0, a30)
		a31 = b3.MulAdd(t1, a31)
	}
	a00.StoreSlice(out[0:])
	a01.StoreSlice(out[16:])
	a10.StoreSlice(out[32:])
	a11.StoreSlice(out[48:])
	a20.StoreSlice(out[64:])
	a21.StoreSlice(out[80:])
	a30.StoreSlice(out[96:])
	a31.StoreSlice(out[112:])
}

// vec loads 16 floats at p[k] without a bounds check; callers check the
// extent of their slices once.
func vec(p []float32, k int) archsimd.Float32x16 {
	return archsimd.LoadFloat32x16((*[16]float32)(unsafe.Pointer(unsafe.SliceData(p[k:]))))
}

func store(x archsimd.Float32x16, p []float32, k int) {
	x.Store((*[16]float32)(unsafe.Pointer(unsafe.SliceData(p[k:]))))
}

// scores8AVX512 is scoresAVX512 for d = 8: the eight x̂ vectors of a chunk
// stay in registers across the rows r.
func scores8AVX512(jt, xh, xi, v, s []float32, np int) {
	_ = jt[64*np-1]
	_ = xh[8*np-1]
	_ = v[8*np-1]
	_ = s[np-1]
	_ = xi[7]
	for c := 0; c < np; c += 16 {
		x0, x1, x2, x3 := vec(xh, c), vec(xh, np+c), vec(xh, 2*np+c), vec(xh, 3*np+c)
		x4, x5, x6, x7 := vec(xh, 4*np+c), vec(xh, 5*np+c), vec(xh, 6*np+c), vec(xh, 7*np+c)
		var sacc archsimd.Float32x16
		for r := 0; r < 8; r++ {
			b := r*8*np + c
			a0 := vec(jt, b).Mul(x0)
			a1 := vec(jt, b+np).Mul(x1)
			a0 = vec(jt, b+2*np).MulAdd(x2, a0)
			a1 = vec(jt, b+3*np).MulAdd(x3, a1)
			a0 = vec(jt, b+4*np).MulAdd(x4, a0)
			a1 = vec(jt, b+5*np).MulAdd(x5, a1)
			a0 = vec(jt, b+6*np).MulAdd(x6, a0)
			a1 = vec(jt, b+7*np).MulAdd(x7, a1)
			acc := a0.Add(a1)
			store(acc, v, r*np+c)
			sacc = archsimd.BroadcastFloat32x16(xi[r]).MulAdd(acc, sacc)
		}
		store(sacc, s, c)
	}
}

func maxfAVX512(s []float32) float32 {
	n := len(s)
	m := archsimd.BroadcastFloat32x16(invalidScore)
	j := 0
	for ; j+16 <= n; j += 16 {
		m = m.Max(vec(s, j))
	}
	var b [16]float32
	m.Store(&b)
	mx := maxfGo(s[j:])
	for _, v := range b {
		mx = max(mx, v)
	}
	return mx
}
