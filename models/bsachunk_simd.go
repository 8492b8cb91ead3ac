//go:build goexperiment.simd && amd64

package models

import (
	"simd/archsimd"
	"unsafe"
)

func init() {
	if archsimd.X86.AVX512() {
		chunkScores = chunkScoresAVX512
		chunkClamp = chunkClampAVX512
		chunkSoftmax = chunkSoftmaxAVX512
		chunkDecode = chunkDecodeAVX512
	}
}

// chunkDecodeAVX512 is chunkDecodeGo with the chunk's images in one
// vector and fused multiply-adds.
func chunkDecodeAVX512(f, xd, px []float32, n, d, a int) {
	w := 2 * a
	_ = f[d*w-1]
	_ = xd[n*d*Lanes-1]
	_ = px[n*a*Lanes-1]
	var zero archsimd.Float32x16
	one := archsimd.BroadcastFloat32x16(1)
	for i := 0; i < n; i++ {
		for k := 0; k < a; k++ {
			var c0, c1 archsimd.Float32x16
			for r := 0; r < d; r++ {
				x := vecU(xd, (i*d+r)*Lanes)
				c0 = archsimd.BroadcastFloat32x16(f[r*w+2*k]).MulAdd(x, c0)
				c1 = archsimd.BroadcastFloat32x16(f[r*w+2*k+1]).MulAdd(x, c1)
			}
			c0 = c0.Max(zero).Min(one)
			c1 = c1.Max(zero).Min(one)
			s := c0.Add(c1)
			storeU(c0.Div(s).Masked(s.Greater(zero)), px, (i*a+k)*Lanes)
		}
	}
}

// chunkScoresAVX512 is chunkScoresGo with the chunk's 16 images in one
// vector: each coupling J_i[j][r][e] is broadcast once and multiplies the
// 16 images' x̂_j[e]. For d = 8 the eight x̂_j vectors, the eight v_r
// accumulators and the query's eight x̂_i vectors all stay in registers.
func chunkScoresAVX512(jb, xh, xi, v, s []float32, n, d int) {
	_ = jb[n*d*d-1]
	_ = xh[n*d*Lanes-1]
	_ = v[n*d*Lanes-1]
	_ = s[n*Lanes-1]
	_ = xi[d*Lanes-1]
	if d != 8 {
		for j := 0; j < n; j++ {
			var sacc archsimd.Float32x16
			for r := 0; r < d; r++ {
				var acc0, acc1 archsimd.Float32x16
				jr := jb[(j*d+r)*d : (j*d+r+1)*d]
				e := 0
				for ; e+1 < d; e += 2 {
					acc0 = archsimd.BroadcastFloat32x16(jr[e]).MulAdd(vec(xh, (j*d+e)*Lanes), acc0)
					acc1 = archsimd.BroadcastFloat32x16(jr[e+1]).MulAdd(vec(xh, (j*d+e+1)*Lanes), acc1)
				}
				if e < d {
					acc0 = archsimd.BroadcastFloat32x16(jr[e]).MulAdd(vec(xh, (j*d+e)*Lanes), acc0)
				}
				acc := acc0.Add(acc1)
				store(acc, v, (j*d+r)*Lanes)
				sacc = vec(xi, r*Lanes).MulAdd(acc, sacc)
			}
			store(sacc, s, j*Lanes)
		}
		return
	}
	// Go allocates 16 vector registers: the couplings' pass keeps the
	// eight x̂_j vectors in registers, then a second pass over the stored
	// v makes the scores with the query's eight x̂_i in registers.
	for j := 0; j < n; j++ {
		// One bounds check per key: the panels and the block as arrays.
		x := (*[8 * Lanes]float32)(xh[j*8*Lanes:])
		vo := (*[8 * Lanes]float32)(v[j*8*Lanes:])
		blk := unsafe.Pointer(&(*[64]float32)(jb[j*64:])[0])
		x0, x1, x2, x3 := ld(x, 0), ld(x, 16), ld(x, 32), ld(x, 48)
		x4, x5, x6, x7 := ld(x, 64), ld(x, 80), ld(x, 96), ld(x, 112)
		// Unrolled by hand (the compiler does not unroll loops).
		var a, b archsimd.Float32x16
		a = bc(blk, 0).Mul(x0)
		b = bc(blk, 1).Mul(x1)
		a = bc(blk, 2).MulAdd(x2, a)
		b = bc(blk, 3).MulAdd(x3, b)
		a = bc(blk, 4).MulAdd(x4, a)
		b = bc(blk, 5).MulAdd(x5, b)
		a = bc(blk, 6).MulAdd(x6, a)
		b = bc(blk, 7).MulAdd(x7, b)
		a.Add(b).Store((*[16]float32)(vo[0:16]))
		a = bc(blk, 8).Mul(x0)
		b = bc(blk, 9).Mul(x1)
		a = bc(blk, 10).MulAdd(x2, a)
		b = bc(blk, 11).MulAdd(x3, b)
		a = bc(blk, 12).MulAdd(x4, a)
		b = bc(blk, 13).MulAdd(x5, b)
		a = bc(blk, 14).MulAdd(x6, a)
		b = bc(blk, 15).MulAdd(x7, b)
		a.Add(b).Store((*[16]float32)(vo[16:32]))
		a = bc(blk, 16).Mul(x0)
		b = bc(blk, 17).Mul(x1)
		a = bc(blk, 18).MulAdd(x2, a)
		b = bc(blk, 19).MulAdd(x3, b)
		a = bc(blk, 20).MulAdd(x4, a)
		b = bc(blk, 21).MulAdd(x5, b)
		a = bc(blk, 22).MulAdd(x6, a)
		b = bc(blk, 23).MulAdd(x7, b)
		a.Add(b).Store((*[16]float32)(vo[32:48]))
		a = bc(blk, 24).Mul(x0)
		b = bc(blk, 25).Mul(x1)
		a = bc(blk, 26).MulAdd(x2, a)
		b = bc(blk, 27).MulAdd(x3, b)
		a = bc(blk, 28).MulAdd(x4, a)
		b = bc(blk, 29).MulAdd(x5, b)
		a = bc(blk, 30).MulAdd(x6, a)
		b = bc(blk, 31).MulAdd(x7, b)
		a.Add(b).Store((*[16]float32)(vo[48:64]))
		a = bc(blk, 32).Mul(x0)
		b = bc(blk, 33).Mul(x1)
		a = bc(blk, 34).MulAdd(x2, a)
		b = bc(blk, 35).MulAdd(x3, b)
		a = bc(blk, 36).MulAdd(x4, a)
		b = bc(blk, 37).MulAdd(x5, b)
		a = bc(blk, 38).MulAdd(x6, a)
		b = bc(blk, 39).MulAdd(x7, b)
		a.Add(b).Store((*[16]float32)(vo[64:80]))
		a = bc(blk, 40).Mul(x0)
		b = bc(blk, 41).Mul(x1)
		a = bc(blk, 42).MulAdd(x2, a)
		b = bc(blk, 43).MulAdd(x3, b)
		a = bc(blk, 44).MulAdd(x4, a)
		b = bc(blk, 45).MulAdd(x5, b)
		a = bc(blk, 46).MulAdd(x6, a)
		b = bc(blk, 47).MulAdd(x7, b)
		a.Add(b).Store((*[16]float32)(vo[80:96]))
		a = bc(blk, 48).Mul(x0)
		b = bc(blk, 49).Mul(x1)
		a = bc(blk, 50).MulAdd(x2, a)
		b = bc(blk, 51).MulAdd(x3, b)
		a = bc(blk, 52).MulAdd(x4, a)
		b = bc(blk, 53).MulAdd(x5, b)
		a = bc(blk, 54).MulAdd(x6, a)
		b = bc(blk, 55).MulAdd(x7, b)
		a.Add(b).Store((*[16]float32)(vo[96:112]))
		a = bc(blk, 56).Mul(x0)
		b = bc(blk, 57).Mul(x1)
		a = bc(blk, 58).MulAdd(x2, a)
		b = bc(blk, 59).MulAdd(x3, b)
		a = bc(blk, 60).MulAdd(x4, a)
		b = bc(blk, 61).MulAdd(x5, b)
		a = bc(blk, 62).MulAdd(x6, a)
		b = bc(blk, 63).MulAdd(x7, b)
		a.Add(b).Store((*[16]float32)(vo[112:128]))
	}
	q := (*[8 * Lanes]float32)(xi)
	q0, q1, q2, q3 := ld(q, 0), ld(q, 16), ld(q, 32), ld(q, 48)
	q4, q5, q6, q7 := ld(q, 64), ld(q, 80), ld(q, 96), ld(q, 112)
	for j := 0; j < n; j++ {
		vo := (*[8 * Lanes]float32)(v[j*8*Lanes:])
		sa := q0.Mul(ld(vo, 0))
		sb := q1.Mul(ld(vo, 16))
		sa = q2.MulAdd(ld(vo, 32), sa)
		sb = q3.MulAdd(ld(vo, 48), sb)
		sa = q4.MulAdd(ld(vo, 64), sa)
		sb = q5.MulAdd(ld(vo, 80), sb)
		sa = q6.MulAdd(ld(vo, 96), sa)
		sb = q7.MulAdd(ld(vo, 112), sb)
		sa.Add(sb).Store((*[16]float32)(s[j*Lanes:]))
	}
}

// bc broadcasts the float at p[k].
func bc(p unsafe.Pointer, k uintptr) archsimd.Float32x16 {
	return archsimd.BroadcastFloat32x16(*(*float32)(unsafe.Add(p, 4*k)))
}

// ld loads the 16 floats of a at k (k a constant: no bounds check).
func ld(a *[8 * Lanes]float32, k int) archsimd.Float32x16 {
	return archsimd.LoadFloat32x16((*[16]float32)(a[k : k+16]))
}

func chunkClampAVX512(s []float32, clamp float32) {
	cv := archsimd.BroadcastFloat32x16(clamp)
	k := 0
	for ; k+16 <= len(s); k += 16 {
		store(vec(s, k).Min(cv), s, k)
	}
	chunkClampGo(s[k:], clamp)
}

func chunkSoftmaxAVX512(s, v, out []float32, lse *[Lanes]float32, ok *[Lanes]bool, lambda float32, n, d int, weigh bool) (sum [Lanes]float32) {
	_ = s[n*Lanes-1]
	_ = v[n*d*Lanes-1]
	_ = out[d*Lanes-1]
	mx := archsimd.BroadcastFloat32x16(invalidScore)
	for j := 0; j < n; j++ {
		mx = mx.Max(vec(s, j*Lanes))
	}
	lv := archsimd.BroadcastFloat32x16(lambda)
	shift := mx.Mul(lv)
	lim := archsimd.BroadcastFloat32x16(invalidBelow)
	var acc archsimd.Float32x16
	if weigh && d == 8 {
		var o0, o1, o2, o3, o4, o5, o6, o7 archsimd.Float32x16
		for j := 0; j < n; j++ {
			x := vec(s, j*Lanes)
			a := exp16(x.Mul(lv).Sub(shift)).Masked(x.Greater(lim))
			acc = acc.Add(a)
			o := j * 8 * Lanes
			o0 = a.MulAdd(vec(v, o), o0)
			o1 = a.MulAdd(vec(v, o+16), o1)
			o2 = a.MulAdd(vec(v, o+32), o2)
			o3 = a.MulAdd(vec(v, o+48), o3)
			o4 = a.MulAdd(vec(v, o+64), o4)
			o5 = a.MulAdd(vec(v, o+80), o5)
			o6 = a.MulAdd(vec(v, o+96), o6)
			o7 = a.MulAdd(vec(v, o+112), o7)
		}
		store(o0, out, 0)
		store(o1, out, 16)
		store(o2, out, 32)
		store(o3, out, 48)
		store(o4, out, 64)
		store(o5, out, 80)
		store(o6, out, 96)
		store(o7, out, 112)
	} else {
		if weigh {
			clear(out[:d*Lanes])
		}
		for j := 0; j < n; j++ {
			x := vec(s, j*Lanes)
			a := exp16(x.Mul(lv).Sub(shift)).Masked(x.Greater(lim))
			acc = acc.Add(a)
			if weigh {
				for r := 0; r < d; r++ {
					store(a.MulAdd(vec(v, (j*d+r)*Lanes), vec(out, r*Lanes)), out, r*Lanes)
				}
			}
		}
	}
	var m [Lanes]float32
	mx.Store(&m)
	acc.Store(&sum)
	logSumExp(&m, &sum, lse, ok, lambda)
	return sum
}
