package main

import (
	"attractorlab/models/infile"
	"bytes"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"attractorlab/sim"
	"attractorlab/sim/figures"
	"attractorlab/sim/mnist"
)

type reproduceRun struct {
	ctx      context.Context
	data     *mnist.Data
	mem      *sim.Memories
	cat      *sim.Catalogue
	settings sim.Settings
	n, steps int
	workers  int
}

// curve runs one model of the catalogue and returns its mean curve; with
// mapped, also the first test digits' paths in the stored digits' state
// space (trajectory-map.png), recorded from the same run.
func (r *reproduceRun) curve(name string, patchVar, mapped bool) (*sim.Curve, []sim.DigitPath, time.Duration, error) {
	m, err := r.cat.Model(name, r.settings)
	if err != nil {
		return nil, nil, 0, err
	}
	for _, p := range r.cat.Warnings(name) {
		fmt.Fprintln(os.Stderr, "warning:", p)
	}
	n := min(r.n, r.data.Test.Len())
	steps := fmt.Sprintf("up to %d steps", r.steps)
	if mx := m.Info().MaxSteps; mx > 0 && mx <= r.steps {
		steps = fmt.Sprintf("%d steps (its %d layers)", mx, mx)
	}
	fmt.Fprintf(os.Stderr, "%s on %d test digits from %s, %s, %s\n", name, n, r.data.Source, r.settings.Corruption.Kind, steps)
	var rec *sim.PathRecorder
	cfg := sim.ReproduceConfig{
		Model: m, Corruption: r.settings.Corruption, N: r.n, Steps: r.steps, Workers: r.workers, PatchVar: patchVar,
	}
	if mapped {
		space := r.mem.StateSpace()
		if space.Warning != "" {
			fmt.Fprintln(os.Stderr, "warning:", space.Warning)
		}
		rec = sim.NewPathRecorder(r.data, m, mapDigits, r.steps, space)
		cfg.Visit = rec.Visit
	}
	start := time.Now()
	cfg.Progress = stepProgress(os.Stderr, start)
	c, err := sim.Reproduce(r.ctx, r.data, r.mem, cfg)
	el := time.Since(start)
	if err != nil || rec == nil {
		return c, nil, el, err
	}
	return c, rec.Paths(), el, nil
}

// stepProgress prints a run's progress at most once a second (it is called
// from the workers, for every image-step).
func stepProgress(w io.Writer, start time.Time) func(done, total int) {
	var mu sync.Mutex
	last, shown := time.Time{}, 0
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if done <= shown {
			return // a later count was printed already
		}
		shown = done
		if time.Since(last) > time.Second || done == total {
			last = time.Now()
			fmt.Fprintf(w, "\r%5.1f%% of %d image-steps, %.1fs", 100*float64(done)/float64(total), total, time.Since(start).Seconds())
			if done == total {
				fmt.Fprintln(w)
			}
		}
	}
}

// printCurve prints a model's result as every table shows it: its best
// step beside the input's error, named t* only when it beats the input,
// and under masking where the error is (masked and visible pixels).
func printCurve(c *sim.Curve, elapsed time.Duration, n int) {
	s := c.Summary()
	last := len(c.Rows) - 1
	verdict := "improves on the input"
	if !s.Improves {
		verdict = "no step improves on the input"
	}
	fmt.Printf("%-16s t* = %-4s best t = %3d  MSE(t*) = %.5f  MSE(0) = %.5f  (%s)  MSE(%d) = %.5f  corr_mean_digit(%d) = %.4f  (%d digits × %d steps, %.1fs)\n",
		c.Model, s.TStarText(), s.T, s.MSE, s.Input, verdict, last, s.End, last, s.CorrMeanEnd, n, last, elapsed.Seconds())
	if c.Task == sim.Mask {
		fmt.Printf("%-16s masked pixels %.5f → %.5f, visible pixels %.5f → %.5f (t = 0 → t = %d)\n",
			"", s.MaskedIn, s.MaskedAt, s.VisibleIn, s.VisibleAt, s.T)
	}
}

// writeSummary writes summary.csv: a row per curve (sim.SummaryColumns).
func writeSummary(o *outputs, path string, curves []*sim.Curve, n int) error {
	return o.Write(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write(sim.SummaryColumns)
		for _, c := range curves {
			cw.Write(c.SummaryRecord(n))
		}
		cw.Flush()
		return cw.Error()
	})
}

// mapDigits is how many test digits trajectory-map.png draws.
const mapDigits = 8

// writeCurve writes curve.csv, tstar.csv and mse.png into dir (planned in
// o), and trajectory-map.png, model name's runs of the first test digits
// in the state space of the stored digits, when paths are given. The two
// pictures are drawn at once: after the run both cores are free.
func (r *reproduceRun) writeCurve(o *outputs, dir string, c *sim.Curve, paths []sim.DigitPath) error {
	p, err := figures.CurvePlot(c)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Model, err)
	}
	figs := []pngJob{{filepath.Join(dir, "mse.png"), func(w io.Writer) error { return figures.WritePNG(w, p, 900, 560) }}}
	if paths != nil {
		mp, err := figures.DigitPathsPlot(c.Model, r.mem.StateSpace(), paths)
		if err != nil {
			return err
		}
		figs = append(figs, pngJob{filepath.Join(dir, "trajectory-map.png"), func(w io.Writer) error { return figures.WritePNGLegendRight(w, mp, 1150, 800) }})
	}
	if err := o.Write(filepath.Join(dir, "curve.csv"), c.WriteCSV); err != nil {
		return err
	}
	if err := o.Write(filepath.Join(dir, "tstar.csv"), c.WriteTStarCSV); err != nil {
		return err
	}
	return writePNGs(o, figs)
}

// pngJob is a picture to draw into path.
type pngJob struct {
	path string
	draw func(io.Writer) error
}

// writePNGs draws the pictures side by side, then writes them in order.
func writePNGs(o *outputs, jobs []pngJob) error {
	bufs := make([]bytes.Buffer, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for k, j := range jobs {
		wg.Go(func() { errs[k] = j.draw(&bufs[k]) })
	}
	wg.Wait()
	for k, j := range jobs {
		if errs[k] != nil {
			return fmt.Errorf("write %s: %w", j.path, errs[k])
		}
		if err := o.Write(j.path, func(w io.Writer) error { _, err := w.Write(bufs[k].Bytes()); return err }); err != nil {
			return err
		}
	}
	return nil
}

func runReproduce(ctx context.Context, args []string) error {
	fs := newFlags("reproduce", "reproduce --model bsa|block|vit|hopfield|hopfield-classic|all --task mask|noise --out DIR [flags]\n       attractorlab reproduce --fig2 --out DIR [flags]")
	model := fs.String("model", "bsa", "model: bsa (with --patch), "+strings.Join(sim.ModelNames[2:], ", ")+", or all")
	patch := fs.Int("patch", 2, "patch side P of the bare self-attention (2 or 4)")
	task := fs.String("task", "mask", "corruption: "+strings.Join(sim.Tasks, " or "))
	replot := fs.Bool("replot", false, "with --model all: draw fig1.png again from the curve.csv files already in --out")
	fig2 := fs.Bool("fig2", false, "write Fig. 2 (within-patch variance of masked patches, P = 4: bsa-p4, block, vit) instead of curves")
	n := fs.Int("n", int(sim.Digits.Default), "number of test digits (the first n): "+sim.Digits.Allowed())
	steps := fs.Int("steps", int(sim.Steps.Default), "iterations (the ViT stops after its 5 layers): "+sim.Steps.Allowed())
	seed := fs.Uint64("seed", 0, "corruption seed")
	weights := fs.String("weights", "", "safetensors weights for a single model (default: the embedded pretrained ones)")
	dataDir := fs.String("data", "", "MNIST directory (default: $ATTRACTORLAB_DATA or the cache; else the embedded sample)")
	dataset := datasetFlag(fs)
	out := fs.String("out", "", "output directory (created)")
	force := fs.Bool("force", false, "replace files already in --out")
	workers := fs.Int("workers", 0, "goroutines (0: every core): "+sim.WorkerCount.Allowed())
	attn := fs.String("attn", "softmax", "attention of the bare self-attention: "+strings.Join(sim.Attentions, " or ")+" (relu for short)")
	knobs := knobFlags(fs, func(*sim.Knob) bool { return true })
	async := fs.Bool("async", false, "asynchronous updates in the classical Hopfield network")
	trainSeedsFlag := fs.String("train-seeds", "", fmt.Sprintf("with --model bsa: train the bare self-attention by the shipped recipe with each of these seeds (\"0-4\", \"0,3,7\"; at most %d; kept in the cache and reused) and report the spread over training and over corruption seeds in seeds.csv and seeds-summary.csv", sim.MaxTrainSeeds))
	corruptSeeds := fs.Int("seeds", 1, "with --train-seeds: corruption seeds --seed … --seed+seeds−1 (1 … 20)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("reproduce: unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		return fmt.Errorf("reproduce: --out DIR is required")
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	// Every flag is checked before any work.
	set := sim.DefaultSettings()
	kind, err := sim.ParseKind(*task)
	if err != nil {
		return fmt.Errorf("reproduce: --task: %w", err)
	}
	set.Corruption.Kind, set.Corruption.Seed = kind, *seed
	if err := knobs(&set); err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	if set.Dyn.Attn, err = sim.ParseAttention(*attn); err != nil {
		return fmt.Errorf("reproduce: --attn: %w", err)
	}
	set.Hop.Async = *async
	// The flags settings do not hold; Validate below checks the rest.
	for _, c := range []struct {
		r sim.Range
		v int
	}{{sim.Digits, *n}, {sim.Steps, *steps}, {sim.WorkerCount, *workers}} {
		if err := c.r.CheckInt(c.v, sim.ViaFlag); err != nil {
			return fmt.Errorf("reproduce: %w", err)
		}
	}
	names := sim.ModelNames
	switch {
	case *fig2:
		names = []string{"bsa-p4", "block", "vit"}
		if kind != sim.Mask {
			return fmt.Errorf("reproduce --fig2 measures masked patches: use --task mask")
		}
	case *model == "all":
		if *weights != "" {
			return fmt.Errorf("reproduce: --weights names one model's file; it cannot go with --model all")
		}
	default:
		name, err := sim.ParseModelPatch(*model, *patch, given["patch"])
		if err != nil {
			return fmt.Errorf("reproduce: --model: %w", err)
		}
		names = []string{name}
	}
	if err := sim.CheckModelFlags(names, given); err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	set.Lanes = names[:1]
	if err := set.Validate(sim.ViaFlag); err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	if *replot {
		if *model != "all" || *fig2 {
			return fmt.Errorf("reproduce: --replot goes with --model all")
		}
		return replotFig1(*out, kind, *force)
	}
	var trainSeeds, cseeds []uint64
	given["train-seeds"] = given["train-seeds"] || *trainSeedsFlag != ""
	switch {
	case given["train-seeds"]:
		if trainSeeds, err = sim.ParseSeedList("--train-seeds", *trainSeedsFlag, sim.MaxTrainSeeds); err != nil {
			return fmt.Errorf("reproduce: %w", err)
		}
		if *model != "bsa" && *model != "bsa-p2" && *model != "bsa-p4" {
			return fmt.Errorf("reproduce: --train-seeds trains the bare self-attention: give --model bsa (with --patch), not %s", *model)
		}
		if *weights != "" || *fig2 || *replot {
			return fmt.Errorf("reproduce: --train-seeds makes its own weights: leave out --weights, --fig2 and --replot")
		}
		if *corruptSeeds < 1 || *corruptSeeds > 20 {
			return fmt.Errorf("reproduce: --seeds = %d is out of range (allowed 1 … 20)", *corruptSeeds)
		}
		for k := range *corruptSeeds {
			cseeds = append(cseeds, *seed+uint64(k))
		}
	case given["seeds"]:
		return fmt.Errorf("reproduce: --seeds goes with --train-seeds (one run's corruption seed is --seed)")
	}
	// Then the outputs, before any work.
	var paths []string
	switch {
	case trainSeeds != nil:
		paths = []string{filepath.Join(*out, "seeds.csv"), filepath.Join(*out, "seeds-summary.csv")}
	case *fig2:
		paths = fig2Paths(*out)
	case *model == "all":
		for _, name := range names {
			paths = append(paths, filepath.Join(*out, name, "curve.csv"), filepath.Join(*out, name, "tstar.csv"), filepath.Join(*out, name, "mse.png"),
				filepath.Join(*out, name, "trajectory-map.png"))
		}
		paths = append(paths, filepath.Join(*out, "fig1.png"), filepath.Join(*out, "summary.csv"))
	default:
		paths = []string{filepath.Join(*out, "curve.csv"), filepath.Join(*out, "tstar.csv"), filepath.Join(*out, "mse.png"), filepath.Join(*out, "trajectory-map.png"),
			filepath.Join(*out, "summary.csv")}
	}
	o, err := planOutputs("--out", *force, paths...)
	if err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	defer o.Abort()
	// Then the data and the models: a bad weights file stops here.
	data, err := loadData(*dataDir, *dataset)
	if err != nil {
		return err
	}
	if err := checkDigits(*n, data); err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	// The memories are prepared while the models load (and their search
	// while the first steps run).
	memc := make(chan *sim.Memories, 1)
	go func() { memc <- sim.NewMemories(data.Train) }()
	files, err := weightFilesFor(names[0], *weights)
	if err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	cat := sim.NewCatalogue(data.Train, files)
	for _, name := range names {
		m, err := cat.Model(name, set)
		if err != nil {
			return fmt.Errorf("reproduce: %w", err)
		}
		noteTraining(m, name, set.Corruption.Kind, data)
	}
	r := &reproduceRun{ctx: ctx, data: data, mem: <-memc, cat: cat, settings: set,
		n: *n, steps: *steps, workers: *workers}
	nd := min(*n, data.Test.Len())
	if *fig2 {
		return runFig2(r, o, nd)
	}
	if trainSeeds != nil {
		p := 2
		if names[0] == "bsa-p4" {
			p = 4
		}
		return runTrainSeeds(ctx, r, o, *out, p, trainSeeds, cseeds)
	}
	var curves []*sim.Curve
	for _, name := range names {
		c, paths, el, err := r.curve(name, false, true)
		if err != nil {
			return err
		}
		dir := *out
		if *model == "all" {
			dir = filepath.Join(*out, name)
		}
		if err := r.writeCurve(o, dir, c, paths); err != nil {
			return err
		}
		printCurve(c, el, nd)
		curves = append(curves, c)
	}
	if *model == "all" {
		if err := writeFig1(o, filepath.Join(*out, "fig1.png"), curves); err != nil {
			return err
		}
	}
	if err := writeSummary(o, filepath.Join(*out, "summary.csv"), curves, nd); err != nil {
		return err
	}
	if err := o.Commit(); err != nil {
		return err
	}
	fmt.Printf("wrote %s\n", strings.Join(paths, ", "))
	return nil
}

// weightFilesFor gives model name the --weights file path ("" keeps every
// model's embedded weights); the Hopfield networks have none.
func weightFilesFor(name, path string) (sim.WeightFiles, error) {
	files := sim.WeightFiles{}
	if path == "" {
		return files, nil
	}
	if sp, ok := sim.Spec(name); !ok || sp.WeightsFlag == "" {
		return files, fmt.Errorf("--weights: %s has no weights file (it stores the training digits)", name)
	}
	files[name] = path
	return files, nil
}

// checkDigits refuses --n beyond the test digits the data holds (never
// a silent clamp: the run would not be what was asked); reproduce and
// sweep share it.
func checkDigits(n int, data *mnist.Data) error {
	have := data.Test.Len()
	switch {
	case n <= have:
		return nil
	case strings.HasPrefix(data.Source, "embedded"):
		return fmt.Errorf("--n %d is out of range: the embedded sample has %s test digits (allowed 1 … %d); fetch full MNIST (10,000 test digits) with `attractorlab data`, or name its directory with --data", n, thousands(have), have)
	}
	return fmt.Errorf("--n %d is out of range: %s has %s test digits (allowed 1 … %d)", n, data.Source, thousands(have), have)
}

// loadData reads full MNIST from --data when given (strictly), else the
// cache or the embedded sample (a corrupt cache falls back with a warning).
func loadData(dir, dataset string) (*mnist.Data, error) {
	switch dataset {
	case mnist.MNISTName:
	case mnist.FashionName:
		if dir != "" {
			return nil, fmt.Errorf("--data names MNIST's files; Fashion-MNIST comes from its own cache (attractorlab data --dataset fashion-mnist)")
		}
		return mnist.LoadFashionData("")
	default:
		f, ok := strings.CutPrefix(dataset, mnist.FolderPrefix)
		if !ok {
			return nil, unknownDataset(dataset)
		}
		if dir != "" {
			return nil, fmt.Errorf("--data names MNIST's files; %s comes from its own cache (attractorlab data --dataset FOLDER)", dataset)
		}
		d, err := sim.LoadFolderData(f)
		if err != nil {
			return nil, fmt.Errorf("--dataset: %w", err)
		}
		return d, nil
	}
	if dir != "" {
		if err := checkDataDir(dir); err != nil {
			return nil, fmt.Errorf("--data %w", err)
		}
		d, err := mnist.LoadData(dir)
		if err != nil {
			return nil, fmt.Errorf("--data %s: %w", dir, err)
		}
		return d, nil
	}
	d, err := mnist.LoadCached()
	if err == nil && d.Warning != "" {
		fmt.Fprintln(os.Stderr, "warning:", d.Warning)
	}
	return d, err
}

// unknownDataset is the error of a --dataset the app does not have.
func unknownDataset(name string) error {
	return fmt.Errorf("--dataset %q is not a data set here (allowed: %s, or %sNAME: a folder of pictures, after attractorlab data --dataset FOLDER)", name, strings.Join(mnist.Datasets, ", "), mnist.FolderPrefix)
}

// datasetFlag is --dataset: the data set a command runs on.
func datasetFlag(fs *flag.FlagSet) *string {
	return fs.String("dataset", mnist.MNISTName, "data set: "+strings.Join(mnist.Datasets, " or ")+" (fashion-mnist: after attractorlab data --dataset fashion-mnist), or "+mnist.FolderPrefix+"NAME (a folder of pictures, after attractorlab data --dataset FOLDER)")
}

// noteTraining says so when a model runs on a data set other than the one
// its weights were trained on (a legitimate experiment: MNIST's weights on
// clothing).
func noteTraining(m sim.Model, name string, task sim.Kind, data *mnist.Data) {
	if d := sim.TrainedOn(m, task); d != "" && d != data.Name() {
		fmt.Printf("note: %s (trained on %s) runs here on %s\n", name, mnist.DatasetLabel(d), mnist.DatasetLabel(data.Name()))
	}
}

// writeFig1 draws the curves (the ViT as its final MSE) into path.
func writeFig1(o *outputs, path string, curves []*sim.Curve) error {
	p, err := figures.Fig1Plot(curves, map[string]bool{"vit": true})
	if err != nil {
		return err
	}
	return o.Write(path, func(w io.Writer) error { return figures.WritePNG(w, p, 1000, 620) })
}

// replotFig1 draws DIR/fig1.png from DIR/<model>/curve.csv.
func replotFig1(dir string, task sim.Kind, force bool) error {
	fig1 := filepath.Join(dir, "fig1.png")
	o, err := planOutputs("--out", force, fig1)
	if err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	defer o.Abort()
	var curves []*sim.Curve
	for _, name := range sim.ModelNames {
		p := filepath.Join(dir, name, "curve.csv")
		f, err := infile.Open(p, "--replot", 64*infile.MB)
		if err != nil {
			return err
		}
		c, err := sim.ReadCurveCSV(f, p, name, task)
		f.Close()
		if err != nil {
			return err
		}
		curves = append(curves, c)
	}
	if err := writeFig1(o, fig1, curves); err != nil {
		return err
	}
	if err := o.Commit(); err != nil {
		return err
	}
	fmt.Println("wrote", fig1)
	return nil
}

func fig2Paths(out string) []string {
	return []string{filepath.Join(out, "fig2.png"), filepath.Join(out, "fig2.csv"), filepath.Join(out, "fig2_summary.csv")}
}

// runFig2 measures the within-patch variance of the masked 4×4 patches for
// the three paper models at each one's best step (the ViT: its last
// layer) and writes fig2.png, fig2.csv and fig2_summary.csv.
func runFig2(r *reproduceRun, o *outputs, n int) error {
	paths := o.paths
	var sets []figures.Fig2Set
	var ref figures.Fig2Set
	byT := map[string]string{}
	for _, name := range []string{"bsa-p4", "block", "vit"} {
		c, _, el, err := r.curve(name, true, false)
		if err != nil {
			return err
		}
		printCurve(c, el, n)
		t, _ := c.Best()
		if name == "vit" {
			t = len(c.Rows) - 1
		}
		sets = append(sets, figures.Fig2Set{Model: name, T: t, Values: c.PatchVar[t]})
		ref = figures.Fig2Set{Model: "clean digits (reference)", Values: c.CleanVar}
		var b strings.Builder
		for _, tt := range []int{1, 2, 3, 5, 7, 10, 30, 100} {
			if tt < len(c.PatchVar) {
				fmt.Fprintf(&b, "\n    t=%-3d %.5f   unclamped %.5f   pixels outside [0,1] %4.1f%%", tt,
					figures.Fig2Set{Values: c.PatchVar[tt]}.Mean(), figures.Fig2Set{Values: c.RawVar[tt]}.Mean(), 100*c.Outside[tt])
			}
		}
		byT[name] = b.String()
	}
	p, err := figures.Fig2Plot(sets, ref)
	if err != nil {
		return err
	}
	if err := o.Write(paths[0], func(w io.Writer) error { return figures.WritePNG(w, p, 900, 560) }); err != nil {
		return err
	}
	if err := o.Write(paths[1], func(w io.Writer) error { return figures.WriteFig2CSV(w, sets) }); err != nil {
		return err
	}
	if err := o.Write(paths[2], func(w io.Writer) error { return figures.WriteFig2Summary(w, sets) }); err != nil {
		return err
	}
	if err := o.Commit(); err != nil {
		return err
	}
	for _, s := range sets {
		fmt.Printf("%-8s t = %3d  mean within-patch variance of masked patches %.5f  (%d patches)\n", s.Model, s.T, s.Mean(), len(s.Values))
	}
	fmt.Printf("%-8s          the same patches of the clean digits      %.5f\n", "clean", ref.Mean())
	fmt.Println("mean variance by step (clamped to [0,1] as every metric; then without the clamp):")
	for _, s := range sets {
		fmt.Printf("  %-8s%s\n", s.Model, byT[s.Model])
	}
	fmt.Printf("wrote %s\n", strings.Join(paths, ", "))
	return nil
}
