package lesson

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"attractorlab/sim"
)

// The lesson compatibility corpus (testdata/compat/v<Version>): the lesson
// files of this format version as a build wrote and shipped them, beside
// what each slide meant (expected.json). Every later build must open each
// to that meaning; a released folder is never rewritten.

var writeLessonCompat = flag.Bool("write-compat", false, "write testdata/compat/v<Version>/expected.json (a new format version only)")

// slideMeaning is what a slide means, as plain values.
type slideMeaning struct {
	Title, Caption, Question, Answer string
	Run                              Run
	Train                            *sim.TrainingForm
	Split, Corruption, Attention     string
	Index                            int
	Seed                             uint64
	Toggled                          []int
	Models                           []string
	Async                            bool
	Own                              string
	Pushes                           int
	Knobs                            map[string]float64
}

func meaningOf(s Slide) slideMeaning {
	st := s.Settings
	m := slideMeaning{Title: s.Title, Caption: s.Caption, Question: s.Question, Answer: s.Answer, Run: s.Run, Train: s.Train,
		Split: st.Split.String(), Corruption: st.Corruption.Kind.String(), Attention: st.Dyn.Attn.String(), Index: st.Index,
		Seed: st.Corruption.Seed, Toggled: st.Toggled, Models: st.Lanes, Async: st.Hop.Async, Pushes: len(st.Pushes),
		Knobs: map[string]float64{}}
	if st.Own != nil {
		m.Own = base64.StdEncoding.EncodeToString(st.Own)
	}
	for _, k := range sim.Knobs {
		m.Knobs[k.Field] = k.Get(st)
	}
	return m
}

// TestLessonCompatCorpus: every lesson file of every released format
// version opens, slide by slide, to what it meant when it was written (a
// knob added since takes its default, which is not compared).
func TestLessonCompatCorpus(t *testing.T) {
	lim, _, _ := testLimits(t)
	dirs, _ := filepath.Glob(filepath.Join("testdata", "compat", "v*"))
	if len(dirs) == 0 {
		t.Fatal("no lesson compatibility corpus")
	}
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		got := map[string][]slideMeaning{}
		for _, f := range files {
			if filepath.Base(f) == "expected.json" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			l, err := Parse(b, filepath.Base(f), lim)
			if err != nil {
				t.Fatalf("%s no longer opens: %v", f, err)
			}
			for _, s := range l.Slides {
				got[filepath.Base(f)] = append(got[filepath.Base(f)], meaningOf(s))
			}
		}
		exp := filepath.Join(dir, "expected.json")
		if *writeLessonCompat && strings.HasSuffix(dir, "v1") {
			if _, err := os.Stat(exp); err == nil {
				t.Fatalf("%s exists: a released corpus is never rewritten", exp)
			}
			b, _ := json.MarshalIndent(got, "", " ")
			if err := os.WriteFile(exp, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		b, err := os.ReadFile(exp)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string][]slideMeaning
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if len(want) != len(got) {
			t.Fatalf("%s: %d files, expected.json has %d", dir, len(got), len(want))
		}
		for name, ws := range want {
			gs := got[name]
			if len(gs) != len(ws) {
				t.Fatalf("%s/%s: %d slides, it had %d", dir, name, len(gs), len(ws))
			}
			for k := range ws {
				g, w := gs[k], ws[k]
				for f, v := range w.Knobs {
					if g.Knobs[f] != v {
						t.Errorf("%s/%s slide %d: %s = %v, it meant %v", dir, name, k+1, f, g.Knobs[f], v)
					}
				}
				g.Knobs, w.Knobs = nil, nil
				if !reflect.DeepEqual(g, w) {
					t.Errorf("%s/%s slide %d:\n got %+v\nwant %+v", dir, name, k+1, g, w)
				}
			}
		}
	}
}
