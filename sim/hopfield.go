package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// HopfieldModel is the modern Hopfield network over the stored training
// subset at inverse temperature Beta.
type HopfieldModel struct {
	net  *modernNet
	Beta float32
}

// modernNet is the stored patterns, built on first use (62 MB) and shared
// by every binding of the model.
type modernNet struct {
	set  *mnist.Set
	once sync.Once
	h    *models.Hopfield
}

// Info describes the network.
func (m *HopfieldModel) Info() ModelInfo {
	return ModelInfo{Name: "hopfield", Label: "Hopfield (modern)", Patterns: m.net.set.Len(), HasEnergy: true}
}

func (n *modernNet) get() *models.Hopfield {
	n.once.Do(func() {
		rows := make([][]float32, n.set.Len())
		for k := range rows {
			rows[k] = n.set.Clean(k, mnist.PixelGain)
		}
		n.h = models.NewHopfield(rows)
	})
	return n.h
}

// Net is the stored patterns (built on first use).
func (m *HopfieldModel) Net() *models.Hopfield { return m.net.get() }

// Start takes the corrupted image itself as the state ξ.
func (m *HopfieldModel) Start(in *Corrupted) Trajectory {
	h := m.net.get()
	return &hopTraj{h: h, xi: append([]float32(nil), in.Input...), p: make([]float32, h.M+16), beta: m.Beta}
}

// hopfieldChunk states step together: each pass of the two matrix
// products over the M stored patterns (31 MB for 10,000) serves them all.
const hopfieldChunk = 64

// RunBatch steps the inputs hopfieldChunk at a time through the batched
// update (models.HopfieldBatch: the scores and the update of a chunk are
// each one matrix product), on the crew's workers; the trajectories'
// per-image step is its twin (the results agree to rounding).
func (m *HopfieldModel) RunBatch(ctx context.Context, inputs []*Corrupted, steps int, crew *models.Crew, visit StepVisit) error {
	h := m.net.get()
	return handOut(ctx, len(inputs), hopfieldChunk, crew, func() func(c0, c1 int) {
		hb := h.NewBatch(hopfieldChunk)
		xs := make([]float32, hopfieldChunk*models.Pixels)
		pred := make([]float32, hopfieldChunk*models.Pixels)
		energy := make([]float64, hopfieldChunk)
		return func(c0, c1 int) {
			n := c1 - c0
			for b := range n {
				copy(xs[b*models.Pixels:], inputs[c0+b].Input)
			}
			fixed := false
			for t := 0; t <= steps && ctx.Err() == nil; t++ {
				copy(pred, xs[:n*models.Pixels])
				switch {
				case t == steps:
					hb.Energy(xs, n, m.Beta, energy)
				case !fixed:
					// The energy of state t comes from the step that leaves it.
					hb.Step(xs, n, m.Beta, energy)
					// A step that left every state of the chunk as it was,
					// bit for bit, is every later step again (the update is
					// a function of the state alone): they are not computed.
					fixed = hopfieldSkipFixed && equalBits(pred[:n*models.Pixels], xs[:n*models.Pixels])
				default:
					hopfieldSkipped.Add(int64(n))
				}
				for b := range n {
					visit(t, c0+b, pred[b*models.Pixels:(b+1)*models.Pixels], energy[b])
				}
				pause()
			}
		}
	})
}

// hopfieldSkipFixed lets RunBatch skip the steps after a chunk's fixed
// point; hopfieldSkipped counts the image-steps skipped (tests).
var (
	hopfieldSkipFixed = true
	hopfieldSkipped   atomic.Int64
)

// equalBits reports whether a and b hold the same float32 bits.
func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i, v := range a {
		if math.Float32bits(v) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

type hopTraj struct {
	h    *models.Hopfield
	xi   []float32
	p    []float32
	beta float32
	// weighed says p holds the pattern weights of ξ as it is: Energy
	// computed them (the same scores as the step's), so the step after it
	// only applies them, half the work of a recorded step.
	weighed bool
}

func (t *hopTraj) Decode(dst []float32) { copy(dst, t.xi) }

func (t *hopTraj) Energy() float64 {
	t.weighed = true
	return t.h.Weights(t.xi, t.p, t.beta)
}

func (t *hopTraj) Step(attn []float32) {
	if !t.weighed {
		t.h.Weights(t.xi, t.p, t.beta)
	}
	t.weighed = false
	t.h.Update(t.xi, t.p)
	copy(attn, t.p[:t.h.M])
}

func (t *hopTraj) Save() any { return append([]float32(nil), t.xi...) }

func (t *hopTraj) Restore(saved any) {
	copy(t.xi, saved.([]float32))
	t.weighed = false
}

func (t *hopTraj) Fork() Rewinder {
	return &hopTraj{h: t.h, xi: append([]float32(nil), t.xi...), p: make([]float32, len(t.p)), beta: t.beta}
}

// ClassicModel is the binary Hopfield network with K stored digits,
// updated synchronously or (Async) one random pixel at a time, the order
// drawn from Seed.
type ClassicModel struct {
	net   *classicNets
	K     int
	Async bool
	Seed  uint64
}

// classicNets holds the last network built (one K at a time), shared by
// every binding of the model.
type classicNets struct {
	set *mnist.Set
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
func (m *ClassicModel) Stored(k int) []int { return m.net.stored(k) }

func (n *classicNets) stored(k int) []int {
	var next [10]int
	var out []int
	for len(out) < k {
		c := len(out) % 10
		found := false
		for j := next[c]; j < n.set.Len(); j++ {
			if int(n.set.Labels[j]) == c {
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

func (n *classicNets) get(k int) *models.ClassicHopfield {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.h == nil || n.k != k {
		var rows [][]float32
		for _, j := range n.stored(k) {
			rows = append(rows, n.set.Clean(j, mnist.PixelGain))
		}
		n.h, n.k = models.NewClassicHopfield(rows), k
	}
	return n.h
}

// Start binarises the corrupted image (masked pixels become −1).
func (m *ClassicModel) Start(in *Corrupted) Trajectory {
	return &classicTraj{h: m.net.get(m.K), xi: models.Binarize(in.Input), async: m.Async,
		rng: rand.New(rand.NewPCG(m.Seed, 0xc1a5))}
}

type classicTraj struct {
	h     *models.ClassicHopfield
	xi    []float32
	async bool
	rng   *rand.Rand
	// f holds the fields Wξ of xi when fresh: the energy of a state and the
	// synchronous step from it both start from them, so each is computed
	// once a step.
	f     []float32
	fresh bool
}

// fields returns Wξ of the current state.
func (t *classicTraj) fields() []float32 {
	if !t.fresh {
		if t.f == nil {
			t.f = make([]float32, models.Pixels)
		}
		t.h.Fields(t.xi, t.f)
		t.fresh = true
	}
	return t.f
}

func (t *classicTraj) Decode(dst []float32) {
	for q, v := range t.xi {
		dst[q] = (v + 1) / 2
	}
}
func (t *classicTraj) Energy() float64 { return models.FieldEnergy(t.xi, t.fields()) }
func (t *classicTraj) Step([]float32) {
	if t.async {
		t.h.StepAsync(t.xi, t.rng)
	} else {
		models.StepFields(t.xi, t.fields())
	}
	t.fresh = false
}
