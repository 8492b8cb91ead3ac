package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"attractorlab/models"
	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// Item 1: train --model block|vit runs end to end and saves a file the
// models load (it failed: "Corrupt is nil", checked before it was set);
// so does the bare self-attention's.
func TestTrainEveryModelSavesLoadable(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ model, name string }{{"block", "block"}, {"vit", "vit"}, {"bsa", "bsa-p2"}} {
		t.Run(c.model, func(t *testing.T) {
			out := filepath.Join(dir, c.model+".safetensors")
			args := []string{"train", "--model", c.model, "--epochs", "1", "--images", "100", "--val", "10", "--batch", "50", "--out", out}
			if c.model != "bsa" {
				args = append(args, "--task", "mask")
			}
			if err := run(context.Background(), args); err != nil {
				t.Fatal(err)
			}
			switch c.model {
			case "bsa":
				if _, err := sim.LoadBSA(2, out); err != nil {
					t.Fatal(err)
				}
			default:
				if _, _, err := sim.LoadTransformerModel(c.name, out); err != nil {
					t.Fatal(err)
				}
			}
			// And a run on it.
			r := filepath.Join(dir, c.model+"-run")
			if err := run(context.Background(), []string{"reproduce", "--model", c.name, "--weights", out, "--n", "3", "--steps", "3", "--out", r}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Item 4: interrupted before the first epoch finished, train writes
// nothing, and above all does not replace a trained file with --force.
func TestTrainInterruptedEarlyWritesNothing(t *testing.T) {
	dir := t.TempDir()
	for _, model := range []string{"bsa", "block"} {
		out := filepath.Join(dir, model+".safetensors")
		os.WriteFile(out, []byte("a good model"), 0o644)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := run(ctx, []string{"train", "--model", model, "--epochs", "3", "--images", "100", "--val", "10", "--out", out, "--force"})
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "before the first epoch") {
			t.Fatalf("%s: %v", model, err)
		}
		if b, _ := os.ReadFile(out); string(b) != "a good model" {
			t.Fatalf("%s: the trained file was replaced", model)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Fatalf("%s: %d files left", model, len(ents))
		}
		os.Remove(out)
	}
}

// Item 4: ATTRACTORLAB_CPUPROFILE never replaces a file.
func TestCPUProfileNeverReplaces(t *testing.T) {
	p := filepath.Join(t.TempDir(), "existing")
	os.WriteFile(p, []byte("mine"), 0o644)
	t.Setenv("ATTRACTORLAB_CPUPROFILE", p)
	ran := false
	err := profiled(func() error { ran = true; return nil })
	if err == nil || ran || !strings.Contains(err.Error(), "ATTRACTORLAB_CPUPROFILE="+p+" exists") {
		t.Fatalf("ran %v, %v", ran, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "mine" {
		t.Fatal("replaced")
	}
}

// Items 2 and 9: train --out refuses what is not a regular file (the
// device itself is tested on planOutputs without any write), a name
// ending in a separator and a dangling link, before any work.
func TestTrainOutRefusedBeforeWork(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o644)
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "nowhere"), dangling)
	for _, c := range []struct{ out, want string }{
		{fifo, "a named pipe (FIFO): only a regular file may be replaced"},
		{dangling, "a symbolic link: only a regular file may be replaced"},
		{filepath.Join(dir, "newdir") + "/", "names a directory: give a file name"},
	} {
		start := time.Now()
		err := run(context.Background(), []string{"train", "--epochs", "200", "--out", c.out, "--force"})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--out") {
			t.Errorf("%s: %v", c.out, err)
		}
		if time.Since(start) > 10*time.Second {
			t.Errorf("%s: refused only after %v of work", c.out, time.Since(start))
		}
	}
}

// Item 8: flags that would be ignored or changed are refused.
func TestFlagsNeverIgnored(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reproduce", "--model", "bsa-p2", "--patch", "4"}, "--patch 4 contradicts --model bsa-p2"},
		{[]string{"reproduce", "--model", "hopfield", "--lambda", "3"}, "--lambda is the bare self-attention's (bsa-p2, bsa-p4); --model hopfield does not use it"},
		{[]string{"reproduce", "--model", "hopfield", "--k", "30"}, "--k is the classical Hopfield network's (hopfield-classic); --model hopfield does not use it"},
		{[]string{"reproduce", "--model", "vit", "--beta", "2"}, "--beta is the modern Hopfield network's (hopfield); --model vit does not use it"},
		{[]string{"reproduce", "--n", "5000"}, "--n 5000 is out of range: the embedded sample has 1,000 test digits (allowed 1 … 1000); fetch full MNIST (10,000 test digits) with `attractorlab data`"},
		{[]string{"train", "--lr", "1e-320"}, "--lr = 1e-320 is out of range (allowed 1e-08 ≤ --lr ≤ 1)"},
		{[]string{"train", "--images", "20000"}, "--images = 20000 is out of range (allowed 100 … 10000)"},
		{[]string{"train", "--model", "block", "--epochs", "0"}, "--epochs = 0 is out of range"},
	} {
		args := append(c.args, "--out", out)
		err := run(context.Background(), args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", c.args, out)
		}
	}
}

// command runs the test binary as the program.
func command(args ...string) (*exec.Cmd, *syncBuffer) {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ATTRACTORLAB_AS_MAIN=1")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls until the output holds marker (the work has started).
func waitFor(t *testing.T, out *syncBuffer, marker string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), marker) {
		if time.Now().After(deadline) {
			t.Fatalf("never printed %q:\n%s", marker, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exitOf waits for cmd (at most limit) and returns its exit status.
func exitOf(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		cmd.Process.Kill()
		t.Fatalf("still running %v after the signal", limit)
		return -1
	}
}

// Item 7: every long command stops cleanly on SIGINT and on SIGTERM (how
// Slurm and Kubernetes stop a job): exit 130 or 143, no file and no
// temporary left; a second SIGINT exits at once.
func TestSignalsStopEveryCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program")
	}
	cmds := []struct {
		name   string
		args   func(out string) []string
		marker string
	}{
		{"reproduce", func(o string) []string {
			return []string{"reproduce", "--n", "1000", "--steps", "1000", "--out", o}
		}, "test digits"},
		{"reproduce all", func(o string) []string {
			return []string{"reproduce", "--model", "all", "--n", "1000", "--steps", "1000", "--out", o}
		}, "test digits"},
		{"train bsa", func(o string) []string {
			return []string{"train", "--epochs", "1000", "--out", filepath.Join(o, "m.safetensors")}
		}, "training BSA"},
		{"train block", func(o string) []string {
			return []string{"train", "--model", "block", "--epochs", "1000", "--out", filepath.Join(o, "m.safetensors")}
		}, "training block"},
		{"sweep", func(o string) []string {
			return []string{"sweep", "--model", "bsa-p2,hopfield", "--n", "1000", "--steps", "1000", "--levels", "0.1,0.5,1,2", "--out", o}
		}, "sweep:"},
	}
	for _, c := range cmds {
		for _, sig := range []struct {
			s    syscall.Signal
			code int
		}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
			t.Run(c.name+" "+sig.s.String(), func(t *testing.T) {
				dir := t.TempDir()
				out := filepath.Join(dir, "out")
				cmd, buf := command(c.args(out)...)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				waitFor(t, buf, c.marker)
				cmd.Process.Signal(sig.s)
				if code := exitOf(t, cmd, 60*time.Second); code != sig.code {
					t.Fatalf("exit %d, want %d:\n%s", code, sig.code, buf)
				}
				if !strings.Contains(buf.String(), "attractorlab: stopped by SIG") {
					t.Errorf("no word of the stop:\n%s", buf)
				}
				var left []string
				filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
					if err == nil && p != dir {
						left = append(left, p)
					}
					return nil
				})
				if len(left) > 0 {
					t.Fatalf("left behind: %v\n%s", left, buf)
				}
			})
		}
	}
	// A second Ctrl-C quits at once, even while the first is handled.
	t.Run("second SIGINT", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		cmd, buf := command("train", "--model", "vit", "--epochs", "1000", "--out", filepath.Join(out, "m.safetensors"))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, buf, "training vit")
		cmd.Process.Signal(syscall.SIGINT)
		waitFor(t, buf, "send it again to quit at once")
		cmd.Process.Signal(syscall.SIGINT)
		if code := exitOf(t, cmd, 10*time.Second); code != 130 {
			t.Fatalf("exit %d:\n%s", code, buf)
		}
	})
}

// Item 9: a refused command line prints its error and the usage once and
// exits 2; -h exits 0.
func TestUsageOnceExit2(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		once string
	}{
		{[]string{"train", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"reproduce", "--n", "x"}, 2, `invalid value "x" for flag -n`},
		{[]string{"gui", "--nope"}, 2, "flag provided but not defined: -nope"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"train", "-h"}, 0, "usage: attractorlab train"},
		{[]string{"lesson", "-h"}, 0, "attractorlab lesson check FILE"},
	} {
		cmd, buf := command(c.args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if code := exitOf(t, cmd, 30*time.Second); code != c.code {
			t.Errorf("%v: exit %d, want %d\n%s", c.args, code, c.code, buf)
		}
		out := buf.String()
		if strings.Count(out, c.once) != 1 || strings.Count(out, "usage: attractorlab") != 1 {
			t.Errorf("%v: want %q and the usage once each:\n%s", c.args, c.once, out)
		}
	}
}

// --replot reads curve.csv files through the bounded reader: a FIFO or a
// device there is refused at once instead of hanging.
func TestReplotRefusesIrregular(t *testing.T) {
	dir := t.TempDir()
	for k, name := range sim.ModelNames {
		os.MkdirAll(filepath.Join(dir, name), 0o755)
		p := filepath.Join(dir, name, "curve.csv")
		if k == 0 {
			syscall.Mkfifo(p, 0o644)
		} else {
			os.Symlink("/dev/zero", p)
		}
	}
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), []string{"reproduce", "--model", "all", "--replot", "--out", dir})
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), "bsa-p2/curve.csv") {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("hung on a FIFO")
	}
}

// TestTrainLambda: --lambda sets the loss's λ, which the file keeps
// (lambda_train); out of range (or not a number) it is refused by name
// with the range before any work.
func TestTrainLambda(t *testing.T) {
	dir := t.TempDir()
	for _, lam := range []string{"2.5", "5"} {
		out := filepath.Join(dir, "l"+lam+".safetensors")
		if err := run(context.Background(), []string{"train", "--epochs", "1", "--images", "100", "--val", "10", "--batch", "50", "--lambda", lam, "--out", out}); err != nil {
			t.Fatal(err)
		}
		m, err := sim.LoadBSA(2, out)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(m.LambdaTrain); got != lam {
			t.Fatalf("--lambda %s: the file keeps lambda_train %s", lam, got)
		}
	}
	for _, bad := range []string{"0.05", "11", "NaN"} {
		out := filepath.Join(dir, "bad.safetensors")
		err := run(context.Background(), []string{"train", "--epochs", "1", "--lambda", bad, "--out", out})
		if err == nil || !strings.Contains(err.Error(), "--lambda") || !strings.Contains(err.Error(), sim.TrainLambda.Allowed()) {
			t.Fatalf("--lambda %s: %v", bad, err)
		}
		if _, serr := os.Stat(out); serr == nil {
			t.Fatalf("--lambda %s wrote %s", bad, out)
		}
	}
}

// TestTrainAttn: --attn relu/seqlen trains on the relu/seqlen energy and
// says so in the file (other couplings than softmax's from the same seed);
// an unknown attention is refused by the flag's name with the choices.
func TestTrainAttn(t *testing.T) {
	dir := t.TempDir()
	js := map[string][]float32{}
	for _, attn := range []string{"softmax", "relu/seqlen"} {
		out := filepath.Join(dir, strings.ReplaceAll(attn, "/", "-")+".safetensors")
		if err := run(context.Background(), []string{"train", "--epochs", "1", "--images", "100", "--val", "10", "--batch", "50", "--attn", attn, "--out", out}); err != nil {
			t.Fatal(err)
		}
		m, err := sim.LoadBSA(2, out)
		if err != nil {
			t.Fatal(err)
		}
		if m.Meta["train_attention"] != attn {
			t.Fatalf("--attn %s: the file says train_attention %q", attn, m.Meta["train_attention"])
		}
		js[attn] = m.J
	}
	if slices.Equal(js["softmax"], js["relu/seqlen"]) {
		t.Fatal("--attn relu/seqlen trained the same couplings as softmax")
	}
	out := filepath.Join(dir, "bad.safetensors")
	err := run(context.Background(), []string{"train", "--epochs", "1", "--attn", "tanh", "--out", out})
	if err == nil || !strings.Contains(err.Error(), "--attn") || !strings.Contains(err.Error(), "relu/seqlen") {
		t.Fatalf("--attn tanh: %v", err)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Fatalf("--attn tanh wrote %s", out)
	}
}

// TestTrainSameCouplingsEverywhere: the same settings and seed give the
// same couplings from `train` (through its file) and from a run of
// sim.TrainBSA in memory (as the window runs it), bit for bit.
func TestTrainSameCouplingsEverywhere(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cli.safetensors")
	if err := run(context.Background(), []string{"train", "--epochs", "2", "--images", "100", "--val", "10", "--batch", "50", "--lambda", "4", "--seed", "3", "--out", out}); err != nil {
		t.Fatal(err)
	}
	cli, err := sim.LoadBSA(2, out)
	if err != nil {
		t.Fatal(err)
	}
	train, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	cfg := models.DefaultTrainConfig()
	cfg.Epochs, cfg.Batch = 2, 50
	mem, epochs, err := sim.TrainBSA(context.Background(), train, test, sim.BSATraining{Patch: 2, Images: 100, Lambda: 4, Seed: 3, Val: 10, Config: cfg}, nil)
	if err != nil || epochs != 2 {
		t.Fatalf("%d epochs: %v", epochs, err)
	}
	if len(cli.J) != len(mem.J) {
		t.Fatalf("%d couplings from the file, %d in memory", len(cli.J), len(mem.J))
	}
	for k := range cli.J {
		if math.Float32bits(cli.J[k]) != math.Float32bits(mem.J[k]) {
			t.Fatalf("coupling %d: %g from train's file, %g in memory", k, cli.J[k], mem.J[k])
		}
	}
}

// TestCapacityCommand: capacity writes its table and two figures; a size
// out of range is refused by flag and range before any work, writing
// nothing.
func TestCapacityCommand(t *testing.T) {
	dir := t.TempDir()
	if err := run(context.Background(), []string{"capacity", "--images", "100,200", "--updates", "3", "--n", "8", "--out", dir}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"capacity.csv", "capacity.png", "capacity-curves.png"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	bad := filepath.Join(dir, "bad")
	err := run(context.Background(), []string{"capacity", "--images", "100,20000", "--out", bad})
	if err == nil || !strings.Contains(err.Error(), "--images = 20000") || !strings.Contains(err.Error(), sim.TrainImages.Allowed()) {
		t.Fatalf("--images 20000: %v", err)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Fatal("a refused capacity run made its directory")
	}
}

// TestTrainWindowFormOnCommandLine: the Training window's form, run as the
// window runs it (sim.TrainWatched, with its live view), and its Command()
// run as `train` give the same couplings bit for bit — from random
// couplings and from the shipped weights (--from shipped), softmax and
// relu/seqlen.
func TestTrainWindowFormOnCommandLine(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	cat := sim.NewCatalogue(data.Train, sim.WeightFiles{})
	mem := sim.NewMemories(data.Train)
	train, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	for k, edit := range []func(*sim.TrainingForm){
		func(f *sim.TrainingForm) {},
		func(f *sim.TrainingForm) { f.FromShipped, f.Lambda, f.Seed = true, "3", "7" },
		func(f *sim.TrainingForm) { f.Attn, f.Patch = "relu/seqlen", 4 },
	} {
		f := sim.DefaultTrainingForm()
		f.Images, f.Epochs = "200", "2"
		edit(&f)
		s, err := f.Settings(cat)
		if err != nil {
			t.Fatal(err)
		}
		e := sim.NewEngine(sim.EngineConfig{Data: data, Memories: mem, Catalogue: cat, Settings: sim.PaperDemo(), Synchronous: true})
		in, err := e.Snapshot().InputForPatch(f.Patch)
		if err != nil {
			t.Fatal(err)
		}
		window, _, err := sim.TrainWatched(context.Background(), train, test, s, sim.Watch{Input: in, Dyn: sim.DefaultDynamics(), Mem: mem, Steps: 10})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "cli.safetensors")
		args := append(strings.Fields(f.Command())[1:], "--out", out)
		if err := run(context.Background(), args); err != nil {
			t.Fatalf("%s: %v", f.Command(), err)
		}
		cli, err := sim.LoadBSA(f.Patch, out)
		if err != nil {
			t.Fatal(err)
		}
		for i := range cli.J {
			if math.Float32bits(cli.J[i]) != math.Float32bits(window.J[i]) {
				t.Fatalf("form %d (%s): coupling %d: %g from train, %g in the window", k, f.Command(), i, cli.J[i], window.J[i])
			}
		}
	}
	bad := filepath.Join(t.TempDir(), "x.safetensors")
	err = run(context.Background(), []string{"train", "--from", filepath.Join(t.TempDir(), "missing.safetensors"), "--epochs", "1", "--out", bad})
	if err == nil || !strings.Contains(err.Error(), "--from") {
		t.Fatalf("--from a missing file: %v", err)
	}
	if _, serr := os.Stat(bad); serr == nil {
		t.Fatal("a refused --from wrote its --out")
	}
}

// Attack 1 (round 4): train stopped by Ctrl-C after some epochs writes
// the file with them, says so (not "nothing written"), and records the
// command that remakes it: --epochs set to the epochs done.
func TestTrainInterruptedLaterSaysWhatItWrote(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program")
	}
	out := filepath.Join(t.TempDir(), "m.safetensors")
	cmd, buf := command("train", "--images", "100", "--val", "10", "--batch", "32", "--epochs", "100000", "--out", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, buf, "epoch   2")
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitOf(t, cmd, 60*time.Second); code != 130 {
		t.Fatalf("exit %d:\n%s", code, buf)
	}
	said := buf.String()
	if strings.Contains(said, "nothing written") || !strings.Contains(said, "of 100000 epochs; "+out+" written with them") {
		t.Fatalf("the stop does not say what was written:\n%s", said)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := models.ParseBSA(b, out)
	if err != nil {
		t.Fatal(err)
	}
	done := m.Meta["epochs_done"]
	if done == "" || done == "0" || !strings.Contains(m.Meta["command"], "--epochs="+done) || strings.Contains(m.Meta["command"], "100000") {
		t.Errorf("epochs_done %q, command %q: want the command to train the epochs done", done, m.Meta["command"])
	}
}

func TestWithEpochs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"--patch 2 --epochs 500 --out f", "--patch 2 --epochs=6 --out f"},
		{"-epochs=500 --out f", "--epochs=6 --out f"},
		{"--out f", "--out f --epochs=6"},
	} {
		if got := strings.Join(withEpochs(strings.Fields(c.in), 6), " "); got != c.want {
			t.Errorf("%q → %q, want %q", c.in, got, c.want)
		}
	}
}
