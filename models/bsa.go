package models

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// DefaultLambdaTrain is the λ of the pseudo-likelihood training loss
// (§5) unless a run chooses another.
const DefaultLambdaTrain = 5

// AttnKind selects the attention nonlinearity of the bare self-attention.
type AttnKind int

const (
	// Softmax is α_ij = softmax_j(λ s_ij), the paper's attention.
	Softmax AttnKind = iota
	// ReluSeqlen is α_ij = relu(λ s_ij)/N, the "relu/seqlen" variant (§4).
	ReluSeqlen
)

func (k AttnKind) String() string {
	if k == ReluSeqlen {
		return "relu/seqlen"
	}
	return "softmax"
}

// Dynamics are the evaluation parameters of the BSA update (§4).
type Dynamics struct {
	Lambda float32  // inverse temperature λ, 1 at evaluation
	Gamma  float32  // weight of the attention signal γ, 0.5
	Attn   AttnKind // softmax or relu/seqlen
}

// DefaultDynamics are the paper's evaluation settings.
func DefaultDynamics() Dynamics { return Dynamics{Lambda: 1, Gamma: 0.5, Attn: Softmax} }

// BSA is the bare self-attention network of §4: couplings J [N,N,d,d], a
// fixed embedding, and the training constants stored with the weights.
type BSA struct {
	*Embedding
	NP          int       // N rounded up to a multiple of 16
	J           []float32 // [i][r][e][NP] (lanes over keys j); J_ii and padding are 0
	LambdaTrain float32   // λ used in training (DefaultLambdaTrain)
	Clamp       float32   // score clamp (20)
	Meta        map[string]string
}

func roundUp16(n int) int { return (n + 15) &^ 15 }

// NewBSA returns an untrained network: J ~ U(−0.5, 0.5)/d², J_ii = 0 (§5),
// F drawn from the same seed. It refuses a patch side P outside
// BSAPatchSides and an embedding dimension d outside [MinBSADim(P),
// MaxBSADim(P)], so what it makes can be saved and loaded again.
func NewBSA(p, d int, seed uint64) (*BSA, error) {
	if err := checkBSADim(p, d); err != nil {
		return nil, err
	}
	emb, err := NewEmbedding(p, d, seed)
	if err != nil {
		return nil, err
	}
	m := newBSA(emb)
	rng := rand.New(rand.NewPCG(seed, 0x1a77))
	scale := 1 / float32(d*d)
	for i := 0; i < m.N; i++ {
		for r := 0; r < d; r++ {
			for e := 0; e < d; e++ {
				for j := 0; j < m.N; j++ {
					if j != i {
						m.J[m.jidx(i, j, r, e)] = (rng.Float32() - 0.5) * scale
					}
				}
			}
		}
	}
	return m, nil
}

func newBSA(emb *Embedding) *BSA {
	np := roundUp16(emb.N)
	return &BSA{
		Embedding:   emb,
		NP:          np,
		J:           make([]float32, emb.N*emb.D*emb.D*np),
		LambdaTrain: DefaultLambdaTrain,
		Clamp:       20,
		Meta:        map[string]string{},
	}
}

// jidx is the offset of J[i,j,r,e] in the internal layout.
func (m *BSA) jidx(i, j, r, e int) int { return ((i*m.D+r)*m.D+e)*m.NP + j }

// Canonical returns J in the [N,N,d,d] order of §9.
func (m *BSA) Canonical() []float32 {
	d := m.D
	out := make([]float32, m.N*m.N*d*d)
	for i := 0; i < m.N; i++ {
		for j := 0; j < m.N; j++ {
			for r := 0; r < d; r++ {
				for e := 0; e < d; e++ {
					out[((i*m.N+j)*d+r)*d+e] = m.J[m.jidx(i, j, r, e)]
				}
			}
		}
	}
	return out
}

// SetCanonical loads J from the [N,N,d,d] order of §9. J_ii is forced to 0.
func (m *BSA) SetCanonical(c []float32) error {
	d := m.D
	if len(c) != m.N*m.N*d*d {
		return fmt.Errorf("tensor J has %d values, want %d", len(c), m.N*m.N*d*d)
	}
	// In the order of J (j innermost), the offsets stepped rather than
	// multiplied out: the page parses the opening model's 2.4 million
	// couplings in code the browser has not optimised yet.
	n, np, dd := m.N, m.NP, d*d
	for i := 0; i < n; i++ {
		for r := 0; r < d; r++ {
			for e := 0; e < d; e++ {
				row := m.J[((i*d+r)*d+e)*np:][:n]
				src := (i*n)*dd + r*d + e
				for j := range row {
					row[j] = c[src]
					src += dd
				}
				row[i] = 0
			}
		}
	}
	return nil
}

// rms is the root mean square of the N²d² coupling entries.
func (m *BSA) rms() float64 {
	var s float64
	for _, v := range m.J {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(m.N*m.N*m.D*m.D))
}

// State is one image's trajectory state: X [N][D] and the tokens masked in
// the corrupted input. T counts the steps taken; the first step (T = 0) of
// a masking run uses the rules of §4 for masked tokens.
type State struct {
	X      []float32
	Masked []bool // nil or all false: no masking rules
	T      int
}

// NewState encodes a corrupted image (pixels in [0,1]; masked tokens are
// the zero vector).
func (m *BSA) NewState(img []float32, masked []bool) *State {
	st := &State{X: make([]float32, m.N*m.D), T: 0}
	if anyTrue(masked) {
		st.Masked = append([]bool(nil), masked...)
	}
	m.Encode(st.X, img, st.Masked)
	return st
}

func anyTrue(b []bool) bool {
	for _, v := range b {
		if v {
			return true
		}
	}
	return false
}

// Workspace holds the scratch memory of stepping up to Cap images at once.
// One per goroutine.
type Workspace struct {
	m    *BSA
	xh   [][]float32 // per image: x̂ᵀ [D][NP]
	xnew [][]float32 // per image: [N][D]
	v    []float32   // [D][NP]
	s    []float32   // [NP]
	a    []float32   // [NP]
	xi   []float32   // [D]
	out  []float32   // [D]
	c    []float32   // [D]
	// tokenE, when tracked (TrackTokenEnergy), is each image's token
	// energies e_i of the last pass that computed energies: [N] each.
	tokenE [][]float64
	track  bool
}

// TrackTokenEnergy makes the passes that compute energies keep each
// token's energy e_i (§4) too, read with TokenEnergy: the total energy is
// their sum.
func (w *Workspace) TrackTokenEnergy() { w.track = true }

// TokenEnergy is image b's token energies from the last pass that
// computed energies (nil unless tracked); the slice is the workspace's.
func (w *Workspace) TokenEnergy(b int) []float64 {
	if b >= len(w.tokenE) {
		return nil
	}
	return w.tokenE[b]
}

// NewWorkspace allocates scratch for stepping batches of up to n images.
func (m *BSA) NewWorkspace(n int) *Workspace {
	w := &Workspace{m: m}
	w.grow(n)
	w.v = make([]float32, m.D*m.NP)
	w.s = make([]float32, m.NP)
	w.a = make([]float32, m.NP)
	w.xi = make([]float32, m.D)
	w.out = make([]float32, m.D)
	w.c = make([]float32, m.D)
	return w
}

func (w *Workspace) grow(n int) {
	for len(w.xh) < n {
		w.xh = append(w.xh, make([]float32, w.m.D*w.m.NP))
		w.xnew = append(w.xnew, make([]float32, w.m.N*w.m.D))
	}
	for w.track && len(w.tokenE) < n {
		w.tokenE = append(w.tokenE, make([]float64, w.m.N))
	}
}

// layerNorm writes x̂ᵀ of x into xh (§4 step 1). With masked tokens (first
// step of a masking run) the statistics use the unmasked tokens with the
// population std, and masked tokens get x̂ = 0; otherwise all tokens and the
// unbiased std.
func (m *BSA) layerNorm(xh, x []float32, masked []bool) {
	n, d, np := m.N, m.D, m.NP
	clear(xh)
	cnt := 0
	for i := 0; i < n; i++ {
		if masked == nil || !masked[i] {
			cnt++
		}
	}
	for r := 0; r < d; r++ {
		var mu float64
		for i := 0; i < n; i++ {
			if masked == nil || !masked[i] {
				mu += float64(x[i*d+r])
			}
		}
		mu /= float64(cnt)
		var ss float64
		for i := 0; i < n; i++ {
			if masked == nil || !masked[i] {
				dv := float64(x[i*d+r]) - mu
				ss += dv * dv
			}
		}
		den := float64(cnt - 1)
		if masked != nil {
			den = float64(cnt)
		}
		sd := 0.0
		if den > 0 {
			sd = math.Sqrt(ss / den)
		}
		inv := 1 / (sd + 1e-9)
		row := xh[r*np : r*np+n]
		for i := range row {
			if masked == nil || !masked[i] {
				row[i] = float32((float64(x[i*d+r]) - mu) * inv)
			}
		}
	}
}

// rowScores computes the scores s_ij (clamped, invalid keys marked) and
// v_ij = J_ij x̂_j of query i against all keys.
func (m *BSA) rowScores(w *Workspace, xh []float32, i int, keyMasked []bool) {
	d, np := m.D, m.NP
	for r := 0; r < d; r++ {
		w.xi[r] = xh[r*np+i]
	}
	scores(m.J[i*d*d*np:(i+1)*d*d*np], xh, w.xi, w.v, w.s, d, np)
	s := w.s
	for j := 0; j < m.N; j++ {
		if s[j] > m.Clamp {
			s[j] = m.Clamp
		}
	}
	s[i] = invalidScore
	for j := m.N; j < np; j++ {
		s[j] = invalidScore
	}
	for j, k := range keyMasked {
		if k {
			s[j] = invalidScore
		}
	}
}

// softmaxRow sets w.a to the unnormalised weights exp(λ(s_j − max)) and
// returns their sum and the row's log-sum-exp (1/λ) log Σ_j exp(λ s_j); ok
// is false when no key is valid. α = w.a / sum.
func (w *Workspace) softmaxRow(lambda float32) (sum float32, lse float64, ok bool) {
	mx := maxf(w.s)
	if mx <= invalidBelow {
		clear(w.a)
		return 0, 0, false
	}
	sum = expShift(w.a, w.s, lambda, lambda*mx)
	return sum, float64(mx) + math.Log(float64(sum))/float64(lambda), true
}

// Step advances every state by one step of the dynamics (§4) and returns
// the energy of each state before the step (§5, with the evaluation λ).
// alpha, when non-nil, receives each image's attention matrix [N][N] (nil
// entries are skipped). The batch is processed query row by query row so
// one row of J serves every image while it is in cache.
func (m *BSA) Step(w *Workspace, states []*State, dy Dynamics, alpha [][]float32, energy []float64) {
	m.pass(w, states, dy, alpha, energy, true)
}

// Energy writes the NPL energy of each state (§5) without stepping.
func (m *BSA) Energy(w *Workspace, states []*State, dy Dynamics, energy []float64) {
	m.pass(w, states, dy, nil, energy, false)
}

func (m *BSA) pass(w *Workspace, states []*State, dy Dynamics, alpha [][]float32, energy []float64, update bool) {
	n, d := m.N, m.D
	w.grow(len(states))
	for b, st := range states {
		m.layerNorm(w.xh[b], st.X, firstMask(st))
		if energy != nil {
			energy[b] = 0
		}
	}
	for i := 0; i < n; i++ {
		for b, st := range states {
			xh := w.xh[b]
			m.rowScores(w, xh, i, firstMask(st))
			sum, lse, ok := w.softmaxRow(dy.Lambda)
			if energy != nil {
				if ok {
					energy[b] -= lse
				} else {
					energy[b] = math.NaN()
				}
				if w.track {
					w.tokenE[b][i] = -lse
					if !ok {
						w.tokenE[b][i] = math.NaN()
					}
				}
			}
			if !update {
				continue
			}
			// α = w.a·norm: softmax weights are left unnormalised until here.
			var norm float32
			switch {
			case dy.Attn == ReluSeqlen:
				for j, s := range w.s {
					w.a[j] = maxF(dy.Lambda*s, 0)
				}
				norm = 1 / float32(n)
			case ok:
				norm = 1 / sum
			}
			if alpha != nil && alpha[b] != nil {
				ar := alpha[b][i*n : (i+1)*n]
				for j := range ar {
					ar[j] = w.a[j] * norm
				}
			}
			wsum(w.a, w.v, w.out, d, m.NP)
			xn := w.xnew[b][i*d : (i+1)*d]
			xo := st.X[i*d : (i+1)*d]
			g := dy.Gamma * norm
			for r := range xn {
				xn[r] = g*w.out[r] + xo[r]
			}
		}
	}
	if !update {
		return
	}
	for b, st := range states {
		xn := w.xnew[b]
		var mean float64
		for i := 0; i < n; i++ {
			var ss float64
			for _, v := range xn[i*d : (i+1)*d] {
				ss += float64(v) * float64(v)
			}
			mean += math.Sqrt(ss)
		}
		mean /= float64(n)
		inv := float32(1 / (mean + 1e-9))
		for k, v := range xn {
			st.X[k] = v * inv
		}
		st.T++
	}
}

// firstMask returns the masked tokens when the first-step rules apply.
func firstMask(st *State) []bool {
	if st.T == 0 && st.Masked != nil {
		return st.Masked
	}
	return nil
}

// ErrShape reports a tensor of the wrong size.
var ErrShape = errors.New("wrong shape")
