//go:build goexperiment.simd && amd64 && !purego

package models

import (
	"math"
	mbits "math/bits"
	"simd/archsimd"
	"unsafe"
)

// init is the one place a kernel is chosen: every kernel of kernels.go is
// pointed at its AVX-512 version when this CPU has AVX-512 (the quantised
// dot product at its VNNI one when it has that too).
func init() {
	if !archsimd.X86.AVX512() {
		kernelWhy = "this CPU has no AVX-512"
		return
	}
	kernelName = "avx512"
	scores, wsum, grad, expShift, maxf = scoresAVX512, wsumAVX512, gradAVX512, expShiftAVX512, maxfAVX512
	gemm, gelu = gemmAVX512, geluAVX512
	chunkScores, chunkClamp, chunkSoftmax = chunkScoresAVX512, chunkClampAVX512, chunkSoftmaxAVX512
	chunkNormalize, chunkResidual, chunkRenorm, chunkDecode = chunkNormalizeAVX512, chunkResidualAVX512, chunkRenormAVX512, chunkDecodeAVX512
	standardizeTo, dotQ, dots1x4, dots4x6 = standardizeAVX512, dotQAVX512, dots1x4AVX512, dots4x6AVX512
	argmax, above, dist = argmaxAVX512, aboveAVX512, distAVX512
	quantBound = quantBoundAVX512
	adamChunk = adamAVX512
	fields = fieldsAVX512
	if archsimd.X86.AVX512VNNI() {
		quantDots, quantAllPreds = quantDotsVNNI, true
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

// sumLanes64 adds a vector's 8 float64 lanes pairwise, in one fixed order.
func sumLanes64(v archsimd.Float64x8) float64 {
	var b [8]float64
	v.Store(&b)
	return ((b[0] + b[4]) + (b[2] + b[6])) + ((b[1] + b[5]) + (b[3] + b[7]))
}

// distAVX512 is distGo with its float64 sum in 8 lanes.
func distAVX512(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	n8 := n &^ 7
	var acc archsimd.Float64x8
	for i := 0; i < n8; i += 8 {
		d := archsimd.LoadFloat32x8((*[8]float32)(a[i:])).ConvertToFloat64().Sub(archsimd.LoadFloat32x8((*[8]float32)(b[i:])).ConvertToFloat64())
		acc = d.MulAdd(d, acc)
	}
	s := sumLanes64(acc)
	for i := n8; i < n; i++ {
		d := float64(a[i]) - float64(b[i])
		s += d * d
	}
	return float32(math.Sqrt(s))
}

// dotQAVX512 is dotQGo with fused multiply-adds: 16 lanes, then the lanes
// added pairwise.
func dotQAVX512(a, b []float32) float32 {
	n := len(a) &^ 15
	b = b[:len(a)]
	var acc archsimd.Float32x16
	for i := 0; i < n; i += 16 {
		acc = vecU(a, i).MulAdd(vecU(b, i), acc)
	}
	return lanesOf(acc, a, b, n)
}

// lanesOf adds the scalar tail of a·b past n into acc's lanes and sums
// the lanes pairwise (sumLanes's order: 8, 4, 2, 1 apart), as dotQGo does.
func lanesOf(acc archsimd.Float32x16, a, b []float32, n int) float32 {
	if n == len(a) {
		h := acc.GetLo().Add(acc.GetHi())
		g := h.GetLo().Add(h.GetHi())
		return (g.GetElem(0) + g.GetElem(2)) + (g.GetElem(1) + g.GetElem(3))
	}
	var lanes [16]float32
	acc.Store(&lanes)
	for i := n; i < len(a); i++ {
		lanes[i-n] += a[i] * b[i]
	}
	return sumLanes(&lanes)
}

func dots1x4AVX512(z []float32, m *[4][]float32, out *[4]float32) {
	q := len(z)
	n := q &^ 15
	m0, m1, m2, m3 := m[0][:q], m[1][:q], m[2][:q], m[3][:q]
	var a0, a1, a2, a3 archsimd.Float32x16
	for i := 0; i < n; i += 16 {
		x := vecU(z, i)
		a0 = x.MulAdd(vecU(m0, i), a0)
		a1 = x.MulAdd(vecU(m1, i), a1)
		a2 = x.MulAdd(vecU(m2, i), a2)
		a3 = x.MulAdd(vecU(m3, i), a3)
	}
	out[0] = lanesOf(a0, z, m0, n)
	out[1] = lanesOf(a1, z, m1, n)
	out[2] = lanesOf(a2, z, m2, n)
	out[3] = lanesOf(a3, z, m3, n)
}

// dots4x6AVX512 runs dots4x6SumASM (dots_amd64.s) on rows of whole
// 16-value blocks (MNIST's 784 = 49·16); other lengths take dotQ per pair.
// Either way each value is dotQ's, bit for bit.
func dots4x6AVX512(z *[4][]float32, m *[6][]float32, out *[24]float32) {
	q := len(z[0])
	if q%16 != 0 || q == 0 {
		for c := range z {
			for r := range m {
				out[c*6+r] = dotQ(z[c], m[r])
			}
		}
		return
	}
	var zp [4]*float32
	var mp [6]*float32
	for c := range zp {
		zp[c] = unsafe.SliceData(z[c][:q])
	}
	for r := range mp {
		mp[r] = unsafe.SliceData(m[r][:q])
	}
	dots4x6SumASM(&zp, &mp, q/16, out)
}

// dots4x6SumASM: see dots_amd64.s (only this build calls it: it gives
// dotQAVX512's bits, and a plain build's dotQ is the portable one).
//
//go:noescape
func dots4x6SumASM(z *[4]*float32, m *[6]*float32, blocks int, out *[24]float32)

func argmaxAVX512(ub []float32) int {
	n := len(ub) &^ 15
	if n == 0 {
		return argmaxGo(ub)
	}
	mx := vec(ub, 0)
	for i := 16; i < n; i += 16 {
		mx = mx.Max(vec(ub, i))
	}
	var lanes [16]float32
	mx.Store(&lanes)
	top := lanes[0]
	for _, v := range lanes[1:] {
		top = max(top, v)
	}
	for _, v := range ub[n:] {
		top = max(top, v)
	}
	for k, v := range ub {
		if v == top {
			return k
		}
	}
	return argmaxGo(ub) // NaNs: the portable rule
}

func aboveAVX512(dst []int32, ub []float32, thr float32, limit int) ([]int32, bool) {
	n := len(ub) &^ 15
	t := archsimd.BroadcastFloat32x16(thr)
	for i := 0; i < n; i += 16 {
		bits := vec(ub, i).GreaterEqual(t).ToBits()
		for ; bits != 0; bits &= bits - 1 {
			if len(dst) == limit {
				return dst, false
			}
			dst = append(dst, int32(i+bitsTrailing(bits)))
		}
	}
	for k := n; k < len(ub); k++ {
		if ub[k] >= thr {
			if len(dst) == limit {
				return dst, false
			}
			dst = append(dst, int32(k))
		}
	}
	return dst, true
}

func bitsTrailing(b uint16) int { return mbits.TrailingZeros16(b) }

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

// standardizeAVX512 is standardizeGo with its float64 sums in 8 lanes.
func standardizeAVX512(out, x []float32) []float32 {
	n := len(x)
	out = out[:n]
	n8 := n &^ 7
	var acc archsimd.Float64x8
	for i := 0; i < n8; i += 8 {
		acc = acc.Add(archsimd.LoadFloat32x8((*[8]float32)(x[i:])).ConvertToFloat64())
	}
	m := sumLanes64(acc)
	for _, v := range x[n8:] {
		m += float64(v)
	}
	m /= float64(n)
	mv := archsimd.BroadcastFloat64x8(m)
	acc = archsimd.Float64x8{}
	for i := 0; i < n8; i += 8 {
		d := archsimd.LoadFloat32x8((*[8]float32)(x[i:])).ConvertToFloat64().Sub(mv)
		acc = d.MulAdd(d, acc)
	}
	ss := sumLanes64(acc)
	for _, v := range x[n8:] {
		ss += (float64(v) - m) * (float64(v) - m)
	}
	if ss == 0 {
		clear(out)
		return out
	}
	inv := 1 / math.Sqrt(ss)
	iv := archsimd.BroadcastFloat64x8(inv)
	for i := 0; i < n8; i += 8 {
		archsimd.LoadFloat32x8((*[8]float32)(x[i:])).ConvertToFloat64().Sub(mv).Mul(iv).ConvertToFloat32().Store((*[8]float32)(out[i:]))
	}
	for k := n8; k < n; k++ {
		out[k] = float32((float64(x[k]) - m) * inv)
	}
	return out
}

// adamAVX512 is adamGo 16 couplings at a time: each operation of the
// scalar loop in its order, none fused (float32(√float64(v)) is √v
// correctly rounded, as VSQRTPS gives), so J, m and v get the same bits;
// the squares are added to s one by one in index order, as adamGo adds
// them (the RMS rescale reads s, and training must not depend on the
// build).
func adamAVX512(a adamStep, J, g, m, v []float32) float64 {
	n := len(J)
	_, _, _ = g[n-1:], m[n-1:], v[n-1:]
	gs, b1, c1 := archsimd.BroadcastFloat32x16(a.gs), archsimd.BroadcastFloat32x16(a.b1), archsimd.BroadcastFloat32x16(1-a.b1)
	b2, c2 := archsimd.BroadcastFloat32x16(a.b2), archsimd.BroadcastFloat32x16(1-a.b2)
	decay, step := archsimd.BroadcastFloat32x16(a.decay), archsimd.BroadcastFloat32x16(a.stepSize)
	sq2, eps := archsimd.BroadcastFloat32x16(a.sq2), archsimd.BroadcastFloat32x16(a.eps)
	var s float64
	var out [Lanes]float32
	k := 0
	for ; k+Lanes <= n; k += Lanes {
		gk := vec(g, k).Mul(gs)
		mk := b1.Mul(vec(m, k)).Add(c1.Mul(gk))
		vk := b2.Mul(vec(v, k)).Add(c2.Mul(gk).Mul(gk))
		store(mk, m, k)
		store(vk, v, k)
		j := vec(J, k).Mul(decay).Sub(step.Mul(mk).Div(vk.Sqrt().Div(sq2).Add(eps)))
		store(j, J, k)
		j.Store(&out)
		for _, x := range out {
			s += float64(x) * float64(x)
		}
	}
	return a.tail(s, k, J, g, m, v) // the last few, as adamGo steps them
}

// fieldsAVX512 is fieldsNaive 16 pixels a vector: for each block of up to
// 128 pixels, eight accumulators run down the rows b in order, x[b]
// broadcast; a product then a sum, not fused, so each lane's sum is
// fieldsNaive's to the bit. n is a multiple of 16.
func fieldsAVX512(w, x, f []float32, n int) {
	rows := len(x)
	_ = w[rows*n-1]
	_ = f[n-1]
	c := 0
	for ; c+128 <= n; c += 128 {
		var a0, a1, a2, a3, a4, a5, a6, a7 archsimd.Float32x16
		for b := 0; b < rows; b++ {
			v := archsimd.BroadcastFloat32x16(x[b])
			r := w[b*n+c : b*n+c+128]
			a0 = a0.Add(archsimd.LoadFloat32x16Slice(r[0:]).Mul(v))
			a1 = a1.Add(archsimd.LoadFloat32x16Slice(r[16:]).Mul(v))
			a2 = a2.Add(archsimd.LoadFloat32x16Slice(r[32:]).Mul(v))
			a3 = a3.Add(archsimd.LoadFloat32x16Slice(r[48:]).Mul(v))
			a4 = a4.Add(archsimd.LoadFloat32x16Slice(r[64:]).Mul(v))
			a5 = a5.Add(archsimd.LoadFloat32x16Slice(r[80:]).Mul(v))
			a6 = a6.Add(archsimd.LoadFloat32x16Slice(r[96:]).Mul(v))
			a7 = a7.Add(archsimd.LoadFloat32x16Slice(r[112:]).Mul(v))
		}
		a0.StoreSlice(f[c:])
		a1.StoreSlice(f[c+16:])
		a2.StoreSlice(f[c+32:])
		a3.StoreSlice(f[c+48:])
		a4.StoreSlice(f[c+64:])
		a5.StoreSlice(f[c+80:])
		a6.StoreSlice(f[c+96:])
		a7.StoreSlice(f[c+112:])
	}
	for ; c < n; c += 16 {
		var a0 archsimd.Float32x16
		for b := 0; b < rows; b++ {
			a0 = a0.Add(archsimd.LoadFloat32x16Slice(w[b*n+c:]).Mul(archsimd.BroadcastFloat32x16(x[b])))
		}
		a0.StoreSlice(f[c:])
	}
}
