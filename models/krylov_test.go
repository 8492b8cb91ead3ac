package models

import (
	"context"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// denseOp is A as an Operator.
func denseOp(a *mat.Dense) Operator {
	n, _ := a.Dims()
	return Operator{N: n, Apply: func(x, y []float64) {
		mat.NewVecDense(n, y).MulVec(a, mat.NewVecDense(n, x))
	}}
}

// TestLeadingEigsKnownSpectrum: A = S B S⁻¹ with B block diagonal (2×2
// rotation-scalings for complex pairs, and a repeated modulus: 0.9 and
// −0.9, and a pair of modulus 0.9) has a known spectrum; the Arnoldi
// iteration recovers its leading eigenvalues to 1e-8.
func TestLeadingEigsKnownSpectrum(t *testing.T) {
	const n = 300
	rng := rand.New(rand.NewPCG(1, 2))
	b := mat.NewDense(n, n, nil)
	var want []complex128
	pair := func(k int, r, th float64) {
		b.Set(k, k, r*math.Cos(th))
		b.Set(k, k+1, -r*math.Sin(th))
		b.Set(k+1, k, r*math.Sin(th))
		b.Set(k+1, k+1, r*math.Cos(th))
		want = append(want, cmplx.Rect(r, th), cmplx.Rect(r, -th))
	}
	pair(0, 1.3, 0.7)
	b.Set(2, 2, 1.1)
	want = append(want, 1.1)
	pair(3, 0.9, 2.1)
	b.Set(5, 5, 0.9)
	b.Set(6, 6, -0.9)
	want = append(want, 0.9, -0.9)
	pair(7, 0.6, 0.2)
	for k := 9; k < n; k++ {
		v := 0.4 * (rng.Float64()*2 - 1)
		b.Set(k, k, v)
		want = append(want, complex(v, 0))
	}
	s := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s.Set(i, j, rng.NormFloat64()/math.Sqrt(n))
		}
		s.Set(i, i, s.At(i, i)+1)
	}
	var si, a mat.Dense
	if err := si.Inverse(s); err != nil {
		t.Fatal(err)
	}
	a.Product(s, b, &si)
	w := make([]Eig, len(want))
	for k, v := range want {
		w[k] = Eig{Value: v}
	}
	SortEigs(w)
	got, err := LeadingEigs(context.Background(), denseOp(&a), 10, EigOptions{Tol: 1e-11, Step: 20, Max: n, Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := range got {
		if d := cmplx.Abs(got[k].Value - w[k].Value); d > 1e-8 {
			t.Errorf("eigenvalue %d: %v, want %v (|Δ| %g)", k, got[k].Value, w[k].Value, d)
		}
	}
	// Pairs come together, the positive imaginary part first.
	if imag(got[0].Value) <= 0 || got[1].Value != cmplx.Conj(got[0].Value) {
		t.Errorf("the leading pair: %v, %v", got[0].Value, got[1].Value)
	}
}

// TestLeadingSingularAgainstSVD: the Lanczos iteration on AᵀA gives gonum's
// SVD's leading singular values to 1e-8 and their right vectors (up to
// sign) to 1e-6.
func TestLeadingSingularAgainstSVD(t *testing.T) {
	const n = 160
	rng := rand.New(rand.NewPCG(4, 4))
	a := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a.Set(i, j, rng.NormFloat64()/math.Sqrt(n)*(1+3*math.Exp(-float64(j)/4)))
		}
	}
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDFull) {
		t.Fatal("svd")
	}
	vals := svd.Values(nil)
	var v mat.Dense
	svd.VTo(&v)
	got, err := LeadingSingular(context.Background(), denseOp(a), denseOp(mat.DenseCopyOf(a.T())), 3, EigOptions{Tol: 1e-13, Step: 20, Max: n, Seed: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range got {
		if math.Abs(s.Value-vals[k]) > 1e-8*vals[0] {
			t.Errorf("σ_%d = %.12g, SVD %.12g", k, s.Value, vals[k])
		}
		var c float64
		for i := 0; i < n; i++ {
			c += s.V[i] * v.At(i, k)
		}
		if math.Abs(math.Abs(c)-1) > 1e-6 {
			t.Errorf("v_%d: |⟨v, v_SVD⟩| = %.9f", k, math.Abs(c))
		}
	}
	if !sort.SliceIsSorted(got, func(i, j int) bool { return got[i].Value > got[j].Value }) {
		t.Errorf("not in descending order: %v %v %v", got[0].Value, got[1].Value, got[2].Value)
	}
}

// TestLeadingEigsRefuses: k out of range, and cancellation.
func TestLeadingEigsRefuses(t *testing.T) {
	op := denseOp(mat.NewDense(3, 3, []float64{1, 0, 0, 0, 2, 0, 0, 0, 3}))
	if _, err := LeadingEigs(context.Background(), op, 4, DefaultEigOptions, nil); err == nil {
		t.Fatal("k = 4 of 3 accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := LeadingEigs(ctx, op, 1, DefaultEigOptions, nil); err != context.Canceled {
		t.Fatalf("cancelled: %v", err)
	}
	got, err := LeadingEigs(context.Background(), op, 2, DefaultEigOptions, nil)
	if err != nil || got[0].Value != 3 || cmplx.Abs(got[1].Value-2) > 1e-12 {
		t.Fatalf("diag(1,2,3): %v %v", got, err)
	}
}

// TestLeadingEigsLowRank: an operator of rank 3 (and the zero operator)
// makes the Krylov space invariant after a few products; the iteration
// goes on from fresh directions and returns all the values asked: the 3
// nonzero eigenvalues, then zeros.
func TestLeadingEigsLowRank(t *testing.T) {
	const n = 120
	rng := rand.New(rand.NewPCG(9, 9))
	u, v := mat.NewDense(n, 3, nil), mat.NewDense(3, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < 3; j++ {
			u.Set(i, j, rng.NormFloat64())
			v.Set(j, i, rng.NormFloat64())
		}
	}
	var a mat.Dense
	a.Mul(u, v)
	var small mat.Dense
	small.Mul(v, u) // the nonzero eigenvalues of uv are those of vu
	var eg mat.Eigen
	eg.Factorize(&small, mat.EigenNone)
	want := make([]Eig, 3)
	for k, x := range eg.Values(nil) {
		want[k] = Eig{Value: x}
	}
	SortEigs(want)
	got, err := LeadingEigs(context.Background(), denseOp(&a), 10, DefaultEigOptions, nil)
	if err != nil || len(got) != 10 {
		t.Fatalf("%d values, %v", len(got), err)
	}
	scale := cmplx.Abs(want[0].Value)
	for k := range got {
		w := complex128(0)
		if k < 3 {
			w = want[k].Value
		}
		if d := cmplx.Abs(got[k].Value - w); d > 1e-8*scale {
			t.Errorf("eigenvalue %d: %v, want %v", k, got[k].Value, w)
		}
	}
	zero, err := LeadingEigs(context.Background(), denseOp(mat.NewDense(n, n, nil)), 10, DefaultEigOptions, nil)
	if err != nil || len(zero) != 10 || zero[0].Value != 0 {
		t.Fatalf("the zero operator: %v, %v", zero, err)
	}
}

// TestLeadingSingularZero: the singular values of the zero map are found
// at once (no residual to shrink), not after every product allowed.
func TestLeadingSingularZero(t *testing.T) {
	z := denseOp(mat.NewDense(50, 50, nil))
	calls := 0
	got, err := LeadingSingular(context.Background(), z, z, 2, DefaultEigOptions, func(int) { calls++ })
	if err != nil || got[0].Value != 0 || calls > 2*DefaultEigOptions.Step {
		t.Fatalf("%v, %v after %d products", got, err, calls)
	}
}
