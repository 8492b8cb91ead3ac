package sim

import (
	"context"
	"fmt"
	"math"
	"sync"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// The state space, drawn flat (docs/maths.md §8, "The state space"): the
// plane of the two principal components of the stored digits (gain
// applied), where every image — a stored digit, a state of a trajectory —
// is a point. The mean digit is its origin.

// StateSpace is the plane of the stored digits' first two principal
// components.
type StateSpace struct {
	Mean   []float64    // the mean stored digit (the origin)
	PC     [2][]float64 // unit vectors, the first with the larger variance
	Share  [2]float64   // the share of the digits' total variance along each
	Points [][2]float64 // the stored digits, projected
	Labels []uint8      // their labels
	// Source says where the plane came from: "embedded", a plane file,
	// or "computed"; Warning, why a kept plane was not used ("" if none).
	Source, Warning string
}

// Project places an image (784 pixels, gain applied) in the plane.
func (s *StateSpace) Project(img []float32) [2]float64 {
	var a, b float64
	pc0, pc1, mean := s.PC[0][:models.Pixels], s.PC[1][:models.Pixels], s.Mean[:models.Pixels]
	for q, v := range img[:models.Pixels] {
		d := float64(v) - mean[q]
		a += d * pc0[q]
		b += d * pc1[q]
	}
	return [2]float64{a, b}
}

// NewStateSpace computes the plane of set's digits (ComputePlane, about a
// second for 10,000 digits) and places them in it. Memories.StateSpace
// reads a kept plane instead.
func NewStateSpace(set *mnist.Set) *StateSpace {
	return ComputePlane(set).Space(set)
}

// ComputePlane computes the plane of set's digits (gain applied): the
// covariance's two leading eigenvectors by power iteration with deflation
// (deterministic: a fixed start, 300 rounds or until a round moves the
// vector by less than 1e-12), each signed so its largest component is
// positive.
func ComputePlane(set *mnist.Set) *Plane {
	n := set.Len()
	x := make([]float64, n*models.Pixels)
	mean := make([]float64, models.Pixels)
	buf := make([]float32, models.Pixels)
	for k := range n {
		for q, v := range set.CleanTo(buf, k, mnist.PixelGain) {
			x[k*models.Pixels+q] = float64(v)
			mean[q] += float64(v) / float64(n)
		}
	}
	for k := range n {
		for q := range models.Pixels {
			x[k*models.Pixels+q] -= mean[q]
		}
	}
	var total float64
	for _, v := range x {
		total += v * v
	}
	p := &Plane{Set: SetHash(set), N: n, Mean: mean}
	for c := range 2 {
		v, lam := leadingComponent(x, n, p.PC[:c])
		p.PC[c] = v
		if total > 0 {
			p.Share[c] = lam / total
		}
	}
	return p
}

// Space places set's digits in the plane: the state space drawn with them.
// set must be the set the plane was computed from (its SetHash).
func (p *Plane) Space(set *mnist.Set) *StateSpace {
	n := set.Len()
	s := &StateSpace{Mean: p.Mean, PC: p.PC, Share: p.Share, Labels: set.Labels}
	s.Points = make([][2]float64, n)
	// Parts of 256 digits: a goroutine's share is worth its start.
	const part = 256
	models.Parallel(context.Background(), (n+part-1)/part, 0, func(_, c int) {
		buf := make([]float32, models.Pixels)
		for k := c * part; k < min(n, (c+1)*part); k++ {
			s.Points[k] = s.Project(set.CleanTo(buf, k, mnist.PixelGain))
		}
		pause() // the page answers between parts (pause_js.go)
	})
	return s
}

// leadingComponent is the unit vector v maximising ‖Xv‖² orthogonal to
// the vectors in not, and ‖Xv‖², for the n×784 centred rows x.
func leadingComponent(x []float64, n int, not [][]float64) ([]float64, float64) {
	const d = models.Pixels
	v := make([]float64, d)
	for q := range v {
		v[q] = 1 + float64(q%7)/7 // a fixed start, not orthogonal to any component in practice
	}
	orth := func(v []float64) {
		for _, u := range not {
			var dot float64
			for q := range v {
				dot += v[q] * u[q]
			}
			for q := range v {
				v[q] -= dot * u[q]
			}
		}
	}
	norm := func(v []float64) float64 {
		var s float64
		for _, a := range v {
			s += a * a
		}
		s = math.Sqrt(s)
		for q := range v {
			v[q] /= s
		}
		return s
	}
	orth(v)
	norm(v)
	xv := make([]float64, n)
	next := make([]float64, d)
	var lam float64
	for range 300 {
		// next = Xᵀ(X v)
		models.Parallel(context.Background(), n, 0, func(_, k int) {
			var s float64
			for q, a := range x[k*d : (k+1)*d] {
				s += a * v[q]
			}
			xv[k] = s
		})
		clear(next)
		for k := range n {
			a := xv[k]
			for q, b := range x[k*d : (k+1)*d] {
				next[q] += a * b
			}
		}
		orth(next)
		lam = norm(next)
		var moved float64
		for q := range v {
			moved += (next[q] - v[q]) * (next[q] - v[q])
			v[q] = next[q]
		}
		if moved < 1e-24 {
			break
		}
	}
	big := 0
	for q := range v {
		if math.Abs(v[q]) > math.Abs(v[big]) {
			big = q
		}
	}
	if v[big] < 0 {
		for q := range v {
			v[q] = -v[q]
		}
	}
	return v, lam
}

// stateSpaces holds each stored set's state space, made once.
var stateSpaces sync.Map // *mnist.Set → *stateSpaceOnce

type stateSpaceOnce struct {
	once sync.Once
	s    *StateSpace
}

// StateSpace is the plane of the stored digits with the digits placed in
// it, made on first use and kept: the plane is read from the one embedded
// with the sample, or from PlaneCache, and computed (about a second) only
// for a set neither holds.
func (m *Memories) StateSpace() *StateSpace { return m.StateSpaceFrom(nil) }

// DigitPath is one test digit's run drawn in the state space.
type DigitPath struct {
	Index  int // test digit
	Label  uint8
	Points [][2]float64 // its states t = 0 … steps, projected
	TStar  int          // its own t* (the step ≥ 1 of least MSE)
}

// PathRecorder records the first digits of a Reproduce run as paths in a
// state space (ReproduceConfig.Visit): the trajectory map from the run
// itself.
type PathRecorder struct {
	space *StateSpace
	paths []DigitPath
	mse   [][]float64
}

// NewPathRecorder records digits 0 … n−1 of data's test set, steps steps
// each (the model's own limit applied, as Reproduce applies it).
func NewPathRecorder(data *mnist.Data, m Model, n, steps int, s *StateSpace) *PathRecorder {
	if mx := m.Info().MaxSteps; mx > 0 {
		steps = min(steps, mx)
	}
	n = min(n, data.Test.Len())
	r := &PathRecorder{space: s, paths: make([]DigitPath, n), mse: make([][]float64, n)}
	for k := range r.paths {
		r.paths[k] = DigitPath{Index: k, Label: data.Test.Labels[k], Points: make([][2]float64, steps+1)}
		r.mse[k] = make([]float64, steps+1)
	}
	return r
}

// Visit is ReproduceConfig.Visit: it keeps the states of the recorded
// digits (safe from the workers: each (t, b) is its own slot).
func (r *PathRecorder) Visit(t, b int, pred []float32, m *Measures) {
	if b >= len(r.paths) || t >= len(r.paths[b].Points) {
		return
	}
	r.paths[b].Points[t] = r.space.Project(pred)
	r.mse[b][t] = m.MSE
}

// Paths are the recorded paths, each with its own t*, once the run is
// over.
func (r *PathRecorder) Paths() []DigitPath {
	for b := range r.paths {
		r.paths[b].TStar, _ = BestStep(len(r.mse[b]), func(t int) float64 { return r.mse[b][t] })
	}
	return r.paths
}

// MapPaths runs m on the first n test digits of data, corrupted as
// Reproduce corrupts them, for steps steps, and projects every state into
// s: what `reproduce` draws as trajectory-map.png.
func MapPaths(ctx context.Context, data *mnist.Data, m Model, c Corruption, n, steps int, s *StateSpace) ([]DigitPath, error) {
	info := m.Info()
	if info.MaxSteps > 0 {
		steps = min(steps, info.MaxSteps)
	}
	pt, err := models.NewPatches(info.MaskGrid())
	if err != nil {
		return nil, err
	}
	n = min(n, data.Test.Len())
	inputs := make([]*Corrupted, n)
	out := make([]DigitPath, n)
	mse := make([][]float64, n)
	for k := range inputs {
		inputs[k] = c.Apply(data.Test.Clean(k, mnist.PixelGain), pt, k)
		out[k] = DigitPath{Index: k, Label: data.Test.Labels[k], Points: make([][2]float64, steps+1)}
		mse[k] = make([]float64, steps+1)
	}
	err = Run(ctx, m, inputs, steps, models.NewCrew(0), func(t, b int, pred []float32, _ float64) {
		out[b].Points[t] = s.Project(clamped(pred))
		mse[b][t], _, _ = MSE(pred, inputs[b].Clean, inputs[b].Pixel)
	})
	for b := range out {
		out[b].TStar, _ = BestStep(steps+1, func(t int) float64 { return mse[b][t] })
	}
	return out, err
}

// A StateSpaceRemote places a data set's stored digits in their plane
// elsewhere (the page's Web Workers, whose data sets are the page's own):
// the projection of 10,000 digits held the page's thread for tasks of up
// to 50 ms beside the State space window's first paint.
type StateSpaceRemote interface {
	// StateSpace is the state space of the stored digits of dataset
	// (Settings.Dataset's name), or an error at once when nothing is free
	// to compute it.
	StateSpace(ctx context.Context, dataset string) (*StateSpace, error)
}

// StateSpaceFrom is StateSpace, taking the plane and its points from get
// (a StateSpaceRemote's answer; nil: none) where they are not made yet:
// get's state space is kept when it places as many digits as m stores
// (its labels are m's), and m computes its own when get fails or does not.
func (m *Memories) StateSpaceFrom(get func() (*StateSpace, error)) *StateSpace {
	v, _ := stateSpaces.LoadOrStore(m.Set, &stateSpaceOnce{})
	o := v.(*stateSpaceOnce)
	o.once.Do(func() {
		if get == nil {
			get = func() (*StateSpace, error) { return nil, nil }
		}
		if s, err := get(); err == nil && s != nil && len(s.Points) == m.Set.Len() {
			s.Labels = m.Set.Labels
			o.s = s
			return
		}
		dir, _ := PlaneCache()
		o.s = StateSpaceOf(m.Set, dir)
	})
	return o.s
}

// stateSpaceWire is a state space's wire form (its labels are the
// receiver's own set's).
type stateSpaceWire struct {
	Mean            []float64
	PC              [2][]float64
	Share           [2]float64
	Points          [][2]float64
	Source, Warning string
}

// EncodeStateSpace is s's wire form, without its labels.
func EncodeStateSpace(s *StateSpace) ([]byte, error) {
	return EncodeWire(stateSpaceWire{Mean: s.Mean, PC: s.PC, Share: s.Share, Points: s.Points, Source: s.Source, Warning: s.Warning})
}

// DecodeStateSpace reads what EncodeStateSpace wrote, checking the
// plane's sizes and that every number is finite.
func DecodeStateSpace(b []byte) (*StateSpace, error) {
	w, err := DecodeWire[stateSpaceWire](b, "a state space")
	if err != nil {
		return nil, err
	}
	if len(w.Mean) != models.Pixels || len(w.PC[0]) != models.Pixels || len(w.PC[1]) != models.Pixels {
		return nil, fmt.Errorf("a state space: its mean and components have %d, %d and %d values, want %d each",
			len(w.Mean), len(w.PC[0]), len(w.PC[1]), models.Pixels)
	}
	finite := func(v ...float64) bool {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		}
		return true
	}
	ok := finite(w.Mean...) && finite(w.PC[0]...) && finite(w.PC[1]...) && finite(w.Share[:]...)
	for _, p := range w.Points {
		ok = ok && finite(p[:]...)
	}
	if !ok {
		return nil, fmt.Errorf("a state space: a value is not a finite number")
	}
	return &StateSpace{Mean: w.Mean, PC: w.PC, Share: w.Share, Points: w.Points, Source: w.Source, Warning: w.Warning}, nil
}
