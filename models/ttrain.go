package models

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// TransformerTrainConfig is the backprop recipe of §6.
type TransformerTrainConfig struct {
	Epochs      int     // passes over the training images
	Batch       int     // images per AdamW step (256)
	LR          float64 // 1e-3
	WeightDecay float64 // 0.01
	Beta1       float64 // 0.9
	Beta2       float64 // 0.999
	Eps         float64 // 1e-8
	// TauMin..TauMax: the recycled block's applications, drawn uniformly
	// per batch (3..7); ValTau is used for validation (5). The ViT always
	// runs its Depth blocks once.
	TauMin, TauMax, ValTau int
	// Cosine decays the learning rate from LR to 0 over the run (half a
	// cosine per step); false keeps LR constant.
	Cosine  bool
	Micro   int // images per gemm pass (16)
	Workers int // goroutines; 0 means GOMAXPROCS
	Seed    uint64
	// Corrupt returns a corrupted copy of clean; (seed, k) name the draw,
	// so every batch sees fresh corruptions and a run is reproducible.
	Corrupt func(clean []float32, seed uint64, k int) []float32
	// ValInputs and ValClean, when set, give the validation MSE after
	// every epoch.
	ValInputs, ValClean [][]float32
	Progress            func(TransformerEpoch)
}

// Allowed ranges of the transformer trainer's own settings (the shared
// ones are MinEpochs … MaxWorkers).
const (
	MaxTau   = 100 // TauMin, TauMax, ValTau: 1 … MaxTau
	MaxMicro = 256 // Micro: 0 (16) … MaxMicro
)

// Check reports every setting outside its allowed range (one line each,
// naming the train command's flag where there is one, e.g. "--batch = 0 is
// out of range (allowed 1 … 65536)"), or nil. NewTransformerTrainer and
// Train call it before any work.
func (c TransformerTrainConfig) Check() error {
	errs := []error{
		checkCommon(c.Epochs, c.Batch, c.LR, c.WeightDecay, c.Beta1, c.Beta2, c.Eps, c.Workers),
		checkInt("TauMin", c.TauMin, 1, MaxTau),
		checkInt("TauMax", c.TauMax, max(c.TauMin, 1), MaxTau),
		checkInt("ValTau", c.ValTau, 1, MaxTau),
		checkInt("Micro", c.Micro, 0, MaxMicro),
	}
	if c.Corrupt == nil {
		errs = append(errs, errors.New("transformer training needs a corruption (Corrupt is nil)"))
	}
	if len(c.ValInputs) != len(c.ValClean) {
		errs = append(errs, fmt.Errorf("%d validation inputs but %d clean images", len(c.ValInputs), len(c.ValClean)))
	} else {
		for k := range c.ValInputs {
			if len(c.ValInputs[k]) != Pixels || len(c.ValClean[k]) != Pixels {
				errs = append(errs, fmt.Errorf("validation image %d has %d input and %d clean pixels, want %d",
					k, len(c.ValInputs[k]), len(c.ValClean[k]), Pixels))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// DefaultTransformerTrainConfig returns §6's recipe.
func DefaultTransformerTrainConfig() TransformerTrainConfig {
	return TransformerTrainConfig{Epochs: 20, Batch: 256, LR: 1e-3, WeightDecay: 0.01, Beta1: 0.9, Beta2: 0.999,
		Eps: 1e-8, TauMin: 3, TauMax: 7, ValTau: 5, Micro: 16, Cosine: true}
}

// TransformerEpoch summarises one epoch.
type TransformerEpoch struct {
	Epoch    int
	TrainMSE float64 // mean training loss over the epoch's batches
	ValMSE   float64 // validation MSE at τ = ValTau (NaN without validation data)
	MeanTau  float64
	LR       float64 // learning rate at the end of the epoch
	Seconds  float64
	Images   int
}

func (s TransformerEpoch) String() string {
	return fmt.Sprintf("epoch %3d  train MSE %.5f  val MSE(τ=5) %.5f  mean τ %.2f  lr %.2e  %.1fs  %.0f img/s",
		s.Epoch, s.TrainMSE, s.ValMSE, s.MeanTau, s.LR, s.Seconds, float64(s.Images)/s.Seconds)
}

// TransformerTrainer trains a block or ViT with hand-written backprop and
// AdamW on all cores: the batch is cut into Micro-image chunks, chunk c
// goes to worker c mod Workers (a fixed assignment, so a seeded run gives
// the same weights), each worker accumulates its own gradient, and the
// gradients are summed in worker order.
type TransformerTrainer struct {
	M      *Transformer[float32]
	Cfg    TransformerTrainConfig
	mom, v []float32
	step   int
	epochs int
	total  int // AdamW steps of the whole run (for the cosine schedule)
	work   []*Batch
	grads  [][]float32
	err    error // cfg.Check(): Train returns it
}

// NewTransformerTrainer prepares the AdamW state and one workspace per
// worker. It checks cfg (TransformerTrainConfig.Check); Train returns the
// error before any work. Workers outside 1 … MaxWorkers means Workers(),
// Micro outside 1 … MaxMicro means 16.
func NewTransformerTrainer(m *Transformer[float32], cfg TransformerTrainConfig) *TransformerTrainer {
	err := cfg.Check()
	if cfg.Workers <= 0 || cfg.Workers > MaxWorkers {
		cfg.Workers = Workers()
	}
	if cfg.Micro <= 0 || cfg.Micro > MaxMicro {
		cfg.Micro = 16
	}
	t := &TransformerTrainer{M: m, Cfg: cfg, mom: make([]float32, len(m.Params)), v: make([]float32, len(m.Params)), err: err}
	for range cfg.Workers {
		t.work = append(t.work, NewBatch(m, cfg.Micro))
		t.grads = append(t.grads, make([]float32, len(m.Params)))
	}
	return t
}

// Epochs is the number of completed epochs.
func (t *TransformerTrainer) Epochs() int { return t.epochs }

// Gradient sets the summed gradient (in t.grads[0]) of the mean loss of
// the batch (inputs, clean) after applications apps; it returns that loss.
func (t *TransformerTrainer) Gradient(inputs, clean [][]float32, apps []int) float64 {
	mc := t.Cfg.Micro
	nc := (len(inputs) + mc - 1) / mc
	losses := make([]float64, len(inputs))
	for _, g := range t.grads {
		clear(g)
	}
	scale := 1 / float32(len(inputs))
	Parallel(context.Background(), nc, len(t.work), func(w, c int) {
		lo, hi := c*mc, min((c+1)*mc, len(inputs))
		t.work[w].Train(inputs[lo:hi], clean[lo:hi], apps, scale, t.grads[w], losses[lo:hi])
	})
	g0 := t.grads[0]
	for _, g := range t.grads[1:] {
		for k, v := range g {
			g0[k] += v
		}
	}
	var s float64
	for _, l := range losses {
		s += l
	}
	return s / float64(len(inputs))
}

// LR is the learning rate of the next step.
func (t *TransformerTrainer) LR() float64 {
	if !t.Cfg.Cosine || t.total <= 0 {
		return t.Cfg.LR
	}
	return t.Cfg.LR * 0.5 * (1 + math.Cos(math.Pi*float64(min(t.step, t.total))/float64(t.total)))
}

// Update is one AdamW step (decoupled weight decay, bias-corrected
// moments, as torch.optim.AdamW) with the gradient in t.grads[0].
func (t *TransformerTrainer) Update() {
	c := t.Cfg
	c.LR = t.LR()
	t.step++
	bc1 := 1 - math.Pow(c.Beta1, float64(t.step))
	bc2 := 1 - math.Pow(c.Beta2, float64(t.step))
	b1, b2 := float32(c.Beta1), float32(c.Beta2)
	decay := float32(1 - c.LR*c.WeightDecay)
	stepSize := float32(c.LR / bc1)
	sq2 := float32(math.Sqrt(bc2))
	eps := float32(c.Eps)
	p := t.M.Params
	for k, g := range t.grads[0] {
		mk := b1*t.mom[k] + (1-b1)*g
		vk := b2*t.v[k] + (1-b2)*g*g
		t.mom[k], t.v[k] = mk, vk
		p[k] = p[k]*decay - stepSize*mk/(float32(math.Sqrt(float64(vk)))/sq2+eps)
	}
	for _, b := range t.work {
		b.Prepare()
	}
}

// badParam describes the first non-finite parameter by tensor name and
// element, or returns "" when every parameter is finite.
func (t *TransformerTrainer) badParam() string {
	k := firstNonFinite(t.M.Params)
	if k < 0 {
		return ""
	}
	for _, s := range t.M.specs {
		if k >= s.off && k < s.off+s.size() {
			return fmt.Sprintf("parameter %q element %d = %g", s.name, k-s.off, t.M.Params[k])
		}
	}
	return fmt.Sprintf("parameter %d = %g", k, t.M.Params[k])
}

// Evaluate returns the mean MSE of the images after applications apps.
func (t *TransformerTrainer) Evaluate(inputs, clean [][]float32, apps []int) float64 {
	return EvaluateTransformer(t.work, inputs, clean, apps)
}

// EvaluateTransformer runs inputs through apps on the given workspaces
// (one goroutine each) and returns the mean MSE of the last image against
// clean.
func EvaluateTransformer(work []*Batch, inputs, clean [][]float32, apps []int) float64 {
	if len(inputs) == 0 {
		return math.NaN()
	}
	mc := work[0].Cap
	nc := (len(inputs) + mc - 1) / mc
	errs := make([]float64, len(inputs))
	Parallel(context.Background(), nc, len(work), func(w, c int) {
		lo, hi := c*mc, min((c+1)*mc, len(inputs))
		b := work[w]
		b.Start(inputs[lo:hi])
		for _, blk := range apps {
			b.Apply(blk)
		}
		out := make([][]float32, hi-lo)
		for k := range out {
			out[k] = make([]float32, Pixels)
		}
		b.Decode(out)
		for k, o := range out {
			var s float64
			for q, v := range o {
				d := float64(v - clean[lo+k][q])
				s += d * d
			}
			errs[lo+k] = s / Pixels
		}
	})
	var s float64
	for _, e := range errs {
		s += e
	}
	return s / float64(len(errs))
}

// Train runs the recipe on clean training images (gain applied). It stops
// between batches, returning ctx.Err(), when ctx ends.
//
// It refuses an invalid configuration (see TransformerTrainConfig.Check) or
// image set before any work, and stops with an error wrapping ErrDiverged,
// naming the epoch and batch, when the loss or a parameter is no longer
// finite; the parameters are then unusable and must not be saved.
func (t *TransformerTrainer) Train(ctx context.Context, images [][]float32) error {
	if t.err != nil {
		return t.err
	}
	if err := checkImages(images); err != nil {
		return err
	}
	c, cfg := t.Cfg, t.M.Cfg
	rng := rand.New(rand.NewPCG(c.Seed, 0x7b10c))
	order := make([]int, len(images))
	for k := range order {
		order[k] = k
	}
	t.total = t.step + c.Epochs*((len(images)+c.Batch-1)/c.Batch)
	inputs := make([][]float32, 0, c.Batch)
	clean := make([][]float32, 0, c.Batch)
	for ep := 1; ep <= c.Epochs; ep++ {
		start := time.Now()
		rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		var loss, taus float64
		nb := 0
		batches := (len(order) + c.Batch - 1) / c.Batch
		for s := 0; s < len(order); s += c.Batch {
			if err := ctx.Err(); err != nil {
				return err
			}
			tau := c.TauMin + rng.IntN(c.TauMax-c.TauMin+1)
			apps := cfg.Applications(tau)
			batchSeed := rng.Uint64()
			idx := order[s:min(s+c.Batch, len(order))]
			inputs, clean = inputs[:len(idx)], clean[:len(idx)]
			if err := Parallel(ctx, len(idx), c.Workers, func(_, k int) {
				clean[k] = images[idx[k]]
				inputs[k] = c.Corrupt(images[idx[k]], batchSeed, k)
			}); err != nil {
				return err
			}
			for k, in := range inputs {
				if len(in) != Pixels {
					return fmt.Errorf("epoch %d, batch %d of %d: the corruption of image %d has %d pixels, want %d",
						ep, nb+1, batches, idx[k], len(in), Pixels)
				}
			}
			l := t.Gradient(inputs, clean, apps)
			if math.IsNaN(l) || math.IsInf(l, 0) {
				return fmt.Errorf("epoch %d, batch %d of %d: the loss is %g: %w", ep, nb+1, batches, l, ErrDiverged)
			}
			lr := t.LR()
			t.Update()
			if bad := t.badParam(); bad != "" {
				return fmt.Errorf("epoch %d, batch %d of %d: the update at lr %g made %s: %w",
					ep, nb+1, batches, lr, bad, ErrDiverged)
			}
			loss += l
			taus += float64(len(apps))
			nb++
		}
		st := TransformerEpoch{Epoch: ep, TrainMSE: loss / float64(nb), ValMSE: math.NaN(), MeanTau: taus / float64(nb), Images: len(order), LR: t.LR()}
		if len(c.ValInputs) > 0 {
			st.ValMSE = t.Evaluate(c.ValInputs, c.ValClean, cfg.Applications(c.ValTau))
		}
		t.epochs = ep
		st.Seconds = time.Since(start).Seconds()
		if c.Progress != nil {
			c.Progress(st)
		}
	}
	return nil
}
