package lesson

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"attractorlab/models/infile/fifotest"
	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// allocated is what f allocates, in bytes.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestNestingBounded: deeply nested JSON, and many values under a long
// unknown key, are refused with memory in proportion to the file (the
// index of JSON paths grew with the square of the nesting depth: 120 KB
// of brackets took more than 4 GB).
func TestNestingBounded(t *testing.T) {
	lim, _, _ := testLimits(t)
	deep := func(depth int) []byte {
		return []byte(`{"version": 1, "title": "t", "slides": ` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}")
	}
	longKey := []byte(`{"version": 1, "title": "t", "slides": [{"` + strings.Repeat("k", 10000) + `": [` +
		strings.Repeat("0,", 10000) + `0]}]}`)
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"5,000 levels", deep(5000), "bad.json:1: nested deeper than the limit of 16 levels"},
		{"60,000 levels (120 KB)", deep(60000), "bad.json:1: nested deeper than the limit of 16 levels"},
		{"10,000 values under a 10 KB key", longKey, `bad.json:1: slides[0]."kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk…": unknown field`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, err = Parse(c.data, "bad.json", lim) })
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v, want %q…", err, c.want)
			}
			if limit := uint64(20*len(c.data) + 1<<20); n > limit {
				t.Fatalf("refusing %d bytes allocated %d bytes (limit %d)", len(c.data), n, limit)
			}
		})
	}
	// Sixteen levels are allowed (a lesson needs four), and the error
	// names the line where the seventeenth starts.
	ok := []byte(`{"version": 1, "title": "t", "slides": [{"title": "x", "run": {"to": 0}, "caption": "c", "scenario": {"models": ["bsa-p2"], "zz": ` +
		strings.Repeat("[", 12) + strings.Repeat("]", 12) + "}}]}")
	if _, err := Parse(ok, "ok.json", lim); err == nil || !strings.Contains(err.Error(), "zz: unknown field") {
		t.Fatalf("16 levels: %v, want the unknown field refused, not the depth", err)
	}
	deeper := bytes.Replace(ok, []byte("[[[["), []byte("[\n[[[["), 1)
	if _, err := Parse(deeper, "bad.json", lim); err == nil || !strings.HasPrefix(err.Error(), "bad.json:2: nested deeper") {
		t.Fatalf("17 levels: %v", err)
	}
}

// TestFileInputs: lesson files are read through infile: a FIFO, a device,
// a directory and a file over MaxSize are refused at once, naming the
// file and the limit; Parse and Read refuse more than MaxSize bytes too.
func TestFileInputs(t *testing.T) {
	lim, _, _ := testLimits(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "lesson.json")
	fifotest.Make(t, fifo)
	big := filepath.Join(dir, "big.json")
	huge := append([]byte(good), bytes.Repeat([]byte(" "), MaxSize)...)
	if err := os.WriteFile(big, huge, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: "named pipe (FIFO)", "/dev/zero": "character device", dir: "directory", big: "the limit is 1048576 bytes"} {
		done := make(chan error, 1)
		go func() { _, err := Load(path, lim); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "lesson "+path) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want an error naming the file and saying %q", path, err, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: Load still reading after 20 s", path)
		}
	}
	for _, f := range []func() error{
		func() error { _, err := Parse(huge, "big.json", lim); return err },
		func() error { _, err := Read(bytes.NewReader(huge), "big.json", lim); return err },
	} {
		if err := f(); err == nil || !strings.Contains(err.Error(), "big.json: 1.0 MB is larger than the limit of 1.0 MB for a lesson file") {
			t.Errorf("%d bytes: %v", len(huge), err)
		}
	}
	if err := os.WriteFile(big, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big, lim); err != nil {
		t.Fatal(err)
	}
}

// refused are the lesson files in testdata/refused and what each is
// refused for: lesson check, lesson export, --lesson and the window all
// refuse them with this error (app and ui test the same files).
var refused = map[string]string{
	"toggled-out-of-range.json":       ":18: slides[0].scenario.toggled_patches: hand-masked patch -1 is out of range (allowed 0 … 195: the models' mask grid has 14×14 patches",
	"toggled-twice.json":              ":18: slides[0].scenario.toggled_patches: hand-masked patch 3 is listed twice",
	"toggled-p4-grid.json":            ":18: slides[0].scenario.toggled_patches: hand-masked patch 49 is out of range (allowed 0 … 48",
	"escape-in-caption.json":          ":10: slides[0].caption: control character U+001B (escape) at character 5: only newline and tab are allowed",
	"carriage-return-in-caption.json": ":10: slides[0].caption: control character U+000D (carriage return) at character 9",
	"bidi-override-in-title.json":     ":6: slides[0].title: control character U+202E (bidirectional control) at character 4: none is allowed here",
	"c1-in-lesson-title.json":         ":3: title: control character U+009B (C1 control) at character 2",
	"deep.json":                       ":1: nested deeper than the limit of 16 levels",
}

// TestRefusedFiles: each file of testdata/refused is refused as refused
// says, naming the file, the line and the field.
func TestRefusedFiles(t *testing.T) {
	lim, _, _ := testLimits(t)
	files, _ := filepath.Glob("testdata/refused/*.json")
	if len(files) != len(refused) {
		t.Fatalf("%d files in testdata/refused, %d in the table", len(files), len(refused))
	}
	for _, f := range files {
		_, err := Load(f, lim)
		want := f + refused[filepath.Base(f)]
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q…", f, err, want)
		}
	}
}

// TestTextMayHoldNewlinesAndTabs: captions, questions and answers keep
// their newlines and tabs; titles take neither.
func TestTextMayHoldNewlinesAndTabs(t *testing.T) {
	lim, _, _ := testLimits(t)
	src := strings.Replace(good, `"MSE {mse_now}"`, `"MSE\t{mse_now}\nnext ünïcode → ok"`, 1)
	l, err := Parse([]byte(src), "ok.json", lim)
	if err != nil || l.Slides[0].Caption != "MSE\t{mse_now}\nnext ünïcode → ok" {
		t.Fatalf("%v", err)
	}
	src = strings.Replace(good, `"title": "one"`, `"title": "o\tne"`, 1)
	if _, err := Parse([]byte(src), "bad.json", lim); err == nil || !strings.Contains(err.Error(), "bad.json:6: slides[0].title: control character U+0009 (tab) at character 2: none is allowed here") {
		t.Fatalf("tab in a title: %v", err)
	}
}

// TestLessonToggledPatches: a slide's hand-masked patches follow the
// window's rules: kept from the slide before on the same grid, forgotten
// when the models move to another grid, and refused when they leave fewer
// than two patches unmasked.
func TestLessonToggledPatches(t *testing.T) {
	lim, _, _ := testLimits(t)
	two := func(second string) string {
		return `{"version": 1, "title": "t", "slides": [
 {"title": "a", "scenario": {"index": 3, "corruption": "mask", "models": ["bsa-p2"], "toggled_patches": [150, 7]}, "run": {"to": 0}, "caption": "c"},
 {"title": "b", "scenario": ` + second + `, "run": {"to": 0}, "caption": "c"}]}`
	}
	for _, c := range []struct {
		second  string
		toggled []int
		err     string
	}{
		{`{"index": 4}`, []int{150, 7}, ""},
		{`{"models": ["bsa-p4"]}`, nil, ""},
		{`{"models": ["bsa-p4"], "toggled_patches": [7]}`, []int{7}, ""},
		{`{"mask_fraction": 0.5}`, nil, ""},
		{`{"mask_fraction": 0, "models": ["bsa-p4"], "toggled_patches": [` + strings.Trim(strings.Repeat("x,", 48), ",") + `]}`, nil,
			"bad.json:3: slides[1].scenario.toggled_patches: hand-masked patches: at least 2 patches must stay unmasked"},
	} {
		second := c.second
		if strings.Contains(second, "x,") {
			var nums []string
			for i := range 48 {
				nums = append(nums, fmt.Sprint(i))
			}
			second = strings.Replace(second, strings.Trim(strings.Repeat("x,", 48), ","), strings.Join(nums, ","), 1)
		}
		l, err := Parse([]byte(two(second)), "bad.json", lim)
		if c.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.second, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.second, err)
			continue
		}
		if got := l.Slides[1].Settings.Toggled; fmt.Sprint(got) != fmt.Sprint(c.toggled) {
			t.Errorf("%s: second slide toggles %v, want %v", c.second, got, c.toggled)
		}
		// The second slide changes nothing of the first's.
		if first := l.Slides[0].Settings; fmt.Sprint(first.Lanes, first.Toggled) != "[bsa-p2] [150 7]" {
			t.Errorf("%s: the first slide became %v %v", c.second, first.Lanes, first.Toggled)
		}
	}
}

// TestLessonNeedsOnlyItsModels: a weights file that does not load takes
// away the lessons that use that model, naming the lesson and the file,
// and no other (issue 20: --lesson hopfield --weights-block FIFO failed
// naming another lesson).
func TestLessonNeedsOnlyItsModels(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "block.safetensors")
	if err := os.WriteFile(bad, []byte("not weights"), 0o600); err != nil {
		t.Fatal(err)
	}
	cat := sim.NewCatalogue(data.Train, sim.WeightFiles{"block": bad})
	lim := LimitsOf(data, cat)
	if _, err := Load("hopfield", lim); err != nil {
		t.Fatalf("hopfield with a bad block file: %v", err)
	}
	_, err = Load("three-models", lim)
	if err == nil || !strings.Contains(err.Error(), "shipped lesson three-models: lessons/4-three-models.json:8: slides[0].scenario.models: model \"block\" cannot run here") ||
		!strings.Contains(err.Error(), bad) {
		t.Fatalf("three-models with a bad block file: %v", err)
	}
	ls, err := Shipped(lim)
	names, nerr := ShippedNames()
	if nerr != nil {
		t.Fatal(nerr)
	}
	if len(ls) != len(names)-1 || err == nil || !strings.Contains(err.Error(), "three-models") || strings.Contains(err.Error(), "hopfield") {
		t.Fatalf("shipped with a bad block file: %d lessons, %v", len(ls), err)
	}
	// A FIFO as the block's weights: the hopfield lesson never opens it.
	fifo := filepath.Join(dir, "fifo.safetensors")
	fifotest.Make(t, fifo)
	lim = LimitsOf(data, sim.NewCatalogue(data.Train, sim.WeightFiles{"block": fifo}))
	done := make(chan error, 1)
	go func() { _, err := Load("hopfield", lim); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("hopfield with a FIFO as block weights: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Load(hopfield) is reading the block's FIFO")
	}
	// Not a shipped name and no such file: both are said.
	if _, err := Load("hopfeld", lim); err == nil || !errors.Is(err, os.ErrNotExist) ||
		!strings.Contains(err.Error(), `lesson "hopfeld" is neither a shipped lesson (transient-memory, masking, global-attractor, three-models, hopfield, watch-it-learn, why-it-leaves, clothing) nor a file`) {
		t.Fatalf("a misspelt name: %v", err)
	}
}
