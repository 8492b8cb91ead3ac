// Package dynamics studies why a memory is transient: the local dynamics
// of a model's step near its trajectory (docs/maths.md §11). At a state
// X(t) it gives the leading eigenvalues of the one-step Jacobian
// ∂X(t+1)/∂X(t) (the spectral radius, the unstable directions), the step's
// size, and from t the k-step Jacobian's leading singular vectors: the
// perturbations that grow most by t + k (the escape direction), with the
// linear prediction of a push along them.
package dynamics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"attractorlab/models"
	"attractorlab/sim"
)

// Eigs is how many leading eigenvalues a spectrum holds.
const Eigs = 10

// MaxK bounds the escape's horizon k: its chain keeps k linearisations
// (5 MB each for the bare model).
const MaxK = 200

// KRange is the horizon's allowed range.
var KRange = sim.Range{Name: "the escape's horizon k", Flag: "k", Min: 1, Max: MaxK, Default: 10, Integer: true}

// EpsRange is a push's size ε, relative to the state's norm √N·(mean
// token norm = 1): from the linear regime to far outside it.
var EpsRange = sim.Range{Name: "the push's size ε", Flag: "eps", Min: 1e-6, Max: 1, Default: 1e-3}

// ErrNoMap says a model has no map for this analysis.
var ErrNoMap = errors.New("no map to linearise")

// Linear is a model's step linearised at a state: its Jacobian-vector
// products and their transposes, the state and the step's image of it.
type Linear interface {
	JVP(dx, out []float64)
	VJP(g, out []float64)
	State() []float64
	Next() []float64
}

// Stepper is a model's step X(t) → X(t+1) in float64.
type Stepper interface {
	Size() int
	Linearise(x []float64) Linear
}

type bsaStepper struct{ f *models.Map64 }

func (s bsaStepper) Size() int                    { return s.f.Size() }
func (s bsaStepper) Linearise(x []float64) Linear { return s.f.At(x) }

type hopStepper struct{ f *models.HopfieldMap64 }

func (s hopStepper) Size() int                    { return s.f.Size() }
func (s hopStepper) Linearise(x []float64) Linear { return s.f.At(x) }

type blockStepper struct{ f *models.BlockMap64 }

func (s blockStepper) Size() int                    { return s.f.Size() }
func (s blockStepper) Linearise(x []float64) Linear { return s.f.At(x) }

// System is a model this analysis linearises: its step in float64, how
// its states are recorded, and how a direction in its state space looks.
// Making one is cheap (the window asks for one at every snapshot); the
// float64 step (19.7 MB of couplings, 63 MB of Hopfield patterns) is built
// on first use of Stepper, off the window's goroutine.
type System struct {
	Name    string
	Patches *models.Patches // the grid a mask is drawn on
	// About says what the state is and what the step's form does to its
	// spectrum (a sentence or two for the view).
	About   string
	model   sim.Model
	bsa     *sim.BSAModel                // the bare model (nil for the others)
	block   *models.Transformer[float32] // the recycled block's network for the task (nil for the others)
	build   func() Stepper
	once    sync.Once
	stepper Stepper
}

// Stepper is the system's step in float64, built on first use.
func (s *System) Stepper() Stepper {
	s.once.Do(func() { s.stepper = s.build() })
	return s.stepper
}

const (
	aboutBSA = "The state is the tokens' spins (N × d numbers). The renormalisation keeps every state at mean token norm 1, so the step maps every direction into that surface: " +
		"its normal gets the eigenvalue 0 (not among the 10 shown), and the overall scale adds no spurious 1."
	aboutHopfield = "The state is the 784 pixels. The Jacobian β Xᵀ(diag w − w wᵀ)X is symmetric and positive semi-definite: every eigenvalue is real and at least 0, " +
		"and at a stored digit (w one-hot) it vanishes — a super-stable memory."
	aboutBlock = "The state is the 49 tokens × 64 components of the residual stream, with no renormalisation. The layer norm in front of each branch ignores a token's length, " +
		"so as the stream grows the step tends to the identity plus a bounded push: the eigenvalues crowd towards 1 from either side — a drift that slows relative to the state, not a fixed point — and the iteration may not converge there."
)

// SystemOf returns the system of m for a task's corruption (the recycled
// block runs the network trained for it), or an error naming why m has no
// map this analysis linearises: the ViT runs five different layers (no map
// to iterate), the classical Hopfield network flips ±1 spins (a discrete
// map has no Jacobian).
func SystemOf(m sim.Model, task sim.Kind) (*System, error) {
	info := m.Info()
	pt, err := models.NewPatches(info.MaskGrid())
	if err != nil {
		return nil, err
	}
	switch v := m.(type) {
	case *sim.BSAModel:
		return &System{Name: info.Name, Patches: pt, model: m, bsa: v, About: aboutBSA, build: func() Stepper { return bsaStepper{v.M.Map64(v.Dyn)} }}, nil
	case *sim.HopfieldModel:
		return &System{Name: info.Name, Patches: pt, model: m, About: aboutHopfield, build: func() Stepper { return hopStepper{v.Net().Map64(v.Beta)} }}, nil
	case *sim.TransformerModel:
		if net := v.Net(task); net != nil && net.Cfg.Depth == 1 {
			return &System{Name: info.Name, Patches: pt, model: m, block: net, About: aboutBlock, build: func() Stepper {
				f, err := models.BlockMap(net)
				if err != nil {
					panic(err) // depth 1 was checked above
				}
				return blockStepper{f}
			}}, nil
		}
	}
	switch {
	case info.MaxSteps > 0:
		return nil, fmt.Errorf("%s: %w: its %d layers are different maps, applied once each", info.Name, ErrNoMap, info.MaxSteps)
	case info.Patch == 0 && info.Patterns == 0:
		return nil, fmt.Errorf("%s: %w: its state is ±1 spins and its step a discrete flip, which has no Jacobian", info.Name, ErrNoMap)
	default:
		return nil, fmt.Errorf("%s: %w in this version (the bare self-attention models, the recycled block and the modern Hopfield network are)", info.Name, ErrNoMap)
	}
}

// Trajectory records the system's states X(0) … X(steps) on in, in
// float64: the bare model's by the per-image engine (the window's), the
// block's by the batched network the window runs (49 tokens × 64), the
// Hopfield network's pixel states as its trajectory steps them.
func (s *System) Trajectory(ctx context.Context, in *sim.Corrupted, steps int) ([][]float64, error) {
	st, _, err := s.Run(ctx, in, steps)
	return st, err
}

// Run is Trajectory with the picture the window shows at each step (at
// t = 0 the input itself, which the block's embedded state does not
// decode to).
func (s *System) Run(ctx context.Context, in *sim.Corrupted, steps int) ([][]float64, [][]float32, error) {
	var out [][]float64
	var imgs [][]float32
	if s.bsa != nil {
		st := sim.BSAState(s.bsa.M, in)
		ws := s.bsa.M.NewWorkspace(1)
		for t := 0; ; t++ {
			out = append(out, Widen(st.X))
			img := make([]float32, models.Pixels)
			s.bsa.M.Decode(img, st.X)
			imgs = append(imgs, img)
			if t == steps {
				return out, imgs, nil
			}
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			s.bsa.M.Step(ws, []*models.State{st}, s.bsa.Dyn, nil, nil)
		}
	}
	if s.block != nil {
		b := models.NewBatch(s.block, 1)
		b.Start([][]float32{in.Input})
		for t := 0; ; t++ {
			out = append(out, Widen(b.State(0, nil)))
			img := make([]float32, models.Pixels)
			if t == 0 {
				copy(img, in.Input)
			} else {
				b.Decode([][]float32{img})
			}
			imgs = append(imgs, img)
			if t == steps {
				return out, imgs, nil
			}
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			b.Apply(0)
		}
	}
	tr := s.model.Start(in)
	for t := 0; ; t++ {
		x := make([]float32, models.Pixels)
		tr.Decode(x)
		out = append(out, Widen(x))
		imgs = append(imgs, x)
		if t == steps {
			return out, imgs, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		tr.Step(nil)
	}
}

// Decode is the picture of a state (784 pixels; the bare model's in
// [0, 1], the block's unclamped as its output linear gives it).
func (s *System) Decode(x []float64) []float32 {
	img := make([]float32, models.Pixels)
	switch {
	case s.bsa != nil:
		x32 := make([]float32, len(x))
		for k, v := range x {
			x32[k] = float32(v)
		}
		s.bsa.M.Decode(img, x32)
	case s.block != nil:
		img64 := make([]float64, models.Pixels)
		s.Stepper().(blockStepper).f.Decode(img64, x)
		for k, v := range img64 {
			img[k] = float32(v)
		}
	default:
		for k, v := range x {
			img[k] = float32(v)
		}
	}
	return img
}

// Picture is a direction v in the state space at the state x seen through
// the decoder: the derivative of the 784 pixels along v (for the Hopfield
// network, whose state is the picture, v itself).
func (s *System) Picture(x, v []float64) []float64 {
	img := make([]float64, models.Pixels)
	switch {
	case s.bsa != nil:
		s.bsa.M.DecodeJVP(img, x, v)
	case s.block != nil:
		s.Stepper().(blockStepper).f.DecodeJVP(img, v)
	default:
		copy(img, v)
	}
	return img
}

// Step is an asked step: a number, or the digit's own t* (TStar).
type Step struct {
	T     int
	TStar bool
}

func (s Step) String() string {
	if s.TStar {
		return "t*"
	}
	return strconv.Itoa(s.T)
}

// ParseSteps reads --at: comma-separated steps 1 … maxT, or t*. Step 0 is
// refused: the first step of a masking run follows other rules (masked
// keys left out, the statistics over the visible tokens), so the map
// starts at t = 1.
func ParseSteps(s string, maxT int) ([]Step, error) {
	var out []Step
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		var st Step
		if f == "t*" {
			st.TStar = true
		} else {
			v, err := strconv.Atoi(f)
			if err != nil {
				return nil, fmt.Errorf("--at: %q is not a step (whole numbers 1 … %d, or t*)", f, maxT)
			}
			if v < 1 || v > maxT {
				return nil, fmt.Errorf("--at: %d is out of range (allowed 1 … %d: the map starts at t = 1, after the first step, and a step must be within the run's --steps)", v, maxT)
			}
			st.T = v
		}
		if seen[st.String()] {
			return nil, fmt.Errorf("--at: %s is given twice", st)
		}
		seen[st.String()] = true
		out = append(out, st)
	}
	return out, nil
}

// Spectrum is the one-step Jacobian's local picture at a state.
type Spectrum struct {
	T         int
	Eigs      []models.Eig // the leading Eigs, largest modulus first
	Radius    float64      // |λ₁|
	Unstable  int          // eigenvalues among Eigs with |λ| > 1 (Eigs means "at least")
	Converged bool         // every residual within the tolerance
	StepSize  float64      // ‖F(X) − X‖ / ‖X‖
}

// EigOptions are the Arnoldi iteration's bounds for a spectrum.
var EigOptions = models.EigOptions{Tol: 1e-8, Step: 20, Max: 400, Seed: 1}

// Widen is a float32 state in float64.
func Widen(x []float32) []float64 { return models.Widen64(x) }

// SpectrumAt computes the spectrum of f's Jacobian at x (state t).
func SpectrumAt(ctx context.Context, f Stepper, x []float64, t int, progress func(done int)) (Spectrum, error) {
	l := f.Linearise(x)
	eigs, err := models.LeadingEigs(ctx, models.Operator{N: f.Size(), Apply: l.JVP}, Eigs, EigOptions, progress)
	conv := true
	if errors.Is(err, models.ErrNotConverged) {
		conv, err = false, nil
	}
	if err != nil {
		return Spectrum{}, err
	}
	s := Spectrum{T: t, Eigs: eigs, Radius: cmplx.Abs(eigs[0].Value), Converged: conv, StepSize: dist(l.Next(), x) / nrm(x)}
	for _, e := range eigs {
		if cmplx.Abs(e.Value) > 1 {
			s.Unstable++
		}
	}
	return s, nil
}

// Chain is the map's linearisations along k steps from a state: the
// k-step Jacobian DF(X_{k−1})⋯DF(X_0) given by its products.
type Chain struct {
	f    Stepper
	lins []Linear
	tmp  [2][]float64
}

// NewChain steps f k times from x in float64, keeping each linearisation.
func NewChain(ctx context.Context, f Stepper, x []float64, k int) (*Chain, error) {
	if err := KRange.CheckInt(k, sim.ViaFlag); err != nil {
		return nil, err
	}
	c := &Chain{f: f, tmp: [2][]float64{make([]float64, f.Size()), make([]float64, f.Size())}}
	for s := 0; s < k; s++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		l := f.Linearise(x)
		c.lins = append(c.lins, l)
		x = l.Next()
	}
	return c, nil
}

// K is the chain's length.
func (c *Chain) K() int { return len(c.lins) }

// State is X_s, s = 0 … k.
func (c *Chain) State(s int) []float64 {
	if s == len(c.lins) {
		return c.lins[s-1].Next()
	}
	return c.lins[s].State()
}

// Apply writes the k-step Jacobian's product with v into out.
func (c *Chain) Apply(v, out []float64) {
	cur := v
	for s, l := range c.lins {
		dst := c.tmp[s%2]
		if s == len(c.lins)-1 {
			dst = out
		}
		l.JVP(cur, dst)
		cur = dst
	}
}

// ApplyT writes the transposed k-step Jacobian's product with g into out.
func (c *Chain) ApplyT(g, out []float64) {
	cur := g
	for s := len(c.lins) - 1; s >= 0; s-- {
		dst := c.tmp[s%2]
		if s == 0 {
			dst = out
		}
		c.lins[s].VJP(cur, dst)
		cur = dst
	}
}

// Escape is the k-step Jacobian's leading singular triplets: Dirs[0] the
// escape direction (unit, in the state space), Growth[0] its growth
// factor ‖DF_k v‖/‖v‖.
type Escape struct {
	T, K      int
	Growth    []float64
	Dirs      [][]float64
	Converged bool
}

// SingularOptions are the Lanczos iteration's bounds for an escape.
var SingularOptions = models.EigOptions{Tol: 1e-8, Step: 10, Max: 200, Seed: 2}

// EscapeFrom computes the r leading singular triplets of chain's k-step
// Jacobian.
func EscapeFrom(ctx context.Context, c *Chain, t, r int, progress func(done int)) (Escape, error) {
	n := c.f.Size()
	sv, err := models.LeadingSingular(ctx, models.Operator{N: n, Apply: c.Apply}, models.Operator{N: n, Apply: c.ApplyT}, r, SingularOptions, progress)
	conv := true
	if errors.Is(err, models.ErrNotConverged) {
		conv, err = false, nil
	}
	if err != nil {
		return Escape{}, err
	}
	e := Escape{T: t, K: c.K(), Converged: conv}
	for _, s := range sv {
		e.Growth = append(e.Growth, s.Value)
		e.Dirs = append(e.Dirs, s.V)
	}
	return e, nil
}

// PushTest is a push of size ε along a unit direction v at X_0 (the
// chain's start): Predicted[s] = ε‖DF_s v‖ is the linear prediction of the
// pushed run's distance from the run s steps later, Real[s] the distance
// the map's pushed run (float64) keeps.
type PushTest struct {
	Eps             float64
	Predicted, Real []float64 // s = 0 … k
}

// Push runs the test along v (unit) with size eps·‖X_0‖.
func Push(ctx context.Context, c *Chain, v []float64, eps float64) (PushTest, error) {
	if !(eps >= EpsRange.Min && eps <= EpsRange.Max) {
		return PushTest{}, fmt.Errorf("ε = %g is out of range (allowed %s, relative to the state's norm)", eps, EpsRange.Allowed())
	}
	x0 := c.State(0)
	size := eps * nrm(x0)
	k := c.K()
	p := PushTest{Eps: eps, Predicted: make([]float64, k+1), Real: make([]float64, k+1)}
	lin := append([]float64(nil), v...)
	scale(lin, size/nrm(v))
	y := make([]float64, len(x0))
	for q := range y {
		y[q] = x0[q] + lin[q]
	}
	next := make([]float64, len(lin))
	for s := 0; s <= k; s++ {
		if err := ctx.Err(); err != nil {
			return PushTest{}, err
		}
		p.Predicted[s] = nrm(lin)
		p.Real[s] = dist(y, c.State(s))
		if s == k {
			break
		}
		c.lins[s].JVP(lin, next)
		lin, next = next, lin
		y = c.f.Linearise(y).Next()
	}
	return p, nil
}

// RandomDirection is a unit direction drawn from seed (a push to compare
// the escape direction with).
func RandomDirection(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0xd1))
	v := make([]float64, n)
	for k := range v {
		v[k] = rng.NormFloat64()
	}
	scale(v, 1/nrm(v))
	return v
}

func nrm(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

func dist(a, b []float64) float64 {
	var s float64
	for k := range a {
		d := a[k] - b[k]
		s += d * d
	}
	return math.Sqrt(s)
}

func scale(x []float64, c float64) {
	for k := range x {
		x[k] *= c
	}
}

// AlongRun computes the spectrum at every step t of ts on workers
// goroutines (0: every core) and tells visit of each as it is done (from
// the workers, in any order). A cancelled ctx stops it.
func AlongRun(ctx context.Context, f Stepper, states [][]float64, ts []int, workers int, visit func(Spectrum)) error {
	var first error
	var mu sync.Mutex
	err := models.Parallel(ctx, len(ts), workers, func(_, k int) {
		sp, err := SpectrumAt(ctx, f, states[ts[k]], ts[k], nil)
		if err != nil {
			mu.Lock()
			if first == nil {
				first = err
			}
			mu.Unlock()
			return
		}
		visit(sp)
	})
	if err != nil {
		return err
	}
	return first
}
