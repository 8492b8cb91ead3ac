package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"attractorlab/models"
	"attractorlab/models/infile/fifotest"
	"attractorlab/sim/mnist"
)

// scenarioWith is testdata/scenario.json with its models and hand-masked
// patches replaced.
func scenarioWith(t testing.TB, models, toggled string) []byte {
	t.Helper()
	good, err := os.ReadFile("testdata/scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	b := bytes.Replace(good, []byte(`"toggled_patches": [5]`), []byte(`"toggled_patches": `+toggled), 1)
	b = bytes.Replace(b, []byte(`"models": ["bsa-p2", "bsa-p4"]`), []byte(`"models": `+models), 1)
	if bytes.Equal(b, good) && toggled != "[5]" {
		t.Fatal("testdata/scenario.json changed: the fault was not made")
	}
	return b
}

// TestScenarioToggledPatches: hand-masked patches outside the models' mask
// grid, listed twice, or masking all but one patch are refused, naming the
// file, the field and the allowed range; the catalogue-free reader refuses
// what no grid has.
func TestScenarioToggledPatches(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	cat := NewCatalogue(data.Train, WeightFiles{})
	all49 := make([]string, 49)
	for i := range all49 {
		all49[i] = strconv.Itoa(i)
	}
	for _, c := range []struct {
		name, models, toggled string
		want                  string // "" accepted
		plain                 string // what ReadScenario without the catalogue says ("" accepted)
	}{
		{"good", `["bsa-p2", "bsa-p4"]`, `[5, 48]`, "", ""},
		{"issue", `["bsa-p2"]`, `[-1, 99999, 3, 3]`, "field toggled_patches: patch -1 is out of range (allowed 0 … 195", "patch -1 is out of range (allowed 0 … 783"},
		{"too large for P=2", `["bsa-p2"]`, `[196]`, "field toggled_patches: patch 196 is out of range (allowed 0 … 195: the models' mask grid has 14×14 patches", ""},
		{"too large for P=4", `["bsa-p4"]`, `[49]`, "patch 49 is out of range (allowed 0 … 48", ""},
		{"the coarsest grid", `["bsa-p2", "bsa-p4"]`, `[100]`, "allowed 0 … 48", ""},
		{"past the finest grid", `["bsa-p2"]`, `[784]`, "allowed 0 … 195", "allowed 0 … 783"},
		{"twice", `["bsa-p2"]`, `[3, 7, 3]`, "field toggled_patches: patch 3 is listed twice", "patch 3 is listed twice"},
		{"pixel models: 2-pixel grid", `["hopfield"]`, `[195]`, "", ""},
		{"all but one masked", `["bsa-p4"]`, "[" + strings.Join(all49[:48], ",") + "]", "at least 2 patches must stay unmasked", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := scenarioWith(t, c.models, c.toggled)
			b = bytes.Replace(b, []byte(`"mask_fraction": 0.3`), []byte(`"mask_fraction": 0`), 1)
			_, _, err := cat.ReadScenario(bytes.NewReader(b), "s.json")
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), "s.json: ") || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want s.json: …%s", err, c.want)
			}
			_, _, err = ReadScenario(bytes.NewReader(b), "s.json")
			switch {
			case c.plain == "" && err != nil:
				t.Fatalf("without the catalogue: refused: %v", err)
			case c.plain != "" && (err == nil || !strings.Contains(err.Error(), c.plain)):
				t.Fatalf("without the catalogue: error %v, want …%s", err, c.plain)
			}
		})
	}
}

// TestScenarioFileInputs: a scenario file is read through infile: a
// FIFO or a device is refused at once, naming the file, and so is a file
// over the limit.
func TestScenarioFileInputs(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	cat := NewCatalogue(data.Train, WeightFiles{})
	dir := t.TempDir()
	fifo := filepath.Join(dir, "s.json")
	fifotest.Make(t, fifo)
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, bytes.Repeat([]byte(" "), MaxScenarioSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, scenarioWith(t, `["bsa-p2", "bsa-p4"]`, "[5]"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: "FIFO", "/dev/zero": "character device", big: "the limit is 1048576 bytes", dir: "directory"} {
		_, _, err := cat.ReadScenarioFile(path)
		if err == nil || !strings.Contains(err.Error(), "scenario "+path) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one naming the file and saying %q", path, err, want)
		}
	}
	st, tt, err := cat.ReadScenarioFile(good)
	if err != nil || tt != 7 || !slices.Equal(st.Toggled, []int{5}) {
		t.Fatalf("good file: %+v t=%d %v", st, tt, err)
	}
}

// TestEngineToggledPatches: the engine refuses a patch its mask grid does
// not have, and a model change that moves to another grid forgets the
// hand-masked patches (numbered on the old grid) rather than keeping
// numbers a saved scenario could not be reopened with.
func TestEngineToggledPatches(t *testing.T) {
	e := testEngine(t, true, nil)
	e.Settle()
	e.TogglePatch(99999)
	sn := e.Snapshot()
	if !strings.Contains(sn.Err, "hand-masked patch 99999 is out of range (allowed 0 … 195") || len(sn.Settings.Toggled) != 0 {
		t.Fatalf("toggling patch 99999: err %q, toggled %v", sn.Err, sn.Settings.Toggled)
	}
	e.TogglePatch(150)
	if got := e.Snapshot().Settings.Toggled; !slices.Equal(got, []int{150}) {
		t.Fatalf("toggled %v, want [150]", got)
	}
	e.Update(func(s *Settings) { s.Lanes = []string{"bsa-p2", "bsa-p4"} })
	sn = e.Snapshot()
	if sn.Err != "" || len(sn.Lanes) != 2 || len(sn.Settings.Toggled) != 0 {
		t.Fatalf("after moving to the 7×7 grid: err %q, %d lanes, toggled %v", sn.Err, len(sn.Lanes), sn.Settings.Toggled)
	}
	var b bytes.Buffer
	if err := WriteScenario(&b, sn); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.s.cfg.Catalogue.ReadScenario(&b, "saved"); err != nil {
		t.Fatalf("the saved scenario does not reopen: %v", err)
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
		{"version", `"version": 1`, `"version": 3`, "field version = 3"},
		{"dataset in version 1", `"t": 7`, `"t": 7, "dataset": "fashion-mnist"`, "field dataset: version 1 files have none"},
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

// Attack 8: a wrong value in a push, or an unknown field in one, is named
// by its push and field, and a number out of a field's range by its range
// (the decoder named Go types: "ScenarioPush.pushes.seed of type uint64").
func TestScenarioFieldMessages(t *testing.T) {
	var b bytes.Buffer
	st := DefaultSettings()
	st.Pushes = []Push{{T: 2, Kind: Kick, Sigma2: 0.5, Seed: 3}, {T: 4, Kind: Kick, Sigma2: 0.5, Seed: 9}}
	if err := WriteScenario(&b, &Snapshot{Settings: st, T: 2}); err != nil {
		t.Fatal(err)
	}
	base := b.String()
	for _, c := range []struct{ from, to, want string }{
		{`"seed": 9`, `"seed": -1`, "f.json: field pushes: push 2: seed = -1 is out of range (allowed 0 … 18446744073709551615)"},
		{`"t": 4,`, `"t": 1e30,`, "f.json: field pushes: push 2: t = 1e30 is out of range (allowed 0 … 1000)"},
		{`"kind": "kick",`, `"kind": "kick", "colour": 1,`, `f.json: field pushes: push 1: unknown field "colour" (a push has t, kind, patches, sigma2, seed)`},
		{`"seed": 3`, `"seed": "three"`, "f.json: field pushes: push 1: seed: wrong type (string): want a whole number"},
		{`"seed": 0,`, `"seed": -1,`, "f.json: field seed = -1 is out of range (allowed 0 … 18446744073709551615)"},
		{`"hopfield_async": false`, `"hopfield_async": 1`, "f.json: field hopfield_async: wrong type (number): want true or false"},
	} {
		js := strings.Replace(base, c.from, c.to, 1)
		if js == base {
			t.Fatalf("%q not in the file", c.from)
		}
		_, _, err := ReadScenario(strings.NewReader(js), "f.json")
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.to, err, c.want)
		}
	}
}
