package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"attractorlab/models"
	"attractorlab/sim"
)

// reproduceModels are the names `reproduce --model all` runs, in order.
var reproduceModels = []string{"bsa-p2", "bsa-p4", "block", "vit", "hopfield", "hopfield-classic"}

type reproduceRun struct {
	ctx      context.Context
	data     *sim.Data
	mem      *sim.Memories
	corr     sim.Corruption
	n, steps int
	workers  int
	weights  string // --weights, for a single model
	dy       models.Dynamics
	hop      sim.HopfieldParams
}

// model builds the named model; for the BSA it returns the network itself.
func (r *reproduceRun) model(name string) (*models.BSA, sim.Model, error) {
	switch name {
	case "bsa-p2", "bsa-p4":
		m, err := sim.LoadBSA(int(name[5]-'0'), r.weights)
		return m, nil, err
	case "block", "vit":
		m, problems, err := sim.LoadTransformerModel(name, r.weights)
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "warning:", p)
		}
		return nil, m, err
	case "hopfield":
		return nil, &sim.HopfieldModel{Set: r.data.Train}, nil
	case "hopfield-classic":
		return nil, &sim.ClassicModel{Set: r.data.Train}, nil
	}
	return nil, nil, fmt.Errorf("reproduce: unknown model %q (bsa, block, vit, hopfield, hopfield-classic or all)", name)
}

// curve runs one model and returns its mean curve.
func (r *reproduceRun) curve(name string, patchVar bool) (*sim.Curve, time.Duration, error) {
	bsa, any, err := r.model(name)
	if err != nil {
		return nil, 0, err
	}
	n := min(r.n, r.data.Test.Len())
	fmt.Fprintf(os.Stderr, "%s on %d test digits from %s, %s, up to %d steps\n", name, n, r.data.Source, r.corr.Kind, r.steps)
	start := time.Now()
	last := time.Time{}
	var mu sync.Mutex // Progress is called from the workers
	shown := 0
	c, err := sim.Reproduce(r.ctx, r.data, r.mem, sim.ReproduceConfig{
		Model: bsa, Any: any, Settings: sim.Settings{Dyn: r.dy, Hop: r.hop}, Name: name, Dyn: r.dy,
		Corruption: r.corr, N: r.n, Steps: r.steps, Workers: r.workers, PatchVar: patchVar,
		Progress: func(done, total int) {
			mu.Lock()
			defer mu.Unlock()
			if done <= shown {
				return // a later count was printed already
			}
			shown = done
			if time.Since(last) > time.Second || done == total {
				last = time.Now()
				fmt.Fprintf(os.Stderr, "\r%d/%d digits, %.1fs", done, total, time.Since(start).Seconds())
				if done == total {
					fmt.Fprintln(os.Stderr)
				}
			}
		},
	})
	return c, time.Since(start), err
}

func printCurve(c *sim.Curve, elapsed time.Duration, n int) {
	ts, best := c.Best()
	last := c.Rows[len(c.Rows)-1]
	fmt.Printf("%-16s t* = %3d  MSE(t*) = %.5f  MSE(0) = %.5f  MSE(%d) = %.5f  corr_mean_digit(%d) = %.4f  (%d digits × %d steps, %.1fs)\n",
		c.Model, ts, best, c.Rows[0].MSE, last.T, last.MSE, last.T, last.CorrMean, n, len(c.Rows)-1, elapsed.Seconds())
}

// writeCurve writes curve.csv and mse.png into dir, refusing to overwrite.
func writeCurve(dir string, c *sim.Curve) error {
	csvPath, pngPath := filepath.Join(dir, "curve.csv"), filepath.Join(dir, "mse.png")
	if err := refuseExisting(csvPath, pngPath); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := models.SaveFile(csvPath, false, c.WriteCSV); err != nil {
		return err
	}
	p, err := sim.CurvePlot(c)
	if err != nil {
		return err
	}
	return models.SaveFile(pngPath, false, func(w io.Writer) error { return sim.WritePNG(w, p, 900, 560) })
}

func refuseExisting(paths ...string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return fmt.Errorf("%s exists: choose another --out", p)
		}
	}
	return nil
}

func runReproduce(ctx context.Context, args []string) error {
	fs := newFlags("reproduce", "reproduce --model bsa|block|vit|hopfield|hopfield-classic|all --task mask|noise --out DIR [flags]\n       attractorlab reproduce --fig2 --out DIR [flags]")
	model := fs.String("model", "bsa", "model: bsa (with --patch), block, vit, hopfield, hopfield-classic, or all")
	patch := fs.Int("patch", 2, "patch side P of the bare self-attention (2 or 4)")
	task := fs.String("task", "mask", "corruption: mask or noise")
	replot := fs.Bool("replot", false, "with --model all: draw fig1.png again from the curve.csv files already in --out")
	fig2 := fs.Bool("fig2", false, "write Fig. 2 (within-patch variance of masked patches, P = 4: bsa-p4, block, vit) instead of curves")
	n := fs.Int("n", 1000, "number of test digits (the first n)")
	steps := fs.Int("steps", 100, "iterations (the ViT stops after its 5 layers)")
	seed := fs.Uint64("seed", 0, "corruption seed")
	frac := fs.Float64("mask", sim.DefaultMask.Fraction, "masked fraction of tokens")
	sigma2 := fs.Float64("sigma2", sim.DefaultNoise.Sigma2, "noise variance σ²")
	weights := fs.String("weights", "", "safetensors weights for a single model (default: the embedded pretrained ones)")
	dataDir := fs.String("data", "", "MNIST directory (default: $ATTRACTORLAB_DATA or the cache; else the embedded sample)")
	out := fs.String("out", "", "output directory (created; existing files are not overwritten)")
	workers := fs.Int("workers", 0, "goroutines (default: every core)")
	dy := models.DefaultDynamics()
	lambda := fs.Float64("lambda", float64(dy.Lambda), "λ of the bare self-attention")
	gamma := fs.Float64("gamma", float64(dy.Gamma), "γ of the bare self-attention")
	attn := fs.String("attn", "softmax", "attention of the bare self-attention: softmax or relu")
	hop := sim.DefaultHopfield()
	beta := fs.Float64("beta", float64(hop.Beta), "β of the modern Hopfield network")
	fs.IntVar(&hop.K, "k", hop.K, "stored digits of the classical Hopfield network")
	fs.BoolVar(&hop.Async, "async", false, "asynchronous updates in the classical Hopfield network")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("reproduce: --out DIR is required")
	}
	hop.Beta = float32(*beta)
	kind, err := sim.ParseKind(*task)
	if err != nil {
		return err
	}
	dy.Lambda, dy.Gamma = float32(*lambda), float32(*gamma)
	switch *attn {
	case "softmax":
	case "relu", "relu/seqlen":
		dy.Attn = models.ReluSeqlen
	default:
		return fmt.Errorf("reproduce: unknown attention %q (softmax or relu)", *attn)
	}
	if err := dy.Validate(); err != nil {
		return err
	}
	if *dataDir == "" {
		*dataDir = sim.DataDir()
	}
	data, err := sim.LoadData(*dataDir)
	if err != nil {
		return err
	}
	r := &reproduceRun{ctx: ctx, data: data, mem: sim.NewMemories(data.Train), n: *n, steps: *steps, workers: *workers,
		weights: *weights, dy: dy, hop: hop,
		corr: sim.Corruption{Kind: kind, Fraction: *frac, Sigma2: *sigma2, Seed: *seed}}
	nd := min(*n, data.Test.Len())
	switch {
	case *fig2:
		return runFig2(r, *out, nd)
	case *model == "all" && *replot:
		return replotFig1(*out, kind)
	case *model == "all":
		if *weights != "" {
			return fmt.Errorf("reproduce: --weights names one model's file; it cannot go with --model all")
		}
		fig1 := filepath.Join(*out, "fig1.png")
		if err := refuseExisting(fig1); err != nil {
			return err
		}
		curves := make([]*sim.Curve, 0, len(reproduceModels))
		for _, name := range reproduceModels {
			c, el, err := r.curve(name, false)
			if err != nil {
				return err
			}
			if err := writeCurve(filepath.Join(*out, name), c); err != nil {
				return err
			}
			printCurve(c, el, nd)
			curves = append(curves, c)
		}
		if err := writeFig1(fig1, curves); err != nil {
			return err
		}
		fmt.Printf("wrote %s/<model>/curve.csv for %s and %s\n", *out, strings.Join(reproduceModels, ", "), fig1)
		return nil
	default:
		name := *model
		if name == "bsa" {
			name = fmt.Sprintf("bsa-p%d", *patch)
		}
		c, el, err := r.curve(name, false)
		if err != nil {
			return err
		}
		if err := writeCurve(*out, c); err != nil {
			return err
		}
		printCurve(c, el, nd)
		fmt.Printf("wrote %s and %s\n", filepath.Join(*out, "curve.csv"), filepath.Join(*out, "mse.png"))
		return nil
	}
}

// writeFig1 draws the curves (the ViT as its final MSE) into path, which
// must not exist.
func writeFig1(path string, curves []*sim.Curve) error {
	p, err := sim.Fig1Plot(curves, map[string]bool{"vit": true})
	if err != nil {
		return err
	}
	return models.SaveFile(path, false, func(w io.Writer) error { return sim.WritePNG(w, p, 1000, 620) })
}

// replotFig1 draws DIR/fig1.png from DIR/<model>/curve.csv.
func replotFig1(dir string, task sim.Kind) error {
	fig1 := filepath.Join(dir, "fig1.png")
	if err := refuseExisting(fig1); err != nil {
		return err
	}
	var curves []*sim.Curve
	for _, name := range reproduceModels {
		p := filepath.Join(dir, name, "curve.csv")
		f, err := os.Open(p)
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
	if err := writeFig1(fig1, curves); err != nil {
		return err
	}
	fmt.Println("wrote", fig1)
	return nil
}

// runFig2 measures the within-patch variance of the masked 4×4 patches for
// the three paper models at each one's best step (the ViT: its last
// layer) and writes fig2.png, fig2.csv and fig2_summary.csv.
func runFig2(r *reproduceRun, out string, n int) error {
	paths := []string{filepath.Join(out, "fig2.png"), filepath.Join(out, "fig2.csv"), filepath.Join(out, "fig2_summary.csv")}
	if err := refuseExisting(paths...); err != nil {
		return err
	}
	if r.corr.Kind != sim.Mask {
		return fmt.Errorf("reproduce --fig2 measures masked patches: use --task mask")
	}
	var sets []sim.Fig2Set
	var ref sim.Fig2Set
	byT := map[string]string{}
	for _, name := range []string{"bsa-p4", "block", "vit"} {
		c, el, err := r.curve(name, true)
		if err != nil {
			return err
		}
		printCurve(c, el, n)
		t, _ := c.Best()
		if name == "vit" {
			t = len(c.Rows) - 1
		}
		sets = append(sets, sim.Fig2Set{Model: name, T: t, Values: c.PatchVar[t]})
		ref = sim.Fig2Set{Model: "clean digits (reference)", Values: c.CleanVar}
		var b strings.Builder
		for _, tt := range []int{1, 2, 3, 5, 7, 10, 30, 100} {
			if tt < len(c.PatchVar) {
				fmt.Fprintf(&b, "\n    t=%-3d %.5f   unclamped %.5f   pixels outside [0,1] %4.1f%%", tt,
					sim.Fig2Set{Values: c.PatchVar[tt]}.Mean(), sim.Fig2Set{Values: c.RawVar[tt]}.Mean(), 100*c.Outside[tt])
			}
		}
		byT[name] = b.String()
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	p, err := sim.Fig2Plot(sets, ref)
	if err != nil {
		return err
	}
	if err := models.SaveFile(paths[0], false, func(w io.Writer) error { return sim.WritePNG(w, p, 900, 560) }); err != nil {
		return err
	}
	if err := models.SaveFile(paths[1], false, func(w io.Writer) error { return sim.WriteFig2CSV(w, sets) }); err != nil {
		return err
	}
	if err := models.SaveFile(paths[2], false, func(w io.Writer) error { return sim.WriteFig2Summary(w, sets) }); err != nil {
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
