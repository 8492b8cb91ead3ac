package sim

import (
	"context"
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
}

// Project places an image (784 pixels, gain applied) in the plane.
func (s *StateSpace) Project(img []float32) [2]float64 {
	var p [2]float64
	for c := range 2 {
		for q, v := range img[:models.Pixels] {
			p[c] += (float64(v) - s.Mean[q]) * s.PC[c][q]
		}
	}
	return p
}

// NewStateSpace computes the plane of set's digits (gain applied): the
// covariance's two leading eigenvectors by power iteration with deflation
// (deterministic: a fixed start, 300 rounds or until a round moves the
// vector by less than 1e-12), each signed so its largest component is
// positive.
func NewStateSpace(set *mnist.Set) *StateSpace {
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
	s := &StateSpace{Mean: mean, Labels: set.Labels}
	for c := range 2 {
		v, lam := leadingComponent(x, n, s.PC[:c])
		s.PC[c] = v
		if total > 0 {
			s.Share[c] = lam / total
		}
	}
	s.Points = make([][2]float64, n)
	models.Parallel(context.Background(), n, 0, func(_, k int) {
		row := x[k*models.Pixels : (k+1)*models.Pixels]
		for c := range 2 {
			var d float64
			for q, v := range row {
				d += v * s.PC[c][q]
			}
			s.Points[k][c] = d
		}
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

// stateSpaces holds each stored set's plane, computed once.
var stateSpaces sync.Map // *mnist.Set → *stateSpaceOnce

type stateSpaceOnce struct {
	once sync.Once
	s    *StateSpace
}

// StateSpace is the plane of the stored digits, computed on first use
// (about a second) and kept.
func (m *Memories) StateSpace() *StateSpace {
	v, _ := stateSpaces.LoadOrStore(m.Set, &stateSpaceOnce{})
	o := v.(*stateSpaceOnce)
	o.once.Do(func() { o.s = NewStateSpace(m.Set) })
	return o.s
}

// DigitPath is one test digit's run drawn in the state space.
type DigitPath struct {
	Index  int // test digit
	Label  uint8
	Points [][2]float64 // its states t = 0 … steps, projected
	TStar  int          // its own t* (the step ≥ 1 of least MSE)
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
