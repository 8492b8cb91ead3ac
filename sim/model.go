package sim

import (
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
	Params    bool // λ, γ and the attention kind apply
}

// Frame is one recorded step of a trajectory. It is never modified after
// the engine publishes it.
type Frame struct {
	T        int
	Image    []float32 // decoded prediction in [0,1] (784)
	Attn     []float32 // attention of the step that produced this state, N×N; nil at t = 0
	Energy   float64   // NaN where undefined
	MSE      float64
	MSEMask  float64 // NaN without a mask
	MSEOther float64
	Nearest  int     // index of the nearest stored training digit
	NearCorr float64 // its Pearson correlation
	NearLbl  uint8   // its label
	CorrMean float64 // correlation with the mean training digit
	PatchVar []float64
}

// Model is one network behind the interface the engine and GUI share.
type Model interface {
	Info() ModelInfo
	// Start encodes a corrupted image with the user's settings; the
	// trajectory's state is t = 0.
	Start(in *Corrupted, set Settings) Trajectory
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

// BSAModel runs a bare self-attention network.
type BSAModel struct {
	M *models.BSA
}

// Info describes the network.
func (b *BSAModel) Info() ModelInfo {
	return ModelInfo{Name: bsaName(b.M.P), Label: bsaLabel(b.M.P), Patch: b.M.P, Tokens: b.M.N, HasEnergy: true, Params: true}
}

func bsaName(p int) string  { return "bsa-p" + string(rune('0'+p)) }
func bsaLabel(p int) string { return "BSA P=" + string(rune('0'+p)) }

// Start encodes the corrupted image (§2–3).
func (b *BSAModel) Start(in *Corrupted, set Settings) Trajectory {
	return &bsaTraj{m: b.M, st: BSAState(b.M, in), w: b.M.NewWorkspace(1), dy: set.Dyn}
}

type bsaTraj struct {
	m  *models.BSA
	st *models.State
	w  *models.Workspace
	dy models.Dynamics
}

func (t *bsaTraj) Decode(dst []float32) { t.m.Decode(dst, t.st.X) }

func (t *bsaTraj) Energy() float64 {
	e := []float64{math.NaN()}
	t.m.Energy(t.w, []*models.State{t.st}, t.dy, e)
	return e[0]
}

func (t *bsaTraj) Step(attn []float32) {
	t.m.Step(t.w, []*models.State{t.st}, t.dy, [][]float32{attn}, nil)
}
