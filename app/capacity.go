package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"

	"attractorlab/sim"
	"attractorlab/sim/figures"
	"attractorlab/sim/mnist"
)

// runCapacity is `attractorlab capacity`: the bare self-attention trained
// from random couplings on each training set size with the same number of
// updates, run on the same noisy test digits; it writes capacity.csv,
// capacity.png (MSE(t*) and t* against the size) and capacity-curves.png
// (each model's mean MSE curve).
func runCapacity(ctx context.Context, args []string) error {
	c := sim.DefaultCapacity()
	fs := newFlags("capacity", "capacity --out DIR [flags]")
	images := fs.String("images", "100,1000,10000", "training set sizes, comma-separated, each "+sim.TrainImages.Allowed())
	fs.IntVar(&c.Updates, "updates", c.Updates, "gradient updates of every model (1 … 100000)")
	fs.IntVar(&c.HalveEvery, "halve-every", c.HalveEvery, "the learning rate halves every this many updates (0: never)")
	fs.IntVar(&c.Patch, "patch", c.Patch, "patch side P (2 or 4)")
	fs.Float64Var(&c.Lambda, "lambda", c.Lambda, "λ of the pseudo-likelihood loss: "+sim.TrainLambda.Allowed())
	fs.Uint64Var(&c.Seed, "seed", 0, "seed for the embedding, the initial couplings and the shuffling (the same for every size)")
	fs.IntVar(&c.N, "n", c.N, "test digits: "+sim.Digits.Allowed())
	fs.Float64Var(&c.Corruption.Sigma2, "sigma2", c.Corruption.Sigma2, "noise variance σ² of the test digits: "+sim.NoiseSigma2.Allowed())
	out := fs.String("out", "", "output directory")
	force := fs.Bool("force", false, "overwrite files that exist")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	c.Images = nil
	for _, part := range strings.Split(*images, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return fmt.Errorf("capacity: --images: %q is not a whole number (allowed %s each)", part, sim.TrainImages.Allowed())
		}
		if slices.Contains(c.Images, v) {
			return fmt.Errorf("capacity: --images: %d is listed twice (each size is trained once)", v)
		}
		c.Images = append(c.Images, v)
	}
	if err := sim.NoiseSigma2.Check(c.Corruption.Sigma2, sim.ViaFlag); err != nil {
		return fmt.Errorf("capacity: %w", err)
	}
	if c.Patch != 2 && c.Patch != 4 {
		return fmt.Errorf("capacity: --patch = %d is out of range (allowed 2 or 4)", c.Patch)
	}
	if err := sim.TrainLambda.Check(c.Lambda, sim.ViaFlag); err != nil {
		return fmt.Errorf("capacity: %w", err)
	}
	if err := c.Check(); err != nil {
		return fmt.Errorf("capacity: %w", err)
	}
	if *out == "" {
		return fmt.Errorf("capacity: --out DIR is required")
	}
	csvPath, pngPath, curvesPath := filepath.Join(*out, "capacity.csv"), filepath.Join(*out, "capacity.png"), filepath.Join(*out, "capacity-curves.png")
	o, err := planOutputs("--out", *force, csvPath, pngPath, curvesPath)
	if err != nil {
		return fmt.Errorf("capacity: %w", err)
	}
	defer o.Abort()
	train, test, err := mnist.Sample()
	if err != nil {
		return err
	}
	if c.N > test.Len() {
		// Never a silent clamp: the run would not be what was asked.
		return fmt.Errorf("capacity: --n %d is out of range: capacity runs on the embedded sample's %s test digits (allowed 1 … %d)", c.N, thousands(test.Len()), test.Len())
	}
	fmt.Printf("capacity: bare self-attention P=%d from random couplings, %d updates each (rate halving every %d), on %d test digits under noise σ² %g\n",
		c.Patch, c.Updates, c.HalveEvery, min(c.N, test.Len()), c.Corruption.Sigma2)
	rows, err := sim.Capacity(ctx, train, test, c, func(r sim.CapacityRow) {
		fmt.Printf("  %5d images, %4d epochs: t* %d, MSE(t*) %.4f (input %.4f), median own t* %g, transient %.0f%% (trained in %.1f s)\n",
			r.Images, r.Epochs, r.TStar, r.MSEStar, r.Curve[0], r.MedianOwnTStar, 100*r.Transient, r.TrainSeconds)
	})
	if err != nil {
		return fmt.Errorf("capacity: %w", err)
	}
	if err := o.Write(csvPath, func(w io.Writer) error { return sim.WriteCapacityCSV(w, c, rows) }); err != nil {
		return err
	}
	if err := o.Write(pngPath, func(w io.Writer) error { return writeCapacityPlot(w, c, rows) }); err != nil {
		return err
	}
	if err := o.Write(curvesPath, func(w io.Writer) error {
		var series []figures.Series
		for _, r := range rows {
			series = append(series, figures.Series{Name: fmt.Sprintf("%d images", r.Images), Values: r.Curve})
		}
		p, err := figures.MSEPlot(fmt.Sprintf("mean MSE over %d test digits (noise σ² %g)", min(c.N, test.Len()), c.Corruption.Sigma2), series, rows[0].Curve[0], -1)
		if err != nil {
			return err
		}
		return figures.WritePNG(w, p, 900, 560)
	}); err != nil {
		return err
	}
	if err := o.Commit(); err != nil {
		return err
	}
	fmt.Printf("wrote %s, %s, %s\n", csvPath, pngPath, curvesPath)
	return nil
}

// writeCapacityPlot draws MSE(t*) and t* against the training set size,
// side by side.
func writeCapacityPlot(w io.Writer, c sim.CapacityConfig, rows []sim.CapacityRow) error {
	xs := make([]float64, len(rows))
	star, input, ts, own := make([]float64, len(rows)), make([]float64, len(rows)), make([]float64, len(rows)), make([]float64, len(rows))
	for k, r := range rows {
		xs[k], star[k], input[k], ts[k], own[k] = float64(r.Images), r.MSEStar, r.Curve[0], float64(r.TStar), r.MedianOwnTStar
	}
	left, err := figures.LinePlot("MSE at t* (mean curve)", "training images", "MSE", xs, true,
		[]figures.Series{{Name: "MSE(t*)", Values: star}, {Name: "input", Values: input, Reference: true}})
	if err != nil {
		return err
	}
	right, err := figures.LinePlot("t*", "training images", "step", xs, true,
		[]figures.Series{{Name: "t* of the mean curve", Values: ts}, {Name: "median of the digits' own t*", Values: own, Dashed: true}})
	if err != nil {
		return err
	}
	right.Y.Min = math.Min(right.Y.Min, 0)
	return figures.WritePNGs(w, []*plot.Plot{left, right}, 1200, 500)
}
