package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"attractorlab/sim"
)

// readmeRow is one row of the README's results table: a model on a task,
// its best step beside the input's error, and under masking where the
// error is.
type readmeRow struct {
	input    float64
	best     int  // the best step t ≥ 1
	improves bool // named t* (it beats the input) or "none"
	mse      float64
	masked   [2]float64 // t = 0, best step (NaN under noise)
	visible  [2]float64
}

// readmeHeader starts the README's results table.
const readmeHeader = "| model | task | input MSE(0) | t* | MSE at t* (or the best t) | masked pixels: t = 0 → t | visible pixels: t = 0 → t |"

// readmeResults reads the README's results table: model → task → row.
func readmeResults(t *testing.T) map[string]map[string]readmeRow {
	return readResultsTable(t, "../README.md", readmeHeader)
}

// readResultsTable reads the results table under header in the document
// at path (the README's columns): model → task → row.
func readResultsTable(t *testing.T, path, header string) map[string]map[string]readmeRow {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]readmeRow{}
	in := false
	num := func(line, s string) float64 {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			t.Fatalf("README results row %q: %q is not a number", line, s)
		}
		return v
	}
	pair := func(line, s string) [2]float64 {
		if strings.TrimSpace(s) == "—" {
			return [2]float64{math.NaN(), math.NaN()}
		}
		a, b, ok := strings.Cut(s, "→")
		if !ok {
			t.Fatalf("README results row %q: %q is not \"a → b\"", line, s)
		}
		return [2]float64{num(line, a), num(line, b)}
	}
	for _, line := range strings.Split(string(b), "\n") {
		if line == header {
			in = true
			continue
		}
		if !in || strings.HasPrefix(line, "|---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		f := strings.Split(strings.Trim(line, "| "), "|")
		if len(f) != 7 {
			t.Fatalf("README results row %q: want 7 columns", line)
		}
		for k := range f {
			f[k] = strings.TrimSpace(f[k])
		}
		r := readmeRow{input: num(line, f[2]), mse: num(line, f[4]), masked: pair(line, f[5]), visible: pair(line, f[6])}
		if n, err := fmt.Sscanf(f[3], "none (best t = %d)", &r.best); err == nil && n == 1 {
			r.improves = false
		} else if v, err := strconv.Atoi(f[3]); err == nil {
			r.best, r.improves = v, true
		} else {
			t.Fatalf("README results row %q: t* %q is neither a step nor \"none (best t = N)\"", line, f[3])
		}
		if out[f[0]] == nil {
			out[f[0]] = map[string]readmeRow{}
		}
		if _, dup := out[f[0]][f[1]]; dup {
			t.Fatalf("README results: %s %s twice", f[0], f[1])
		}
		out[f[0]][f[1]] = r
	}
	if !in {
		t.Fatalf("%s has no results table (header %q)", path, header)
	}
	return out
}

// TestREADMEResults re-runs the README's results table — every model of
// the registry, both tasks, the embedded 1,000 test digits, 100 steps,
// seed 0, as the command it names — and holds each number to what the
// README prints: the best step and whether it beats the input exactly,
// the errors within 0.5% (the four printed digits, and the last bits the
// kernels' summation order may move). The rows are the registry's: a
// model added to it needs its row. A model that got 20% worse, whose
// transient memory moved by a step, or that stopped beating its input,
// fails here.
func TestREADMEResults(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs the README's results table (about 4 minutes)")
	}
	checkResultsTable(t, readmeResults(t), "the README", 1000, nil)
}

// fashionHeader starts docs/results.md's table of the embedded
// Fashion-MNIST sample.
const fashionHeader = "| model (shipped weights, trained on MNIST) | task | input MSE(0) | t* | MSE at t* (or the best t) | masked pixels: t = 0 → t | visible pixels: t = 0 → t |"

// TestFashionSampleResults re-runs docs/results.md's table of the
// embedded Fashion-MNIST sample (its first 200 test pictures; the shipped
// weights, trained on MNIST, and the Hopfield networks storing the
// sample's garments) and holds it as TestREADMEResults holds the
// README's.
func TestFashionSampleResults(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs docs/results.md's Fashion-MNIST sample table")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // no converted Fashion-MNIST: the sample
	checkResultsTable(t, readResultsTable(t, "../docs/results.md", fashionHeader), "docs/results.md's Fashion-MNIST sample table", 200, []string{"--dataset", "fashion-mnist"})
}

// checkResultsTable runs reproduce --model all for both tasks (with
// extra flags) and holds each number to the table's (doc names it).
func checkResultsTable(t *testing.T, want map[string]map[string]readmeRow, doc string, n int, extra []string) {
	var names []string
	for name := range want {
		names = append(names, name)
	}
	slices.Sort(names)
	reg := slices.Clone(sim.ModelNames)
	slices.Sort(reg)
	if !slices.Equal(names, reg) {
		t.Fatalf("%s has %v, the registry %v", doc, names, reg)
	}
	near := func(got, want float64) bool {
		if math.IsNaN(want) {
			return math.IsNaN(got)
		}
		return math.Abs(got-want) <= max(0.005*math.Abs(want), 6e-5)
	}
	for _, task := range []string{"mask", "noise"} {
		out := filepath.Join(t.TempDir(), task)
		args := append([]string{"reproduce", "--model", "all", "--task", task, "--n", fmt.Sprint(n), "--steps", "100", "--seed", "0", "--out", out}, extra...)
		if err := run(context.Background(), args); err != nil {
			t.Fatal(err)
		}
		got := readSummary(t, filepath.Join(out, "summary.csv"))
		for _, model := range sim.ModelNames {
			w, ok := want[model][task]
			if !ok {
				t.Errorf("%s has no row for %s, %s", doc, model, task)
				continue
			}
			g := got[model]
			if g.best != w.best || g.improves != w.improves || !near(g.input, w.input) || !near(g.mse, w.mse) ||
				!near(g.masked[0], w.masked[0]) || !near(g.masked[1], w.masked[1]) || !near(g.visible[0], w.visible[0]) || !near(g.visible[1], w.visible[1]) {
				t.Errorf("%s, %s: measured %+v; %s says %+v", model, task, g, doc, w)
			}
		}
	}
}

// readSummary reads a reproduce summary.csv: model → row.
func readSummary(t *testing.T, path string) map[string]readmeRow {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows[0], sim.SummaryColumns) {
		t.Fatalf("%s: columns %v", path, rows[0])
	}
	out := map[string]readmeRow{}
	for _, r := range rows[1:] {
		v := func(k int) float64 {
			x, err := strconv.ParseFloat(r[k], 64)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return x
		}
		best, _ := strconv.Atoi(r[4])
		out[r[0]] = readmeRow{best: best, improves: r[5] == "true", mse: v(6), input: v(7),
			masked: [2]float64{v(9), v(8)}, visible: [2]float64{v(11), v(10)}}
	}
	return out
}
