package models

import "math"

// The quantised bound (docs/maths.md §8): a bound on a prediction's
// product with every stored row, from 8-bit copies of both vectors. With
// m = s·q + e (q the row rounded to integers in [−127, 127] at scale
// s = max|m|/127) and z = t·p + f likewise,
//
//	z·m = s·t·(p·q) + s·(f·q) + z·e ≤ s·t·(p·q) + ‖f‖·s‖q‖ + ‖z‖·‖e‖,
//
// where p·q is an exact integer sum. Four 8-bit products take one
// instruction's lane (AVX-512 VNNI multiplies 64 byte pairs at once), so
// the bound of every row costs a quarter of one float32 dot product.

// quantRows holds the stored rows as 8-bit integers, packed for the
// kernel: for each group of 16 rows and each run of 4 values, the 16 rows'
// 4 bytes side by side (64 bytes), so one vector holds 4 values of 16
// rows. The bytes are q + 128 (unsigned: the instruction multiplies
// unsigned by signed bytes); the constant 128·Σp is taken off after.
type quantRows struct {
	q4     int       // the row length rounded up to a multiple of 4
	groups int       // 16-row groups, rounded up to a whole tile
	packed []uint8   // [groups][q4/4][16][4]
	scale  []float32 // s_k
	norm   []float32 // s_k·‖q_k‖
	err    []float32 // ‖m_k − s_k q_k‖
}

// quantTile is the kernel's tile: quantPreds predictions × quantGroups
// groups of 16 rows.
const (
	quantPreds  = 4
	quantGroups = 6
)

// quantize rounds x to integers in [−127, 127] at scale max|x|/127 into
// out (its tail past len(x) zero), and returns the scale and ‖x − s·q‖
// (float64 sums).
func quantize(out []int8, x []float32) (scale float32, errNorm float64) {
	// The comparisons are max's and min's to the bit (a NaN spreads, and
	// neither |v| nor the clamp's bounds is −0), written out because the
	// web build calls the runtime for each builtin float max or min
	// (runtime.fmax32): 0.14 s of the page's start-up.
	var mx float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > mx || a != a {
			mx = a
		}
	}
	clear(out)
	if mx == 0 {
		return 1, 0
	}
	scale = mx / 127
	var ee float64
	for i, v := range x {
		// math.Round, half away from zero: v/scale is a float32, so
		// adding ±½ in float64 is exact and truncation rounds it.
		r := float64(v / scale)
		q := math.Trunc(r + math.Copysign(0.5, r))
		if q > 127 {
			q = 127
		} else if q < -127 {
			q = -127
		}
		out[i] = int8(q)
		d := float64(v) - float64(scale)*q
		ee += d * d
	}
	return scale, math.Sqrt(ee)
}

// newQuantRows quantises mem's m rows of length q, by parts on every
// core.
func newQuantRows(mem *Memory, m, q int) *quantRows {
	q4 := (q + 3) &^ 3
	tile := 16 * quantGroups
	qr := &quantRows{q4: q4, groups: (m + tile - 1) / tile * quantGroups,
		scale: make([]float32, m), norm: make([]float32, m), err: make([]float32, m)}
	qr.packed = make([]uint8, qr.groups*16*q4)
	for i := range qr.packed {
		qr.packed[i] = 128 // padding rows and values: q = 0
	}
	inParts(m, func(k0, k1 int) {
		row := make([]int8, q4)
		var sc codedRows
		for k := k0; k < k1; k++ {
			s, e := quantize(row, mem.row(k, &sc, 0))
			var qq float64
			for _, v := range row {
				qq += float64(v) * float64(v)
			}
			qr.scale[k], qr.norm[k], qr.err[k] = s, float32(float64(s)*math.Sqrt(qq)), float32(e)
			g, r := k/16, k%16
			for i, v := range row {
				qr.packed[((g*q4/4+i/4)*16+r)*4+i%4] = uint8(int(v) + 128)
			}
		}
	})
	return qr
}

// bounds writes into ub[c] (each of length m) the quantised bound of
// every row for the standardised predictions zs, using scratch p and
// dots that it grows.
func (qr *quantRows) bounds(zs [][]float32, ub [][]float32, p []int8, dots []int32) ([]int8, []int32) {
	q4, mp := qr.q4, qr.groups*16
	np := (len(zs) + quantPreds - 1) / quantPreds * quantPreds
	p, dots = grow(p, np*q4), grow(dots, np*mp)
	t := make([]float32, np)
	fn := make([]float32, np)
	zn := make([]float32, np)
	off := make([]int32, np)
	for c := range np {
		z := zs[min(c, len(zs)-1)]
		pc := p[c*q4 : (c+1)*q4]
		s, e := quantize(pc, z)
		var zz float64
		var sum int32
		for i, v := range z {
			zz += float64(v) * float64(v)
			sum += int32(pc[i])
		}
		t[c], fn[c], zn[c], off[c] = s, float32(e), float32(math.Sqrt(zz)), 128*sum
	}
	// A tile of rows (96 rows, 75 KiB at 784 values) stays in cache while
	// every group of predictions is multiplied with it.
	for g0 := 0; g0 < qr.groups; g0 += quantGroups {
		for c0 := 0; c0 < np; c0 += quantPreds {
			if quantAllPreds {
				quantDots(p[c0*q4:], q4, qr.packed[g0*16*q4:], 16*q4, q4/4, dots[c0*mp+g0*16:], mp)
			} else {
				quantDotsN(min(quantPreds, len(zs)-c0), p[c0*q4:], q4, qr.packed[g0*16*q4:], 16*q4, q4/4, dots[c0*mp+g0*16:], mp)
			}
		}
	}
	for c := range zs {
		quantBound(ub[c], dots[c*mp:], qr, off[c], t[c], fn[c], zn[c])
	}
	return p, dots
}

func quantDotsGo(p []int8, pstride int, packed []uint8, gstride, steps int, out []int32, ostride int) {
	quantDotsN(quantPreds, p, pstride, packed, gstride, steps, out, ostride)
}

// quantDotsN is the portable kernel over the first n predictions only
// (the web build asks for one at a time: a kernel of four would do four
// times the work). Each step's 16 rows × 4 bytes are read in order, the
// 16 sums kept in registers; quantDotsNaive (quant_test.go) is its twin.
func quantDotsN(n int, p []int8, pstride int, packed []uint8, gstride, steps int, out []int32, ostride int) {
	for c := range n {
		pc := p[c*pstride : c*pstride+4*steps]
		for g := range quantGroups {
			blk := packed[g*gstride : g*gstride+64*steps]
			// The 16 sums in locals, each row's four products written
			// out: in the page's WebAssembly a sum kept in an array was
			// loaded and stored at every step.
			var s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15 int32
			for k := range steps {
				x := (*[64]uint8)(blk[k*64 : k*64+64])
				q := (*[4]int8)(pc[k*4 : k*4+4])
				p0, p1, p2, p3 := int32(q[0]), int32(q[1]), int32(q[2]), int32(q[3])
				s0 += int32(x[0])*p0 + int32(x[1])*p1 + int32(x[2])*p2 + int32(x[3])*p3
				s1 += int32(x[4])*p0 + int32(x[5])*p1 + int32(x[6])*p2 + int32(x[7])*p3
				s2 += int32(x[8])*p0 + int32(x[9])*p1 + int32(x[10])*p2 + int32(x[11])*p3
				s3 += int32(x[12])*p0 + int32(x[13])*p1 + int32(x[14])*p2 + int32(x[15])*p3
				s4 += int32(x[16])*p0 + int32(x[17])*p1 + int32(x[18])*p2 + int32(x[19])*p3
				s5 += int32(x[20])*p0 + int32(x[21])*p1 + int32(x[22])*p2 + int32(x[23])*p3
				s6 += int32(x[24])*p0 + int32(x[25])*p1 + int32(x[26])*p2 + int32(x[27])*p3
				s7 += int32(x[28])*p0 + int32(x[29])*p1 + int32(x[30])*p2 + int32(x[31])*p3
				s8 += int32(x[32])*p0 + int32(x[33])*p1 + int32(x[34])*p2 + int32(x[35])*p3
				s9 += int32(x[36])*p0 + int32(x[37])*p1 + int32(x[38])*p2 + int32(x[39])*p3
				s10 += int32(x[40])*p0 + int32(x[41])*p1 + int32(x[42])*p2 + int32(x[43])*p3
				s11 += int32(x[44])*p0 + int32(x[45])*p1 + int32(x[46])*p2 + int32(x[47])*p3
				s12 += int32(x[48])*p0 + int32(x[49])*p1 + int32(x[50])*p2 + int32(x[51])*p3
				s13 += int32(x[52])*p0 + int32(x[53])*p1 + int32(x[54])*p2 + int32(x[55])*p3
				s14 += int32(x[56])*p0 + int32(x[57])*p1 + int32(x[58])*p2 + int32(x[59])*p3
				s15 += int32(x[60])*p0 + int32(x[61])*p1 + int32(x[62])*p2 + int32(x[63])*p3
			}
			o := (*[16]int32)(out[c*ostride+g*16 : c*ostride+g*16+16])
			o[0] = s0
			o[1] = s1
			o[2] = s2
			o[3] = s3
			o[4] = s4
			o[5] = s5
			o[6] = s6
			o[7] = s7
			o[8] = s8
			o[9] = s9
			o[10] = s10
			o[11] = s11
			o[12] = s12
			o[13] = s13
			o[14] = s14
			o[15] = s15
		}
	}
}

func quantBoundGo(ub []float32, dots []int32, qr *quantRows, off int32, t, fn, zn float32) {
	for k := range ub {
		ub[k] = qr.scale[k]*t*float32(dots[k]-off) + fn*qr.norm[k] + zn*qr.err[k]
	}
}
