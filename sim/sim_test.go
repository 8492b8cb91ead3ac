package sim

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

func TestCorruption(t *testing.T) {
	_, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	pt, _ := models.NewPatches(2)
	clean := test.Clean(3, mnist.PixelGain)
	for q, v := range clean {
		if v < 0 || v > 1 || (test.Raw(3)[q] >= 128 && v != 1) {
			t.Fatalf("gain: pixel %d = %g", q, v)
		}
	}
	c := Corruption{Kind: Mask, Fraction: 0.3, Seed: 4}
	a, b := c.Apply(clean, pt, 3), c.Apply(clean, pt, 3)
	n := 0
	for i, m := range a.Masked {
		if m != b.Masked[i] {
			t.Fatal("masking is not reproducible")
		}
		if m {
			n++
		}
	}
	if n != 58 { // ⌊0.3·196⌋
		t.Fatalf("%d tokens masked, want 58", n)
	}
	for q, m := range a.Pixel {
		if m && a.Input[q] != 0 || !m && a.Input[q] != clean[q] {
			t.Fatalf("pixel %d: masked=%v input %g clean %g", q, m, a.Input[q], clean[q])
		}
	}
	if other := (Corruption{Kind: Mask, Fraction: 0.3, Seed: 5}).Apply(clean, pt, 3); equalBools(other.Masked, a.Masked) {
		t.Fatal("a different seed gives the same mask")
	}
	nz := Corruption{Kind: Noise, Sigma2: 0.7, Seed: 1}.Apply(clean, pt, 3)
	_, sc := meanStd64(clean)
	_, sn := meanStd64(nz.Input)
	if math.Abs(sc-sn) > 1e-4 {
		t.Fatalf("noisy std %g, clean std %g: variance not restored", sn, sc)
	}
	if nz.Masked != nil {
		t.Fatal("noise has a mask")
	}
	if mse, _, _ := MSE(nz.Input, clean, nil); mse < 0.01 {
		t.Fatalf("noise MSE %g is too small for σ² = 0.7", mse)
	}
}

func equalBools(a, b []bool) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMetrics(t *testing.T) {
	clean := []float32{0, 1, 0.5, 0.5}
	pred := []float32{-1, 2, 0.5, 0} // clamped to 0, 1, .5, 0
	all, m, u := MSE(pred, clean, []bool{false, false, false, true})
	if all != 0.0625 || m != 0.25 || u != 0 {
		t.Fatalf("MSE = %g %g %g", all, m, u)
	}
	if p := Pearson([]float32{1, 2, 3}, []float32{2, 4, 6}); math.Abs(p-1) > 1e-12 {
		t.Fatalf("Pearson %g", p)
	}
	if p := Pearson([]float32{1, 1, 1}, []float32{2, 4, 6}); p != 0 {
		t.Fatalf("Pearson of a constant %g", p)
	}
	v := PatchVariance(nil, []float32{0, 1, 0.5, 0.5}, []int{0, 1, 2, 3}, 2, []bool{true, true})
	if v[0] != 0.25 || v[1] != 0 {
		t.Fatalf("patch variance %v", v)
	}
}

func FuzzReadScenario(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.json")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":1}`))
	data, err := mnist.LoadData("")
	if err != nil {
		f.Fatal(err)
	}
	cat := NewCatalogue(data.Train, WeightFiles{})
	f.Fuzz(func(t *testing.T, b []byte) {
		st, tt, err := ReadScenario(bytes.NewReader(b), "fuzz.json")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
		} else if tt < 0 || st.Validate(ViaField) != nil || !patchesOf(st.Toggled, models.Pixels) {
			t.Fatalf("accepted an invalid scenario: %+v t=%d", st, tt)
		}
		// With the models at hand: the hand-masked patches are patches of
		// their mask grid, once each.
		cst, _, cerr := cat.ReadScenario(bytes.NewReader(b), "fuzz.json")
		if cerr != nil {
			if !strings.HasPrefix(cerr.Error(), "fuzz.json: ") {
				t.Fatalf("error does not name the file: %v", cerr)
			}
			return
		}
		if err != nil {
			t.Fatalf("the catalogue accepted what ReadScenario refused (%v)", err)
		}
		g := 28 / cat.MaskGrid(cst.Lanes)
		if !patchesOf(cst.Toggled, g*g) {
			t.Fatalf("accepted patches %v on a %d×%d grid", cst.Toggled, g, g)
		}
	})
}

// patchesOf reports whether every number is a patch 0 … n−1, once each.
func patchesOf(toggled []int, n int) bool {
	seen := map[int]bool{}
	for _, i := range toggled {
		if i < 0 || i >= n || seen[i] {
			return false
		}
		seen[i] = true
	}
	return true
}

func TestPatchVarianceRaw(t *testing.T) {
	pt, _ := models.NewPatches(4)
	pred := make([]float32, models.Pixels)
	masked := make([]bool, pt.N)
	masked[3], masked[10] = true, true
	for k := 0; k < pt.A; k++ {
		pred[pt.Index[3*pt.A+k]] = float32(k%2) * 0.5  // in range: 0 or 0.5
		pred[pt.Index[10*pt.A+k]] = float32(k%2)*3 - 1 // −1 or 2: all outside
	}
	clamped := PatchVariance(nil, pred, pt.Index, pt.A, masked)
	raw, out := PatchVarianceRaw(nil, pred, pt.Index, pt.A, masked)
	if out != pt.A || len(raw) != 2 {
		t.Fatalf("%d pixels outside, %d variances", out, len(raw))
	}
	if math.Abs(raw[0]-0.0625) > 1e-9 || raw[0] != clamped[0] {
		t.Fatalf("in-range patch: raw %g clamped %g, want 0.0625", raw[0], clamped[0])
	}
	if math.Abs(raw[1]-2.25) > 1e-9 || math.Abs(clamped[1]-0.25) > 1e-9 {
		t.Fatalf("outside patch: raw %g (want 2.25), clamped %g (want 0.25)", raw[1], clamped[1])
	}
}

// TestScenarioRefusals: a scenario with a value out of range, a missing or
// unknown field or a name the app does not know is refused, naming the file
// and the field; nothing is replaced by a default.
func TestScenarioRefusals(t *testing.T) {
	good, err := os.ReadFile("testdata/scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadScenario(bytes.NewReader(good), "s.json"); err != nil {
		t.Fatalf("the good scenario: %v", err)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"version", `"version": 1`, `"version": 2`, "field version = 2"},
		{"mask fraction", `"mask_fraction": 0.3`, `"mask_fraction": 2`, "field mask_fraction = 2 is out of range (allowed 0 … 0.9)"},
		{"σ²", `"noise_sigma2": 0.7`, `"noise_sigma2": -1`, "field noise_sigma2 = -1"},
		{"λ", `"lambda": 1`, `"lambda": 0`, "field lambda = 0 is out of range (allowed 0.1 … 10)"},
		{"β zero", `"hopfield_beta": 1`, `"hopfield_beta": 0`, "field hopfield_beta = 0"},
		{"K", `"hopfield_k": 10`, `"hopfield_k": 100000`, "field hopfield_k = 100000"},
		{"split", `"split": "test"`, `"split": "dev"`, `field split: split "dev"`},
		{"attention", `"attention": "softmax"`, `"attention": "tanh"`, "field attention"},
		{"model", `"bsa-p4"]`, `"gpt"]`, `model "gpt" is not one of`},
		{"missing", `"gamma": 0.5,`, ``, "field gamma is missing"},
		{"unknown", `"t": 7`, `"t": 7, "colour": 1`, `unknown field "colour"`},
		{"wrong type", `"index": 17`, `"index": "17"`, "index"},
		{"t", `"t": 7`, `"t": -1`, "field t = -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := strings.Replace(string(good), c.from, c.to, 1)
			if b == string(good) {
				t.Fatalf("%q is not in the scenario", c.from)
			}
			_, _, err := ReadScenario(strings.NewReader(b), "s.json")
			if err == nil || !strings.Contains(err.Error(), "s.json") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming s.json and saying %q", err, c.want)
			}
		})
	}
}

func FuzzReadCurveCSV(f *testing.F) {
	c := &Curve{Model: "x", Task: Mask, Rows: []Row{{T: 0, MSE: 0.1}, {T: 1, MSE: 0.05, MSEMasked: math.NaN()}}}
	var b bytes.Buffer
	c.WriteCSV(&b)
	f.Add(b.Bytes())
	f.Add([]byte(""))
	f.Add([]byte("t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReadCurveCSV(bytes.NewReader(data), "fuzz.csv", "x", Mask)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(got.Rows) == 0 {
			t.Fatal("accepted a curve without rows")
		}
	})
}

// A model the web build has not fetched yet is listed with the shape its
// weights give once loaded, and LoadAll leaves it for later.
func TestDeferredModelInfo(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	loaded := NewCatalogue(data.Train, WeightFiles{})
	want := map[string]ModelInfo{}
	for _, info := range loaded.Available() {
		want[info.Name] = info
	}
	cat := NewCatalogue(data.Train, WeightFiles{})
	var asked []string
	cat.deferred = func(name string) bool {
		asked = append(asked, name)
		return name == "bsa-p2" || name == "bsa-p4" || name == "block" || name == "vit"
	}
	if _, err := cat.LoadAll(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bsa-p4", "block", "vit"} {
		if _, ok := cat.loaded[name]; ok {
			t.Fatalf("LoadAll fetched %s's deferred weights", name)
		}
	}
	if n := len(cat.Available()); n != len(want) {
		t.Fatalf("%d models before their weights came, %d loaded", n, len(want))
	}
	for _, info := range cat.Available() {
		if info != want[info.Name] {
			t.Errorf("%s before its weights came: %+v, loaded: %+v", info.Name, info, want[info.Name])
		}
	}
	for _, name := range []string{"bsa-p4", "vit"} {
		if _, err := cat.Model(name, DefaultSettings()); err != nil {
			t.Fatal(err)
		}
		if _, ok := cat.loaded[name]; !ok {
			t.Errorf("Model did not load %s", name)
		}
	}
	if len(asked) == 0 {
		t.Error("the catalogue never asked whether weights were deferred")
	}
}

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
