package sim

import (
	"context"
	"math"

	"attractorlab/models"
)

// ModelInfo describes a model to the engine and the GUI.
type ModelInfo struct {
	Name      string // short id: bsa-p2, bsa-p4, …
	Label     string // for people: "BSA P=2"
	Patch     int    // token side in pixels (0 for pixel-level models)
	Tokens    int    // N, the attention matrix side (0: no token attention)
	Patterns  int    // stored patterns the attention runs over (modern Hopfield)
	Heads     int    // attention heads: when > 1, Attn holds the head average then each head (N×N each)
	MaxSteps  int    // 0: unbounded; the ViT has 5 layers
	HasEnergy bool
}

// MaskGrid is the patch side a mask for this model is drawn on: its own
// tokens, or 4×4 patches for the pixel-level models (§2).
func (i ModelInfo) MaskGrid() int {
	if i.Patch == 0 {
		return 4
	}
	return i.Patch
}

// Frame is one recorded step of a trajectory. It is never modified after
// the engine publishes it.
type Frame struct {
	T     int
	Image []float32 // decoded prediction in [0,1] (784)
	// Measures are its errors, energy, correlations and nearest memory,
	// as a batch run measures each image's states (measure.go).
	Measures
	// PatchVar are its within-patch variances, every patch's (the window
	// shows them under noise too).
	PatchVar []float64
	// TokenEnergy is each token's energy e_i (§4; their sum is Energy),
	// for models whose energy is such a sum (nil otherwise).
	TokenEnergy []float64
	// from is where the step that produced this state started, so that
	// its attention can be taken again (attention.go); nil at t = 0 and
	// for steps without attention.
	from *rewind
}

// Model is one network behind the interface the engine and GUI share.
type Model interface {
	Info() ModelInfo
	// Start encodes a corrupted image; the trajectory's state is t = 0.
	// The model's parameters were bound when the catalogue made it.
	Start(in *Corrupted) Trajectory
}

// Trajectory is a model's state on one input.
type Trajectory interface {
	// Decode writes the current prediction (784 pixels, clamped by metrics).
	Decode(dst []float32)
	// Energy of the current state (NaN where undefined).
	Energy() float64
	// Step advances one iteration and writes the attention it used into
	// attn (N×N, or the weights of the Patterns stored patterns), when attn
	// is not nil.
	Step(attn []float32)
}

// BSAModel runs a bare self-attention network with its dynamics.
type BSAModel struct {
	M   *models.BSA
	Dyn models.Dynamics
	// name and label, when set, replace the shipped model's (a model
	// trained in the window: Catalogue.SetTrained).
	name, label string
}

// Info describes the network.
func (b *BSAModel) Info() ModelInfo {
	info := ModelInfo{Name: bsaName(b.M.P), Label: bsaLabel(b.M.P), Patch: b.M.P, Tokens: b.M.N, HasEnergy: true}
	if b.name != "" {
		info.Name, info.Label = b.name, b.label
	}
	return info
}

func bsaName(p int) string  { return "bsa-p" + string(rune('0'+p)) }
func bsaLabel(p int) string { return "BSA P=" + string(rune('0'+p)) }

// Start encodes the corrupted image (§2–3).
func (b *BSAModel) Start(in *Corrupted) Trajectory {
	w := b.M.NewWorkspace(1)
	w.TrackTokenEnergy()
	return &bsaTraj{m: b.M, st: BSAState(b.M, in), w: w, dy: b.Dyn}
}

type bsaTraj struct {
	m  *models.BSA
	st *models.State
	w  *models.Workspace
	dy models.Dynamics
	// ahead is the next state and aheadAttn its step's attention: Energy
	// takes the step (whose pass computes the energy of the state it steps
	// from, §5, in the same arithmetic as an energy pass), and the next
	// Step takes its result. A frame costs one pass over the couplings
	// instead of two; ahead is set while aheadOK.
	ahead     *models.State
	aheadAttn []float32
	aheadOK   bool
}

// RunBatch steps every input through the batched path (RunBSA).
func (b *BSAModel) RunBatch(ctx context.Context, inputs []*Corrupted, steps int, crew *models.Crew, visit StepVisit) error {
	return RunBSA(ctx, b.M, b.Dyn, inputs, steps, crew, visit)
}

func (t *bsaTraj) Decode(dst []float32) { t.m.Decode(dst, t.st.X) }

func (t *bsaTraj) Energy() float64 {
	e := []float64{math.NaN()}
	if t.ahead == nil {
		t.ahead = &models.State{}
		t.aheadAttn = make([]float32, t.m.N*t.m.N)
	}
	t.ahead.X = append(t.ahead.X[:0], t.st.X...)
	t.ahead.Masked, t.ahead.T = t.st.Masked, t.st.T
	t.m.Step(t.w, []*models.State{t.ahead}, t.dy, [][]float32{t.aheadAttn}, e)
	t.aheadOK = true
	return e[0]
}

// TokenEnergies are the token energies e_i of the state Energy last
// measured (their sum is that energy): a copy.
func (t *bsaTraj) TokenEnergies() []float64 {
	return append([]float64(nil), t.w.TokenEnergy(0)...)
}

// TokenEnergies is a trajectory whose energy is a sum over tokens (the
// bare self-attention's, §4): the terms of the last Energy.
type TokenEnergies interface {
	TokenEnergies() []float64
}

// bsaSaved is a saved state of a bsaTraj.
type bsaSaved struct {
	x []float32
	t int
}

func (t *bsaTraj) Save() any { return &bsaSaved{x: append([]float32(nil), t.st.X...), t: t.st.T} }

func (t *bsaTraj) Restore(saved any) {
	s := saved.(*bsaSaved)
	copy(t.st.X, s.x)
	t.st.T = s.t
	t.aheadOK = false
}

// Fork's workspace tracks token energies as Start's does.
func (t *bsaTraj) Fork() Rewinder {
	w := t.m.NewWorkspace(1)
	w.TrackTokenEnergy()
	st := &models.State{X: append([]float32(nil), t.st.X...), Masked: t.st.Masked, T: t.st.T}
	return &bsaTraj{m: t.m, st: st, w: w, dy: t.dy}
}

func (t *bsaTraj) Step(attn []float32) {
	if t.aheadOK {
		t.st.X, t.ahead.X = t.ahead.X, t.st.X
		t.st.T = t.ahead.T
		copy(attn, t.aheadAttn)
		t.aheadOK = false
		return
	}
	t.m.Step(t.w, []*models.State{t.st}, t.dy, [][]float32{attn}, nil)
}
