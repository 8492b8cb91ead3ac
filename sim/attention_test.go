package sim

import (
	"fmt"
	"math"
	"testing"

	"attractorlab/sim/mnist"
)

// TestAttentionRetaken: a step whose attention was dropped shows, when
// asked for, the attention it had when it was recorded, to the bit: every
// model with attention, mask and noise, the run and a pushed run (a kick
// at 6, past the ViT's layers at 20). One engine keeps every step's
// attention (its horizon is past the run's end), the other keeps a few.
func TestAttentionRetaken(t *testing.T) {
	if raceOn || underNode {
		t.Skip("synchronous engines' numerics on one goroutine: checked natively, with the web build's portable kernels too (make test-portable, test-simd)")
	}
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	mem := NewMemories(data.Train)
	const maxT = 48
	engine := func(horizon int, kind Kind) *Engine {
		set := DefaultSettings()
		set.Lanes = []string{"bsa-p2", "block", "vit", "hopfield"}
		set.Corruption.Kind = kind
		set.Pushes = []Push{{T: 6, Kind: Kick, Sigma2: 0.3, Seed: 7}, {T: 20, Kind: Kick, Sigma2: 0.2, Seed: 8}}
		e := NewEngine(EngineConfig{Data: data, Memories: mem, Catalogue: NewCatalogue(data.Train, WeightFiles{}),
			Horizon: horizon, MaxT: maxT, Settings: set, Synchronous: true})
		e.Seek(maxT)
		if err := e.Snapshot().Err; err != "" {
			t.Fatal(err)
		}
		return e
	}
	for _, kind := range []Kind{Mask, Noise} {
		all, few := engine(maxT, kind), engine(2, kind)
		for k, l := range few.s.lanes {
			if n := len(l.keep.kept); n > keepAttention(2) || n == 0 {
				t.Fatalf("%v %s: %d steps' attention kept, want 1…%d", kind, l.info.Name, n, keepAttention(2))
			}
			if _, ok := l.keep.kept[l.frames[1]]; ok && l.info.MaxSteps == 0 {
				t.Fatalf("%v %s: step 1's attention still kept: nothing is retaken", kind, l.info.Name)
			}
			if la := all.s.lanes[k]; len(la.keep.kept) != len(la.frames)-1 {
				t.Fatalf("%v %s: the engine that keeps all kept %d of %d", kind, l.info.Name, len(la.keep.kept), len(la.frames)-1)
			}
		}
		// The steps whose attention was dropped, per lane.
		dropped := make([]int, len(few.s.lanes))
		for k, l := range few.s.lanes {
			for _, f := range l.frames {
				if _, ok := l.keep.kept[f]; !ok && f.from != nil {
					dropped[k]++
				}
			}
		}
		// Backwards, so that every step is retaken, not left from the last.
		for tt := maxT; tt >= 0; tt-- {
			all.Seek(tt)
			few.Seek(tt)
			a, b := all.Snapshot(), few.Snapshot()
			for k := range a.Lanes {
				la, lb := a.Lanes[k], b.Lanes[k]
				what := fmt.Sprintf("%v %s t=%d", kind, la.Info.Name, tt)
				sameBits(t, what, la.Attn, lb.Attn)
				sameBits(t, what+" pushed", la.BranchAttn, lb.BranchAttn)
				if (la.Attn == nil) != (tt == 0) {
					t.Errorf("%s: attention %v", what, la.Attn != nil)
				}
				if lb.AttnOf(lb.At(tt)) == nil && lb.Attn != nil || lb.AttnOf(lb.BranchAt(tt)) == nil && lb.BranchAttn != nil {
					t.Errorf("%s: AttnOf does not find the shown frames' attention", what)
				}
			}
		}
		// Stepping back retakes one step in rewindEvery: the steps retaken
		// on the way to it are kept.
		for k, l := range few.s.lanes {
			if most := (dropped[k]+rewindEvery-1)/rewindEvery + 1; dropped[k] == 0 && l.info.MaxSteps == 0 || l.keep.retakes > most {
				t.Errorf("%v %s: %d dropped steps shown, backwards, took %d retakes, want 1…%d", kind, l.info.Name, dropped[k], l.keep.retakes, most)
			}
		}
	}
}

// TestAttentionRetakenForward: stepping forward through steps whose
// attention was dropped (as the steps a worker recorded, whose attention
// never came) takes one step each: a retaken step goes on from the one
// before it. The attention is the recorded one, to the bit.
func TestAttentionRetakenForward(t *testing.T) {
	if raceOn || underNode {
		t.Skip("a synchronous engine's numerics on one goroutine: checked natively, with the web build's portable kernels too (make test-portable, test-simd)")
	}
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	mem := NewMemories(data.Train)
	const maxT = 40
	engine := func() *Engine {
		set := DefaultSettings()
		set.Lanes = []string{"bsa-p2", "block", "hopfield"}
		e := NewEngine(EngineConfig{Data: data, Memories: mem, Catalogue: NewCatalogue(data.Train, WeightFiles{}),
			Horizon: maxT, MaxT: maxT, Settings: set, Synchronous: true})
		e.Seek(maxT)
		if err := e.Snapshot().Err; err != "" {
			t.Fatal(err)
		}
		return e
	}
	all, few := engine(), engine()
	for _, l := range few.s.lanes {
		clear(l.keep.kept)
		l.keep.order = nil
	}
	for tt := 1; tt <= maxT; tt++ {
		all.Seek(tt)
		few.Seek(tt)
		a, b := all.Snapshot(), few.Snapshot()
		for k := range a.Lanes {
			sameBits(t, fmt.Sprintf("%s t=%d", a.Lanes[k].Info.Name, tt), a.Lanes[k].Attn, b.Lanes[k].Attn)
		}
	}
	for _, l := range few.s.lanes {
		if l.keep.steps != maxT {
			t.Errorf("%s: showing steps 1 … %d forwards took %d steps again, want %d", l.info.Name, maxT, l.keep.steps, maxT)
		}
	}
}

func sameBits(t *testing.T, what string, a, b []float32) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d numbers, retaken %d", what, len(a), len(b))
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("%s: attention[%d] = %g, retaken %g", what, i, a[i], b[i])
		}
	}
}
