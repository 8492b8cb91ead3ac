package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"attractorlab/models/infile"
	"attractorlab/sim"
	"attractorlab/sim/dynamics"
	"attractorlab/sim/figures"
)

// The pictures of a whole dynamics directory.
const (
	dynamicsSpectra = "spectra.png"
	dynamicsGrowth  = "growth-escape.png"
)

const dynamicsSynopsis = "dynamics --model bsa-p2 --task mask|noise --n 200 --at 1,t*,100,1000 --k 10 --out DIR [flags]\n       attractorlab dynamics merge PART_DIR… --out DIR [--force]"

// runDynamics is `attractorlab dynamics`: the local dynamics of a model's
// step along each digit's run (package dynamics), sharded like a sweep,
// or `dynamics merge`.
func runDynamics(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "merge" {
		return runDynamicsMerge(args[1:])
	}
	fs := newFlags("dynamics", dynamicsSynopsis)
	model := fs.String("model", sim.ShippedName(2), "model with a map to linearise: the bare self-attention ("+sim.ShippedName(2)+", "+sim.ShippedName(4)+") or the modern Hopfield network")
	task := fs.String("task", "noise", "corruption: "+strings.Join(sim.Tasks, " or "))
	seed := fs.Uint64("seed", 0, "corruption seed")
	n := fs.Int("n", 200, "test digits (the first n): "+sim.Digits.Allowed())
	atFlag := fs.String("at", "1,t*,100,1000", "steps whose one-step Jacobian's leading eigenvalues are computed: whole numbers 1 … --steps, or t* (each digit's own best step)")
	steps := fs.Int("steps", 0, "steps of each run (default: the largest step of --at, at least 100): "+sim.Steps.Allowed())
	k := fs.Int(dynamics.KRange.Flag, int(dynamics.KRange.Default), "the escape's horizon: the growth of the perturbation that grows most from t* to t* + k, "+dynamics.KRange.Allowed()+" and below --steps")
	knobs := knobFlags(fs, func(kn *sim.Knob) bool { return kn.Flag != dynamics.KRange.Flag })
	attn := fs.String("attn", "softmax", "attention of the bare self-attention: "+strings.Join(sim.Attentions, " or "))
	weights := fs.String("weights", "", "safetensors weights of a bare model (default: the embedded ones)")
	dataDir := fs.String("data", "", "MNIST directory (default: $ATTRACTORLAB_DATA or the cache; else the embedded sample)")
	dataset := datasetFlag(fs)
	out := fs.String("out", "", "output directory (created); a shard writes into DIR/shard-I-of-N")
	force := fs.Bool("force", false, "replace files already in --out")
	shardFlag := fs.String("shard", "", "run part i of n (0-based, e.g. 0/3: digits ≡ i mod n); default: $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT, or $JOB_COMPLETION_INDEX of --shards")
	shards := fs.Int("shards", 0, "shards of a Kubernetes Indexed Job (its completions), read with $JOB_COMPLETION_INDEX")
	workers := fs.Int("workers", 0, "goroutines (0: every core): "+sim.WorkerCount.Allowed())
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("dynamics: unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		return fmt.Errorf("dynamics: --out DIR is required")
	}
	// Every flag is checked before any work.
	name, err := sim.ParseModel(*model)
	if err != nil {
		return fmt.Errorf("dynamics: --model: %w", err)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	delete(given, dynamics.KRange.Flag) // here the escape's horizon, not the classical Hopfield network's K
	if err := sim.CheckModelFlags([]string{name}, given); err != nil {
		return fmt.Errorf("dynamics: %w", err)
	}
	set := sim.DefaultSettings()
	kind, err := sim.ParseKind(*task)
	if err != nil {
		return fmt.Errorf("dynamics: --task: %w", err)
	}
	set.Corruption.Kind, set.Corruption.Seed = kind, *seed
	if err := knobs(&set); err != nil {
		return fmt.Errorf("dynamics: %w", err)
	}
	if set.Dyn.Attn, err = sim.ParseAttention(*attn); err != nil {
		return fmt.Errorf("dynamics: --attn: %w", err)
	}
	set.Lanes = []string{name}
	if err := set.Validate(sim.ViaFlag); err != nil {
		return fmt.Errorf("dynamics: %w", err)
	}
	if err := sim.WorkerCount.CheckInt(*workers, sim.ViaFlag); err != nil {
		return fmt.Errorf("dynamics: %w", err)
	}
	nsteps := *steps
	if nsteps == 0 {
		nsteps = 100
		if at, err := dynamics.ParseSteps(*atFlag, int(sim.Steps.Max)); err == nil {
			for _, s := range at {
				nsteps = max(nsteps, s.T)
			}
		}
	}
	if err := sim.Steps.CheckInt(nsteps, sim.ViaFlag); err != nil {
		return fmt.Errorf("dynamics: %w", err)
	}
	at, err := dynamics.ParseSteps(*atFlag, nsteps)
	if err != nil {
		return fmt.Errorf("dynamics: %w", err)
	}
	cfg := dynamics.Config{Model: name, Settings: set, N: *n, Steps: nsteps, At: at, K: *k, Workers: *workers}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("dynamics: %w", err)
	}
	sp, err := parseShard(*shardFlag, *shards, os.Getenv)
	if err != nil {
		return fmt.Errorf("dynamics: %w", err)
	}
	files, err := weightFilesFor(name, *weights)
	if err != nil {
		return fmt.Errorf("dynamics: %w", err)
	}
	wfp := ""
	if *weights != "" {
		if wfp, err = fileFingerprint(*weights, "--weights", maxWeightsBytes); err != nil {
			return fmt.Errorf("dynamics: %w", err)
		}
	}
	data, err := loadData(*dataDir, *dataset)
	if err != nil {
		return err
	}
	if err := checkDigits(*n, data); err != nil {
		return fmt.Errorf("dynamics: %w", err)
	}
	digits := min(*n, data.Test.Len())
	if sp.n > digits {
		return fmt.Errorf("dynamics: %s: %d shards for %d digits (at most one shard per digit)", sp.from, sp.n, digits)
	}
	cat := sim.NewCatalogue(data.Train, files)
	m, err := cat.Model(name, set)
	if err != nil {
		return fmt.Errorf("dynamics: %w", err)
	}
	noteTraining(m, name, set.Corruption.Kind, data)
	if _, err := dynamics.SystemOf(m, set.Corruption.Kind); err != nil {
		return fmt.Errorf("dynamics: --model: %w", err)
	}
	dir := *out
	if sp.n > 1 {
		dir = filepath.Join(*out, fmt.Sprintf("shard-%d-of-%d", sp.i, sp.n))
	}
	paths := dynamicsPaths(dir, sp.n == 1)
	o, err := planOutputs("--out", *force, paths...)
	if err != nil {
		return fmt.Errorf("dynamics: %w", err)
	}
	defer o.Abort()
	what := fmt.Sprintf("%d test digits", digits)
	if sp.n > 1 {
		what = fmt.Sprintf("shard %d of %d (from %s) of %d test digits", sp.i, sp.n, sp.from, digits)
	}
	fmt.Fprintf(os.Stderr, "dynamics: %s on %s from %s, %s, %d steps; spectra at %s; escape over k = %d from t*\n",
		name, what, data.Source, kind, nsteps, *atFlag, *k)
	start := time.Now()
	ds, err := cfg.Run(ctx, dynamics.Env{Data: data, Cat: cat}, sp.i, sp.n, func(done, total int) {
		fmt.Fprintf(os.Stderr, "\r  %d / %d digits, %.1f s", done, total, time.Since(start).Seconds())
	})
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return err
	}
	man := dynamics.NewManifest(cfg, digits, dataFingerprint(data.Test, digits), wfp, sp.i, sp.n)
	if err := writeDynamics(o, dir, man, cfg, ds, sp.n == 1); err != nil {
		return err
	}
	if err := o.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "dynamics: %d digits in %.1f s\n", len(ds), time.Since(start).Seconds())
	if sp.n == 1 {
		fmt.Println(dynamics.Summarise(cfg.At, ds).Paragraph(name, cfg.K))
	}
	fmt.Printf("wrote %s\n", strings.Join(paths, ", "))
	return nil
}

// dynamicsPaths are a dynamics directory's files: the table and the
// manifest, and for a whole run the two pictures.
func dynamicsPaths(dir string, whole bool) []string {
	paths := []string{filepath.Join(dir, dynamics.CSVName), filepath.Join(dir, dynamics.ManifestName)}
	if whole {
		paths = append(paths, filepath.Join(dir, dynamicsSpectra), filepath.Join(dir, dynamicsGrowth))
	}
	return paths
}

func writeDynamics(o *outputs, dir string, man dynamics.Manifest, cfg dynamics.Config, ds []dynamics.Digit, whole bool) error {
	var table bytes.Buffer
	if err := dynamics.WriteCSV(&table, cfg.At, cfg.K, ds); err != nil {
		return err
	}
	man.CSV = dynamics.Checksum(table.Bytes())
	if err := o.Write(filepath.Join(dir, dynamics.CSVName), func(w io.Writer) error { _, err := w.Write(table.Bytes()); return err }); err != nil {
		return err
	}
	if err := o.Write(filepath.Join(dir, dynamics.ManifestName), func(w io.Writer) error { return dynamics.WriteManifest(w, man) }); err != nil {
		return err
	}
	if !whole {
		return nil
	}
	var groups []figures.EigGroup
	for a, st := range cfg.At {
		label := "t = " + st.String()
		if st.TStar {
			label = "t* (each digit's own)"
		}
		g := figures.EigGroup{Label: label}
		for _, d := range ds {
			for _, e := range d.Spectra[a].Eigs {
				g.Values = append(g.Values, e.Value)
			}
		}
		groups = append(groups, g)
	}
	title := fmt.Sprintf("%s, %s: the %d leading eigenvalues of ∂X(t+1)/∂X(t), %d digits", cfg.Model, man.Task, dynamics.Eigs, len(ds))
	sp, err := figures.SpectrumPlot(title, groups)
	if err != nil {
		return err
	}
	if err := o.Write(filepath.Join(dir, dynamicsSpectra), func(w io.Writer) error { return figures.WritePNG(w, sp, 900, 800) }); err != nil {
		return err
	}
	var gx, gy []float64
	for _, d := range ds {
		if d.Escape >= 0 {
			gx = append(gx, d.Growth)
			gy = append(gy, float64(d.Escape-d.Best.T))
		}
	}
	gtitle := fmt.Sprintf("%s, %s: growth from t* over k = %d steps against the time to escape (%d of %d digits escape)", cfg.Model, man.Task, cfg.K, len(gx), len(ds))
	if len(gx) == 0 {
		// Nothing escaped within the run: the growths alone, at y = 0 is
		// not a time; say so in the picture's title instead.
		gtitle = fmt.Sprintf("%s, %s: no digit escapes within %d steps", cfg.Model, man.Task, cfg.Steps)
		for _, d := range ds {
			gx = append(gx, d.Growth)
			gy = append(gy, float64(cfg.Steps-d.Best.T))
		}
	}
	gp, err := figures.ScatterPlot(gtitle, fmt.Sprintf("growth ‖DF_k v‖ of the escape direction over k = %d steps (log scale)", cfg.K), "steps from t* until the MSE exceeds the input's", gx, gy, true)
	if err != nil {
		return err
	}
	return o.Write(filepath.Join(dir, dynamicsGrowth), func(w io.Writer) error { return figures.WritePNG(w, gp, 900, 700) })
}

// runDynamicsMerge is `dynamics merge PART_DIR… --out DIR`.
func runDynamicsMerge(args []string) error {
	dirs, out, force, err := mergeArgs("dynamics", "run", args)
	if err != nil {
		return err
	}
	var parts []dynamics.Part
	for _, d := range dirs {
		if err := outsidePart(*out, d); err != nil {
			return fmt.Errorf("dynamics merge: %w", err)
		}
		mb, err := infile.ReadAll(filepath.Join(d, dynamics.ManifestName), "dynamics part manifest", infile.MB)
		if err != nil {
			return fmt.Errorf("dynamics merge: %s is not a dynamics part: %w", d, err)
		}
		tb, err := infile.ReadAll(filepath.Join(d, dynamics.CSVName), "dynamics part table", 64*infile.MB)
		if err != nil {
			return fmt.Errorf("dynamics merge: %s is not a dynamics part: %w", d, err)
		}
		parts = append(parts, dynamics.Part{Dir: d, Manifest: mb, Table: tb})
	}
	man, cfg, ds, err := dynamics.Merge(parts)
	if err != nil {
		return err
	}
	paths := dynamicsPaths(*out, true)
	o, err := planOutputs("--out", *force, paths...)
	if err != nil {
		return fmt.Errorf("dynamics merge: %w", err)
	}
	defer o.Abort()
	if err := writeDynamics(o, *out, man, cfg, ds, true); err != nil {
		return err
	}
	if err := o.Commit(); err != nil {
		return err
	}
	fmt.Println(dynamics.Summarise(cfg.At, ds).Paragraph(cfg.Model, cfg.K))
	fmt.Printf("merged %d parts (%d digits): wrote %s\n", len(dirs), len(ds), strings.Join(paths, ", "))
	return nil
}
