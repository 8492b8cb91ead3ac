package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

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
	for path, want := range map[string]string{fifo: "FIFO", "/dev/zero": "character device", big: "the limit is 1.0 MB", dir: "directory"} {
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
