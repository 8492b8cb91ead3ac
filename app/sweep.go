package main

import (
	"attractorlab/models"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"attractorlab/models/infile"
	"attractorlab/sim"
	"attractorlab/sim/mnist"
	"attractorlab/sim/sweep"
)

const sweepSynopsis = `sweep --model M[,M…] --task mask|noise --levels L1,L2,… [--lambda|--beta|--k V1,V2,…] --out DIR [flags]
       attractorlab sweep merge PART_DIR… --out DIR [--force]`

// floatList is a comma-separated list of numbers as a flag.
type floatList struct {
	vals []float64
	set  bool
}

func (f *floatList) String() string {
	var s []string
	for _, v := range f.vals {
		s = append(s, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return strings.Join(s, ",")
}

func (f *floatList) Set(s string) error {
	f.vals, f.set = nil, true
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		v, err := strconv.ParseFloat(part, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%q is not a number", part)
		}
		f.vals = append(f.vals, v)
	}
	return nil
}

// shardSpec is which part of a sweep this process runs, and where the
// choice came from (for messages).
type shardSpec struct {
	i, n int
	from string
}

// parseShard reads --shard i/n, else Slurm's array variables, else a
// Kubernetes Indexed Job's JOB_COMPLETION_INDEX with --shards n.
func parseShard(flagVal string, shards int, getenv func(string) string) (shardSpec, error) {
	atoi := func(what, s string) (int, error) {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return 0, fmt.Errorf("%s = %q is not a whole number", what, s)
		}
		return v, nil
	}
	var sp shardSpec
	var err error
	switch {
	case flagVal != "":
		a, b, ok := strings.Cut(flagVal, "/")
		if !ok {
			return sp, fmt.Errorf("--shard = %q is not i/n (e.g. 0/3)", flagVal)
		}
		if sp.i, err = atoi("--shard's i", a); err != nil {
			return sp, err
		}
		if sp.n, err = atoi("--shard's n", b); err != nil {
			return sp, err
		}
		sp.from = "--shard"
	case getenv("SLURM_ARRAY_TASK_ID") != "":
		id, err := atoi("SLURM_ARRAY_TASK_ID", getenv("SLURM_ARRAY_TASK_ID"))
		if err != nil {
			return sp, err
		}
		lo := 0
		if s := getenv("SLURM_ARRAY_TASK_MIN"); s != "" {
			if lo, err = atoi("SLURM_ARRAY_TASK_MIN", s); err != nil {
				return sp, err
			}
		}
		if getenv("SLURM_ARRAY_TASK_COUNT") == "" {
			return sp, fmt.Errorf("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not")
		}
		if sp.n, err = atoi("SLURM_ARRAY_TASK_COUNT", getenv("SLURM_ARRAY_TASK_COUNT")); err != nil {
			return sp, err
		}
		sp.i, sp.from = id-lo, "SLURM_ARRAY_TASK_ID"
		if step := getenv("SLURM_ARRAY_TASK_STEP"); step != "" && step != "1" {
			return sp, fmt.Errorf("SLURM_ARRAY_TASK_STEP = %s: run the array with step 1 (--array=0-%d)", step, sp.n-1)
		}
	case getenv("JOB_COMPLETION_INDEX") != "":
		if sp.i, err = atoi("JOB_COMPLETION_INDEX", getenv("JOB_COMPLETION_INDEX")); err != nil {
			return sp, err
		}
		if shards <= 0 {
			return sp, fmt.Errorf("JOB_COMPLETION_INDEX is set: pass --shards N (the Job's completions)")
		}
		sp.n, sp.from = shards, "JOB_COMPLETION_INDEX"
	default:
		if shards != 0 {
			return sp, fmt.Errorf("--shards %d: $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job's index) is not set, so it is not known which shard to run: pass --shard i/%d, or run in an Indexed Job", shards, shards)
		}
		return shardSpec{i: 0, n: 1}, nil
	}
	if shards != 0 && sp.from != "JOB_COMPLETION_INDEX" && shards != sp.n {
		return sp, fmt.Errorf("--shards %d contradicts %s (%d shards): give one", shards, sp.from, sp.n)
	}
	if sp.n < 1 || sp.i < 0 || sp.i >= sp.n {
		return sp, fmt.Errorf("%s: shard %d of %d is out of range (allowed 0 … n−1 with n ≥ 1)", sp.from, sp.i, sp.n)
	}
	return sp, nil
}

func runSweep(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "merge" {
		return runSweepMerge(ctx, args[1:])
	}
	fs := newFlags("sweep", sweepSynopsis)
	model := fs.String("model", sim.ModelNames[0], "models, comma-separated: "+strings.Join(sim.ModelNames, ", "))
	task := fs.String("task", "noise", "corruption: "+strings.Join(sim.Tasks, " or "))
	var levels floatList
	var levelHelp []string
	for _, k := range sim.Knobs {
		if k.Task != sim.NoTask {
			levelHelp = append(levelHelp, k.Usage())
		}
	}
	fs.Var(&levels, "levels", "corruption levels, comma-separated: "+strings.Join(levelHelp, " or "))
	// The parameters a sweep varies take lists; the models' other
	// parameters one value each (the corruption's level is --levels).
	lists := map[sweep.Param]*floatList{}
	for _, p := range sweep.Params() {
		l := &floatList{}
		lists[p] = l
		fs.Var(l, p.String(), p.Symbol()+" values of the "+p.Owner()+", comma-separated ("+p.Knob().Allowed()+")")
	}
	knobs := knobFlags(fs, func(k *sim.Knob) bool {
		_, err := sweep.ParseParam(k.Flag)
		return k.Task == sim.NoTask && err != nil // not a level, not swept
	})
	n := fs.Int("n", 200, "test digits per cell (the first n): "+sim.Digits.Allowed())
	steps := fs.Int("steps", int(sim.Steps.Default), "iterations (the ViT stops after its 5 layers): "+sim.Steps.Allowed())
	seeds := fs.Int("seeds", 1, "corruption seeds per cell (0 … seeds−1): "+sweep.Seeds.Allowed())
	attn := fs.String("attn", "softmax", "attention of the bare self-attention: "+strings.Join(sim.Attentions, " or "))
	weights := fs.String("weights", "", "safetensors weights for a single bare or transformer model (default: the embedded ones)")
	dataDir := fs.String("data", "", "MNIST directory (default: $ATTRACTORLAB_DATA or the cache; else the embedded sample)")
	dataset := datasetFlag(fs)
	out := fs.String("out", "", "output directory (created); a shard writes into DIR/shard-I-of-N")
	force := fs.Bool("force", false, "replace files already in --out")
	shardFlag := fs.String("shard", "", "run part i of n (0-based, e.g. 0/3); default: $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT, or $JOB_COMPLETION_INDEX of --shards")
	shards := fs.Int("shards", 0, "shards of a Kubernetes Indexed Job (its completions), read with $JOB_COMPLETION_INDEX")
	workers := fs.Int("workers", 0, "goroutines (0: every core): "+sim.WorkerCount.Allowed())
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("sweep: unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		return fmt.Errorf("sweep: --out DIR is required")
	}
	kind, err := sim.ParseKind(*task)
	if err != nil {
		return fmt.Errorf("sweep: --task: %w", err)
	}
	cfg := sweep.Config{Task: kind, Levels: levels.vals, N: *n, Steps: *steps, Seeds: *seeds, Base: sim.DefaultSettings()}
	for _, m := range strings.Split(*model, ",") {
		cfg.Models = append(cfg.Models, strings.TrimSpace(m))
	}
	var given []string
	for _, p := range sweep.Params() {
		if l := lists[p]; l.set {
			cfg.Param, cfg.Values = p, l.vals
			given = append(given, "--"+p.String())
		}
	}
	if len(given) > 1 {
		return fmt.Errorf("sweep: %s: a sweep varies one parameter", strings.Join(given, " and "))
	}
	if err := knobs(&cfg.Base); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if cfg.Base.Dyn.Attn, err = sim.ParseAttention(*attn); err != nil {
		return fmt.Errorf("sweep: --attn: %w", err)
	}
	if err := sim.WorkerCount.CheckInt(*workers, sim.ViaFlag); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := unusedFlags(fs, cfg.Models); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	sp, err := parseShard(*shardFlag, *shards, os.Getenv)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	cells := cfg.Cells()
	if sp.n > len(cells) {
		return fmt.Errorf("sweep: %s: %d shards for a grid of %d cells (at most one shard per cell)", sp.from, sp.n, len(cells))
	}
	wfp := ""
	if *weights != "" && len(cfg.Models) != 1 {
		return fmt.Errorf("sweep: --weights names one model's file; --model names %d", len(cfg.Models))
	}
	files, err := weightFilesFor(cfg.Models[0], *weights)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if *weights != "" {
		if wfp, err = fileFingerprint(*weights, "--weights", maxWeightsBytes); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
	}
	// The outputs, before any work.
	dir := *out
	if sp.n > 1 {
		dir = filepath.Join(*out, fmt.Sprintf("shard-%d-of-%d", sp.i, sp.n))
	}
	paths := sweepPaths(dir, cfg, sp.n == 1)
	o, err := planOutputs("--out", *force, paths...)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	defer o.Abort()
	data, err := loadData(*dataDir, *dataset)
	if err != nil {
		return err
	}
	if err := checkDigits(cfg.N, data); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	cat := sim.NewCatalogue(data.Train, files)
	for _, name := range cfg.Models {
		m, err := cat.Model(name, cfg.Settings(cells[0]))
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		noteTraining(m, name, cfg.Settings(cells[0]).Corruption.Kind, data)
		for _, p := range cat.Warnings(name) {
			fmt.Fprintln(os.Stderr, "warning:", p)
		}
	}
	mine := sweep.Shard(cells, sp.i, sp.n)
	nd := cfg.N
	what := fmt.Sprintf("%d cells", len(mine))
	if sp.n > 1 {
		what = fmt.Sprintf("shard %d of %d (from %s): %d of %d cells", sp.i, sp.n, sp.from, len(mine), len(cells))
	}
	fmt.Fprintf(os.Stderr, "sweep: %s × %d test digits from %s × up to %d steps\n", what, nd, data.Source, cfg.Steps)
	start := time.Now()
	rs, err := cfg.Run(ctx, sweep.Env{Data: data, Cat: cat, Workers: *workers}, mine, func(done, total int) {
		fmt.Fprintf(os.Stderr, "\r  %d / %d cells, %.1f s", done, total, time.Since(start).Seconds())
	})
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return err
	}
	man := sweep.NewManifest(cfg, dataFingerprint(data.Test, nd), wfp, sp.i, sp.n)
	if err := writeSweep(o, dir, cfg, man, rs, sp.n == 1); err != nil {
		return err
	}
	if err := o.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "sweep: %d cells in %.1f s\n", len(rs), time.Since(start).Seconds())
	fmt.Printf("wrote %s\n", strings.Join(paths, ", "))
	return nil
}

// sweepPaths are the files a sweep directory gets: the table and the
// manifest, and for a whole sweep a basin map per model.
func sweepPaths(dir string, cfg sweep.Config, whole bool) []string {
	paths := []string{filepath.Join(dir, sweep.CSVName), filepath.Join(dir, sweep.ManifestName)}
	if whole {
		for _, m := range cfg.Models {
			paths = append(paths, filepath.Join(dir, "basin-"+m+".png"))
		}
	}
	return paths
}

func writeSweep(o *outputs, dir string, cfg sweep.Config, man sweep.Manifest, rs []sweep.Result, whole bool) error {
	var table bytes.Buffer
	if err := sweep.WriteCSVVersion(&table, man.Version, cfg.Task, rs); err != nil {
		return err
	}
	man.CSV = sweep.Checksum(table.Bytes()) // merge checks the table against it
	if err := o.Write(filepath.Join(dir, sweep.CSVName), func(w io.Writer) error { _, err := w.Write(table.Bytes()); return err }); err != nil {
		return err
	}
	if err := o.Write(filepath.Join(dir, sweep.ManifestName), func(w io.Writer) error { return sweep.WriteManifest(w, man) }); err != nil {
		return err
	}
	if !whole {
		return nil
	}
	for _, m := range cfg.Models {
		b := sweep.Map(cfg, rs, m)
		err := o.Write(filepath.Join(dir, "basin-"+m+".png"), func(w io.Writer) error { return b.WritePNG(w, 1500, 520) })
		if err != nil {
			return err
		}
	}
	return nil
}

func runSweepMerge(ctx context.Context, args []string) error {
	dirs, out, force, err := mergeArgs("sweep", "sweep", args)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if err := outsidePart(*out, d); err != nil {
			return fmt.Errorf("sweep merge: %w", err)
		}
	}
	cfg, man, rs, err := sweep.Merge(ctx, dirs)
	if err != nil {
		return err
	}
	paths := sweepPaths(*out, cfg, true)
	o, err := planOutputs("--out", *force, paths...)
	if err != nil {
		return fmt.Errorf("sweep merge: %w", err)
	}
	defer o.Abort()
	if err := writeSweep(o, *out, cfg, man, rs, true); err != nil {
		return err
	}
	if err := o.Commit(); err != nil {
		return err
	}
	parts := "parts"
	if len(dirs) == 1 {
		parts = "part"
	}
	fmt.Printf("merged %d %s (%d cells): wrote %s\n", len(dirs), parts, len(rs), strings.Join(paths, ", "))
	return nil
}

// mergeArgs reads `CMD merge PART_DIR… --out DIR [--force]` (flags and
// directories in any order), shared by sweep merge and phase merge;
// whole names what the parts make up.
func mergeArgs(cmd, whole string, args []string) (dirs []string, out *string, force *bool, err error) {
	fs := newFlags(cmd+" merge", cmd+" merge PART_DIR… --out DIR [--force]")
	out = fs.String("out", "", "output directory of the whole "+whole+" (created)")
	force = fs.Bool("force", false, "replace files already in --out")
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, nil, nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		dirs = append(dirs, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if *out == "" {
		return nil, nil, nil, fmt.Errorf("%s merge: --out DIR is required", cmd)
	}
	if len(dirs) == 0 {
		return nil, nil, nil, fmt.Errorf("%s merge: name the part directories (DIR/shard-*-of-N)", cmd)
	}
	return dirs, out, force, nil
}

// thousands writes n with a comma every three digits (1,000).
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// maxWeightsBytes caps a --weights file: the most a safetensors file the
// models load may hold.
const maxWeightsBytes = 8 + models.MaxHeader + models.MaxDataBytes

// fileFingerprint is "sha256:" and the hex digest of a file: a regular
// file of at most max bytes (what, a flag, names it in errors), so a FIFO
// or /dev/zero is refused before a byte is read.
func fileFingerprint(path, what string, max int64) (string, error) {
	f, err := infile.Open(path, what, max)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s %s: %w", what, path, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// unusedFlags refuses a model parameter none of models uses (the swept
// --lambda, --beta and --k are also Config.Validate's).
func unusedFlags(fs *flag.FlagSet, models []string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return sim.CheckModelFlags(models, given)
}

// outsidePart refuses a merge --out that is a part directory, inside one
// or holds one: writing there would replace or mix with the part.
func outsidePart(out, part string) error {
	o, p := resolved(out), resolved(part)
	rel := func(a, b string) bool { // a is b or inside it
		r, err := filepath.Rel(b, a)
		return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
	}
	switch {
	case o == p:
		return fmt.Errorf("--out %s is the part %s: choose another directory", out, part)
	case rel(o, p):
		return fmt.Errorf("--out %s is inside the part %s: choose a directory outside the parts", out, part)
	case rel(p, o):
		return fmt.Errorf("--out %s holds the part %s: choose a directory outside the parts", out, part)
	}
	return nil
}

// resolved is path made absolute with the symbolic links of its longest
// existing ancestor resolved.
func resolved(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if filepath.Dir(dir) == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// dataFingerprint identifies the first n test digits (pixels and labels),
// so parts run on machines with different data paths merge, and parts run
// on different data do not.
func dataFingerprint(set *mnist.Set, n int) string {
	h := sha256.New()
	var b [4]byte
	for k := 0; k < n; k++ {
		for _, v := range set.Clean(k, mnist.PixelGain) {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			h.Write(b[:])
		}
		h.Write([]byte{set.Labels[k]})
	}
	return fmt.Sprintf("sha256:%x (%d test digits)", h.Sum(nil), n)
}
