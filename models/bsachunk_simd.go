//go:build goexperiment.simd && amd64 && !purego

package models

import (
	"math"
	"simd/archsimd"
)

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
	// Go's compiler keeps 16 vector registers and loads each broadcast
	// separately; the assembly kernel uses all 32 and broadcasts inside
	// the multiply-add.
	if n > 0 {
		chunkScores8ASM(&jb[0], &xh[0], &xi[0], &v[0], &s[0], n)
	}
}

func chunkClampAVX512(s []float32, clamp float32) {
	cv := archsimd.BroadcastFloat32x16(clamp)
	k := 0
	for ; k+16 <= len(s); k += 16 {
		store(vec(s, k).Min(cv), s, k)
	}
	chunkClampGo(s[k:], clamp)
}

func chunkSoftmaxAVX512(s, v, out []float32, m *[Lanes]float32, lambda float32, n, d int, weigh bool) (sum [Lanes]float32) {
	_ = s[n*Lanes-1]
	_ = v[n*d*Lanes-1]
	_ = out[d*Lanes-1]
	if weigh && d == 8 {
		c := newSoftmaxConsts(lambda)
		chunkSoftmax8ASM(&s[0], &v[0], &out[0], n, &c, m, &sum)
		return sum
	}
	mx := archsimd.BroadcastFloat32x16(invalidScore)
	for j := 0; j < n; j++ {
		mx = mx.Max(vec(s, j*Lanes))
	}
	lv := archsimd.BroadcastFloat32x16(lambda)
	shift := mx.Mul(lv)
	lim := archsimd.BroadcastFloat32x16(invalidBelow)
	var acc archsimd.Float32x16
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
	mx.Store(m)
	acc.Store(&sum)
	return sum
}

// chunkNormalizeAVX512 is chunkNormalizeGo with each half of the chunk's
// images in a float64 vector: the same operations in the same order on
// every image, so the same bits (no fused multiply-add).
func chunkNormalizeAVX512(x []float32, w []float64, cnt, den *[Lanes]float64, xh []float32, n, d int) {
	_ = x[n*d*Lanes-1]
	_ = xh[n*d*Lanes-1]
	_ = w[n*Lanes-1]
	var inv [Lanes]float64
	for r := 0; r < d; r++ {
		for h := 0; h < Lanes; h += 8 {
			var mu, ss archsimd.Float64x8
			for i := 0; i < n; i++ {
				xv := archsimd.LoadFloat32x8((*[8]float32)(x[(i*d+r)*Lanes+h:])).ConvertToFloat64()
				wv := archsimd.LoadFloat64x8((*[8]float64)(w[i*Lanes+h:]))
				mu = mu.Add(wv.Mul(xv))
			}
			mu = mu.Div(archsimd.LoadFloat64x8((*[8]float64)(cnt[h:])))
			for i := 0; i < n; i++ {
				xv := archsimd.LoadFloat32x8((*[8]float32)(x[(i*d+r)*Lanes+h:])).ConvertToFloat64()
				wv := archsimd.LoadFloat64x8((*[8]float64)(w[i*Lanes+h:]))
				dv := xv.Sub(mu)
				ss = ss.Add(wv.Mul(dv.Mul(dv)))
			}
			var sv [8]float64
			ss.Store(&sv)
			for b := range 8 {
				sd := 0.0
				if den[h+b] > 0 {
					sd = math.Sqrt(sv[b] / den[h+b])
				}
				inv[h+b] = 1 / (sd + 1e-9)
			}
			iv := archsimd.LoadFloat64x8((*[8]float64)(inv[h:]))
			for i := 0; i < n; i++ {
				xv := archsimd.LoadFloat32x8((*[8]float32)(x[(i*d+r)*Lanes+h:])).ConvertToFloat64()
				wv := archsimd.LoadFloat64x8((*[8]float64)(w[i*Lanes+h:]))
				wv.Mul(xv.Sub(mu).Mul(iv)).ConvertToFloat32().Store((*[8]float32)(xh[(i*d+r)*Lanes+h:]))
			}
		}
	}
}

// chunkResidualAVX512 is chunkResidualGo a vector per row (unfused, so
// the same bits).
func chunkResidualAVX512(xn, out, x []float32, g *[Lanes]float32) {
	gv := archsimd.LoadFloat32x16(g)
	for k := 0; k+Lanes <= len(xn); k += Lanes {
		store(gv.Mul(vec(out, k)).Add(vec(x, k)), xn, k)
	}
}

// chunkRenormAVX512 is chunkRenormGo with each half of the images in a
// float64 vector: the same operations in the same order, so the same bits.
func chunkRenormAVX512(x, xn []float32, n, d int) {
	_ = x[n*d*Lanes-1]
	_ = xn[n*d*Lanes-1]
	var inv [Lanes]float32
	for h := 0; h < Lanes; h += 8 {
		var mean archsimd.Float64x8
		for i := 0; i < n; i++ {
			var ss archsimd.Float64x8
			for r := 0; r < d; r++ {
				v := archsimd.LoadFloat32x8((*[8]float32)(xn[(i*d+r)*Lanes+h:])).ConvertToFloat64()
				ss = ss.Add(v.Mul(v))
			}
			mean = mean.Add(ss.Sqrt())
		}
		one := archsimd.BroadcastFloat64x8(1)
		f := one.Div(mean.Div(archsimd.BroadcastFloat64x8(float64(n))).Add(archsimd.BroadcastFloat64x8(1e-9)))
		f.ConvertToFloat32().Store((*[8]float32)(inv[h:]))
	}
	iv := archsimd.LoadFloat32x16(&inv)
	for k := 0; k < n*d*Lanes; k += Lanes {
		store(vec(xn, k).Mul(iv), x, k)
	}
}
