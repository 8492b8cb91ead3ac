package sim

import (
	"math"
	"slices"
	"testing"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// TestBSATrajectoryOnePass: the trajectory that steps ahead inside Energy
// (one pass a frame) gives the states, attention and energies of plain
// Step and Energy calls, bit for bit, masked (first-step rules) and noisy.
func TestBSATrajectoryOnePass(t *testing.T) {
	data, _, m := benchData(t)
	model := &BSAModel{M: m, Dyn: DefaultDynamics()}
	for _, c := range []Corruption{DefaultMask, DefaultNoise} {
		in := c.Apply(data.Test.Clean(3, mnist.PixelGain), m.Patches, 3)
		tr := model.Start(in).(*bsaTraj)
		st := BSAState(m, in)
		w := m.NewWorkspace(1)
		a1, a2 := make([]float32, m.N*m.N), make([]float32, m.N*m.N)
		for step := 0; step < 12; step++ {
			e := []float64{0}
			m.Energy(w, []*models.State{st}, model.Dyn, e)
			if got := tr.Energy(); math.Float64bits(got) != math.Float64bits(e[0]) {
				t.Fatalf("%v, t = %d: energy %v, plain %v", c.Kind, step, got, e[0])
			}
			if step%3 == 2 {
				tr.Energy() // asked twice: the same step ahead
			}
			tr.Step(a1)
			m.Step(w, []*models.State{st}, model.Dyn, [][]float32{a2}, nil)
			if tr.st.T != st.T || !slices.Equal(f32bits(tr.st.X), f32bits(st.X)) || !slices.Equal(f32bits(a1), f32bits(a2)) {
				t.Fatalf("%v, step %d: the state or the attention differs from plain Step", c.Kind, step+1)
			}
		}
		// A Step without an Energy before it steps itself.
		tr.Step(a1)
		m.Step(w, []*models.State{st}, model.Dyn, [][]float32{a2}, nil)
		if !slices.Equal(f32bits(tr.st.X), f32bits(st.X)) {
			t.Fatalf("%v: a Step without Energy differs", c.Kind)
		}
	}
}

func f32bits(x []float32) []uint32 {
	out := make([]uint32, len(x))
	for k, v := range x {
		out[k] = math.Float32bits(v)
	}
	return out
}

// TestTokenEnergies: the bare self-attention's frames carry each token's
// energy e_i, which sum to the frame's energy, on a noisy and a masked
// digit (where the first step's rules hold); other models carry none.
func TestTokenEnergies(t *testing.T) {
	if raceOn {
		t.Skip("single-goroutine numerics: checked natively without the race detector (make test-portable, test-simd)")
	}
	data, mem, _ := benchData(t)
	cat := NewCatalogue(data.Train, WeightFiles{})
	for _, set := range []Settings{PaperDemo(), DefaultSettings()} {
		set.Lanes = []string{"bsa-p2", "hopfield"}
		e := NewEngine(EngineConfig{Data: data, Memories: mem, Catalogue: cat, Settings: set, Synchronous: true})
		e.Settle()
		sn := e.Snapshot()
		for _, tt := range []int{0, 1, 30} {
			f := sn.Lanes[0].At(tt)
			if len(f.TokenEnergy) != 196 {
				t.Fatalf("%s t=%d: %d token energies", set.Corruption.Kind, tt, len(f.TokenEnergy))
			}
			var sum float64
			for _, v := range f.TokenEnergy {
				sum += v
			}
			if math.Abs(sum-f.Energy) > 1e-9*math.Abs(f.Energy) {
				t.Fatalf("%s t=%d: Σe_i %g, E %g", set.Corruption.Kind, tt, sum, f.Energy)
			}
		}
		if sn.Lanes[1].At(1).TokenEnergy != nil {
			t.Fatal("the Hopfield network has token energies")
		}
	}
}
