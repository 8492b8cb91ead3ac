package models

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Operator is a linear map of R^n given by its products: Apply writes
// A·x into y (x and y never alias).
type Operator struct {
	N     int
	Apply func(x, y []float64)
}

// Eig is a Ritz pair's value and how well it has converged: the residual
// ‖A v − λ v‖ of its unit Ritz vector v (the Krylov bound |h_{m+1,m} y_m|).
type Eig struct {
	Value    complex128
	Residual float64
}

// EigOptions bound the Arnoldi iteration: the Krylov dimension grows by
// Step or by half, whichever is more, until the wanted values' residuals
// are ≤ Tol·max(|λ_1|, 1e-12) or the dimension reaches Max (≤ N). (Each
// check is a dense eigendecomposition of the m × m Hessenberg matrix, O(m³):
// grown by a fixed step, the checks of a slowly converging spectrum, such
// as the recycled block's cluster near 1, cost more than its products.)
type EigOptions struct {
	Tol       float64
	Step, Max int
	Seed      uint64
}

// DefaultEigOptions: residuals 1e-9 relative to the spectral radius,
// at most 400 products.
var DefaultEigOptions = EigOptions{Tol: 1e-9, Step: 20, Max: 400, Seed: 1}

// ErrNotConverged says the iteration reached its largest Krylov dimension
// before the wanted values met the tolerance; the values returned are the
// best found, with their residuals.
var ErrNotConverged = errors.New("the Arnoldi iteration did not converge")

// LeadingEigs returns the k eigenvalues of A largest in modulus (a complex
// pair adjacent, the one with positive imaginary part first; ties in
// modulus by real part, then imaginary part), by the Arnoldi iteration
// with full reorthogonalisation from a random start: A is only applied,
// never formed. progress, when not nil, is told of each product.
func LeadingEigs(ctx context.Context, a Operator, k int, opt EigOptions, progress func(done int)) ([]Eig, error) {
	if k < 1 || k > a.N {
		return nil, fmt.Errorf("eigenvalues: k = %d out of range (1 … %d)", k, a.N)
	}
	maxM := min(opt.Max, a.N)
	if maxM < k {
		return nil, fmt.Errorf("eigenvalues: at most %d products for %d values", maxM, k)
	}
	ar := newArnoldi(a, maxM, opt.Seed)
	var eigs []Eig
	for m := min(max(opt.Step, 2*k), maxM); ; m = min(max(m+opt.Step, m*3/2), maxM) {
		if err := ar.extend(ctx, m, progress); err != nil {
			return nil, err
		}
		if ar.m < m { // an invariant subspace: the Ritz values are exact
			m = ar.m
		}
		var err error
		eigs, err = ar.ritz(min(k, ar.m))
		if err != nil {
			return nil, err
		}
		scale := max(cmplx.Abs(eigs[0].Value), 1e-12)
		done := true
		for _, e := range eigs {
			if e.Residual > opt.Tol*scale {
				done = false
			}
		}
		if done || ar.m < m || ar.broke {
			return eigs, nil
		}
		if m == maxM {
			return eigs, ErrNotConverged
		}
	}
}

// arnoldi is an Arnoldi factorisation A V_m = V_{m+1} H.
type arnoldi struct {
	a     Operator
	v     [][]float64 // orthonormal basis
	h     [][]float64 // h[j][i]: column j, row i (up to j+1)
	m     int
	broke bool // V spans the whole space
	rng   *rand.Rand
}

func newArnoldi(a Operator, maxM int, seed uint64) *arnoldi {
	rng := rand.New(rand.NewPCG(seed, 0x4e1))
	v0 := make([]float64, a.N)
	for i := range v0 {
		v0[i] = rng.NormFloat64()
	}
	scal(v0, 1/nrm2(v0))
	return &arnoldi{a: a, v: [][]float64{v0}, rng: rng}
}

// extend grows the factorisation to m columns.
func (ar *arnoldi) extend(ctx context.Context, m int, progress func(int)) error {
	for ar.m < m && !ar.broke {
		if err := ctx.Err(); err != nil {
			return err
		}
		j := ar.m
		w := make([]float64, ar.a.N)
		ar.a.Apply(ar.v[j], w)
		if progress != nil {
			progress(j + 1)
		}
		h := make([]float64, j+2)
		// Classical Gram–Schmidt twice (full reorthogonalisation).
		for pass := 0; pass < 2; pass++ {
			for i := 0; i <= j; i++ {
				c := dotf(ar.v[i], w)
				h[i] += c
				axpy(w, -c, ar.v[i])
			}
		}
		beta := nrm2(w)
		h[j+1] = beta
		ar.h = append(ar.h, h)
		ar.m++
		if ar.m == ar.a.N {
			ar.broke = true // the whole space: the Ritz values are the spectrum
			return nil
		}
		if beta <= 1e-13*max(1, maxAbs(h[:j+1])) {
			// An invariant subspace (an operator of low rank, or 0 at a
			// Hopfield memory): its Ritz values are exact; the search goes
			// on from a fresh direction orthogonal to it, with a zero
			// below the diagonal, so H stays block triangular.
			h[j+1] = 0
			w = ar.fresh()
		} else {
			scal(w, 1/beta)
		}
		ar.v = append(ar.v, w)
	}
	return nil
}

// fresh is a random unit vector orthogonal to the basis.
func (ar *arnoldi) fresh() []float64 {
	for {
		w := make([]float64, ar.a.N)
		for i := range w {
			w[i] = ar.rng.NormFloat64()
		}
		for pass := 0; pass < 2; pass++ {
			for _, v := range ar.v {
				axpy(w, -dotf(v, w), v)
			}
		}
		if n := nrm2(w); n > 1e-8 {
			scal(w, 1/n)
			return w
		}
	}
}

// ritz returns the k Ritz values largest in modulus of H_m with residuals.
func (ar *arnoldi) ritz(k int) ([]Eig, error) {
	m := ar.m
	hm := mat.NewDense(m, m, nil)
	for j := 0; j < m; j++ {
		for i := 0; i <= min(j+1, m-1); i++ {
			hm.Set(i, j, ar.h[j][i])
		}
	}
	var eg mat.Eigen
	if !eg.Factorize(hm, mat.EigenRight) {
		return nil, errors.New("eigenvalues: the Hessenberg matrix's eigendecomposition failed")
	}
	vals := eg.Values(nil)
	var vecs mat.CDense
	eg.VectorsTo(&vecs)
	beta := 0.0
	if !ar.broke {
		beta = ar.h[m-1][m]
	}
	out := make([]Eig, m)
	for c := 0; c < m; c++ {
		var ss float64
		for i := 0; i < m; i++ {
			z := vecs.At(i, c)
			ss += real(z)*real(z) + imag(z)*imag(z)
		}
		out[c] = Eig{Value: vals[c], Residual: beta * cmplx.Abs(vecs.At(m-1, c)) / math.Sqrt(ss)}
	}
	SortEigs(out)
	return out[:k], nil
}

// SortEigs orders eigenvalues by modulus, largest first; equal moduli
// (within 1e-12 relative) by real part, then imaginary part, descending.
func SortEigs(e []Eig) {
	sort.SliceStable(e, func(a, b int) bool {
		ma, mb := cmplx.Abs(e[a].Value), cmplx.Abs(e[b].Value)
		if math.Abs(ma-mb) > 1e-12*max(ma, mb) {
			return ma > mb
		}
		if real(e[a].Value) != real(e[b].Value) {
			return real(e[a].Value) > real(e[b].Value)
		}
		return imag(e[a].Value) > imag(e[b].Value)
	})
}

// Singular is a singular triplet's value and right vector (unit).
type Singular struct {
	Value    float64
	V        []float64
	Residual float64 // ‖AᵀA v − σ² v‖ / σ₁² (σ₁ the largest)
}

// LeadingSingular returns the k largest singular values of A with their
// right singular vectors, by the Lanczos iteration on AᵀA (A given by its
// products a and its transpose's at), with full reorthogonalisation.
// Residuals are relative to the largest σ².
func LeadingSingular(ctx context.Context, a, at Operator, k int, opt EigOptions, progress func(done int)) ([]Singular, error) {
	if a.N != at.N {
		return nil, fmt.Errorf("singular values: the map is %d-dimensional, its transpose %d", a.N, at.N)
	}
	tmp := make([]float64, a.N)
	ata := Operator{N: a.N, Apply: func(x, y []float64) {
		a.Apply(x, tmp)
		at.Apply(tmp, y)
	}}
	if k < 1 || k > a.N {
		return nil, fmt.Errorf("singular values: k = %d out of range (1 … %d)", k, a.N)
	}
	maxM := min(opt.Max, a.N)
	ar := newArnoldi(ata, maxM, opt.Seed)
	for m := min(max(opt.Step, 2*k), maxM); ; m = min(max(m+opt.Step, m*3/2), maxM) {
		if err := ar.extend(ctx, m, progress); err != nil {
			return nil, err
		}
		out, err := ar.symRitz(min(k, ar.m))
		if err != nil {
			return nil, err
		}
		done := true
		for _, s := range out {
			if s.Residual > opt.Tol {
				done = false
			}
		}
		if done || ar.broke || ar.m < m {
			return out, nil
		}
		if m == maxM {
			return out, ErrNotConverged
		}
	}
}

// symRitz treats H as the symmetric tridiagonal matrix of a Lanczos
// factorisation (its symmetric part: the reorthogonalised Arnoldi of a
// symmetric map) and returns its k largest Ritz pairs as singular triplets.
func (ar *arnoldi) symRitz(k int) ([]Singular, error) {
	m := ar.m
	hs := mat.NewSymDense(m, nil)
	for j := 0; j < m; j++ {
		for i := 0; i <= j; i++ {
			hs.SetSym(i, j, (ar.h[j][i]+hij(ar.h, j, i))/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(hs, true) {
		return nil, errors.New("singular values: the tridiagonal eigendecomposition failed")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	beta := 0.0
	if !ar.broke {
		beta = ar.h[m-1][m]
	}
	out := make([]Singular, 0, k)
	// Residuals relative to the largest σ²: a singular value far below
	// it (a zero one, where the map is 0) needs no more accuracy than
	// that.
	top := max(vals[m-1], 0)
	for c := m - 1; c >= m-k; c-- { // ascending order: the largest last
		lam := max(vals[c], 0)
		v := make([]float64, ar.a.N)
		for i := 0; i < m; i++ {
			axpy(v, vecs.At(i, c), ar.v[i])
		}
		scal(v, 1/nrm2(v))
		res := 0.0
		if r := beta * math.Abs(vecs.At(m-1, c)); r > 0 {
			res = math.Inf(1)
			if top > 0 {
				res = r / top
			}
		}
		out = append(out, Singular{Value: math.Sqrt(lam), V: v, Residual: res})
	}
	return out, nil
}

// hij is H[i][j] for i ≤ j+1, else 0 (column j, row i).
func hij(h [][]float64, i, j int) float64 {
	if i > j+1 || j >= len(h) {
		return 0
	}
	return h[j][i]
}

// dotf and axpy are gonum's (unrolled assembly on amd64): the Arnoldi
// basis's reorthogonalisation is most of a slowly converging spectrum's
// work besides the products.
func dotf(a, b []float64) float64 {
	return blas64.Dot(blas64.Vector{N: len(a), Inc: 1, Data: a}, blas64.Vector{N: len(a), Inc: 1, Data: b[:len(a)]})
}

func nrm2(a []float64) float64 { return math.Sqrt(dotf(a, a)) }

func axpy(y []float64, c float64, x []float64) {
	blas64.Axpy(c, blas64.Vector{N: len(x), Inc: 1, Data: x}, blas64.Vector{N: len(x), Inc: 1, Data: y[:len(x)]})
}

func scal(x []float64, c float64) {
	for i := range x {
		x[i] *= c
	}
}

func maxAbs(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}
