package sim

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"attractorlab/models"
)

// TestLeadingComponentsMatchEigen: power iteration with deflation finds
// the covariance's two leading eigenvectors and values that gonum's
// symmetric eigendecomposition (the naive twin) finds, on random data with
// a clear spectrum.
func TestLeadingComponentsMatchEigen(t *testing.T) {
	const n, d = 400, models.Pixels
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, n*d)
	for k := range n {
		a, b := 3*rng.NormFloat64(), 1.5*rng.NormFloat64()
		for q := range d {
			x[k*d+q] = a*math.Sin(float64(q)/40) + b*math.Cos(float64(q)/13) + 0.1*rng.NormFloat64()
		}
	}
	// Centre the columns.
	for q := range d {
		var m float64
		for k := range n {
			m += x[k*d+q] / n
		}
		for k := range n {
			x[k*d+q] -= m
		}
	}
	v0, l0 := leadingComponent(x, n, nil)
	v1, l1 := leadingComponent(x, n, [][]float64{v0})
	X := mat.NewDense(n, d, x)
	var cov mat.SymDense
	cov.SymOuterK(1, X.T())
	var eig mat.EigenSym
	if !eig.Factorize(&cov, true) {
		t.Fatal("no eigendecomposition")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	for c, got := range [][]float64{v0, v1} {
		want := mat.Col(nil, d-1-c, &vecs)
		var dot float64
		for q := range got {
			dot += got[q] * want[q]
		}
		if math.Abs(math.Abs(dot)-1) > 1e-6 {
			t.Fatalf("component %d: |cos| %g with the eigenvector", c, math.Abs(dot))
		}
	}
	if math.Abs(l0-vals[d-1]) > 1e-6*vals[d-1] || math.Abs(l1-vals[d-2]) > 1e-6*vals[d-2] {
		t.Fatalf("variances %g, %g; eigenvalues %g, %g", l0, l1, vals[d-1], vals[d-2])
	}
}

// TestStateSpace: on the stored digits the two components are orthonormal,
// the mean digit sits at the origin, a stored digit projects where its
// point is, and the points' spread along each axis is its variance share.
func TestStateSpace(t *testing.T) {
	data, mem, _ := benchData(t)
	s := mem.StateSpace()
	if s != mem.StateSpace() {
		t.Fatal("the plane was computed twice")
	}
	var d00, d11, d01 float64
	for q := range s.PC[0] {
		d00 += s.PC[0][q] * s.PC[0][q]
		d11 += s.PC[1][q] * s.PC[1][q]
		d01 += s.PC[0][q] * s.PC[1][q]
	}
	if math.Abs(d00-1) > 1e-9 || math.Abs(d11-1) > 1e-9 || math.Abs(d01) > 1e-9 {
		t.Fatalf("components: |pc0|² %g, |pc1|² %g, pc0·pc1 %g", d00, d11, d01)
	}
	if o := s.Project(mem.Mean); math.Hypot(o[0], o[1]) > 1e-4 {
		t.Fatalf("the mean digit at %v", o)
	}
	p := s.Project(data.Train.Clean(17, 2))
	if math.Abs(p[0]-s.Points[17][0]) > 1e-4 || math.Abs(p[1]-s.Points[17][1]) > 1e-4 {
		t.Fatalf("digit 17 projects to %v, its point is %v", p, s.Points[17])
	}
	if !(s.Share[0] > s.Share[1] && s.Share[1] > 0 && s.Share[0]+s.Share[1] < 1) {
		t.Fatalf("variance shares %v", s.Share)
	}
	// docs/maths.md §8 gives the embedded digits' shares.
	if math.Abs(s.Share[0]-0.098) > 0.0005 || math.Abs(s.Share[1]-0.071) > 0.0005 {
		t.Fatalf("variance shares %.4f, %.4f; docs/maths.md says 9.8%% and 7.1%%", s.Share[0], s.Share[1])
	}
}
