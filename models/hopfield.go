package models

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/blas/blas32"
)

// Hopfield is the modern (continuous) Hopfield network of §7: stored
// patterns X (M×784, gain-adjusted pixels), update ξ ← Xᵀ softmax(β X ξ),
// energy −lse(β, Xξ) + ½ ξᵀξ. Its fixed points are (near) stored memories.
type Hopfield struct {
	M  int
	X  []float32 // [M][784]
	XT []float32 // [784][M]
}

// NewHopfield stores the given patterns (each 784 pixels). M must be a
// multiple of 16 for the vector kernels; other counts are zero-padded.
func NewHopfield(patterns [][]float32) *Hopfield {
	m := roundUp16(len(patterns))
	h := &Hopfield{M: len(patterns), X: make([]float32, m*Pixels), XT: make([]float32, Pixels*m)}
	for k, p := range patterns {
		copy(h.X[k*Pixels:], p)
		for q, v := range p {
			h.XT[q*m+k] = v
		}
	}
	return h
}

// HopfieldStep advances ξ in place and writes the pattern weights
// softmax(β X ξ) into p (length ≥ M). It returns the energy of ξ before
// the step.
func (h *Hopfield) Step(xi, p []float32, beta float32) float64 {
	e := h.Weights(xi, p, beta)
	h.Update(xi, p)
	return e
}

// Weights writes the pattern weights softmax(β X ξ) into p (length ≥ M)
// and returns the energy of ξ: the first half of Step, and Energy's work
// too, so a run that measures a state's energy before stepping it can
// keep the weights for the step (Update).
func (h *Hopfield) Weights(xi, p []float32, beta float32) float64 {
	return h.scores(xi, p, beta, true)
}

// Update sets ξ to Xᵀ p, p being the weights Weights wrote for it: the
// second half of Step. With the portable kernels (the page) it skips the
// patterns whose weight is exactly 0 where most are (addRowsSkipZeros):
// from the third step from a noisy digit on, 0.7 to 4.5 % of the 10,000
// weights are left, the rest below float32's smallest number
// (TestHopfieldWeightsFew, ten digits; from a half-masked digit 0.7 to 62 %).
func (h *Hopfield) Update(xi, p []float32) {
	m := roundUp16(h.M)
	if kernelName == "go" && addRowsSkipZeros(p[:m], h.X, xi[:Pixels]) {
		return
	}
	wsum(p, h.XT, xi, Pixels, m)
}

// addRowsSkipZeros sets out to Σ_j a[j]·rows[j], rows being len(a) rows of
// len(out) numbers, leaving out the rows whose weight a[j] is exactly 0,
// and reports true, where those are more than three in four (else it
// leaves out alone and reports false). It is wsumGo over the transposed
// rows with the zero terms left out: each out[r] adds its products in
// wsumGo's order, one row after another, and a 0·v adds nothing (the sum
// starts at +0 and a sum of finite numbers is never −0), so its numbers
// are wsumGo's to the bit for finite rows (TestAddRowsSkipZerosSameBits).
// A row is read whole where wsumGo would pick one number from each of
// 784 places 40 KB apart.
func addRowsSkipZeros(a, rows, out []float32) bool {
	nz := 0
	for _, x := range a {
		if x != 0 {
			nz++
		}
	}
	if 4*nz > len(a) {
		return false
	}
	d := len(out)
	clear(out)
	for j, x := range a {
		if x == 0 {
			continue
		}
		row := rows[j*d : (j+1)*d]
		for r, v := range row {
			out[r] += x * v
		}
	}
	return true
}

// Energy is −lse(β, Xξ) + ½ξᵀξ; p is scratch of length ≥ M.
func (h *Hopfield) Energy(xi, p []float32, beta float32) float64 {
	return h.scores(xi, p, beta, false)
}

// scores sets p to X ξ, then (if norm) to softmax(β X ξ), and returns the energy.
func (h *Hopfield) scores(xi, p []float32, beta float32, norm bool) float64 {
	m := roundUp16(h.M)
	p = p[:m]
	wsum(xi, h.X, p, m, Pixels)
	return h.weigh(p, xi, beta, norm)
}

// weigh turns p = X ξ (padded to a multiple of 16) into softmax(β X ξ) if
// norm, and returns the energy of ξ: the one tail of Step, Energy and the
// batched step.
func (h *Hopfield) weigh(p, xi []float32, beta float32, norm bool) float64 {
	for k := h.M; k < len(p); k++ {
		p[k] = invalidScore
	}
	mx := maxf(p)
	sum := expShift(p, p, beta, beta*mx)
	var sq float64
	for _, v := range xi {
		sq += float64(v) * float64(v)
	}
	lse := float64(mx) + math.Log(float64(sum))/float64(beta)
	if norm {
		inv := 1 / sum
		for k := range p {
			p[k] *= inv
		}
	}
	return -lse + sq/2
}

// HopfieldBatch steps many states together: the scores of a batch are one
// matrix product with the stored patterns, and so is the update, through
// gemm. Step (one state) is its naive twin; the sums run in another order,
// so the two agree to rounding (tested).
type HopfieldBatch struct {
	h *Hopfield
	s []float32 // [B][m] scores, then weights
}

// NewBatch returns room for batches of up to b states.
func (h *Hopfield) NewBatch(b int) *HopfieldBatch {
	return &HopfieldBatch{h: h, s: make([]float32, b*roundUp16(h.M))}
}

// Step advances the n states xs ([n][784], row-major) in place and writes
// each state's energy before the step into energy (as Step does for one).
func (hb *HopfieldBatch) Step(xs []float32, n int, beta float32, energy []float64) {
	hb.scores(xs, n, beta, energy, true)
	h, m := hb.h, roundUp16(hb.h.M)
	clear(xs[:n*Pixels])
	gemm(n, Pixels, m, hb.s, m, false, h.X, Pixels, xs, Pixels)
}

// Energy writes the energies of the n states xs into energy.
func (hb *HopfieldBatch) Energy(xs []float32, n int, beta float32, energy []float64) {
	hb.scores(xs, n, beta, energy, false)
}

// scores sets row b of hb.s to X ξ_b, then (if norm) to softmax(β X ξ_b),
// and energy[b] to the energy of ξ_b.
func (hb *HopfieldBatch) scores(xs []float32, n int, beta float32, energy []float64, norm bool) {
	h, m := hb.h, roundUp16(hb.h.M)
	s := hb.s[:n*m]
	clear(s)
	gemm(n, m, Pixels, xs, Pixels, false, h.XT, m, s, m)
	for b := 0; b < n; b++ {
		energy[b] = h.weigh(s[b*m:(b+1)*m], xs[b*Pixels:(b+1)*Pixels], beta, norm)
	}
}

// ClassicHopfield is the binary network of §7: pixels thresholded at 0.5
// to ±1, Hebbian couplings W = (1/784) Σ_k ξ_k ξ_kᵀ with W_ii = 0, energy
// −½ ξᵀWξ. With many stored digits it settles in spurious mixtures.
type ClassicHopfield struct {
	K int
	W []float32 // [784][784]
}

// Binarize maps pixels to ±1 (threshold 0.5).
func Binarize(img []float32) []float32 {
	out := make([]float32, len(img))
	for q, v := range img {
		out[q] = -1
		if v >= 0.5 {
			out[q] = 1
		}
	}
	return out
}

// NewClassicHopfield stores the binarised patterns.
func NewClassicHopfield(patterns [][]float32) *ClassicHopfield {
	h := &ClassicHopfield{K: len(patterns), W: make([]float32, Pixels*Pixels)}
	for _, p := range patterns {
		s := Binarize(p)
		for a := 0; a < Pixels; a++ {
			row := h.W[a*Pixels : (a+1)*Pixels]
			sa := s[a] / Pixels
			for b, sb := range s {
				row[b] += sa * sb
			}
		}
	}
	for a := 0; a < Pixels; a++ {
		h.W[a*Pixels+a] = 0
	}
	return h
}

// field is (Wξ)_a, summed in b's order: the definition Fields follows.
func (h *ClassicHopfield) field(xi []float32, a int) float32 {
	var s float32
	row := h.W[a*Pixels : (a+1)*Pixels]
	for b, v := range xi {
		s += row[b] * v
	}
	return s
}

// Fields sets f to Wξ, every pixel's field at once. W is symmetric (bit for
// bit: W_ab and W_ba are the same sum of the same terms), so pixel a's sum
// Σ_b W_ab ξ_b runs down column a of the rows b = 0, 1, … in field's order,
// every pixel in one pass over W (the fields kernel: 16 pixels a vector)
// instead of a chain of 784 dependent additions per pixel. The sums are
// field's to the bit (TestClassicFieldsMatchField).
func (h *ClassicHopfield) Fields(xi, f []float32) {
	fields(h.W, xi[:Pixels], f[:Pixels], Pixels)
}

// fieldsNaive is the fields kernel's definition: each a's sum on its own.
func fieldsNaive(w, x, f []float32, n int) {
	for a := range f[:n] {
		var s float32
		for b, v := range x {
			s += w[b*n+a] * v
		}
		f[a] = s
	}
}

// fieldsGo is the portable fields kernel: gonum's axpy adds x[b]·(row b)
// to f for b = 0, 1, …, so each f[a] is summed in b's order.
func fieldsGo(w, x, f []float32, n int) {
	f = f[:n]
	clear(f)
	y := blas32.Vector{N: n, Inc: 1, Data: f}
	for b, v := range x {
		blas32.Axpy(v, blas32.Vector{N: n, Inc: 1, Data: w[b*n : (b+1)*n]}, y)
	}
}

// Energy is −½ ξᵀWξ.
func (h *ClassicHopfield) Energy(xi []float32) float64 {
	f := make([]float32, Pixels)
	h.Fields(xi, f)
	return FieldEnergy(xi, f)
}

// FieldEnergy is −½ ξᵀf for the fields f = Wξ (Fields): the energy, its
// sum in pixel order, in float64.
func FieldEnergy(xi, f []float32) float64 {
	var e float64
	for a, v := range f[:Pixels] {
		e += float64(xi[a]) * float64(v)
	}
	return -e / 2
}

// StepSync sets ξ ← sgn(Wξ) for every pixel at once (a zero field keeps
// the pixel).
func (h *ClassicHopfield) StepSync(xi []float32) {
	f := make([]float32, Pixels)
	h.Fields(xi, f)
	StepFields(xi, f)
}

// StepFields sets ξ ← sgn(f), keeping a pixel whose field is zero: the
// synchronous step, given the fields f = Wξ of ξ (Fields).
func StepFields(xi, f []float32) {
	for a, v := range f[:Pixels] {
		if v > 0 {
			xi[a] = 1
		} else if v < 0 {
			xi[a] = -1
		}
	}
}

// StepAsync is one sweep of 784 single-pixel updates in a random order
// drawn from rng; the energy never increases.
func (h *ClassicHopfield) StepAsync(xi []float32, rng *rand.Rand) {
	order := rng.Perm(Pixels)
	for _, a := range order {
		v := h.field(xi, a)
		if v > 0 {
			xi[a] = 1
		} else if v < 0 {
			xi[a] = -1
		}
	}
}

// TopK returns the indices of the k largest weights, largest first.
func TopK(p []float32, n, k int) []int {
	idx := make([]int, 0, k+1)
	for j := 0; j < n; j++ {
		if len(idx) < k || p[j] > p[idx[len(idx)-1]] {
			pos, _ := slices.BinarySearchFunc(idx, p[j], func(a int, v float32) int {
				if p[a] > v {
					return -1
				}
				return 1
			})
			idx = slices.Insert(idx, pos, j)
			if len(idx) > k {
				idx = idx[:k]
			}
		}
	}
	return idx
}
