package models

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
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
	// AllRows computes the gradient of every query row each batch; the
	// recipe of §5 (false) updates one random token row i per batch.
	AllRows bool
	Workers int // goroutines; 0 means GOMAXPROCS
	// Validate, when set, is called after every epoch; its value is
	// reported as the validation masked-MSE.
	Validate func(*BSA) float64
	// Progress receives one line of statistics per epoch.
	Progress func(EpochStats)
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
}

// NewTrainer prepares AdamW state for m; its current RMS is the one kept.
func NewTrainer(m *BSA, cfg TrainConfig) *Trainer {
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	t := &Trainer{M: m, Cfg: cfg, rms0: m.rms()}
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
	parallel(len(xs), t.Cfg.Workers, func(_, b int) { m.layerNorm(t.xh[b], xs[b], nil) })
	clear(t.g)
	scale := -1 / float32(len(xs)*n)
	losses := make([]float64, t.Cfg.Workers)
	parallel(n, t.Cfg.Workers, func(wk, i int) {
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
	clear(t.g)
	scale := -1 / float32(len(xs))
	losses := make([]float64, W)
	ji := m.J[i*d*d*np : (i+1)*d*d*np]
	parallel(len(xs), W, func(wk, b int) {
		w := t.ws[wk]
		xh := t.xh[b]
		m.layerNorm(xh, xs[b], nil)
		losses[wk] -= t.rowGrad(w, ji, t.rowG[wk], xh, i, scale)
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

// Update applies clipping, one AdamW step at rate lr and the RMS rescale.
func (t *Trainer) Update(lr float64) {
	c := t.Cfg
	var gn float64
	for _, g := range t.g {
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
	b1, b2 := float32(c.Beta1), float32(c.Beta2)
	decay := float32(1 - lr*c.WeightDecay)
	stepSize := float32(lr / bc1)
	sq2 := float32(math.Sqrt(bc2))
	eps := float32(c.Eps)
	J := t.M.J
	for k, g := range t.g {
		g *= float32(gs)
		mk := b1*t.m[k] + (1-b1)*g
		vk := b2*t.v[k] + (1-b2)*g*g
		t.m[k], t.v[k] = mk, vk
		J[k] = J[k]*decay - stepSize*mk/(float32(math.Sqrt(float64(vk)))/sq2+eps)
	}
	if r := t.M.rms(); r > 0 {
		f := float32(t.rms0 / r)
		for k := range J {
			J[k] *= f
		}
	}
}

// Train runs the recipe on clean training images (pixels in [0,1], gain
// already applied). It stops early, returning ctx.Err(), when ctx ends.
func (t *Trainer) Train(ctx context.Context, images [][]float32) error {
	m, c := t.M, t.Cfg
	xs := make([][]float32, len(images))
	parallel(len(images), c.Workers, func(_, k int) {
		xs[k] = make([]float32, m.N*m.D)
		m.Encode(xs[k], images[k], nil)
	})
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
		for s := 0; s < len(order); s += c.Batch {
			if err := ctx.Err(); err != nil {
				return err
			}
			batch = batch[:0]
			for _, k := range order[s:min(s+c.Batch, len(order))] {
				batch = append(batch, xs[k])
			}
			if c.AllRows {
				loss += t.Gradient(batch)
			} else {
				loss += t.GradientRow(batch, rng.IntN(m.N))
			}
			t.Update(lr)
			nb++
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

// parallel runs f(worker, k) for k in [0,n) on up to w goroutines, handing
// out indices in order.
func parallel(n, w int, f func(worker, k int)) {
	if w <= 1 || n <= 1 {
		for k := 0; k < n; k++ {
			f(0, k)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for wk := 0; wk < min(w, n); wk++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := next.Add(1) - 1
				if k >= int64(n) {
					return
				}
				f(wk, int(k))
			}
		}()
	}
	wg.Wait()
}

// Epochs is the number of completed epochs.
func (t *Trainer) Epochs() int { return t.epochs }
