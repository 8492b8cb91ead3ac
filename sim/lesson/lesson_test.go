package lesson

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

func testLimits(t testing.TB) (Limits, *mnist.Data, *sim.Catalogue) {
	t.Helper()
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	cat := sim.NewCatalogue(data.Train, sim.WeightFiles{})
	return LimitsOf(data, cat), data, cat
}

// TestShippedLessons: every shipped lesson parses, has a question, and
// names are unique.
func TestShippedLessons(t *testing.T) {
	lim, _, _ := testLimits(t)
	ls, err := Shipped(lim)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 8 {
		t.Fatalf("%d shipped lessons, want 8", len(ls))
	}
	seen := map[string]bool{}
	for _, l := range ls {
		if seen[l.Name] || l.Title == "" || len(l.Slides) < 2 {
			t.Fatalf("lesson %q: title %q, %d slides", l.Name, l.Title, len(l.Slides))
		}
		seen[l.Name] = true
		q := 0
		for _, s := range l.Slides {
			if s.Question != "" {
				q++
			}
		}
		if q == 0 {
			t.Fatalf("lesson %s asks nothing", l.Name)
		}
	}
}

// TestShippedNames: the names a link may give are the shipped lessons',
// in order, and each reads back with Load.
func TestShippedNames(t *testing.T) {
	lim, _, _ := testLimits(t)
	ls, err := Shipped(lim)
	if err != nil {
		t.Fatal(err)
	}
	names, err := ShippedNames()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(ls) {
		t.Fatalf("%d names for %d lessons: %v", len(names), len(ls), names)
	}
	for k, l := range ls {
		if names[k] != l.Name {
			t.Fatalf("name %d is %q, the lesson's %q", k, names[k], l.Name)
		}
		if got, err := Load(names[k], lim); err != nil || got.Name != l.Name {
			t.Fatalf("Load(%q): %v", names[k], err)
		}
	}
}

const good = `{
  "version": 1,
  "title": "t",
  "slides": [
    {
      "title": "one",
      "scenario": {"index": 3, "corruption": "noise", "noise_sigma2": 0.5, "models": ["bsa-p2"]},
      "run": {"from": 0, "to": 10},
      "caption": "MSE {mse_now}",
      "question": "q?",
      "answer": "a {t_star:bsa-p2}"
    }
  ]
}`

// TestRefusals: each fault is refused naming the file, the line and the
// field; the good lesson they are made from is accepted.
func TestRefusals(t *testing.T) {
	lim, _, _ := testLimits(t)
	if _, err := Parse([]byte(good), "good.json", lim); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, from, to string
		line           int
		want           string
	}{
		{"wrong version", `"version": 1`, `"version": 2`, 2, "version: 2 is not a lesson version"},
		{"version missing", `"version": 1,`, ``, 1, "version: missing"},
		{"wrong type", `"index": 3`, `"index": "three"`, 7, "slides[0].scenario.index: wrong type: want a whole number"},
		{"seed too large", `"index": 3`, `"index": 3, "seed": 1e39`, 7, "slides[0].scenario.seed: seed = 1e39 is out of range (allowed 0 … 18446744073709551615)"},
		{"index too large", `"index": 3`, `"index": 1e39`, 7, "slides[0].scenario.index: index = 1e39 is out of range (allowed 0 … 9999"},
		{"index not whole", `"index": 3`, `"index": 2.5`, 7, "slides[0].scenario.index: wrong type: want a whole number"},
		{"unknown model", `["bsa-p2"]`, `["bsa-p9"]`, 7, `slides[0].scenario.models: model "bsa-p9" is not one of`},
		{"digit out of range", `"index": 3`, `"index": 100000`, 7, "slides[0].scenario.index: digit 100000 is out of range for the test split (allowed 0 … 999)"},
		{"level out of range", `"noise_sigma2": 0.5`, `"noise_sigma2": 9`, 7, "slides[0].scenario.noise_sigma2: field noise_sigma2 = 9 is out of range (allowed 0 … 4)"},
		{"missing caption", `"caption": "MSE {mse_now}",`, ``, 5, "slides[0].caption: missing"},
		{"unknown field", `"title": "one",`, `"title": "one", "colour": "red",`, 6, "slides[0].colour: unknown field"},
		{"unknown scenario field", `"index": 3,`, `"index": 3, "digit": 4,`, 7, "slides[0].scenario.digit: unknown field"},
		{"question without answer", `,
      "answer": "a {t_star:bsa-p2}"`, ``, 5, "slides[0].answer: missing"},
		{"unknown placeholder", `{mse_now}`, `{mse_later}`, 9, "slides[0].caption: unknown placeholder {mse_later}"},
		{"placeholder of another model", `{t_star:bsa-p2}`, `{t_star:vit}`, 11, "vit is not among the slide's models"},
		{"step out of range", `"to": 10`, `"to": 5000`, 8, "slides[0].run.to: 5000 is not a step from 0 to 1000"},
		{"run backwards", `"from": 0`, `"from": 20`, 8, `slides[0].run.from: 20 is after the run's "to" (10)`},
		{"train patch", `"run": {`, `"train": {"patch": 3}, "run": {`, 8, "slides[0].train.patch: must be 2 or 4"},
		{"train images", `"run": {`, `"train": {"images": 50}, "run": {`, 8, "slides[0].train.images: images = 50 is out of range (allowed 100 … 10000)"},
		{"train λ", `"run": {`, `"train": {"lambda": "five"}, "run": {`, 8, "slides[0].train.lambda: wrong type: want a number"},
		{"train start", `"run": {`, `"train": {"start": "old"}, "run": {`, 8, `slides[0].train.start: must be "random"`},
		{"train d too small", `"run": {`, `"train": {"d": 1}, "run": {`, 8, "slides[0].train.d: d = 1 is out of range for training at P=2 (allowed 8 … 57"},
		{"train d too large", `"run": {`, `"train": {"d": 100000}, "run": {`, 8, "slides[0].train.d: d = 100000 is out of range for training at P=2 (allowed 8 … 57"},
		{"train unknown field", `"run": {`, `"train": {"batch": 5}, "run": {`, 8, "slides[0].train.batch: unknown field"},
		{"no slides", "", "{\"version\": 1, \"title\": \"t\",\n \"slides\": []}", 2, "slides: a lesson needs at least one slide"},
		{"not JSON", `"title": "t",`, `"title": "t",,`, 3, "not valid JSON"},
		{"trailing data", "\n}", "\n} {}", 14, "more data after"},
	} {
		src := strings.Replace(good, c.from, c.to, 1)
		if c.from == "" {
			src = c.to
		}
		if src == good {
			t.Fatalf("%s: the fault was not made", c.name)
		}
		_, err := Parse([]byte(src), "bad.json", lim)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		want := fmt.Sprintf("bad.json:%d: ", c.line)
		if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q, want %q…%q", c.name, err, want, c.want)
		}
	}
}

// TestSlideNumbersAreTheModels: a slide's placeholders read the same
// numbers the window shows for its scenario at the end of its run.
func TestSlideNumbersAreTheModels(t *testing.T) {
	lim, data, cat := testLimits(t)
	l, err := Load("transient-memory", lim)
	if err != nil {
		t.Fatal(err)
	}
	s := l.Slides[1] // the dip: to t*
	e := sim.NewEngine(sim.EngineConfig{Data: data, Memories: sim.NewMemories(data.Train), Catalogue: cat,
		Settings: s.Settings, Synchronous: true})
	e.Settle()
	e.SeekBest()
	e.Settle()
	sn := e.Snapshot()
	lane := sn.Lanes[0]
	got := Fill("{t_star} {mse_t_star} {mse_input} {mse_now} {nearest_label} {corr_mean_digit}", sn)
	f := lane.At(sn.T)
	want := fmt.Sprintf("%d %.4f %.4f %.4f %d %.2f", lane.Best, lane.BestMSE, lane.Frames[0].MSE, f.MSE, f.NearLbl, f.CorrMean)
	if got != want || sn.T != lane.Best {
		t.Fatalf("filled %q at t = %d, the models say %q at t* = %d", got, sn.T, want, lane.Best)
	}
	// While the first model chosen has no lane (the page fetching its
	// weights), a placeholder for "the first model" waits for it rather
	// than reading the next model's numbers.
	waiting := *sn
	waiting.Settings.Lanes = append([]string{"vit"}, sn.Settings.Lanes...)
	waiting.Waiting = []string{"vit"}
	if got := Fill("{t_star}", &waiting); got != "{t_star}" {
		t.Errorf("with the first model waiting, {t_star} filled as %q from the second", got)
	}
	// The paper demo's numbers (sim.DemoDigit): t* = 30, 0.058 below 0.110.
	if lane.Best != 30 || !(lane.BestMSE < 0.06) || !(lane.Frames[0].MSE > 0.1) {
		t.Fatalf("transient memory at t* = %d, MSE %.4f from %.4f", lane.Best, lane.BestMSE, lane.Frames[0].MSE)
	}
}

// TestReadmeExample: the complete example in docs/lessons.md is a valid lesson.
func TestReadmeExample(t *testing.T) {
	lim, _, _ := testLimits(t)
	b, err := os.ReadFile("../../docs/lessons.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "# Lessons")
	j := strings.Index(s[max(i, 0):], "```json\n")
	if i < 0 || j < 0 {
		t.Fatal("docs/lessons.md has no lesson example")
	}
	body := s[i+j+len("```json\n"):]
	body = body[:strings.Index(body, "```")]
	l, err := Parse([]byte(body), "docs/lessons.md example", lim)
	if err != nil || len(l.Slides) != 2 {
		t.Fatalf("docs/lessons.md example: %v", err)
	}
}

// TestSlideTakesEveryKnob: a slide's scenario takes each knob's field
// (sim.Knobs) and keeps the slide before's value of those it leaves out;
// a value out of range is refused by the field's name.
func TestSlideTakesEveryKnob(t *testing.T) {
	lim, _, _ := testLimits(t)
	for _, k := range sim.Knobs {
		v := k.Max
		if v == k.Default {
			v = k.Min
		}
		two := fmt.Sprintf(`{"version": 1, "title": "t", "slides": [
  {"title": "one", "scenario": {"models": ["bsa-p2"], %q: %v}, "run": {"to": 1}, "caption": "c"},
  {"title": "two", "scenario": {"index": 1}, "run": {"to": 1}, "caption": "c"}]}`, k.Field, v)
		l, err := Parse([]byte(two), "k.json", lim)
		if err != nil {
			t.Fatalf("%s: %v", k.Field, err)
		}
		for i, s := range l.Slides {
			if got := k.Get(s.Settings); got != v {
				t.Errorf("%s: slide %d has %v, want %v", k.Field, i+1, got, v)
			}
		}
		bad := strings.Replace(two, fmt.Sprintf("%q: %v", k.Field, v), fmt.Sprintf("%q: %v", k.Field, k.Max+1), 1)
		if _, err := Parse([]byte(bad), "k.json", lim); err == nil || !strings.Contains(err.Error(), "scenario."+k.Field+": field "+k.Field) {
			t.Errorf("%s = %v: error %v, want one naming the field", k.Field, k.Max+1, err)
		}
	}
}
