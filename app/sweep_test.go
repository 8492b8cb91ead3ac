package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sweepArgs is a small grid: 2 noise levels × 2 λ × 2 seeds, 8 digits.
var sweepArgs = []string{"sweep", "--task", "noise", "--levels", "0.3,1.5", "--lambda", "0.5,2", "--seeds", "2", "--n", "8", "--steps", "10"}

// TestSweepShardsMerge runs three shards as separate processes, chosen
// three ways (--shard, Slurm's array variables, a Kubernetes Indexed Job's
// index), merges them, and compares with the unsharded run byte for byte;
// the merge refuses a missing shard and leaves nothing behind.
func TestSweepShardsMerge(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole")
	if err := run(context.Background(), append(append([]string{}, sweepArgs...), "--out", whole)); err != nil {
		t.Fatal(err)
	}
	parts := filepath.Join(dir, "parts")
	for i, how := range []struct {
		args []string
		env  []string
	}{
		{[]string{"--shard", "0/3"}, nil},
		{nil, []string{"SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MIN=0"}},
		{[]string{"--shards", "3"}, []string{"JOB_COMPLETION_INDEX=2"}},
	} {
		cmd := exec.Command(os.Args[0], append(append(append([]string{}, sweepArgs...), "--out", parts), how.args...)...)
		cmd.Env = append(append(os.Environ(), "ATTRACTORLAB_AS_MAIN=1"), how.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, out)
		}
	}
	shardDirs, _ := filepath.Glob(filepath.Join(parts, "shard-*-of-3"))
	if len(shardDirs) != 3 {
		t.Fatalf("part directories %v", shardDirs)
	}
	merged := filepath.Join(dir, "merged")
	if err := run(context.Background(), append([]string{"sweep", "merge"}, append(shardDirs, "--out", merged)...)); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(whole, "sweep.csv"))
	b, _ := os.ReadFile(filepath.Join(merged, "sweep.csv"))
	if len(a) == 0 || string(a) != string(b) {
		t.Fatalf("merged sweep.csv differs from the unsharded one:\n%s\n---\n%s", b, a)
	}
	if n := strings.Count(string(a), "\n"); n != 1+8 {
		t.Fatalf("%d lines, want a header and 8 cells", n)
	}
	for _, f := range []string{"sweep.json", "basin-bsa-p2.png"} {
		if fi, err := os.Stat(filepath.Join(merged, f)); err != nil || fi.Size() == 0 {
			t.Fatalf("merge did not write %s: %v", f, err)
		}
	}
	bad := filepath.Join(dir, "bad")
	err := run(context.Background(), []string{"sweep", "merge", shardDirs[0], shardDirs[2], "--out", bad})
	if err == nil || !strings.Contains(err.Error(), "shard 1 of 3 missing") {
		t.Fatalf("merge without shard 1: %v", err)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Fatal("a refused merge created its --out")
	}
}

func TestSweepRefuses(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--levels", "0.3,x"}, []string{"levels", `"x"`}},
		{[]string{"--levels", "5"}, []string{"--levels", "0 … 4"}},
		{[]string{"--levels", "0.3", "--lambda", "1", "--beta", "1"}, []string{"--lambda and --beta"}},
		{[]string{"--levels", "0.3", "--model", "vit", "--lambda", "1"}, []string{"--lambda", "vit"}},
		{[]string{"--levels", "0.3", "--shard", "3/3"}, []string{"shard 3 of 3"}},
		{[]string{"--levels", "0.3", "--shard", "1"}, []string{"--shard", "i/n"}},
		{[]string{"--levels", "0.3", "--shard", "0/5"}, []string{"5 shards", "1 cells"}},
		{[]string{"--levels", "0.3", "--seeds", "0"}, []string{"--seeds = 0"}},
		{[]string{"--levels", "0.3", "--model", "hopfield", "--weights", "x.safetensors"}, []string{"--weights", "hopfield"}},
	} {
		err := run(context.Background(), append([]string{"sweep", "--out", out, "--n", "2", "--steps", "2"}, c.args...))
		if err == nil {
			t.Errorf("accepted %v", c.args)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not say %q", c.args, err, w)
			}
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: --out was created", c.args)
		}
	}
}

func TestParseShard(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		flag   string
		shards int
		env    func(string) string
		i, n   int
		err    string
	}{
		{"", 0, env(), 0, 1, ""},
		{"2/4", 0, env("SLURM_ARRAY_TASK_ID", "0"), 2, 4, ""}, // the flag wins
		{"", 0, env("SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_MIN", "4", "SLURM_ARRAY_TASK_COUNT", "3"), 1, 3, ""},
		{"", 0, env("SLURM_ARRAY_TASK_ID", "3"), 0, 0, "SLURM_ARRAY_TASK_COUNT"},
		{"", 0, env("SLURM_ARRAY_TASK_ID", "0", "SLURM_ARRAY_TASK_COUNT", "2", "SLURM_ARRAY_TASK_STEP", "2"), 0, 0, "step 1"},
		{"", 4, env("JOB_COMPLETION_INDEX", "3"), 3, 4, ""},
		{"", 0, env("JOB_COMPLETION_INDEX", "3"), 0, 0, "--shards"},
		{"", 3, env("JOB_COMPLETION_INDEX", "3"), 0, 0, "shard 3 of 3"},
		{"-1/2", 0, env(), 0, 0, "shard -1 of 2"},
		{"a/2", 0, env(), 0, 0, `"a"`},
	} {
		sp, err := parseShard(c.flag, c.shards, c.env)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q %d: error %v, want %q", c.flag, c.shards, err, c.err)
			}
			continue
		}
		if err != nil || sp.i != c.i || sp.n != c.n {
			t.Errorf("%q %d: %+v %v, want %d of %d", c.flag, c.shards, sp, err, c.i, c.n)
		}
	}
}
