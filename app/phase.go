package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"attractorlab/models/infile"
	"attractorlab/sim"
	"attractorlab/sim/mnist"
	"attractorlab/sim/phase"
)

// The files of a phase directory.
const (
	phaseCSV      = "phase.csv"
	phaseManifest = "phase.json"
	phasePNG      = "phase.png"
)

const phaseSynopsis = "phase --images 100,1000,10000 --lambda 1,5 --seeds 0-1 --out DIR [flags]\n       attractorlab phase merge PART_DIR… --out DIR [--force]"

// runPhase is `attractorlab phase`: the training phase diagram (package
// phase), sharded like a sweep (--shard i/n, Slurm's array, a Kubernetes
// Indexed Job), or `phase merge`.
func runPhase(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "merge" {
		return runPhaseMerge(args[1:])
	}
	c := phase.DefaultConfig()
	fs := newFlags("phase", phaseSynopsis)
	images := fs.String("images", "100,1000,10000", "training set sizes, comma-separated, each "+sim.TrainImages.Allowed())
	var lambdas floatList
	fs.Var(&lambdas, sim.TrainLambda.Flag, "training λ values, comma-separated, each "+sim.TrainLambda.Allowed()+" (default 1,5)")
	seeds := fs.String("seeds", "0-1", fmt.Sprintf("training seeds (\"0-2\", \"0,3\"; at most %d)", sim.MaxTrainSeeds))
	fs.IntVar(&c.Updates, "updates", c.Updates, "gradient updates of every cell (1 … 100000)")
	fs.IntVar(&c.HalveEvery, "halve-every", c.HalveEvery, "the learning rate halves every this many updates (0: never)")
	fs.IntVar(&c.Patch, "patch", c.Patch, "patch side P (2 or 4)")
	fs.IntVar(&c.N, "n", c.N, "noisy test digits per cell: "+sim.Digits.Allowed())
	fs.IntVar(&c.Steps, "steps", c.Steps, "iterations: "+sim.Steps.Allowed())
	fs.Float64Var(&c.Sigma2, sim.NoiseSigma2.Flag, c.Sigma2, "noise variance σ² of the test digits: "+sim.NoiseSigma2.Allowed())
	out := fs.String("out", "", "output directory (created); a shard writes into DIR/shard-I-of-N")
	force := fs.Bool("force", false, "replace files already in --out")
	shardFlag := fs.String("shard", "", "run part i of n (0-based, e.g. 0/3); default: $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT, or $JOB_COMPLETION_INDEX of --shards")
	shards := fs.Int("shards", 0, "shards of a Kubernetes Indexed Job (its completions), read with $JOB_COMPLETION_INDEX")
	workers := fs.Int("workers", 0, "goroutines (0: every core): "+sim.WorkerCount.Allowed())
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("phase: unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		return fmt.Errorf("phase: --out DIR is required")
	}
	c.Images = nil
	for _, part := range strings.Split(*images, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return fmt.Errorf("phase: --images: %q is not a whole number (allowed %s each)", part, sim.TrainImages.Allowed())
		}
		c.Images = append(c.Images, v)
	}
	if len(lambdas.vals) > 0 {
		c.Lambdas = lambdas.vals
	}
	ss, err := sim.ParseSeedList("--seeds", *seeds, sim.MaxTrainSeeds)
	if err != nil {
		return fmt.Errorf("phase: %w", err)
	}
	c.Seeds = ss
	if err := sim.WorkerCount.CheckInt(*workers, sim.ViaFlag); err != nil {
		return fmt.Errorf("phase: %w", err)
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("phase: %w", err)
	}
	sp, err := parseShard(*shardFlag, *shards, os.Getenv)
	if err != nil {
		return fmt.Errorf("phase: %w", err)
	}
	if sp.n > c.NumCells() {
		return fmt.Errorf("phase: %s: %d shards for a grid of %d cells (at most one shard per cell)", sp.from, sp.n, c.NumCells())
	}
	dir := *out
	if sp.n > 1 {
		dir = filepath.Join(*out, fmt.Sprintf("shard-%d-of-%d", sp.i, sp.n))
	}
	paths := phasePaths(dir, sp.n == 1)
	o, err := planOutputs("--out", *force, paths...)
	if err != nil {
		return fmt.Errorf("phase: %w", err)
	}
	defer o.Abort()
	// The embedded sample: training reads its 10,000 training digits
	// (as `train` does), and its test digits are the same on every node.
	train, test, err := mnist.Sample()
	if err != nil {
		return err
	}
	if c.N > test.Len() {
		return fmt.Errorf("phase: --n = %d is more than the %d embedded test digits", c.N, test.Len())
	}
	mine := c.Shard(sp.i, sp.n)
	fmt.Fprintf(os.Stderr, "phase: %d of %d cells (shard %d of %d), each %d updates then %d noisy test digits × %d steps\n",
		len(mine), c.NumCells(), sp.i, sp.n, c.Updates, c.N, c.Steps)
	start := time.Now()
	var rs []phase.Result
	for k, cell := range mine {
		t0 := time.Now()
		r, err := c.RunCell(ctx, phase.Env{Train: train, Test: test, Workers: *workers}, cell)
		if err != nil {
			return fmt.Errorf("phase: %w", err)
		}
		fmt.Fprintf(os.Stderr, "  cell %d/%d: %5d images, λ %g, seed %d: %s; transient %.0f%%; at t*: r(nearest training image) %.3f, r(clean digit) %.3f; the clean digit's r(nearest training image) %.3f (%.1f s)\n",
			k+1, len(mine), cell.Images, cell.Lambda, cell.Seed, r.Best, 100*r.Transient, r.CorrTrain, r.CorrClean, r.CleanTrain, time.Since(t0).Seconds())
		rs = append(rs, r)
	}
	man := phase.Manifest{Version: phase.Version, Config: c, Data: dataFingerprint(test, c.N) + " · " + dataFingerprint(train, train.Len()),
		Cells: c.NumCells(), Shard: sp.i, Shards: sp.n}
	if err := writePhase(o, dir, man, rs, sp.n == 1); err != nil {
		return err
	}
	if err := o.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "phase: %d cells in %.1f s\n", len(rs), time.Since(start).Seconds())
	fmt.Printf("wrote %s\n", strings.Join(paths, ", "))
	return nil
}

// phasePaths are a phase directory's files: the table and the manifest,
// and for a whole grid the diagram.
func phasePaths(dir string, whole bool) []string {
	paths := []string{filepath.Join(dir, phaseCSV), filepath.Join(dir, phaseManifest)}
	if whole {
		paths = append(paths, filepath.Join(dir, phasePNG))
	}
	return paths
}

func writePhase(o *outputs, dir string, man phase.Manifest, rs []phase.Result, whole bool) error {
	var table bytes.Buffer
	if err := phase.WriteCSV(&table, rs); err != nil {
		return err
	}
	man.CSV = phase.Checksum(table.Bytes())
	if err := o.Write(filepath.Join(dir, phaseCSV), func(w io.Writer) error { _, err := w.Write(table.Bytes()); return err }); err != nil {
		return err
	}
	if err := o.Write(filepath.Join(dir, phaseManifest), func(w io.Writer) error {
		b, err := json.MarshalIndent(man, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return err
	}
	if !whole {
		return nil
	}
	d := phase.Diagram(man.Config, rs)
	return o.Write(filepath.Join(dir, phasePNG), func(w io.Writer) error { return d.WritePNG(w, 1500, 520) })
}

// runPhaseMerge is `phase merge PART_DIR… --out DIR`.
func runPhaseMerge(args []string) error {
	dirs, out, force, err := mergeArgs("phase", "grid", args)
	if err != nil {
		return err
	}
	var parts []phase.Part
	for _, d := range dirs {
		if err := outsidePart(*out, d); err != nil {
			return fmt.Errorf("phase merge: %w", err)
		}
		mb, err := infile.ReadAll(filepath.Join(d, phaseManifest), "phase part manifest", infile.MB)
		if err != nil {
			return fmt.Errorf("phase merge: %s is not a phase part: %w", d, err)
		}
		tb, err := infile.ReadAll(filepath.Join(d, phaseCSV), "phase part table", 4*infile.MB)
		if err != nil {
			return fmt.Errorf("phase merge: %s is not a phase part: %w", d, err)
		}
		parts = append(parts, phase.Part{Dir: d, Manifest: mb, Table: tb})
	}
	man, rs, err := phase.Merge(parts)
	if err != nil {
		return err
	}
	paths := phasePaths(*out, true)
	o, err := planOutputs("--out", *force, paths...)
	if err != nil {
		return fmt.Errorf("phase merge: %w", err)
	}
	defer o.Abort()
	if err := writePhase(o, *out, man, rs, true); err != nil {
		return err
	}
	if err := o.Commit(); err != nil {
		return err
	}
	fmt.Printf("merged %d parts (%d cells): wrote %s\n", len(dirs), len(rs), strings.Join(paths, ", "))
	return nil
}
