package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"attractorlab/sim/sweep"
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
		// Flags that would be ignored or silently changed.
		{[]string{"--levels", "0.3", "--shards", "3"}, []string{"--shards 3", "JOB_COMPLETION_INDEX", "--shard i/3"}},
		{[]string{"--levels", "0.3", "--shard", "0/2", "--shards", "3"}, []string{"--shards 3", "contradicts"}},
		{[]string{"--levels", "0.3", "--n", "5000"}, []string{"--n 5000", "embedded sample has 1,000 test digits", "1 … 1000", "attractorlab data"}},
		{[]string{"--levels", "0.3", "--model", "bsa-p2", "--k", "3"}, []string{"--k is the classical Hopfield network's", "--model bsa-p2 does not use it"}},
		{[]string{"--levels", "0.3", "--model", "hopfield", "--lambda", "1"}, []string{"--lambda is the bare self-attention's", "--model hopfield does not use it"}},
		{[]string{"--levels", "0.3", "--model", "hopfield", "--gamma", "0.3"}, []string{"--gamma is the bare self-attention's", "--model hopfield does not use it"}},
		{[]string{"--levels", "0.3", "--model", "hopfield-classic", "--attn", "relu/seqlen"}, []string{"--attn is the bare self-attention's", "--model hopfield-classic does not use it"}},
	} {
		args := append([]string{"sweep", "--out", out, "--n", "2", "--steps", "2"}, c.args...)
		if c.args[len(c.args)-2] == "--n" {
			args = append([]string{"sweep", "--out", out, "--steps", "2"}, c.args...)
		}
		err := run(context.Background(), args)
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
		{"", 3, env(), 0, 0, "JOB_COMPLETION_INDEX"},
		{"1/3", 3, env(), 1, 3, ""},
		{"1/3", 4, env(), 0, 0, "contradicts"},
		{"", 2, env("SLURM_ARRAY_TASK_ID", "0", "SLURM_ARRAY_TASK_COUNT", "3"), 0, 0, "contradicts"},
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

// within runs f, failing the test if it has not returned by the deadline.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still running after 30 s", what)
	}
}

// TestSweepIrregularInputs: --weights and an MNIST file of --data that are
// /dev/zero or a FIFO are refused by name before a byte is read (the
// weights were hashed first and hung; the FIFO in --data hung the load).
func TestSweepIrregularInputs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "w.safetensors")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "mnist")
	os.Mkdir(data, 0o755)
	dataFifo := filepath.Join(data, "t10k-images-idx3-ubyte")
	if err := syscall.Mkfifo(dataFifo, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o")
	for _, c := range []struct {
		args []string
		path string
	}{
		{[]string{"--weights", "/dev/zero"}, "/dev/zero"},
		{[]string{"--weights", fifo}, fifo},
		{[]string{"--data", data}, dataFifo},
	} {
		within(t, strings.Join(c.args, " "), func() {
			err := run(context.Background(), append([]string{"sweep", "--model", "bsa-p2", "--levels", "0.3", "--n", "2", "--steps", "2", "--out", out}, c.args...))
			if err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%v: %v", c.args, err)
			}
		})
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: --out was created", c.args)
		}
	}
}

// TestSweepMergeRefusesBadParts: merge refuses a part edited after the
// sweep (its checksum), values out of range even with the checksum
// mended, and an --out that is, is inside or holds a part, before
// writing (a -Inf value and escape_step 2⁶³−1 panicked in the heatmap;
// --out equal to a part replaced it).
func TestSweepMergeRefusesBadParts(t *testing.T) {
	dir := t.TempDir()
	parts := filepath.Join(dir, "parts")
	for _, sh := range []string{"0/2", "1/2"} {
		if err := run(context.Background(), append(append([]string{}, sweepArgs...), "--out", parts, "--shard", sh)); err != nil {
			t.Fatal(err)
		}
	}
	p0, p1 := filepath.Join(parts, "shard-0-of-2"), filepath.Join(parts, "shard-1-of-2")
	snapshot := func() string {
		var all []string
		for _, p := range []string{p0, p1} {
			names, _ := os.ReadDir(p)
			for _, n := range names {
				b, _ := os.ReadFile(filepath.Join(p, n.Name()))
				all = append(all, n.Name(), string(b))
			}
		}
		return strings.Join(all, "\x00")
	}
	before := snapshot()
	merge := func(out string, force bool) error {
		args := []string{"sweep", "merge", p0, p1, "--out", out}
		if force {
			args = append(args, "--force")
		}
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("merge into %s panicked: %v", out, r)
				}
			}()
			err = run(context.Background(), args)
		}()
		return err
	}
	for _, c := range []struct {
		out  string
		want string
	}{
		{p0, "is the part"},
		{filepath.Join(p0, "merged"), "inside the part"},
		{parts, "holds the part"},
		{dir, "holds the part"},
		{filepath.Join(p1, ".."), "holds the part"},
	} {
		if err := merge(c.out, true); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--out %s: %v, want an error saying %q", c.out, err, c.want)
		}
		if snapshot() != before {
			t.Fatalf("--out %s changed the parts", c.out)
		}
		if _, err := os.Stat(filepath.Join(p0, "merged")); err == nil {
			t.Fatal("a refused merge created its --out")
		}
	}
	csv0 := filepath.Join(p0, "sweep.csv")
	orig, _ := os.ReadFile(csv0)
	lines := strings.Split(string(orig), "\n")
	field := func(line, col int, v string) string { // line 1: the first row
		out := append([]string{}, lines...)
		f := strings.Split(out[line], ",")
		f[col] = v
		out[line] = strings.Join(f, ",")
		return strings.Join(out, "\n")
	}
	mend := func() { // the checksum of the edited table, as an attacker would
		b, _ := os.ReadFile(csv0)
		man := filepath.Join(p0, "sweep.json")
		j, _ := os.ReadFile(man)
		s := string(j)
		i := strings.Index(s, `"csv": "`) + len(`"csv": "`)
		s = s[:i] + sweep.Checksum(b) + s[i+len("sha256:")+64:]
		os.WriteFile(man, []byte(s), 0o644)
	}
	origMan, _ := os.ReadFile(filepath.Join(p0, "sweep.json"))
	for _, c := range []struct {
		table string
		want  string
	}{
		{field(1, 7, "-Inf"), "mse_t_star"},
		{field(1, 11, "9223372036854775807"), "escape_step"},
		{field(1, 7, "9.99"), "mse_t_star"},
		{field(1, 5, "99999"), "n"},
		{field(1, 6, "-7"), "t_star"},
		{field(1, 1, "mask"), "task"},
	} {
		os.WriteFile(csv0, []byte(c.table), 0o644)
		out := filepath.Join(dir, "m")
		if err := merge(out, false); err == nil || !strings.Contains(err.Error(), "checksum") {
			t.Errorf("an edited table merged (%v)", err)
		}
		mend()
		if err := merge(out, false); err == nil || !strings.Contains(err.Error(), csv0+" line 2: "+c.want) {
			t.Errorf("%s: %v, want an error naming %s line 2: %s", c.want, err, csv0, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatal("a refused merge created its --out")
		}
		os.WriteFile(filepath.Join(p0, "sweep.json"), origMan, 0o644)
	}
	os.WriteFile(csv0, orig, 0o644)
	if err := merge(filepath.Join(dir, "ok"), false); err != nil {
		t.Fatalf("the mended parts: %v", err)
	}
}

// TestPhaseRefusesBadInput: every bad flag of phase is refused by name,
// with the allowed range, before any work; so are more shards than cells.
func TestPhaseRefusesBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ph")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--images", "50"}, "--images"},
		{[]string{"--images", "100,100"}, "twice"},
		{[]string{"--images", "x"}, "not a whole number"},
		{[]string{"--lambda", "20"}, "--lambda = 20 is out of range"},
		{[]string{"--seeds", "3-1"}, "reversed"},
		{[]string{"--seeds", ""}, "is empty"},
		{[]string{"--updates", "0"}, "--updates"},
		{[]string{"--n", "0"}, "--n"},
		{[]string{"--sigma2", "9"}, "--sigma2 = 9 is out of range"},
		{[]string{"--images", "100", "--lambda", "1", "--seeds", "0", "--shard", "0/2"}, "at most one shard per cell"},
	} {
		args := append([]string{"phase", "--out", out}, c.args...)
		err := run(context.Background(), args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused run wrote --out")
	}
}
