//go:build goexperiment.simd && amd64

package models

import (
	"simd/archsimd"
	"unsafe"
)

// quantDotsAVX512 checks the extents quantDotsGo reads, then runs the
// assembly kernel (quant_amd64.s).
func quantDotsAVX512(p []int8, pstride int, packed []uint8, gstride, steps int, out []int32, ostride int) {
	if steps == 0 {
		return
	}
	_ = p[(quantPreds-1)*pstride+4*steps-1]
	_ = packed[(quantGroups-1)*gstride+64*steps-1]
	_ = out[(quantPreds-1)*ostride+16*quantGroups-1]
	quantDotsASM(unsafe.SliceData(p), pstride, unsafe.SliceData(packed), gstride, steps, unsafe.SliceData(out), ostride)
}

//go:noescape
func quantDotsASM(p *int8, pstride int, packed *uint8, gstride, steps int, out *int32, ostride int)

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
