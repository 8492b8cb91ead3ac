package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// The compatibility corpus (testdata/compat/vN): scenario files and links
// written by the build of scenario version N, each beside the state it was
// written with (expected.json). Every later build must open each to that
// state: a field a file lacks takes the value its version used. The
// corpus of a released version is never rewritten; a new version adds a
// folder (-write-compat writes the current version's, once).

var writeCompat = flag.Bool("write-compat", false, "write testdata/compat/v<ScenarioVersion> from the cases below (a new version only: released folders are never rewritten)")

// compatState is what a scenario means, as plain values: the state a
// file or link opens to.
type compatState struct {
	Split      string             `json:"split"`
	Index      int                `json:"index"`
	Corruption string             `json:"corruption"`
	Seed       uint64             `json:"seed"`
	Toggled    []int              `json:"toggled_patches"`
	Models     []string           `json:"models"`
	Attention  string             `json:"attention"`
	Async      bool               `json:"hopfield_async"`
	T          int                `json:"t"`
	Own        string             `json:"own_digit"`
	Pushes     []ScenarioPush     `json:"pushes"`
	Knobs      map[string]float64 `json:"knobs"`
	// Dataset is the data set's name; a corpus from before version 2
	// has none: MNIST.
	Dataset string `json:"dataset,omitempty"`
}

func compatOf(s Settings, t int) compatState {
	c := compatState{Split: s.Split.String(), Index: s.Index, Corruption: s.Corruption.Kind.String(), Seed: s.Corruption.Seed,
		Toggled: slices.Clone(s.Toggled), Models: slices.Clone(s.Lanes), Attention: s.Dyn.Attn.String(), Async: s.Hop.Async,
		T: t, Pushes: scenarioPushes(s.Pushes), Knobs: map[string]float64{}, Dataset: s.DatasetName()}
	if s.Own != nil {
		c.Own = base64.StdEncoding.EncodeToString(s.Own)
	}
	for _, k := range Knobs {
		c.Knobs[k.Field] = k.Get(s)
	}
	return c
}

// compatCases are the scenarios the corpus of this version holds: every
// kind of field written, at values other than the defaults.
func compatCases() map[string]struct {
	s Settings
	t int
} {
	own := make([]uint8, models.Pixels)
	for q := range own {
		if r, c := q/28, q%28; c >= 12 && c <= 15 && r >= 4 && r <= 23 {
			own[q] = 255
		}
	}
	out := map[string]struct {
		s Settings
		t int
	}{}
	add := func(name string, t int, edit func(*Settings)) {
		s := DefaultSettings()
		edit(&s)
		out[name] = struct {
			s Settings
			t int
		}{s, t}
	}
	add("paper-demo", 29, func(s *Settings) { *s = PaperDemo() })
	add("mask-toggled", 7, func(s *Settings) {
		s.Index, s.Corruption.Seed, s.Corruption.Fraction = 17, 3, 0.45
		s.Toggled = []int{5, 80}
		s.Lanes = []string{"bsa-p2", "bsa-p4"}
	})
	add("noise-four-models", 12, func(s *Settings) {
		s.Corruption = DefaultNoise
		s.Corruption.Sigma2, s.Corruption.Seed = 1.3, 9
		s.Lanes = []string{"bsa-p2", "block", "vit", "hopfield"}
		s.Dyn.Lambda, s.Dyn.Gamma = 2.5, 0.35
		s.Hop.Beta, s.Hop.K = 3, 25
	})
	add("relu-train-split", 3, func(s *Settings) {
		s.Split, s.Index = TrainSplit, 4242
		s.Dyn.Attn = models.ReluSeqlen
	})
	add("hopfield-classic-async", 40, func(s *Settings) {
		s.Corruption = DefaultNoise
		s.Lanes = []string{"hopfield-classic", "hopfield"}
		s.Hop.Async, s.Hop.K = true, 100
	})
	add("own-digit-pushes", 20, func(s *Settings) {
		s.Own = own
		s.Corruption = DefaultNoise
		s.Pushes = []Push{{T: 5, Kind: Erase, Patches: []int{30, 31, 44}}, {T: 9, Kind: Spray, Patches: []int{100}, Sigma2: 0.8, Seed: 2},
			{T: 14, Kind: Kick, Sigma2: 0.2, Seed: 7}}
	})
	add("fashion-noise", 25, func(s *Settings) {
		s.Dataset = mnist.FashionName
		s.Corruption = DefaultNoise
		s.Index = 123
		s.Lanes = []string{"bsa-p2", "hopfield"}
	})
	return out
}

func TestCompatCorpus(t *testing.T) {
	if *writeCompat {
		writeCompatCorpus(t)
	}
	dirs, _ := filepath.Glob(filepath.Join("testdata", "compat", "v*"))
	if len(dirs) == 0 {
		t.Fatal("no compatibility corpus in testdata/compat")
	}
	if want := filepath.Join("testdata", "compat", fmt.Sprintf("v%d", ScenarioVersion)); !slices.Contains(dirs, want) {
		t.Errorf("no corpus of the current scenario version in %s: go test ./sim -run TestCompatCorpus -write-compat", want)
	}
	for _, dir := range dirs {
		var expected map[string]compatState
		b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &expected); err != nil {
			t.Fatalf("%s/expected.json: %v", dir, err)
		}
		links := map[string]string{}
		lb, err := os.ReadFile(filepath.Join(dir, "links.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(lb)), "\n") {
			name, link, ok := strings.Cut(line, " ")
			if !ok {
				t.Fatalf("%s/links.txt: %q is not 'name link'", dir, line)
			}
			links[name] = link
		}
		for name, want := range expected {
			check := func(how string, s Settings, tt int, err error) {
				t.Helper()
				if err != nil {
					t.Errorf("%s %s (%s): %v", dir, name, how, err)
					return
				}
				got := compatOf(s, tt)
				if want.Dataset == "" {
					want.Dataset = mnist.MNISTName
				}
				// A knob added after this version: the value the
				// version used.
				for _, k := range Knobs {
					if _, ok := want.Knobs[k.Field]; !ok {
						want.Knobs[k.Field] = k.Earlier
					}
				}
				if !reflect.DeepEqual(normal(got), normal(want)) {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want)
					t.Errorf("%s %s (%s) opens to\n%s\nwant\n%s", dir, name, how, g, w)
				}
			}
			path := filepath.Join(dir, name+".scenario.json")
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			s, tt, err := ReadScenario(f, path)
			f.Close()
			check("file", s, tt, err)
			target, err := ParseLink(links[name], nil)
			check("link", target.Settings, target.T, err)
		}
	}
}

// normal makes nil and empty lists alike.
func normal(c compatState) compatState {
	if len(c.Toggled) == 0 {
		c.Toggled = nil
	}
	if len(c.Pushes) == 0 {
		c.Pushes = nil
	}
	return c
}

func writeCompatCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "compat", fmt.Sprintf("v%d", ScenarioVersion))
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("%s exists: a released version's corpus is never rewritten (raise ScenarioVersion for a new one)", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	expected := map[string]compatState{}
	var links []string
	cases := compatCases()
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		c := cases[name]
		if err := c.s.Validate(ViaField); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b bytes.Buffer
		if err := WriteScenario(&b, &Snapshot{Settings: c.s, T: c.t}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".scenario.json"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		link, err := EncodeLink("https://attractorlab.example/", c.s, c.t)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		links = append(links, name+" "+link)
		expected[name] = compatOf(c.s, c.t)
	}
	b, err := json.MarshalIndent(expected, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "expected.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "links.txt"), []byte(strings.Join(links, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A file of an earlier version lacks the knobs added after it: they take
// the value that version used; a file of this version must have them.
func TestScenarioMissingFieldByVersion(t *testing.T) {
	saved := Lambda.Since
	savedEarlier := Lambda.Earlier
	t.Cleanup(func() { Lambda.Since, Lambda.Earlier = saved, savedEarlier })
	var b bytes.Buffer
	st := DefaultSettings()
	st.Dyn.Lambda = 3
	if err := WriteScenario(&b, &Snapshot{Settings: st, T: 4}); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "lambda")
	without, _ := json.Marshal(m)

	// Today λ is written by every version: its absence is an error.
	if _, _, err := ReadScenario(bytes.NewReader(without), "old.json"); err == nil || !strings.Contains(err.Error(), "field lambda is missing") {
		t.Errorf("a version-%d file without lambda: %v, want it refused by name", ScenarioVersion, err)
	}
	// Had λ first been written by the next version, with 2 before it, a
	// file of this version would read λ = 2.
	Lambda.Since, Lambda.Earlier = ScenarioVersion+1, 2
	s, _, err := ReadScenario(bytes.NewReader(without), "old.json")
	if err != nil {
		t.Fatal(err)
	}
	if s.Dyn.Lambda != 2 {
		t.Errorf("λ read as %v from a file written before it, want the 2 that version used", s.Dyn.Lambda)
	}
	// Versions out of range.
	for v, want := range map[string]string{
		"0":     "field version = 0 is out of range (allowed 1 … ",
		"-3":    "field version = -3 is out of range",
		"99":    "written by a newer Attractor Lab",
		`"one"`: `field version = "one": want a whole number`,
		"1.5":   "field version = 1.5: want a whole number",
	} {
		m["version"] = json.RawMessage(v)
		bb, _ := json.Marshal(m)
		if _, _, err := ReadScenario(bytes.NewReader(bb), "v.json"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("version %s: %v, want %q", v, err, want)
		}
	}
}

// Every knob of this version is in this version's corpus: a knob added
// without raising ScenarioVersion would leave earlier files unreadable.
func TestNewKnobRaisesTheVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "compat", fmt.Sprintf("v%d", ScenarioVersion), "expected.json"))
	if err != nil {
		t.Fatalf("%v: a new ScenarioVersion needs its corpus (-write-compat)", err)
	}
	var expected map[string]compatState
	if err := json.Unmarshal(b, &expected); err != nil {
		t.Fatal(err)
	}
	for _, k := range Knobs {
		for name, c := range expected {
			if _, ok := c.Knobs[k.Field]; !ok && k.since() <= ScenarioVersion {
				t.Errorf("knob %s is not in version %d's corpus (%s): a new knob needs Since = ScenarioVersion+1, its Earlier value, and a new corpus", k.Field, ScenarioVersion, name)
			}
		}
		if k.since() > ScenarioVersion {
			t.Errorf("knob %s is first written by version %d, but this code writes %d", k.Field, k.since(), ScenarioVersion)
		}
	}
}
