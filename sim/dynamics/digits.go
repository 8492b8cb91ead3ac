package dynamics

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"attractorlab/models"
	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// Config is a dynamics run over test digits: the model and its settings
// (corruption included), the first N test digits, Steps steps recorded,
// the steps whose spectrum is asked (At) and the escape's horizon K from
// each digit's t*.
type Config struct {
	Model    string
	Settings sim.Settings
	N, Steps int
	At       []Step
	K        int
	Workers  int // 0: every core
}

// Validate checks the run's shape against the ranges the flags name.
func (c Config) Validate() error {
	if err := sim.Digits.CheckInt(c.N, sim.ViaFlag); err != nil {
		return err
	}
	if err := sim.Steps.CheckInt(c.Steps, sim.ViaFlag); err != nil {
		return err
	}
	if len(c.At) == 0 {
		return fmt.Errorf("--at: no step given")
	}
	for _, s := range c.At {
		if !s.TStar && (s.T < 1 || s.T > c.Steps) {
			return fmt.Errorf("--at: %d is beyond the run (allowed 1 … --steps = %d)", s.T, c.Steps)
		}
	}
	if err := KRange.CheckInt(c.K, sim.ViaFlag); err != nil {
		return err
	}
	if c.K >= c.Steps {
		return fmt.Errorf("--k: %d is past the recorded steps (allowed 1 … --steps − 1 = %d: the escape is compared with the run from t*)", c.K, c.Steps-1)
	}
	return nil
}

// Digit is one test digit's local dynamics.
type Digit struct {
	Index, Label int
	MSE          []float64 // t = 0 … Steps
	Best         sim.Best
	// Escape is the first step after t* whose MSE exceeds the input's
	// (−1: none within the run).
	Escape  int
	Spectra []Spectrum // one per asked step, t* resolved
	// Growth is the K-step Jacobian's largest singular value from X(t*):
	// how much the escape direction grows in K steps.
	Growth          float64
	GrowthConverged bool
	// Residual is the fixed-point residual ‖F(X) − X‖ at the last step.
	Residual float64
	// PeakStep is the step t ≥ 1 where the run moves most:
	// ‖X(t+1) − X(t)‖/‖X(t)‖ largest over the recorded run.
	PeakStep int
}

// Env is what a run reads: the test digits and the models.
type Env struct {
	Data *mnist.Data
	Cat  *sim.Catalogue
}

// Run analyses the first N test digits (or those of shard, in the order of
// their indices: every digit k with k mod shards = shard). progress, when
// not nil, is told of each digit done. A model without a map is refused
// (Map).
func (c Config) Run(ctx context.Context, env Env, shard, shards int, progress func(done, total int)) ([]Digit, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	m, err := env.Cat.Model(c.Model, c.Settings)
	if err != nil {
		return nil, err
	}
	sys, err := SystemOf(m, c.Settings.Corruption.Kind)
	if err != nil {
		return nil, err
	}
	f, pt := sys.Stepper(), sys.Patches
	n := min(c.N, env.Data.Test.Len())
	var idx []int
	for k := shard; k < n; k += shards {
		idx = append(idx, k)
	}
	out := make([]Digit, len(idx))
	var done atomic.Int64
	// Groups of a chunk's digits: their runs keep every state (6 MB a
	// digit for 1,000 steps), then each digit is analysed on its own.
	for g0 := 0; g0 < len(idx); g0 += sim.Chunk {
		g1 := min(g0+sim.Chunk, len(idx))
		inputs := make([]*sim.Corrupted, g1-g0)
		for b := range inputs {
			inputs[b] = c.Settings.Corruption.Apply(env.Data.Test.Clean(idx[g0+b], mnist.PixelGain), pt, idx[g0+b])
		}
		states := make([][][]float32, len(inputs))
		mse := make([][]float64, len(inputs))
		for b := range states {
			states[b] = make([][]float32, c.Steps+1)
			mse[b] = make([]float64, c.Steps+1)
		}
		if sys.bsa != nil {
			// The chunked engine: a chunk's digits step together.
			err := sim.RunBSAStates(ctx, sys.bsa.M, sys.bsa.Dyn, inputs, c.Steps, models.NewCrew(c.Workers), func(t, b int, pred []float32, _ float64) {
				mse[b][t], _, _ = sim.MSE(pred, inputs[b].Clean, inputs[b].Pixel)
			}, func(int) bool { return true }, func(t, b int, x []float32) {
				states[b][t] = append([]float32(nil), x...)
			})
			if err != nil {
				return nil, err
			}
		} else {
			var mu sync.Mutex
			var ferr error
			err := models.Parallel(ctx, len(inputs), c.Workers, func(_, b int) {
				st, imgs, err := sys.Run(ctx, inputs[b], c.Steps)
				if err != nil {
					mu.Lock()
					ferr = err
					mu.Unlock()
					return
				}
				for t, x := range st {
					mse[b][t], _, _ = sim.MSE(imgs[t], inputs[b].Clean, inputs[b].Pixel)
					x32 := make([]float32, len(x))
					for k, v := range x {
						x32[k] = float32(v)
					}
					states[b][t] = x32
				}
			})
			if err == nil {
				err = ferr
			}
			if err != nil {
				return nil, err
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var first error
		var mu atomic.Bool
		err = models.Parallel(ctx, len(inputs), c.Workers, func(_, b int) {
			d, err := c.digit(ctx, f, idx[g0+b], int(env.Data.Test.Labels[idx[g0+b]]), states[b], mse[b])
			if err != nil {
				if mu.CompareAndSwap(false, true) {
					first = err
				}
				return
			}
			out[g0+b] = d
			if progress != nil {
				progress(int(done.Add(1)), len(idx))
			}
		})
		if err != nil {
			return nil, err
		}
		if first != nil {
			return nil, first
		}
	}
	return out, nil
}

// digit analyses one digit's recorded run.
func (c Config) digit(ctx context.Context, f Stepper, index, label int, states [][]float32, mse []float64) (Digit, error) {
	T := len(mse)
	d := Digit{Index: index, Label: label, MSE: mse, Escape: -1}
	d.Best = sim.BestOf(T, func(t int) float64 { return mse[t] })
	ts := d.Best.T
	for t := ts + 1; ts >= 1 && t < T; t++ {
		if mse[t] > mse[0] {
			d.Escape = t
			break
		}
	}
	for _, s := range c.At {
		t := s.T
		if s.TStar {
			t = ts
		}
		sp, err := SpectrumAt(ctx, f, Widen(states[t]), t, nil)
		if err != nil {
			return Digit{}, err
		}
		d.Spectra = append(d.Spectra, sp)
	}
	var peak float64
	for t := 1; t+1 < T; t++ {
		var dd, nn float64
		for k, v := range states[t] {
			dv := float64(states[t+1][k]) - float64(v)
			dd += dv * dv
			nn += float64(v) * float64(v)
		}
		if r := math.Sqrt(dd / nn); r > peak {
			peak, d.PeakStep = r, t
		}
	}
	last := Widen(states[T-1])
	d.Residual = dist(f.Linearise(last).Next(), last)
	d.Growth = math.NaN()
	if ts >= 1 {
		ch, err := NewChain(ctx, f, Widen(states[ts]), c.K)
		if err != nil {
			return Digit{}, err
		}
		e, err := EscapeFrom(ctx, ch, ts, 1, nil)
		if err != nil {
			return Digit{}, err
		}
		d.Growth, d.GrowthConverged = e.Growth[0], e.Converged
	}
	return d, nil
}
