package models

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"time"
)

// TrainConfig is the pseudo-likelihood recipe of §5.
type TrainConfig struct {
	Epochs      int     // passes over the training images
	Batch       int     // images per step (256)
	LR          float64 // AdamW learning rate (5e-4)
	WeightDecay float64 // AdamW weight decay (1e-6)
	Beta1       float64 // 0.9
	Beta2       float64 // 0.999
	Eps         float64 // 1e-8
	HalveEvery  int     // lr halves every this many epochs (10)
	Clip        float64 // global gradient-norm clip (1)
	Seed        uint64  // shuffling seed
	// Attn is the attention the loss is the energy of (§5): softmax (the
	// pseudo-likelihood) or relu/seqlen.
	Attn AttnKind
	// AllRows computes the gradient of every query row each batch; the
	// recipe of §5 (false) updates one random token row i per batch.
	AllRows bool
	Workers int // goroutines; 0 means GOMAXPROCS
	// Validate, when set, is called after every epoch; its value is
	// reported as the validation masked-MSE.
	Validate func(*BSA) float64
	// Progress receives one line of statistics per epoch.
	Progress func(EpochStats)
	// Batched, when set, is called after each batch's update (epoch and
	// batch from 1), on the training goroutine: a live view may copy the
	// couplings there.
	Batched func(epoch, batch int)
}

// Allowed ranges of the training settings shared by both trainers; the
// names in error messages are the train command's flags.
const (
	MinEpochs      = 1      // --epochs
	MaxEpochs      = 100000 // --epochs
	MinBatch       = 1      // --batch
	MaxBatch       = 65536  // --batch
	MinLR          = 1e-8   // --lr: MinLR ≤ lr ≤ MaxLR (below it AdamW's steps vanish in float32)
	MaxLR          = 1.0    // --lr
	MaxWeightDecay = 1.0    // --wd: 0 ≤ wd ≤ MaxWeightDecay
	MaxHalveEvery  = MaxEpochs
	MaxWorkers     = 1024 // --workers: 0 (every core) … MaxWorkers
)

// ErrDiverged is wrapped by the error a trainer returns when the loss or a
// parameter stops being a finite number.
var ErrDiverged = errors.New("training diverged")

func checkInt(name string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s = %d is out of range (allowed %d … %d)", name, v, lo, hi)
	}
	return nil
}

// checkFloat refuses v outside [lo, hi] (or (lo, hi] with openLo, or
// [lo, hi) with openHi), NaN and ±Inf.
func checkFloat(name string, v, lo, hi float64, openLo, openHi bool) error {
	ok := v >= lo && v <= hi && !(openLo && v == lo) && !(openHi && v == hi)
	if ok {
		return nil
	}
	l, h := "≤", "≤"
	if openLo {
		l = "<"
	}
	if openHi {
		h = "<"
	}
	return fmt.Errorf("%s = %g is out of range (allowed %g %s %s %s %g)", name, v, lo, l, name, h, hi)
}

// checkCommon checks the settings both trainers share.
func checkCommon(epochs, batch int, lr, wd, beta1, beta2, eps float64, workers int) error {
	return errors.Join(
		checkInt("--epochs", epochs, MinEpochs, MaxEpochs),
		checkInt("--batch", batch, MinBatch, MaxBatch),
		checkFloat("--lr", lr, MinLR, MaxLR, false, false),
		checkFloat("--wd", wd, 0, MaxWeightDecay, false, false),
		checkFloat("Beta1", beta1, 0, 1, false, true),
		checkFloat("Beta2", beta2, 0, 1, false, true),
		checkFloat("Eps", eps, 0, 1, true, false),
		checkInt("--workers", workers, 0, MaxWorkers),
	)
}

// Check reports every setting outside its allowed range (one line each,
// naming the train command's flag, e.g. "--batch = 0 is out of range
// (allowed 1 … 65536)"), or nil. NewTrainer and Train call it before any
// work. (It is not called Validate because of the Validate field.)
func (c TrainConfig) Check() error {
	err := errors.Join(
		checkCommon(c.Epochs, c.Batch, c.LR, c.WeightDecay, c.Beta1, c.Beta2, c.Eps, c.Workers),
		checkInt("--halve-every", c.HalveEvery, 0, MaxHalveEvery),
	)
	if !(c.Clip >= 0) || math.IsInf(c.Clip, 0) {
		err = errors.Join(err, fmt.Errorf("%s = %g is out of range (allowed a finite number ≥ 0; 0: no clipping)", "Clip", c.Clip))
	}
	return err
}

// DefaultTrainConfig returns the recipe of §5.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{Epochs: 200, Batch: 256, LR: 5e-4, WeightDecay: 1e-6, Beta1: 0.9, Beta2: 0.999,
		Eps: 1e-8, HalveEvery: 10, Clip: 1}
}

// EpochStats summarises one training epoch.
type EpochStats struct {
	Epoch   int
	Loss    float64 // mean token energy e_i over the epoch (with λ_train)
	ValMSE  float64 // validation masked-MSE after 5 steps (NaN without Validate)
	LR      float64
	Seconds float64
}

func (s EpochStats) String() string {
	return fmt.Sprintf("epoch %3d  loss %.5f  val masked-MSE(t=5) %.5f  lr %.2e  %.1fs",
		s.Epoch, s.Loss, s.ValMSE, s.LR, s.Seconds)
}

// Trainer minimises the negative pseudo-likelihood of the training images
// (§5) with the analytic gradient ∂e_i/∂J_ij = −α_ij x̂_i x̂_jᵀ, all query
// rows every batch.
type Trainer struct {
	M       *BSA
	Cfg     TrainConfig
	g, m, v []float32
	step    int
	epochs  int
	rms0    float64
	xh      [][]float32
	rowG    [][]float32
	ws      []*Workspace
	// g is zero outside g[gLo:gHi] (one row's gradient, or all of it)
	gLo, gHi int
	sq       []float64 // the update's per-chunk sums of squares
	err      error     // cfg.Check(): Train returns it
}

// NewTrainer prepares AdamW state for m; its current RMS is the one kept.
// It checks cfg (TrainConfig.Check); Train returns the error before any
// work. Workers outside 1 … MaxWorkers means Workers().
func NewTrainer(m *BSA, cfg TrainConfig) *Trainer {
	err := cfg.Check()
	if cfg.Workers <= 0 || cfg.Workers > MaxWorkers {
		cfg.Workers = Workers()
	}
	t := &Trainer{M: m, Cfg: cfg, rms0: m.rms(), err: err}
	t.g = make([]float32, len(m.J))
	t.m = make([]float32, len(m.J))
	t.v = make([]float32, len(m.J))
	for range cfg.Workers {
		t.ws = append(t.ws, m.NewWorkspace(1))
	}
	return t
}

// Gradient sets t.g to the gradient of the mean token energy over imgs
// (encoded clean images, [N][D] each) and returns that mean energy.
func (t *Trainer) Gradient(xs [][]float32) float64 {
	m := t.M
	d, np, n := m.D, m.NP, m.N
	for len(t.xh) < len(xs) {
		t.xh = append(t.xh, make([]float32, d*np))
	}
	bg := context.Background()
	Parallel(bg, len(xs), t.Cfg.Workers, func(_, b int) { m.layerNorm(t.xh[b], xs[b], nil) })
	clear(t.g)
	t.gLo, t.gHi = 0, len(t.g)
	scale := -1 / float32(len(xs)*n)
	losses := make([]float64, t.Cfg.Workers)
	Parallel(bg, n, t.Cfg.Workers, func(wk, i int) {
		w := t.ws[wk]
		gi := t.g[i*d*d*np : (i+1)*d*d*np]
		ji := m.J[i*d*d*np : (i+1)*d*d*np]
		for b := range xs {
			losses[wk] -= t.rowGrad(w, ji, gi, t.xh[b], i, scale)
		}
	})
	var loss float64
	for _, l := range losses {
		loss += l
	}
	return loss / float64(len(xs)*n)
}

// GradientRow sets t.g to the gradient of the mean energy e_i of one query
// row i over imgs (zero elsewhere) and returns that mean; images are split
// across the workers.
func (t *Trainer) GradientRow(xs [][]float32, i int) float64 {
	m := t.M
	d, np := m.D, m.NP
	for len(t.xh) < len(xs) {
		t.xh = append(t.xh, make([]float32, d*np))
	}
	W := t.Cfg.Workers
	for len(t.rowG) < W {
		t.rowG = append(t.rowG, make([]float32, d*d*np))
	}
	for _, g := range t.rowG[:W] {
		clear(g)
	}
	clear(t.g[t.gLo:t.gHi])
	t.gLo, t.gHi = i*d*d*np, (i+1)*d*d*np
	scale := -1 / float32(len(xs))
	losses := make([]float64, W)
	ji := m.J[i*d*d*np : (i+1)*d*d*np]
	Parallel(context.Background(), len(xs), W, func(wk, b int) {
		w := t.ws[wk]
		xh := t.xh[b]
		m.layerNorm(xh, xs[b], nil)
		losses[wk] -= t.rowGrad(w, ji, t.rowG[wk], xh, i, scale)
		runtime.Gosched() // a window's engine waiting for a core runs now, not after a time slice
	})
	gi := t.g[i*d*d*np : (i+1)*d*d*np]
	var loss float64
	for wk := 0; wk < W; wk++ {
		for k, v := range t.rowG[wk] {
			gi[k] += v
		}
		loss += losses[wk]
	}
	return loss / float64(len(xs))
}

// rowGrad accumulates into gi the gradient of e_i (times scale·(−1)) for one
// image with layer-normed state xh, and returns the row's log-sum-exp.
func (t *Trainer) rowGrad(w *Workspace, ji, gi, xh []float32, i int, scale float32) float64 {
	m := t.M
	d, np, n := m.D, m.NP, m.N
	for r := 0; r < d; r++ {
		w.xi[r] = xh[r*np+i]
		w.c[r] = scale * w.xi[r]
	}
	scores(ji, xh, w.xi, w.v, w.s, d, np)
	clamped := false
	for j := 0; j < n; j++ {
		if w.s[j] > m.Clamp {
			w.s[j] = m.Clamp
			clamped = true
		}
	}
	w.s[i] = invalidScore
	for j := n; j < np; j++ {
		w.s[j] = invalidScore
	}
	if t.Cfg.Attn == ReluSeqlen {
		return t.reluRowGrad(w, gi, xh, i, n, clamped)
	}
	sum, lse, _ := w.softmaxRow(m.LambdaTrain)
	inv := 1 / sum
	for j := range w.a {
		w.a[j] *= inv
	}
	if clamped {
		for j := 0; j < n; j++ {
			if w.s[j] >= m.Clamp {
				w.a[j] = 0
			}
		}
	}
	grad(gi, xh, w.a, w.c, d, np)
	return lse
}

// reluRowGrad is rowGrad for the relu/seqlen energy of §5,
// e_i = −(1/(2λN)) Σ_{j≠i} max(λ s_ij, 0)², whose gradient has the softmax
// one's form with α_ij = max(λ s_ij, 0)/N, the variant's attention. It
// returns −e_i. The scores w.s are clamped, with i and the padding
// invalid.
func (t *Trainer) reluRowGrad(w *Workspace, gi, xh []float32, i, n int, clamped bool) float64 {
	m := t.M
	lam := m.LambdaTrain
	inv := 1 / float32(n)
	var e float64
	for j := range w.a {
		w.a[j] = 0
		if j >= n || j == i {
			continue
		}
		if v := lam * w.s[j]; v > 0 {
			e += float64(v) * float64(v)
			if !clamped || w.s[j] < m.Clamp {
				w.a[j] = v * inv
			}
		}
	}
	grad(gi, xh, w.a, w.c, m.D, m.NP)
	return e / (2 * float64(lam) * float64(n))
}

// Update applies clipping, one AdamW step at rate lr and the RMS rescale.
func (t *Trainer) Update(lr float64) { t.update(lr) }

// update is Update; it returns false, leaving J unscaled, when the step
// left a non-finite coupling (the RMS is then NaN or +Inf). The couplings
// are cut into fixed chunks of updateChunk values shared out among the
// workers; the sum of squares behind the RMS adds the chunks' partial sums
// in chunk order, so the result does not depend on the number of workers.
func (t *Trainer) update(lr float64) bool {
	c := t.Cfg
	var gn float64
	for _, g := range t.g[t.gLo:t.gHi] { // zero outside [gLo, gHi)
		gn += float64(g) * float64(g)
	}
	gn = math.Sqrt(gn)
	gs := 1.0
	if c.Clip > 0 && gn > c.Clip {
		gs = c.Clip / gn
	}
	t.step++
	bc1 := 1 - math.Pow(c.Beta1, float64(t.step))
	bc2 := 1 - math.Pow(c.Beta2, float64(t.step))
	a := adamStep{b1: float32(c.Beta1), b2: float32(c.Beta2), gs: float32(gs),
		decay: float32(1 - lr*c.WeightDecay), stepSize: float32(lr / bc1),
		sq2: float32(math.Sqrt(bc2)), eps: float32(c.Eps)}
	J := t.M.J
	chunks := (len(J) + updateChunk - 1) / updateChunk
	if len(t.sq) < chunks {
		t.sq = make([]float64, chunks)
	}
	bg := context.Background()
	Parallel(bg, chunks, c.Workers, func(_, k int) {
		lo, hi := k*updateChunk, min((k+1)*updateChunk, len(J))
		t.sq[k] = a.apply(J[lo:hi], t.g[lo:hi], t.m[lo:hi], t.v[lo:hi])
		runtime.Gosched()
	})
	var s float64
	for _, p := range t.sq[:chunks] {
		s += p
	}
	r := math.Sqrt(s / float64(t.M.N*t.M.N*t.M.D*t.M.D))
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return false
	}
	if r > 0 {
		f := float32(t.rms0 / r)
		Parallel(bg, chunks, c.Workers, func(_, k int) {
			for i := k * updateChunk; i < min((k+1)*updateChunk, len(J)); i++ {
				J[i] *= f
			}
		})
	}
	return true
}

// updateChunk is how many couplings one task of the update covers.
const updateChunk = 1 << 15

// adamStep is one AdamW step's constants (§5): the moments' decay rates,
// the clipping factor gs, the weight decay factor, the bias-corrected step
// size, √(1−β₂ˢ) and ε.
type adamStep struct {
	b1, b2, gs, decay, stepSize, sq2, eps float32
}

// apply steps the couplings J with gradient g and moments m, v (one chunk)
// and returns the sum of the new couplings' squares, through the kernel
// this build and CPU run (adamChunk: adamGo, or its AVX-512 twin, which
// gives the same bits: the same operations in the same order, none
// fused, and the squares added one by one in index order).
func (a adamStep) apply(J, g, m, v []float32) float64 { return adamChunk(a, J, g, m, v) }

// adamGo is the portable AdamW step of a chunk (the naive twin).
func adamGo(a adamStep, J, g, m, v []float32) float64 {
	return a.tail(0, 0, J, g, m, v)
}

// tail steps couplings k0 … len(J)−1 one by one, adding their squares to
// s in index order (adamGo's whole loop; the AVX-512 kernel's last few).
func (a adamStep) tail(s float64, k0 int, J, g, m, v []float32) float64 {
	for k := k0; k < len(J); k++ {
		gk := g[k] * a.gs
		mk := a.b1*m[k] + (1-a.b1)*gk
		vk := a.b2*v[k] + (1-a.b2)*gk*gk
		m[k], v[k] = mk, vk
		j := J[k]*a.decay - a.stepSize*mk/(float32(math.Sqrt(float64(vk)))/a.sq2+a.eps)
		J[k] = j
		s += float64(j) * float64(j)
	}
	return s
}

// Train runs the recipe on clean training images (pixels in [0,1], gain
// already applied). It stops early, returning ctx.Err(), when ctx ends.
// It refuses an invalid configuration (see TrainConfig.Check) or image set
// before any work, and stops with an error wrapping ErrDiverged, naming the
// epoch and batch, when the loss or a coupling is no longer finite; the
// couplings are then unusable and must not be saved.
func (t *Trainer) Train(ctx context.Context, images [][]float32) error {
	if t.err != nil {
		return t.err
	}
	m, c := t.M, t.Cfg
	if err := checkImages(images); err != nil {
		return err
	}
	xs := make([][]float32, len(images))
	if err := Parallel(ctx, len(images), c.Workers, func(_, k int) {
		xs[k] = make([]float32, m.N*m.D)
		m.Encode(xs[k], images[k], nil)
	}); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x7a1e))
	order := make([]int, len(xs))
	for k := range order {
		order[k] = k
	}
	batch := make([][]float32, 0, c.Batch)
	for ep := 1; ep <= c.Epochs; ep++ {
		start := time.Now()
		lr := c.LR
		if c.HalveEvery > 0 {
			lr *= math.Pow(0.5, float64((ep-1)/c.HalveEvery))
		}
		rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		var loss float64
		nb := 0
		batches := (len(order) + c.Batch - 1) / c.Batch
		for s := 0; s < len(order); s += c.Batch {
			if err := ctx.Err(); err != nil {
				return err
			}
			batch = batch[:0]
			for _, k := range order[s:min(s+c.Batch, len(order))] {
				batch = append(batch, xs[k])
			}
			var l float64
			if c.AllRows {
				l = t.Gradient(batch)
			} else {
				l = t.GradientRow(batch, rng.IntN(m.N))
			}
			if math.IsNaN(l) || math.IsInf(l, 0) {
				return fmt.Errorf("epoch %d, batch %d of %d: the loss is %g: %w", ep, nb+1, batches, l, ErrDiverged)
			}
			if !t.update(lr) {
				return fmt.Errorf("epoch %d, batch %d of %d: the update at lr %g made %s: %w",
					ep, nb+1, batches, lr, t.badCoupling(), ErrDiverged)
			}
			loss += l
			nb++
			if c.Batched != nil {
				c.Batched(ep, nb)
			}
		}
		st := EpochStats{Epoch: ep, Loss: loss / float64(nb), ValMSE: math.NaN(), LR: lr}
		if c.Validate != nil {
			st.ValMSE = c.Validate(m)
		}
		t.epochs = ep
		st.Seconds = time.Since(start).Seconds()
		if c.Progress != nil {
			c.Progress(st)
		}
	}
	return nil
}

// badCoupling describes the first non-finite coupling, as J[i,j,r,e] of
// the [N,N,d,d] tensor the file would hold.
func (t *Trainer) badCoupling() string {
	m := t.M
	k := firstNonFinite(m.J)
	if k < 0 {
		return "the couplings' RMS non-finite"
	}
	j, rest := k%m.NP, k/m.NP
	e, rest := rest%m.D, rest/m.D
	r, i := rest%m.D, rest/m.D
	return fmt.Sprintf("coupling J[%d,%d,%d,%d] = %g", i, j, r, e, m.J[k])
}

// checkImages refuses an empty training set and images that are not
// Pixels values long.
func checkImages(images [][]float32) error {
	if len(images) == 0 {
		return errors.New("no training images")
	}
	for k, img := range images {
		if len(img) != Pixels {
			return fmt.Errorf("training image %d has %d pixels, want %d", k, len(img), Pixels)
		}
	}
	return nil
}

// Epochs is the number of completed epochs.
func (t *Trainer) Epochs() int { return t.epochs }
