//go:build goexperiment.simd && amd64 && !purego

package models

import "simd/archsimd"

// quantBoundAVX512 is quantBoundGo on 16 rows at a time, the same
// operations in the same order.
func quantBoundAVX512(ub []float32, dots []int32, qr *quantRows, off int32, t, fn, zn float32) {
	n := len(ub)
	_ = dots[n-1]
	sc, nq, ne := qr.scale[:n], qr.norm[:n], qr.err[:n]
	tv := archsimd.BroadcastFloat32x16(t)
	fv := archsimd.BroadcastFloat32x16(fn)
	zv := archsimd.BroadcastFloat32x16(zn)
	ov := archsimd.BroadcastInt32x16(off)
	k := 0
	for ; k+16 <= n; k += 16 {
		d := archsimd.LoadInt32x16((*[16]int32)(dots[k:])).Sub(ov).ConvertToFloat32()
		a := vec(sc, k).Mul(tv).Mul(d)
		b := fv.Mul(vec(nq, k))
		c := zv.Mul(vec(ne, k))
		store(a.Add(b).Add(c), ub, k)
	}
	quantBoundGo(ub[k:], dots[k:], &quantRows{scale: sc[k:], norm: nq[k:], err: ne[k:]}, off, t, fn, zn)
}
