package sweep

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"attractorlab/models/infile/fifotest"
	"attractorlab/sim"
)

// within runs f, failing the test if it has not returned by the deadline
// (a read of a FIFO or /dev/zero hangs or fills memory).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still running after 20 s", what)
	}
}

const csvHead = "model,task,level,param,seed,n,t_star,mse_t_star,mse_0,improves,mse_end,escape_step\n"

// TestReadCSVRefusesValues: every value column is checked, naming the
// file, line and column and the allowed values (mse 9.99, -Inf, t_star
// −7, escape_step 2⁶³−1 were read as they stood).
func TestReadCSVRefusesValues(t *testing.T) {
	good := "bsa-p2,noise,0.3,0.5,0,6,3,0.05,0.1,true,0.2,7"
	if _, err := ReadCSV(strings.NewReader(csvHead+good+"\n"), "x.csv"); err != nil {
		t.Fatalf("a good row: %v", err)
	}
	for _, c := range []struct{ row, want string }{
		{"bsa-p2,noise,0.3,0.5,0,6,3,-Inf,0.1,true,0.2,7", "mse_t_star"},
		{"bsa-p2,noise,0.3,0.5,0,6,3,9.99,0.1,false,0.2,7", "mse_t_star"},
		{"bsa-p2,noise,0.3,0.5,0,6,3,NaN,0.1,false,0.2,7", "mse_t_star"},
		{"bsa-p2,noise,0.3,0.5,0,6,3,0.05,inf,true,0.2,7", "mse_0"},
		{"bsa-p2,noise,0.3,0.5,0,6,3,0.05,,true,0.2,7", "mse_0"},
		{"bsa-p2,noise,0.3,0.5,0,6,3,0.05,0.1,true,-0.2,7", "mse_end"},
		{"bsa-p2,noise,0.3,0.5,0,6,-7,0.05,0.1,true,0.2,", "t_star"},
		{"bsa-p2,noise,0.3,0.5,0,6,3,0.05,0.1,true,0.2,9223372036854775807", "escape_step"},
		{"bsa-p2,noise,0.3,0.5,0,6,3,0.05,0.1,true,0.2,3", "escape_step"},
		{"bsa-p2,noise,0.3,0.5,0,0,3,0.05,0.1,true,0.2,7", "n"},
		{"bsa-p2,noise,0.3,0.5,0,99999,3,0.05,0.1,true,0.2,7", "n"},
		{"bsa-p2,noise,0.3,0.5,-1,6,3,0.05,0.1,true,0.2,7", "seed"},
		{"bsa-p2,blur,0.3,0.5,0,6,3,0.05,0.1,true,0.2,7", "task"},
		{"bsa-p9,noise,0.3,0.5,0,6,3,0.05,0.1,true,0.2,7", "model"},
		{"bsa-p2,noise,Inf,0.5,0,6,3,0.05,0.1,true,0.2,7", "level"},
		{"bsa-p2,noise,0.3,NaN,0,6,3,0.05,0.1,true,0.2,7", "param"},
		{"bsa-p2,noise,0.3,0.5,0,6,3,0.05,0.1,yes,0.2,7", "improves"},
		{"bsa-p2,noise,0.3,0.5,0,6,3,0.05,0.1,false,0.2,7", "improves"},
		{"bsa-p2,noise,0.3,0.5,0,6,3,0.15,0.1,true,0.2,7", "improves"},
		{"bsa-p2,noise,0.3,0.5,0,6,0,0.05,0.1,true,0.2,", "t_star"},
		{"bsa-p2,noise,0.3,0.5,0,6,3,,0.1,false,0.2,", "mse_t_star"},
	} {
		_, err := ReadCSV(strings.NewReader(csvHead+good+"\n"+c.row+"\n"), "x.csv")
		if err == nil {
			t.Errorf("accepted %s", c.row)
			continue
		}
		if !strings.Contains(err.Error(), "x.csv line 3: "+c.want) {
			t.Errorf("%s: error %q does not name x.csv line 3: %s", c.row, err, c.want)
		}
	}
}

// editPart rewrites the file name in dir through f.
func editPart(t *testing.T, dir, name string, f func(string) string) {
	t.Helper()
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(f(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMergeChecksValues: a part's table must match its manifest (n, the
// task, t* and the escape step within the steps run) and the checksum the
// manifest records; mse 0.02 for 0.01, n 99999 and t_star −7 merged.
func TestMergeChecksValues(t *testing.T) {
	cfg := smallConfig()
	cells := cfg.Cells()
	fake := func(cs []Cell) []Result {
		var out []Result
		for _, c := range cs {
			out = append(out, Result{Cell: c, N: 6, TStar: 1 + c.Index, MSETStar: 0.01 * float64(c.Index+1), MSE0: 0.5, Improves: true, MSEEnd: 0.6, Escape: -1})
		}
		return out
	}
	parts := func(t *testing.T, rows0 []Result) []string {
		root := t.TempDir()
		var dirs []string
		for i := 0; i < 2; i++ {
			d := filepath.Join(root, fmt.Sprint(i))
			rs := fake(Shard(cells, i, 2))
			if i == 0 && rows0 != nil {
				rs = rows0
			}
			writePart(t, d, cfg, rs, i, 2)
			dirs = append(dirs, d)
		}
		return dirs
	}
	if _, _, _, err := Merge(context.Background(), parts(t, nil)); err != nil {
		t.Fatal(err)
	}
	// Rows written (and checksummed) as a sweep would, but not its values.
	for _, c := range []struct {
		edit func(r *Result)
		want string
	}{
		{func(r *Result) { r.N = 5 }, `n = "5" is not the sweep's n (6`},
		{func(r *Result) { r.TStar = 13 }, `t_star = "13" is out of range (allowed 0 … 12)`},
		{func(r *Result) { r.Escape = 13 }, `escape_step = "13" is out of range (allowed 2 … 12)`},
	} {
		rows := fake(Shard(cells, 0, 2))
		c.edit(&rows[1])
		_, _, _, err := Merge(context.Background(), parts(t, rows))
		if err == nil || !strings.Contains(err.Error(), "line 3: "+c.want) {
			t.Errorf("error %v, want one saying line 3: %s", err, c.want)
		}
	}
	// A table edited after the sweep wrote it.
	dirs := parts(t, nil)
	editPart(t, dirs[0], CSVName, func(s string) string { return strings.Replace(s, ",0.01,", ",0.02,", 1) })
	if _, _, _, err := Merge(context.Background(), dirs); err == nil || !strings.Contains(err.Error(), "checksum") || !strings.Contains(err.Error(), filepath.Join(dirs[0], CSVName)) {
		t.Errorf("an edited table: %v", err)
	}
	// Another task in the table than in the manifest.
	dirs = parts(t, nil)
	editPart(t, dirs[1], CSVName, func(s string) string { return strings.ReplaceAll(s, ",noise,", ",mask,") })
	editPart(t, dirs[1], ManifestName, func(s string) string {
		b, _ := os.ReadFile(filepath.Join(dirs[1], CSVName))
		m, err := ParseManifest([]byte(s), "x")
		if err != nil {
			t.Fatal(err)
		}
		m.CSV = Checksum(b)
		var w bytes.Buffer
		WriteManifest(&w, m)
		return w.String()
	})
	if _, _, _, err := Merge(context.Background(), dirs); err == nil || !strings.Contains(err.Error(), "task = \"mask\"") {
		t.Errorf("a mask row in a noise sweep: %v", err)
	}
}

// TestManifestRefuses: a manifest's shard count is bounded by its cells,
// and a grid of 200,000 levels is checked in a moment ("shards": 10¹²
// listed every missing shard until memory ran out).
func TestManifestRefuses(t *testing.T) {
	var b bytes.Buffer
	cfg := smallConfig()
	WriteManifest(&b, NewManifest(cfg, "data", "", 0, 2))
	good := b.String()
	if _, err := ParseManifest([]byte(good), "m.json"); err != nil {
		t.Fatalf("good manifest: %v", err)
	}
	var levels []string
	for k := 0; k < 200000; k++ {
		levels = append(levels, fmt.Sprint(float64(k)/100000))
	}
	for _, c := range []struct{ from, to, want string }{
		{`"shards": 2`, `"shards": 1000000000000`, "shards"},
		{`"shards": 2`, `"shards": 9`, "shards"},
		{`"shard": 0`, `"shard": -1`, "shard"},
		{`"version": 4`, `"version": 2`, "version"},
		{`"version": 4`, `"version": 1`, "version"},
		{`"version": 4`, `"version": 5`, "version"},
		{`"gamma": 0.5`, `"gamma": 7`, "field gamma = 7 is out of range"},
		{`"gamma": 0.5`, `"gamma": 0.5, "delta": 1`, `"delta" is not a setting`},
		{`"gamma": 0.5,`, ``, "gamma is missing"},
		{`"n": 6`, `"n": 99999`, "--n"},
		{`"cells": 8`, `"cells": 9`, "cells"},
		{`"csv": ""`, `"csv": "md5:00"`, "csv"},
		{`"data": "data"`, `"data": "a\u001b[2Jb"`, "data"},
		{"\"levels\": [\n    0.3,\n    1.5\n  ]", "\"levels\": [" + strings.Join(levels, ",") + "]", "cells"},
	} {
		if !strings.Contains(good, c.from) {
			t.Fatalf("manifest lacks %q:\n%s", c.from, good)
		}
		within(t, c.to[:min(len(c.to), 40)], func() {
			_, err := ParseManifest([]byte(strings.Replace(good, c.from, c.to, 1)), "m.json")
			if err == nil || !strings.Contains(err.Error(), "m.json") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want one naming m.json and %s", c.to[:min(len(c.to), 40)], err, c.want)
			}
		})
	}
}

// TestMergeIrregularFiles: a part whose sweep.json or sweep.csv is
// /dev/zero or a FIFO is refused by name before a byte is read (the merge
// hung or filled memory).
func TestMergeIrregularFiles(t *testing.T) {
	cfg := smallConfig()
	cells := cfg.Cells()
	var rs []Result
	for _, c := range Shard(cells, 0, 1) {
		rs = append(rs, Result{Cell: c, N: 6, TStar: 1, MSETStar: 0.1, MSE0: 0.5, Improves: true, MSEEnd: 0.6, Escape: -1})
	}
	for _, name := range []string{ManifestName, CSVName} {
		for _, kind := range []string{"/dev/zero", "fifo"} {
			dir := filepath.Join(t.TempDir(), "part")
			writePart(t, dir, cfg, rs, 0, 1)
			p := filepath.Join(dir, name)
			os.Remove(p)
			if kind == "fifo" {
				fifotest.Make(t, p)
			} else if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
			within(t, name+" "+kind, func() {
				_, _, _, err := Merge(context.Background(), []string{dir})
				if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not a regular file") {
					t.Errorf("%s as %s: %v", name, kind, err)
				}
			})
		}
	}
}

// TestMergeCancelled: a cancelled merge stops with the context's error.
func TestMergeCancelled(t *testing.T) {
	cfg := smallConfig()
	var rs []Result
	for _, c := range cfg.Cells() {
		rs = append(rs, Result{Cell: c, N: 6, TStar: 1, MSETStar: 0.1, MSE0: 0.5, Improves: true, MSEEnd: 0.6, Escape: -1})
	}
	dir := filepath.Join(t.TempDir(), "part")
	writePart(t, dir, cfg, rs, 0, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, err := Merge(ctx, []string{dir}); err != context.Canceled {
		t.Fatalf("cancelled merge: %v", err)
	}
	if _, _, _, err := Merge(context.Background(), []string{dir}); err != nil {
		t.Fatal(err)
	}
}

// TestManifestKeepsEveryKnob: each knob of the base settings, changed
// alone, goes through sweep.json and comes back, and a sweep of a
// parameter sets it in the cell's settings.
func TestManifestKeepsEveryKnob(t *testing.T) {
	for _, k := range sim.Knobs {
		cfg := smallConfig()
		cfg.Param, cfg.Values = NoParam, nil
		v := k.Max
		if v == k.Default {
			v = k.Min
		}
		k.Set(&cfg.Base, v)
		var b bytes.Buffer
		if err := WriteManifest(&b, NewManifest(cfg, "data", "", 0, 1)); err != nil {
			t.Fatal(err)
		}
		m, err := ParseManifest(b.Bytes(), "m.json")
		if err != nil {
			t.Fatalf("%s: %v", k.Field, err)
		}
		back, err := m.Config()
		if err != nil {
			t.Fatal(err)
		}
		if got := k.Get(back.Base); got != v {
			t.Errorf("%s: base %v, read back %v", k.Field, v, got)
		}
	}
	if len(Params()) == 0 {
		t.Fatal("no parameter can be swept")
	}
	for _, p := range Params() {
		var name string
		for _, sp := range sim.Registry {
			if sp.Sweep == p.String() {
				name = sp.Name
			}
		}
		cfg := Config{Models: []string{name}, Task: sim.Mask, Levels: []float64{0.5}, Param: p, Values: []float64{p.Knob().Max},
			N: 1, Steps: 1, Seeds: 1, Base: sim.DefaultSettings()}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		s := cfg.Settings(cfg.Cells()[0])
		if p.Knob().Get(s) != p.Knob().Max || sim.MaskFraction.Get(s) != 0.5 {
			t.Errorf("%s: the cell runs %s = %v and mask %v, want %v and 0.5", name, p, p.Knob().Get(s), sim.MaskFraction.Get(s), p.Knob().Max)
		}
	}
}

// TestManifestV2Merges: parts written by manifest version 2 (the build
// before version 3, testdata/compat/v2: two shards and the same sweep in
// one process, 3 digits × 3 steps) still merge, to the very table the
// one-process run wrote, with the settings they recorded.
func TestManifestV2Merges(t *testing.T) {
	dir := filepath.Join("testdata", "compat", "v2")
	cfg, whole, rs, err := Merge(context.Background(), []string{filepath.Join(dir, "shard-1-of-2"), filepath.Join(dir, "shard-0-of-2")})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Version != 3 || whole.Shards != 1 || cfg.Param.String() != "lambda" || cfg.Base.Dyn.Gamma != 0.5 || len(rs) != 8 {
		t.Fatalf("merged: version %d, shards %d, param %s, γ %v, %d rows", whole.Version, whole.Shards, cfg.Param, cfg.Base.Dyn.Gamma, len(rs))
	}
	var b bytes.Buffer
	if err := WriteCSVVersion(&b, whole.Version, cfg.Task, rs); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "whole", CSVName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatalf("the merged version-2 parts:\n%s\nthe one-process table:\n%s", b.Bytes(), want)
	}
	if _, err := ReadManifest(filepath.Join(dir, "whole")); err != nil {
		t.Fatal(err)
	}
}

// TestManifestV3Merges: parts written by manifest version 3 (the build
// before version 4, testdata/compat/v3: two shards and the same sweep in
// one process, a mask task, 3 digits × 3 steps) still merge, to the very
// table and manifest the one-process run wrote: version 3, without the
// masked and visible errors it did not record.
func TestManifestV3Merges(t *testing.T) {
	dir := filepath.Join("testdata", "compat", "v3")
	cfg, whole, rs, err := Merge(context.Background(), []string{filepath.Join(dir, "shard-0-of-2"), filepath.Join(dir, "shard-1-of-2")})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Version != 3 || cfg.Task != sim.Mask || len(rs) != 8 {
		t.Fatalf("merged: version %d, task %s, %d rows", whole.Version, cfg.Task, len(rs))
	}
	for _, r := range rs {
		if !math.IsNaN(r.MaskedTStar) || !math.IsNaN(r.Masked0) {
			t.Fatalf("%s level %v: masked errors %v, %v read from a table without them", r.Model, r.Level, r.MaskedTStar, r.Masked0)
		}
	}
	var b bytes.Buffer
	if err := WriteCSVVersion(&b, whole.Version, cfg.Task, rs); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "whole", CSVName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatalf("the merged version-3 parts:\n%s\nthe one-process table:\n%s", b.Bytes(), want)
	}
	one, err := ReadManifest(filepath.Join(dir, "whole"))
	if err != nil {
		t.Fatal(err)
	}
	whole.CSV = Checksum(want)
	var got, wantM bytes.Buffer
	WriteManifest(&got, whole)
	WriteManifest(&wantM, one)
	if got.String() != wantM.String() {
		t.Fatalf("the merged manifest:\n%s\nthe one-process one:\n%s", got.String(), wantM.String())
	}
	// A version-3 part does not merge with a version-4 one.
	m4 := one
	m4.Version = ManifestVersion
	if d := differs(one, m4); !strings.HasPrefix(d, "version") {
		t.Fatalf("a version 3 and a version 4 manifest: differs says %q", d)
	}
}
