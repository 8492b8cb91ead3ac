package main

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestREADMEResults re-runs the README's results table — every model, both
// tasks, the embedded 1,000 test digits, 100 steps, seed 0, as the command
// it names — and holds each number to what the README prints: t* exactly,
// MSE(t*) within 0.5% (the four printed digits, and the last bits the
// kernels' summation order may move). A model that got 20% worse, or whose
// transient memory moved by a step, fails here.
func TestREADMEResults(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs the README's results table (about 2 minutes)")
	}
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	type cell struct {
		tStar int
		mse   float64
	}
	want := map[string]map[string]cell{"mask": {}, "noise": {}}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| model | mask: t*") {
			in = true
			continue
		}
		if !in || strings.HasPrefix(line, "|---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			if len(want["mask"]) > 0 {
				break
			}
			continue
		}
		f := strings.Split(strings.Trim(line, "| "), "|")
		if len(f) != 5 {
			t.Fatalf("README results row %q: want model and four numbers", line)
		}
		for k := range f {
			f[k] = strings.TrimSpace(f[k])
		}
		for i, task := range []string{"mask", "noise"} {
			ts, err1 := strconv.Atoi(f[1+2*i])
			m, err2 := strconv.ParseFloat(f[2+2*i], 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("README results row %q: %v %v", line, err1, err2)
			}
			want[task][f[0]] = cell{ts, m}
		}
	}
	if len(want["mask"]) != 6 {
		t.Fatalf("README results table: %d models, want the six", len(want["mask"]))
	}
	for _, task := range []string{"mask", "noise"} {
		out := filepath.Join(t.TempDir(), task)
		if err := run(context.Background(), []string{"reproduce", "--model", "all", "--task", task, "--n", "1000", "--steps", "100", "--seed", "0", "--out", out}); err != nil {
			t.Fatal(err)
		}
		for model, w := range want[task] {
			ts, m := bestOfCurve(t, filepath.Join(out, model, "curve.csv"))
			if ts != w.tStar || math.Abs(m-w.mse) > 0.005*w.mse {
				t.Errorf("%s, %s: t* = %d, MSE(t*) = %.5f; the README says t* = %d, %.4f", model, task, ts, m, w.tStar, w.mse)
			}
		}
	}
}

// bestOfCurve is t* (the step t ≥ 1 of the lowest mean MSE, the first of
// equal ones) and its MSE, read from a reproduce curve.csv.
func bestOfCurve(t *testing.T, path string) (int, float64) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	bt, bm := 0, math.Inf(1)
	for _, r := range rows[2:] { // the header, then t = 0
		ts, _ := strconv.Atoi(r[0])
		m, _ := strconv.ParseFloat(r[1], 64)
		if m < bm {
			bt, bm = ts, m
		}
	}
	return bt, bm
}
