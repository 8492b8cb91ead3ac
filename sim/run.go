package sim

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"attractorlab/models"
)

// Chunk is how many images one worker steps together, so each row of J
// serves several images while it is in cache.
const Chunk = 8

// Workers is the default parallelism: every core.
func Workers() int { return runtime.GOMAXPROCS(0) }

// StepVisit receives the decoded prediction of image b at step t (in
// [0,1]) and the energy of that state. It is called from worker goroutines,
// never twice for the same (t, b) and, for one image, in order of t; pred is
// reused after it returns.
type StepVisit func(t, b int, pred []float32, energy float64)

// RunBSA runs the bare self-attention on every input for steps steps,
// calling visit for t = 0..steps. Images are handed out in chunks of Chunk
// to workers goroutines. It returns ctx.Err() if cancelled.
func RunBSA(ctx context.Context, m *models.BSA, dy models.Dynamics, inputs []*Corrupted, steps, workers int, visit StepVisit) error {
	return handOut(ctx, len(inputs), Chunk, workers, func() func(c0, c1 int) {
		w := m.NewWorkspace(Chunk)
		preds := make([][]float32, Chunk)
		for b := range preds {
			preds[b] = make([]float32, models.Pixels)
		}
		energy := make([]float64, Chunk)
		return func(c0, c1 int) {
			states := make([]*models.State, c1-c0)
			for b := range states {
				states[b] = BSAState(m, inputs[c0+b])
			}
			for t := 0; t <= steps && ctx.Err() == nil; t++ {
				for b, st := range states {
					m.Decode(preds[b], st.X)
				}
				// The energy of state t comes from the step that leaves it.
				if t < steps {
					m.Step(w, states, dy, nil, energy)
				} else {
					m.Energy(w, states, dy, energy)
				}
				for b := range states {
					visit(t, c0+b, preds[b], energy[b])
				}
			}
		}
	})
}

// handOut runs workers goroutines (0: every core); each makes its own
// state with newWorker and then takes the next chunk [c0, c1) of [0, n)
// until none is left or ctx ends, whose error it returns.
func handOut(ctx context.Context, n, chunk, workers int, newWorker func() func(c0, c1 int)) error {
	if workers <= 0 {
		workers = Workers()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work := newWorker()
			for ctx.Err() == nil {
				c0 := int(next.Add(int64(chunk))) - chunk
				if c0 >= n {
					return
				}
				work(c0, min(c0+chunk, n))
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// BSAState encodes a corrupted image for the bare self-attention: masked
// tokens are zero vectors, noisy pixels are clamped to [0,1] (§2).
func BSAState(m *models.BSA, in *Corrupted) *models.State {
	img := in.Input
	if in.Masked == nil {
		img = in.Clamped()
	}
	return m.NewState(img, in.Masked)
}
