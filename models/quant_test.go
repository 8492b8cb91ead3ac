package models

import (
	"math"
	"math/rand/v2"
	"testing"
)

// quantDotsNaive is the kernel's definition, index by index: the naive
// twin of quantDotsGo and of the VNNI kernel.
func quantDotsNaive(p []int8, pstride int, packed []uint8, gstride, steps int, out []int32, ostride int) {
	for c := range quantPreds {
		pc := p[c*pstride : c*pstride+4*steps]
		for g := range quantGroups {
			blk := packed[g*gstride : g*gstride+64*steps]
			for r := range 16 {
				var s int32
				for k := range steps {
					for b := range 4 {
						s += int32(blk[(k*16+r)*4+b]) * int32(pc[k*4+b])
					}
				}
				out[c*ostride+g*16+r] = s
			}
		}
	}
}

// TestQuantKernelsMatchGo: the VNNI kernel and the portable one give the
// naive twin's integers (also for one prediction alone), and the vector bound its bits, on random bytes (the extremes
// 0/255 and ±127 included).
func TestQuantKernelsMatchGo(t *testing.T) {
	if !hasAVX512() {
		t.Run("avx512", needFast) // the naive and portable ones are still compared
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for _, steps := range []int{1, 7, 196} {
		pstride, gstride, ostride := 4*steps+8, 64*steps+64, 16*quantGroups+5
		p := make([]int8, (quantPreds-1)*pstride+4*steps)
		packed := make([]uint8, (quantGroups-1)*gstride+64*steps)
		for i := range p {
			p[i] = int8(rng.IntN(255) - 127)
		}
		for i := range packed {
			packed[i] = uint8(rng.IntN(256))
		}
		p[0], p[1], packed[0], packed[1] = 127, -127, 255, 0
		o1 := make([]int32, (quantPreds-1)*ostride+16*quantGroups)
		o2 := make([]int32, len(o1))
		quantDotsNaive(p, pstride, packed, gstride, steps, o1, ostride)
		o3 := make([]int32, len(o1))
		quantDotsGo(p, pstride, packed, gstride, steps, o3, ostride)
		quantDots(p, pstride, packed, gstride, steps, o2, ostride)
		for k := range o1 {
			if o1[k] != o2[k] || o1[k] != o3[k] {
				t.Fatalf("steps %d: out[%d] = %d (dispatched), %d (portable), naive %d", steps, k, o2[k], o3[k], o1[k])
			}
		}
		// One prediction: the others' outputs untouched.
		o4 := make([]int32, len(o1))
		quantDotsN(1, p, pstride, packed, gstride, steps, o4, ostride)
		for k := range o1 {
			if want := o1[k]; k >= ostride {
				want = 0
			} else if k >= 16*quantGroups {
				continue
			} else if o4[k] != want {
				t.Fatalf("steps %d, one prediction: out[%d] = %d, naive %d", steps, k, o4[k], want)
			}
			if k >= ostride && o4[k] != 0 {
				t.Fatalf("steps %d, one prediction: wrote out[%d] of another", steps, k)
			}
		}
	}
	n := 37
	qr := &quantRows{scale: make([]float32, n), norm: make([]float32, n), err: make([]float32, n)}
	dots := make([]int32, n)
	for k := range n {
		qr.scale[k], qr.norm[k], qr.err[k] = rng.Float32()*1e-3, rng.Float32(), rng.Float32()*1e-2
		dots[k] = int32(rng.IntN(1<<24)) - 1<<23
	}
	u1, u2 := make([]float32, n), make([]float32, n)
	quantBoundGo(u1, dots, qr, 1234, 9e-4, 7e-3, 1.0001)
	quantBound(u2, dots, qr, 1234, 9e-4, 7e-3, 1.0001)
	for k := range u1 {
		if math.Float32bits(u1[k]) != math.Float32bits(u2[k]) {
			t.Fatalf("bound %d: %g, portable %g", k, u2[k], u1[k])
		}
	}
}

// TestQuantBoundHolds: the quantised bound is at least every row's exact
// product (less float32 rounding, far below boundSlack) on rows of several
// kinds (smooth, noisy, one large value among equal ones) and on noisy
// predictions and a stored row; for smooth and noisy rows it is within a
// few hundredths of it. (A row of one large value quantises its small
// ones to 0, so its bound is looser: MNIST digits are not such rows.)
func TestQuantBoundHolds(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const m, q = 200, 301 // q not a multiple of 4, m not of 16
	rows := make([]float32, m*q)
	raw := make([]float32, q)
	for k := range m {
		for i := range raw {
			switch k % 3 {
			case 0:
				raw[i] = float32(math.Sin(float64(i*(k+1)) / 40))
			case 1:
				raw[i] = float32(rng.NormFloat64())
			default:
				raw[i] = 0
			}
		}
		if k%3 == 2 {
			raw[k%q] = 5
		}
		standardizeTo(rows[k*q:(k+1)*q], raw)
	}
	qr := newQuantRows(&Memory{M: m, Q: q, rows: rows}, m, q)
	var zs, ubs [][]float32
	for c := range 9 {
		z := make([]float32, q)
		for i := range raw {
			raw[i] = float32(rng.NormFloat64()) + float32(c)*rows[(c*7)*q+i]
		}
		standardizeTo(z, raw)
		zs = append(zs, z)
		ubs = append(ubs, make([]float32, m))
	}
	zs = append(zs, rows[4*q:5*q])
	ubs = append(ubs, make([]float32, m))
	qr.bounds(zs, ubs, nil, nil)
	for c, z := range zs {
		for k := range m {
			exact := dotQNaive(z, rows[k*q:(k+1)*q])
			ub := ubs[c][k]
			if ub < exact-1e-5 || (k%3 != 2 && ub > exact+0.05) {
				t.Fatalf("prediction %d, row %d: bound %g, exact %g", c, k, ub, exact)
			}
		}
	}
}

// TestDenseSearchMatchesBrute: with neither bound pruning (the quantised
// one switched off), the blocked dense search still returns the brute
// force's answer bit for bit.
func TestDenseSearchMatchesBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	rows := lowRankRows(rng, 700, 300, 40, 3)
	mem := NewMemory(rows)
	if mem.quant == nil {
		t.Fatal("no quantised rows")
	}
	mem.quant = nil
	var preds [][]float32
	for range 11 {
		preds = append(preds, guarded(rng, 300))
	}
	idx, corr := make([]int, len(preds)), make([]float32, len(preds))
	bidx, bcorr := make([]int, len(preds)), make([]float32, len(preds))
	mem.Nearest(preds, idx, corr)
	mem.NearestBrute(preds, bidx, bcorr)
	for p := range preds {
		if idx[p] != bidx[p] || corr[p] != bcorr[p] {
			t.Fatalf("prediction %d: dense %d (%g), brute %d (%g)", p, idx[p], corr[p], bidx[p], bcorr[p])
		}
	}
}

// TestQuantizeRounds: quantize's rounding is math.Round's (half away from
// zero) on every value, ties included, and its residual norm is that of
// the rounded row.
func TestQuantizeRounds(t *testing.T) {
	x := []float32{127, -127, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2.4999998, -2.4999998, 0, 63.5, -63.5, 100.49999}
	out := make([]int8, len(x))
	s, e := quantize(out, x)
	if s != 1 {
		t.Fatalf("scale %g, want 1", s)
	}
	var ee float64
	for i, v := range x {
		want := math.Round(float64(v / s))
		if float64(out[i]) != want {
			t.Errorf("x = %g: q = %d, want %g", v, out[i], want)
		}
		d := float64(v) - float64(s)*want
		ee += d * d
	}
	if math.Abs(e-math.Sqrt(ee)) > 1e-12 {
		t.Fatalf("residual norm %g, want %g", e, math.Sqrt(ee))
	}
}

// quantizeBuiltin is quantize as first written, with Go's builtin max and
// min: the definition its written-out comparisons must keep.
func quantizeBuiltin(out []int8, x []float32) (scale float32, errNorm float64) {
	var mx float32
	for _, v := range x {
		mx = max(mx, float32(math.Abs(float64(v))))
	}
	clear(out)
	if mx == 0 {
		return 1, 0
	}
	scale = mx / 127
	var ee float64
	for i, v := range x {
		r := float64(v / scale)
		q := math.Trunc(r + math.Copysign(0.5, r))
		q = max(-127, min(127, q))
		out[i] = int8(q)
		d := float64(v) - float64(scale)*q
		ee += d * d
	}
	return scale, math.Sqrt(ee)
}

// TestQuantizeMatchesBuiltin holds quantize to quantizeBuiltin bit for
// bit: random rows, rows of zeros and of −0, one huge value, and a NaN
// (which spreads to the scale and the residual in both).
func TestQuantizeMatchesBuiltin(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	nz := float32(math.Copysign(0, -1))
	rows := [][]float32{{0, 0, 0}, {nz, nz, 0}, {nz, 1e-30, -3}, {1e30, 1, -1}, {1, float32(math.NaN()), 2}, {float32(math.NaN()), 0, 0}}
	for range 50 {
		r := make([]float32, 784)
		for i := range r {
			r[i] = float32(rng.NormFloat64()) * float32(rng.IntN(4)+1)
		}
		rows = append(rows, r)
	}
	for k, x := range rows {
		got, want := make([]int8, len(x)), make([]int8, len(x))
		s, e := quantize(got, x)
		s0, e0 := quantizeBuiltin(want, x)
		if math.Float32bits(s) != math.Float32bits(s0) || math.Float64bits(e) != math.Float64bits(e0) {
			t.Fatalf("row %d: scale %g, residual %g; with the builtins %g, %g", k, s, e, s0, e0)
		}
		for i := range got {
			if got[i] != want[i] && !math.IsNaN(float64(s)) {
				t.Fatalf("row %d, value %d (%g): %d, with the builtins %d", k, i, x[i], got[i], want[i])
			}
		}
	}
}
