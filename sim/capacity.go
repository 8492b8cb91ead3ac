package sim

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// The capacity experiment: the bare self-attention trained from random
// couplings on more and more images, each with the same number of
// gradient updates, then run on the same corrupted test digits. Its
// question is how the transient memory (MSE(t*), t*) changes with the
// size of the training set.

// CapacityConfig is one capacity experiment.
type CapacityConfig struct {
	Images     []int // training set sizes (TrainImages' range), balanced by class
	Updates    int   // gradient updates of every model (epochs = Updates / batches per epoch, rounded up)
	HalveEvery int   // the learning rate halves every this many updates (0: never), whatever the epochs
	Patch      int
	Lambda     float64 // λ of the loss
	Seed       uint64  // embedding, initial couplings, shuffling: the same for every size
	N          int     // test digits the models are run on
	Corruption Corruption
	Steps      int // steps each digit is run
}

// DefaultCapacity is the experiment of the training window's note: 100,
// 1,000 and 10,000 images, each with the shipped model's recipe counted in
// updates — 8,000 updates (200 epochs of 10,000 images), the rate halving
// every 400 (10 such epochs) — then 200 test digits under noise σ² 0.7
// (the paper demo's corruption) for 100 steps. The 10,000-image model is
// the recipe itself.
func DefaultCapacity() CapacityConfig {
	return CapacityConfig{Images: []int{100, 1000, 10000}, Updates: 8000, HalveEvery: 400, Patch: 2, Lambda: TrainLambda.Default,
		N: 200, Corruption: DefaultNoise, Steps: 100}
}

// CapacityRow is one training set size's result.
type CapacityRow struct {
	Images, Epochs, Updates int
	Curve                   []float64 // the mean MSE over the digits at t = 0 … Steps
	TStar                   int       // the mean curve's t* (BestStep)
	MSEStar                 float64   // its MSE there
	MedianOwnTStar          float64   // the median of the digits' own t*
	Transient               float64   // the fraction of digits whose own curve dips below their input's and rises again
	TrainSeconds            float64
}

// Check refuses a setting out of range by the capacity command's flag.
func (c CapacityConfig) Check() error {
	if len(c.Images) == 0 {
		return fmt.Errorf("--images: no training set size given (allowed %s each)", TrainImages.Allowed())
	}
	for _, n := range c.Images {
		if err := TrainImages.CheckInt(n, ViaFlag); err != nil {
			return err
		}
	}
	if c.Updates < 1 || c.Updates > 100000 {
		return fmt.Errorf("--updates = %d is out of range (allowed 1 … 100000)", c.Updates)
	}
	if c.HalveEvery < 0 || c.HalveEvery > 100000 {
		return fmt.Errorf("--halve-every = %d is out of range (allowed 0 … 100000; 0: never)", c.HalveEvery)
	}
	if err := Digits.CheckInt(c.N, ViaFlag); err != nil {
		return err
	}
	if c.Steps < 1 || c.Steps > 1000 {
		return fmt.Errorf("--steps = %d is out of range (allowed 1 … 1000)", c.Steps)
	}
	return nil
}

// Capacity runs the experiment; progress (optional) hears of each model
// trained. Cancelled, it returns the rows finished with ctx's error.
func Capacity(ctx context.Context, train, test *mnist.Set, c CapacityConfig, progress func(CapacityRow)) ([]CapacityRow, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	pt, err := models.NewPatches(c.Patch)
	if err != nil {
		return nil, err
	}
	n := min(c.N, test.Len())
	inputs := make([]*Corrupted, n)
	for k := range inputs {
		inputs[k] = c.Corruption.Apply(test.Clean(k, mnist.PixelGain), pt, k)
	}
	var rows []CapacityRow
	for _, images := range c.Images {
		cfg := models.DefaultTrainConfig()
		batches := (min(images, train.Len()) + cfg.Batch - 1) / cfg.Batch
		cfg.Epochs = (c.Updates + batches - 1) / batches
		// The same schedule in updates for every size: epochs differ.
		cfg.HalveEvery = 0
		if c.HalveEvery > 0 {
			cfg.HalveEvery = max(1, (c.HalveEvery+batches/2)/batches)
		}
		s := BSATraining{Patch: c.Patch, Images: images, Lambda: c.Lambda, Seed: c.Seed, Config: cfg, SkipVal: true}
		start := time.Now()
		m, _, err := TrainBSA(ctx, train, test, s, nil)
		if err != nil {
			return rows, err
		}
		row := CapacityRow{Images: min(images, train.Len()), Epochs: cfg.Epochs, Updates: cfg.Epochs * batches,
			TrainSeconds: time.Since(start).Seconds()}
		mse := make([][]float64, c.Steps+1)
		for t := range mse {
			mse[t] = make([]float64, n)
		}
		if err := RunBSA(ctx, m, DefaultDynamics(), inputs, c.Steps, models.NewCrew(0), func(t, b int, pred []float32, _ float64) {
			mse[t][b], _, _ = MSE(pred, inputs[b].Clean, inputs[b].Pixel) // MSE clamps pred
		}); err != nil {
			return rows, err
		}
		row.Curve = make([]float64, c.Steps+1)
		for t := range mse {
			for _, v := range mse[t] {
				row.Curve[t] += v / float64(n)
			}
		}
		row.TStar, row.MSEStar = BestStep(c.Steps+1, func(t int) float64 { return row.Curve[t] })
		own := make([]float64, n)
		transient := 0
		digits := DigitBests(n, c.Steps+1, func(t, b int) float64 { return mse[t][b] }, func(b int) int { return int(test.Labels[b]) })
		for b, d := range digits {
			own[b] = float64(d.TStar)
			if IsTransient(d.MSETStar, d.MSE0, mse[c.Steps][b]) {
				transient++
			}
		}
		slices.Sort(own)
		row.MedianOwnTStar = Quantile(own, 0.5)
		row.Transient = float64(transient) / float64(n)
		rows = append(rows, row)
		if progress != nil {
			progress(row)
		}
	}
	return rows, nil
}

// WriteCapacityCSV writes one line per training set size.
func WriteCapacityCSV(w io.Writer, c CapacityConfig, rows []CapacityRow) error {
	cw := csv.NewWriter(w)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	cw.Write([]string{"images", "epochs", "updates", "test_digits", "sigma2", "mse_input", "t_star", "mse_t_star", "median_own_t_star", "transient_fraction", "mse_last", "train_seconds"})
	for _, r := range rows {
		cw.Write([]string{strconv.Itoa(r.Images), strconv.Itoa(r.Epochs), strconv.Itoa(r.Updates), strconv.Itoa(c.N), f(c.Corruption.Sigma2),
			f(r.Curve[0]), strconv.Itoa(r.TStar), f(r.MSEStar), f(r.MedianOwnTStar), f(r.Transient), f(r.Curve[len(r.Curve)-1]), f(math.Round(r.TrainSeconds*10) / 10)})
	}
	cw.Flush()
	return cw.Error()
}
