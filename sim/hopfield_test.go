package sim

import (
	"context"
	"math"
	"sync"
	"testing"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// TestHopfieldRunBatchMatchesTrajectories: reproduce's batched run of the
// modern Hopfield network (a chunk's scores and update each one matrix
// product) gives the window's per-image trajectories, state by state and
// energy by energy, to rounding — for 21 noisy and masked digits (a chunk
// and a part), on two workers. The scores are float32 sums of 784 products
// in another order, and the energy's log-sum-exp is about the largest of
// them (≈ 100 at β = 1): rounding moves it by about 10⁻⁴ of itself.
func TestHopfieldRunBatchMatchesTrajectories(t *testing.T) {
	data, m := modernHopfield(t)
	if _, ok := m.(BatchRunner); !ok {
		t.Fatal("the modern Hopfield network has no batched path")
	}
	pt, _ := models.NewPatches(4)
	var inputs []*Corrupted
	for k := range 21 {
		c := DefaultNoise
		if k%2 == 1 {
			c = DefaultMask
		}
		inputs = append(inputs, c.Apply(data.Test.Clean(k, mnist.PixelGain), pt, k))
	}
	const steps = 4
	got, gotE := runStates(t, m, inputs, steps)
	img := make([]float32, models.Pixels)
	for b, in := range inputs {
		tr := m.Start(in)
		for tt := 0; tt <= steps; tt++ {
			tr.Decode(img)
			clampPicture(img) // Run hands on the picture
			e := tr.Energy()
			if d := math.Abs(gotE[[2]int{tt, b}] - e); d > 1e-3*math.Max(1, math.Abs(e)) {
				t.Fatalf("digit %d, t = %d: energy %g, the trajectory's %g", b, tt, gotE[[2]int{tt, b}], e)
			}
			for q, v := range img {
				if d := math.Abs(float64(got[[2]int{tt, b}][q] - v)); d > 1e-3 {
					t.Fatalf("digit %d, t = %d, pixel %d: %g, the trajectory's %g", b, tt, q, got[[2]int{tt, b}][q], v)
				}
			}
			tr.Step(nil)
		}
	}
}

// TestHopfieldBatchSkipsFixedPoints: a chunk whose states a step left as
// they were, bit for bit, is at a fixed point, and RunBatch reuses that
// step for the steps after it instead of computing them: the states and
// energies it hands on are those of a run that computes every step, bit
// for bit (noisy and masked digits, a chunk and a part, two workers, nine
// steps), and steps were skipped.
func TestHopfieldBatchSkipsFixedPoints(t *testing.T) {
	if raceOn || underNode {
		t.Skip("numerics on one goroutine per batch: checked natively, with the web build's portable kernels too (make test-portable, test-simd)")
	}
	data, m := modernHopfield(t)
	pt, _ := models.NewPatches(4)
	var inputs []*Corrupted
	for k := range hopfieldChunk + 5 {
		c := DefaultNoise
		if k%2 == 1 {
			c = DefaultMask
		}
		inputs = append(inputs, c.Apply(data.Test.Clean(k, mnist.PixelGain), pt, k))
	}
	const steps = 9
	run := func(skip bool) (map[[2]int][]float32, map[[2]int]float64, int64) {
		defer func(s bool) { hopfieldSkipFixed = s }(hopfieldSkipFixed)
		hopfieldSkipFixed = skip
		before := hopfieldSkipped.Load()
		got, gotE := runStates(t, m, inputs, steps)
		return got, gotE, hopfieldSkipped.Load() - before
	}
	all, allE, none := run(false)
	got, gotE, skipped := run(true)
	if none != 0 || skipped == 0 {
		t.Fatalf("image-steps skipped: %d computing every step, %d skipping fixed points (want 0 and some)", none, skipped)
	}
	for k, want := range all {
		if !equalBits(got[k], want) || math.Float64bits(gotE[k]) != math.Float64bits(allE[k]) {
			t.Fatalf("digit %d, t = %d: skipping fixed points changed the state or its energy (%g, every step computed %g)", k[1], k[0], gotE[k], allE[k])
		}
	}
	if len(got) != len(all) || len(all) != len(inputs)*(steps+1) {
		t.Fatalf("%d and %d states handed on, want %d", len(got), len(all), len(inputs)*(steps+1))
	}
	t.Logf("%d of %d image-steps skipped", skipped, len(inputs)*steps)
}

// runStates runs m on inputs through Run (two workers) and keeps every
// state and energy it hands on, by step and input.
func runStates(t *testing.T, m Model, inputs []*Corrupted, steps int) (map[[2]int][]float32, map[[2]int]float64) {
	t.Helper()
	var mu sync.Mutex
	got := map[[2]int][]float32{}
	gotE := map[[2]int]float64{}
	err := Run(context.Background(), m, inputs, steps, models.NewCrew(2), func(tt, b int, pred []float32, energy float64) {
		mu.Lock()
		got[[2]int{tt, b}], gotE[[2]int{tt, b}] = append([]float32(nil), pred...), energy
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, gotE
}

// TestHopfieldEnergyKeepsTheWeights: a recorded run measures each state's
// energy and then steps it, and the step reuses the weights the energy
// computed. Its states, pattern weights and energies are a run's that
// only steps, bit for bit; a run set to another state after its energy was
// measured takes the weights again.
func TestHopfieldEnergyKeepsTheWeights(t *testing.T) {
	data, m := modernHopfield(t)
	pt, _ := models.NewPatches(4)
	in := DefaultNoise.Apply(data.Test.Clean(3, mnist.PixelGain), pt, 3)
	measured, plain := m.Start(in).(*hopTraj), m.Start(in).(*hopTraj)
	restored := m.Start(in).(*hopTraj)
	n := measured.h.M
	a1, a2, a3 := make([]float32, n), make([]float32, n), make([]float32, n)
	same := func(what string, x, y []float32) {
		t.Helper()
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				t.Fatalf("%s[%d]: %g and %g", what, i, x[i], y[i])
			}
		}
	}
	for step := range 6 {
		e := measured.Energy()
		if want := measured.h.Energy(plain.xi, make([]float32, len(plain.p)), plain.beta); math.Float64bits(e) != math.Float64bits(want) {
			t.Fatalf("step %d: energy %v, the plain run's %v", step, e, want)
		}
		// restored measures another state (the input's), then is set to
		// the plain run's: its step must not use the input's weights.
		now := plain.Save()
		restored.Restore(in.Input)
		restored.Energy()
		restored.Restore(now)
		measured.Step(a1)
		plain.Step(a2)
		restored.Step(a3)
		same("state", measured.xi, plain.xi)
		same("weights", a1, a2)
		same("state after a restore", restored.xi, plain.xi)
		same("weights after a restore", a3, a2)
	}
}

// modernHopfield is the embedded data and the modern Hopfield network
// storing its training digits.
func modernHopfield(t *testing.T) (*mnist.Data, Model) {
	t.Helper()
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	set := DefaultSettings()
	set.Lanes = []string{"hopfield"}
	m, err := NewCatalogue(data.Train, WeightFiles{}).Model("hopfield", set)
	if err != nil {
		t.Fatal(err)
	}
	return data, m
}

// TestHopfieldWeightsFew: a few steps from a noisy digit (the demo's
// task), most of the modern network's 10,000 pattern weights are exactly
// 0, so the page's update leaves them out (models.addRowsSkipZeros,
// used where more than three in four are 0). From a half-masked digit it varies
// (the test logs it): the state can settle between many stored digits.
// The weights are those of the portable kernels, the page's (the purego
// and WebAssembly runs of the tests): the AVX-512 exp does not round the
// smallest to 0, and the desktop's update sums them all as before.
func TestHopfieldWeightsFew(t *testing.T) {
	if name, _ := models.Kernels(); name != "go" {
		t.Skipf("the %s kernels' weights: this measures the portable ones, the page's (make test-portable, make test-wasm)", name)
	}
	data, m := modernHopfield(t)
	pt, _ := models.NewPatches(4)
	mask := Corruption{Kind: Mask, Fraction: 0.5}
	for _, c := range []Corruption{DefaultNoise, mask} {
		lo, hi, sparse, steps := 1.0, 0.0, 0, 0
		for digit := range 10 {
			tr := m.Start(c.Apply(data.Test.Clean(digit, mnist.PixelGain), pt, digit)).(*hopTraj)
			attn := make([]float32, tr.h.M)
			for step := 1; step <= 30; step++ {
				tr.Step(attn)
				nz := 0
				for _, w := range attn {
					if w != 0 {
						nz++
					}
				}
				f := float64(nz) / float64(len(attn))
				steps++
				if f <= 0.25 {
					sparse++
				}
				if step < 3 {
					continue
				}
				lo, hi = min(lo, f), max(hi, f)
				if c.Kind == Noise && f > 0.25 {
					t.Errorf("digit %d, noise: %d of %d weights are not 0 at step %d", digit, nz, len(attn), step)
				}
			}
		}
		t.Logf("%v, 10 digits: from step 3 to 30, %.1f–%.1f %% of the weights are not 0; %d of the %d steps from 1 to 30 leave out the zeros", c.Kind, 100*lo, 100*hi, sparse, steps)
	}
}
