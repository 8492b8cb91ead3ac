package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"attractorlab/models"
	"attractorlab/sim/mnist"
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

// sampleCopy is the embedded training digits as a set of their own (the
// state spaces kept are by set, so a test's does not reach another's).
func sampleCopy(t *testing.T) *mnist.Set {
	t.Helper()
	train, _, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	c := *train
	return &c
}

// TestStateSpaceWire: a state space crosses to the page and back whole,
// and an answer of the wrong size, with a number that is not finite, or
// not a state space at all is refused with a message saying so.
func TestStateSpaceWire(t *testing.T) {
	set := sampleCopy(t)
	s := (&Memories{Set: set}).StateSpace()
	b, err := EncodeStateSpace(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeStateSpace(b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Mean, s.Mean) || !slices.Equal(got.PC[0], s.PC[0]) || !slices.Equal(got.PC[1], s.PC[1]) ||
		got.Share != s.Share || !slices.Equal(got.Points, s.Points) || got.Source != s.Source || got.Warning != s.Warning {
		t.Fatal("the state space changed on the way")
	}
	if got.Labels != nil {
		t.Fatal("labels crossed: they are the receiver's own")
	}
	for _, c := range []struct {
		name, want string
		edit       func(w *StateSpace)
	}{
		{"a short mean", "have 783, 784 and 784 values, want 784", func(w *StateSpace) { w.Mean = w.Mean[:783] }},
		{"a NaN point", "not a finite number", func(w *StateSpace) { w.Points = append([][2]float64{{math.NaN(), 0}}, w.Points[1:]...) }},
		{"an infinite share", "not a finite number", func(w *StateSpace) { w.Share[1] = math.Inf(1) }},
	} {
		w := *s
		c.edit(&w)
		b, err := EncodeStateSpace(&w)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeStateSpace(b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	if _, err := DecodeStateSpace([]byte("not gob")); err == nil || !strings.HasPrefix(err.Error(), "a state space: ") {
		t.Errorf("garbage: %v", err)
	}
}

// TestStateSpaceFrom: a state space from elsewhere is kept (with the
// set's labels) when it places every stored digit, asked for once; one
// that fails or places too few is replaced by the plane computed here.
func TestStateSpaceFrom(t *testing.T) {
	set := sampleCopy(t)
	m := &Memories{Set: set}
	asked := 0
	far := &StateSpace{Mean: make([]float64, 784), Points: make([][2]float64, set.Len()), Source: "a worker"}
	s := m.StateSpaceFrom(func() (*StateSpace, error) { asked++; return far, nil })
	if s != far || asked != 1 || !slices.Equal(s.Labels, set.Labels) {
		t.Fatalf("got the state space of %q (asked %d times), labels %d", s.Source, asked, len(s.Labels))
	}
	if again := m.StateSpaceFrom(func() (*StateSpace, error) { asked++; return nil, nil }); again != far || asked != 1 || m.StateSpace() != far {
		t.Fatalf("asked again (%d times), or another state space", asked)
	}
	for _, get := range []func() (*StateSpace, error){
		func() (*StateSpace, error) { return nil, fmt.Errorf("every worker is busy") },
		func() (*StateSpace, error) {
			return &StateSpace{Points: make([][2]float64, 3), Source: "a worker"}, nil
		},
	} {
		set := sampleCopy(t)
		s := (&Memories{Set: set}).StateSpaceFrom(get)
		if s.Source != "embedded" || len(s.Points) != set.Len() {
			t.Fatalf("fell back to a state space from %q with %d points", s.Source, len(s.Points))
		}
	}
}
