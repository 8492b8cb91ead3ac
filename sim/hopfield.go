package sim

import (
	"math/rand/v2"
	"sync"

	"attractorlab/models"
)

// HopfieldParams are the comparators' settings (§7).
type HopfieldParams struct {
	Beta  float32 // modern network's inverse temperature
	K     int     // classical network: stored digits (one per class, cycling)
	Async bool    // classical network: asynchronous sweeps instead of synchronous updates
}

// DefaultHopfield: β = 1, K = 10, synchronous. At β = 1 the modern
// network retrieves one stored digit within a step or two (mean top weight
// 1.00 on masked test digits); near β = 1/√784 it blends them all into
// an average digit instead.
func DefaultHopfield() HopfieldParams {
	return HopfieldParams{Beta: 1, K: 10}
}

// HopfieldModel is the modern Hopfield network over the stored training
// subset; it is built on first use (62 MB).
type HopfieldModel struct {
	Set  *Set
	once sync.Once
	h    *models.Hopfield
}

// Info describes the network.
func (m *HopfieldModel) Info() ModelInfo {
	return ModelInfo{Name: "hopfield", Label: "Hopfield (modern)", Patterns: m.Set.Len(), HasEnergy: true}
}

func (m *HopfieldModel) net() *models.Hopfield {
	m.once.Do(func() {
		rows := make([][]float32, m.Set.Len())
		for k := range rows {
			rows[k] = m.Set.Clean(k, PixelGain)
		}
		m.h = models.NewHopfield(rows)
	})
	return m.h
}

// Start takes the corrupted image itself as the state ξ.
func (m *HopfieldModel) Start(in *Corrupted, set Settings) Trajectory {
	beta := set.Hop.Beta
	if !(beta > 0) {
		beta = DefaultHopfield().Beta
	}
	h := m.net()
	return &hopTraj{h: h, xi: append([]float32(nil), in.Input...), p: make([]float32, h.M+16), beta: beta}
}

type hopTraj struct {
	h    *models.Hopfield
	xi   []float32
	p    []float32
	beta float32
}

func (t *hopTraj) Decode(dst []float32) { copy(dst, t.xi) }
func (t *hopTraj) Energy() float64      { return t.h.Energy(t.xi, t.p, t.beta) }
func (t *hopTraj) Step(attn []float32) {
	t.h.Step(t.xi, t.p, t.beta)
	copy(attn, t.p[:t.h.M])
}

// ClassicModel is the binary Hopfield network with K stored digits.
type ClassicModel struct {
	Set *Set
	mu  sync.Mutex
	k   int
	h   *models.ClassicHopfield
}

// Info describes the network.
func (m *ClassicModel) Info() ModelInfo {
	return ModelInfo{Name: "hopfield-classic", Label: "Hopfield (classical)", HasEnergy: true}
}

// Stored returns the indices of the K stored digits: one per class in
// turn (the first unused digit of class 0, 1, …, 9, 0, …).
func (m *ClassicModel) Stored(k int) []int {
	var next [10]int
	var out []int
	for len(out) < k {
		c := len(out) % 10
		found := false
		for j := next[c]; j < m.Set.Len(); j++ {
			if int(m.Set.Labels[j]) == c {
				out = append(out, j)
				next[c] = j + 1
				found = true
				break
			}
		}
		if !found {
			break
		}
	}
	return out
}

func (m *ClassicModel) net(k int) *models.ClassicHopfield {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h == nil || m.k != k {
		var rows [][]float32
		for _, j := range m.Stored(k) {
			rows = append(rows, m.Set.Clean(j, PixelGain))
		}
		m.h, m.k = models.NewClassicHopfield(rows), k
	}
	return m.h
}

// Start binarises the corrupted image (masked pixels become −1).
func (m *ClassicModel) Start(in *Corrupted, set Settings) Trajectory {
	k := set.Hop.K
	if k <= 0 {
		k = 10
	}
	return &classicTraj{h: m.net(min(k, 1000)), xi: models.Binarize(in.Input), async: set.Hop.Async,
		rng: rand.New(rand.NewPCG(set.Corruption.Seed, 0xc1a5))}
}

type classicTraj struct {
	h     *models.ClassicHopfield
	xi    []float32
	async bool
	rng   *rand.Rand
}

func (t *classicTraj) Decode(dst []float32) {
	for q, v := range t.xi {
		dst[q] = (v + 1) / 2
	}
}
func (t *classicTraj) Energy() float64 { return t.h.Energy(t.xi) }
func (t *classicTraj) Step([]float32) {
	if t.async {
		t.h.StepAsync(t.xi, t.rng)
	} else {
		t.h.StepSync(t.xi)
	}
}
