package models

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// HopfieldMap64 is the modern Hopfield network's step ξ → Xᵀ softmax(β X ξ)
// (§7) in float64, with its Jacobian: β Xᵀ (diag(w) − w wᵀ) X at the
// state, w = softmax(β X ξ), a symmetric positive semi-definite 784 × 784
// matrix, given by its products.
type HopfieldMap64 struct {
	M    int
	X    []float64 // [M][784]
	Beta float64
}

// Map64 is h's step with β in float64 (a 62.7 MB copy of the patterns).
func (h *Hopfield) Map64(beta float32) *HopfieldMap64 {
	f := &HopfieldMap64{M: h.M, X: make([]float64, h.M*Pixels), Beta: float64(beta)}
	for k, v := range h.X[:h.M*Pixels] {
		f.X[k] = float64(v)
	}
	return f
}

// Size is the state's dimension, 784.
func (f *HopfieldMap64) Size() int { return Pixels }

// HopLin is the Hopfield step linearised at a state.
type HopLin struct {
	f       *HopfieldMap64
	X, Out  []float64
	w       []float64 // softmax(β X ξ)
	support []int     // the patterns whose weight counts (≥ dropBelow of the largest), in order
	scratch []float64
}

// State is the state linearised at.
func (l *HopLin) State() []float64 { return l.X }

// Next is the step's image of the state.
func (l *HopLin) Next() []float64 { return l.Out }

func (f *HopfieldMap64) general() blas64.General {
	return blas64.General{Rows: f.M, Cols: Pixels, Stride: Pixels, Data: f.X}
}

// At computes F(ξ) (ξ is kept, not copied) and the linearisation there.
func (f *HopfieldMap64) At(xi []float64) *HopLin {
	l := &HopLin{f: f, X: xi, Out: make([]float64, Pixels), w: make([]float64, f.M), scratch: make([]float64, f.M)}
	blas64.Gemv(blas.NoTrans, 1, f.general(), blas64.Vector{N: Pixels, Inc: 1, Data: xi}, 0, blas64.Vector{N: f.M, Inc: 1, Data: l.w})
	mx := math.Inf(-1)
	for _, v := range l.w {
		mx = max(mx, v)
	}
	var sum float64
	for k, v := range l.w {
		l.w[k] = math.Exp(f.Beta * (v - mx))
		sum += l.w[k]
	}
	for k := range l.w {
		l.w[k] /= sum
	}
	// The largest weight before normalisation is exp(0) = 1.
	for k, v := range l.w {
		if v*sum >= dropBelow {
			l.support = append(l.support, k)
		}
	}
	blas64.Gemv(blas.Trans, 1, f.general(), blas64.Vector{N: f.M, Inc: 1, Data: l.w}, 0, blas64.Vector{N: Pixels, Inc: 1, Data: l.Out})
	return l
}

// dropBelow: a pattern whose weight is below this fraction of the largest
// is left out of the Jacobian's products. Each pattern's term in w·u and
// in Xᵀa is at most its weight times β‖X_k‖²‖dx‖, so the M ≤ 70,000
// patterns left out change a product by less than 1e-15 of the scale of
// its largest term (rounding in float64 is 1.1e-16 an operation).
const dropBelow = 1e-20

// JVP writes DF(ξ)·dx into out: u = X dx, a = β (w ⊙ u − w (w·u)),
// out = Xᵀ a, over the patterns whose weight counts (see dropBelow): the
// products over all M rows (JVPDense, the test's twin) to 1e-15 of the
// terms' scale, with far fewer multiply-adds at a state near a memory,
// where a few patterns hold the weight.
func (l *HopLin) JVP(dx, out []float64) {
	f := l.f
	if len(l.support) == f.M {
		l.JVPDense(dx, out)
		return
	}
	dxv := blas64.Vector{N: Pixels, Inc: 1, Data: dx}
	var wu float64
	for _, k := range l.support {
		row := blas64.Vector{N: Pixels, Inc: 1, Data: f.X[k*Pixels : (k+1)*Pixels]}
		u := blas64.Dot(row, dxv)
		l.scratch[k] = u
		wu += l.w[k] * u
	}
	clear(out[:Pixels])
	ov := blas64.Vector{N: Pixels, Inc: 1, Data: out}
	for _, k := range l.support {
		if a := f.Beta * l.w[k] * (l.scratch[k] - wu); a != 0 {
			blas64.Axpy(a, blas64.Vector{N: Pixels, Inc: 1, Data: f.X[k*Pixels : (k+1)*Pixels]}, ov)
		}
	}
}

// JVPDense is JVP as products over all M patterns (two matrix–vector
// products).
func (l *HopLin) JVPDense(dx, out []float64) {
	f := l.f
	u := l.scratch
	blas64.Gemv(blas.NoTrans, 1, f.general(), blas64.Vector{N: Pixels, Inc: 1, Data: dx}, 0, blas64.Vector{N: f.M, Inc: 1, Data: u})
	var wu float64
	for k, w := range l.w {
		wu += w * u[k]
	}
	for k, w := range l.w {
		u[k] = f.Beta * w * (u[k] - wu)
	}
	blas64.Gemv(blas.Trans, 1, f.general(), blas64.Vector{N: f.M, Inc: 1, Data: u}, 0, blas64.Vector{N: Pixels, Inc: 1, Data: out})
}

// VJP writes DF(ξ)ᵀ·g into out: the Jacobian is symmetric, so it is the
// JVP (the adjoint identity is tested all the same).
func (l *HopLin) VJP(g, out []float64) { l.JVP(g, out) }

// State is the state the bare model's step was linearised at.
func (l *Lin) State() []float64 { return l.X }

// Next is the step's image of the state.
func (l *Lin) Next() []float64 { return l.Out }
