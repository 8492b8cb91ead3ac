package models

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestHopfieldStepMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	pats := randomImages(37, 5)
	h := NewHopfield(pats)
	xi := append([]float32(nil), pats[3]...)
	for q := range xi {
		xi[q] += float32(rng.NormFloat64() * 0.3)
	}
	beta := float32(1 / math.Sqrt(Pixels)) // the scaled-dot-product temperature
	// float64 reference
	s := make([]float64, len(pats))
	mx := math.Inf(-1)
	for k, p := range pats {
		for q := range p {
			s[k] += float64(p[q]) * float64(xi[q])
		}
		mx = math.Max(mx, s[k])
	}
	var z float64
	for _, v := range s {
		z += math.Exp(float64(beta) * (v - mx))
	}
	var sq float64
	for _, v := range xi {
		sq += float64(v) * float64(v)
	}
	wantE := -(mx + math.Log(z)/float64(beta)) + sq/2
	want := make([]float64, Pixels)
	for k, p := range pats {
		w := math.Exp(float64(beta)*(s[k]-mx)) / z
		for q := range p {
			want[q] += w * float64(p[q])
		}
	}
	p := make([]float32, 48)
	e := h.Step(xi, p, beta)
	if !closeTo(e, wantE, 1e-4) {
		t.Fatalf("energy %g, want %g", e, wantE)
	}
	for q := range want {
		if math.Abs(float64(xi[q])-want[q]) > 1e-4 {
			t.Fatalf("pixel %d: %g, want %g", q, xi[q], want[q])
		}
	}
	var sum float32
	for _, v := range p {
		sum += v
	}
	if math.Abs(float64(sum)-1) > 1e-4 || p[40] != 0 {
		t.Fatalf("weights sum to %g; padding %g", sum, p[40])
	}
	top := TopK(p, h.M, 3)
	if len(top) != 3 || p[top[0]] < p[top[1]] || p[top[1]] < p[top[2]] {
		t.Fatalf("TopK %v", top)
	}
	for j := 0; j < h.M; j++ {
		if p[j] > p[top[0]] {
			t.Fatal("TopK missed the largest")
		}
	}
}

func TestHopfieldRetrievesStoredPattern(t *testing.T) {
	pats := randomImages(64, 6)
	h := NewHopfield(pats)
	xi := append([]float32(nil), pats[10]...)
	for q := 0; q < 200; q++ {
		xi[q] = 0 // erase part of it
	}
	p := make([]float32, 64)
	e0 := h.Energy(xi, p, 1)
	for range 5 {
		h.Step(xi, p, 1)
	}
	if e1 := h.Energy(xi, p, 1); !(e1 <= e0) {
		t.Fatalf("energy rose: %g → %g", e0, e1)
	}
	for q, v := range pats[10] {
		if math.Abs(float64(xi[q]-v)) > 1e-3 {
			t.Fatalf("pattern not retrieved at pixel %d: %g vs %g", q, xi[q], v)
		}
	}
}

// TestClassicFieldsMatchField holds Fields (one pass over W's rows) to
// the definition, field's sum per pixel, bit for bit on ±1 states: digits
// and random patterns stored, K = 1 to 200, and the energy and the
// synchronous step built on them to their per-pixel versions.
func TestClassicFieldsMatchField(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for _, k := range []int{1, 10, 200} {
		pats := make([][]float32, k)
		for i := range pats {
			pats[i] = make([]float32, Pixels)
			for q := range pats[i] {
				pats[i][q] = rng.Float32()
			}
		}
		h := NewClassicHopfield(pats)
		for a := 0; a < Pixels; a++ {
			for b := 0; b < a; b++ {
				if h.W[a*Pixels+b] != h.W[b*Pixels+a] {
					t.Fatalf("K = %d: W[%d][%d] = %g, W[%d][%d] = %g: not symmetric", k, a, b, h.W[a*Pixels+b], b, a, h.W[b*Pixels+a])
				}
			}
		}
		f := make([]float32, Pixels)
		for trial := 0; trial < 5; trial++ {
			xi := Binarize(pats[rng.IntN(k)])
			for q := range xi {
				if rng.Float32() < 0.3 {
					xi[q] = -xi[q]
				}
			}
			h.Fields(xi, f)
			var e float64
			next := slices.Clone(xi)
			for a := range f {
				want := h.field(xi, a)
				if math.Float32bits(f[a]) != math.Float32bits(want) {
					t.Fatalf("K = %d, trial %d: Fields gives pixel %d %g, field %g", k, trial, a, f[a], want)
				}
				e += float64(xi[a]) * float64(want)
				if want > 0 {
					next[a] = 1
				} else if want < 0 {
					next[a] = -1
				}
			}
			if got := h.Energy(xi); math.Float64bits(got) != math.Float64bits(-e/2) {
				t.Fatalf("K = %d: Energy %g, per pixel %g", k, got, -e/2)
			}
			h.StepSync(xi)
			if !slices.Equal(xi, next) {
				t.Fatalf("K = %d: StepSync differs from the per-pixel step", k)
			}
		}
	}
}

func TestClassicHopfield(t *testing.T) {
	// Uncorrelated binary patterns (half the pixels on): well below capacity.
	rng0 := rand.New(rand.NewPCG(7, 7))
	pats := make([][]float32, 3)
	for k := range pats {
		pats[k] = make([]float32, Pixels)
		for q := range pats[k] {
			pats[k][q] = float32(rng0.IntN(2))
		}
	}
	h := NewClassicHopfield(pats)
	stored := Binarize(pats[1])
	xi := append([]float32(nil), stored...)
	rng := rand.New(rand.NewPCG(1, 1))
	for _, q := range rng.Perm(Pixels)[:60] {
		xi[q] = -xi[q]
	}
	e0 := h.Energy(xi)
	h.StepAsync(xi, rng)
	if e1 := h.Energy(xi); e1 > e0 {
		t.Fatalf("asynchronous sweep raised the energy %g → %g", e0, e1)
	}
	h.StepSync(xi)
	diff := 0
	for q := range xi {
		if xi[q] != stored[q] {
			diff++
		}
	}
	if diff != 0 {
		t.Fatalf("3 stored random patterns: %d pixels differ from the stored one", diff)
	}
	for a := 0; a < Pixels; a++ {
		if h.W[a*Pixels+a] != 0 {
			t.Fatal("W_ii != 0")
		}
	}
}

// TestHopfieldBatchMatchesStep: the batched step (one matrix product for
// the scores of a batch, one for the update) agrees with Step, its naive
// twin, state by state over several steps, energies included, for batch
// sizes that do and do not fill a chunk, at two temperatures.
func TestHopfieldBatchMatchesStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	pats := randomImages(53, 9) // 53 patterns: the last 16-block padded
	h := NewHopfield(pats)
	for _, beta := range []float32{0.05, 1} {
		for _, n := range []int{1, 5, 16} {
			xs := make([]float32, n*Pixels)
			for q := range xs {
				xs[q] = float32(rng.Float64()*1.4 - 0.2)
			}
			one := make([][]float32, n)
			for b := range one {
				one[b] = append([]float32(nil), xs[b*Pixels:(b+1)*Pixels]...)
			}
			hb := h.NewBatch(16)
			p := make([]float32, h.M+16)
			got := make([]float64, n)
			for step := 0; step < 4; step++ {
				hb.Step(xs, n, beta, got)
				for b := range one {
					want := h.Step(one[b], p, beta)
					if d := math.Abs(got[b] - want); d > 1e-4*math.Max(1, math.Abs(want)) {
						t.Fatalf("β %g, n %d, step %d, state %d: energy %g, Step's %g", beta, n, step, b, got[b], want)
					}
					for q, v := range one[b] {
						if d := math.Abs(float64(xs[b*Pixels+q] - v)); d > 1e-4 {
							t.Fatalf("β %g, n %d, step %d, state %d, pixel %d: %g, Step's %g", beta, n, step, b, q, xs[b*Pixels+q], v)
						}
					}
				}
			}
			hb.Energy(xs, n, beta, got)
			for b := range one {
				if want := h.Energy(one[b], p, beta); math.Abs(got[b]-want) > 1e-4*math.Max(1, math.Abs(want)) {
					t.Fatalf("β %g, n %d: final energy %g, Energy's %g", beta, n, got[b], want)
				}
			}
		}
	}
}

// TestFieldsKernels holds the fields kernels (portable and AVX-512) to
// their naive twin bit for bit on random values, not only ±1 (where every
// product is exact): a kernel that fused the product into the sum would
// differ here. Widths with and without a 128-wide block, and rows of any
// count.
func TestFieldsKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 11))
	kernels := []struct {
		name string
		f    func(w, x, f []float32, n int)
	}{{"go", fieldsGo}}
	if hasAVX512() {
		kernels = append(kernels, struct {
			name string
			f    func(w, x, f []float32, n int)
		}{"avx512", fieldsAVX512})
	} else {
		t.Run("avx512", needFast)
	}
	for _, k := range kernels {
		for _, shape := range [][2]int{{784, 784}, {16, 3}, {144, 50}, {256, 1}, {32, 200}} {
			n, rows := shape[0], shape[1]
			w := guarded(rng, n*rows)
			x := guarded(rng, rows)
			want := make([]float32, n)
			fieldsNaive(w, x, want, n)
			got := guarded(rng, n)
			k.f(w, x, got, n)
			checkGuard(t, k.name, got)
			for a := range want {
				if math.Float32bits(got[a]) != math.Float32bits(want[a]) {
					t.Fatalf("%s, n = %d, %d rows: f[%d] = %g, naive %g", k.name, n, rows, a, got[a], want[a])
				}
			}
		}
	}
}

// TestAddRowsSkipZerosSameBits: the weighted sum of rows that leaves out
// zero weights gives wsumGo's numbers over the transposed rows to the bit,
// with many and nearly all zero weights (subnormal ones kept), values of
// both signs and zeros of both signs among them; with few zeros it leaves
// the sum to wsumGo.
func TestAddRowsSkipZerosSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, sz := range []struct{ d, np int }{{1, 1}, {3, 7}, {5, 50}, {784, 48}, {784, 1008}} {
		for _, zeros := range []float64{0, 0.5, 0.8, 0.9, 0.99, 1} {
			d, np := sz.d, sz.np
			a, rows, vt := make([]float32, np), make([]float32, np*d), make([]float32, d*np)
			for j := range a {
				switch {
				case rng.Float64() < zeros:
				case rng.IntN(10) == 0:
					a[j] = math.Float32frombits(uint32(1 + rng.IntN(100))) // subnormal
				default:
					a[j] = rng.Float32()
				}
			}
			for j := range np {
				for r := range d {
					v := rng.Float32()*2 - 1
					switch rng.IntN(10) {
					case 0:
						v = float32(math.Copysign(0, -1))
					case 1:
						v = 0
					}
					rows[j*d+r], vt[r*np+j] = v, v
				}
			}
			got, want := make([]float32, d), make([]float32, d)
			for r := range got {
				got[r] = 7 // overwritten where it sums
			}
			nz := 0
			for _, x := range a {
				if x != 0 {
					nz++
				}
			}
			wsumGo(a, vt, want, d, np)
			if did := addRowsSkipZeros(a, rows, got); did != (4*nz <= np) {
				t.Fatalf("d=%d np=%d, %d weights not 0: summed %v", d, np, nz, did)
			} else if !did {
				continue
			}
			for r := range want {
				if math.Float32bits(got[r]) != math.Float32bits(want[r]) {
					t.Fatalf("d=%d np=%d, %g zero: [%d] = %g, wsumGo's %g", d, np, zeros, r, got[r], want[r])
				}
			}
		}
	}
}
