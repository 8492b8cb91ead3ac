package sim

import (
	"context"

	"attractorlab/models"
)

// Chunk is how many images one worker steps together (models.Chunker):
// each coupling block is loaded once per chunk.
const Chunk = models.Lanes

// StepVisit receives the decoded prediction of image b at step t (in
// [0,1]) and the energy of that state. It is called from worker goroutines,
// never twice for the same (t, b) and, for one image, in order of t; pred is
// reused after it returns.
type StepVisit func(t, b int, pred []float32, energy float64)

// RunBSA runs the bare self-attention on every input for steps steps,
// calling visit for t = 0..steps. Images are handed out in chunks of Chunk
// to the crew's workers (nil: one); a worker out of chunks takes part of
// the query rows of the others' steps (Crew.Split), so the last chunks do
// not run on one core. The results do not depend on the crew. It returns
// ctx.Err() if cancelled.
func RunBSA(ctx context.Context, m *models.BSA, dy models.Dynamics, inputs []*Corrupted, steps int, crew *models.Crew, visit StepVisit) error {
	return RunBSAStates(ctx, m, dy, inputs, steps, crew, visit, nil, nil)
}

// StateVisit is handed image b's state X(t) ([N][d], the run's buffer:
// copy what is kept).
type StateVisit func(t, b int, x []float32)

// RunBSAStates is RunBSA that also hands states to kept at the steps
// keep asks for (no states when either is nil).
func RunBSAStates(ctx context.Context, m *models.BSA, dy models.Dynamics, inputs []*Corrupted, steps int, crew *models.Crew, visit StepVisit, keep func(t int) bool, kept StateVisit) error {
	var first *models.Chunker
	return handOut(ctx, len(inputs), Chunk, crew, func() func(c0, c1 int) {
		var c *models.Chunker
		if first == nil {
			first = m.NewChunker()
			c = first
		} else {
			c = first.Twin() // one copy of the couplings for every worker
		}
		c.Split = crew.Split
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
			c.Load(states)
			for t := 0; t <= steps && ctx.Err() == nil; t++ {
				if keep != nil && kept != nil && keep(t) {
					c.Store(states)
					for b, st := range states {
						kept(t, c0+b, st.X)
					}
				}
				c.Decode(preds)
				// The energy of state t comes from the step that leaves it.
				if t < steps {
					c.Step(dy, energy)
				} else {
					c.Energy(dy, energy)
				}
				for b := range states {
					visit(t, c0+b, preds[b], energy[b])
				}
				// Let a waiting goroutine (the window's engine) run
				// between steps rather than after a 10 ms time slice.
				pause()
			}
		}
	})
}

// BatchRunner is a model with a faster path for many inputs than one
// trajectory per image.
type BatchRunner interface {
	RunBatch(ctx context.Context, inputs []*Corrupted, steps int, crew *models.Crew, visit StepVisit) error
}

// Run steps model m on every input for up to steps steps (fewer when its
// MaxSteps is smaller), calling visit for t = 0.. with the prediction and
// energy of each state: through the model's batched path when it has one,
// else one trajectory per image on each of the crew's workers (nil: one).
// A visit may hand parts of its own work to idle workers with crew.Split.
func Run(ctx context.Context, m Model, inputs []*Corrupted, steps int, crew *models.Crew, visit StepVisit) error {
	if ms := m.Info().MaxSteps; ms > 0 {
		steps = min(steps, ms)
	}
	// Every path hands on its prediction clamped to [0,1], as the window
	// shows it: a transformer's decoder and a Hopfield state holding a
	// noisy input reach outside it, and correlations and the search for
	// the nearest memory read the picture, not the raw values.
	raw := visit
	visit = func(t, b int, pred []float32, energy float64) {
		clampPicture(pred)
		raw(t, b, pred, energy)
	}
	if b, ok := m.(BatchRunner); ok {
		return b.RunBatch(ctx, inputs, steps, crew, visit)
	}
	return handOut(ctx, len(inputs), 1, crew, func() func(c0, c1 int) {
		pred := make([]float32, models.Pixels)
		return func(b, _ int) {
			tr := m.Start(inputs[b])
			for t := 0; t <= steps && ctx.Err() == nil; t++ {
				tr.Decode(pred)
				visit(t, b, pred, tr.Energy())
				if t < steps {
					tr.Step(nil)
				}
				pause()
			}
		}
	})
}

// handOut runs the chunks [c0, c1) of [0, n) on the crew's workers (nil:
// one) through Crew.Run; each worker makes its own state with newWorker
// first, one after another. It returns ctx.Err() if cancelled.
func handOut(ctx context.Context, n, chunk int, crew *models.Crew, newWorker func() func(c0, c1 int)) error {
	nc := (n + chunk - 1) / chunk
	work := make([]func(c0, c1 int), min(crew.Workers(), nc))
	for w := range work {
		work[w] = newWorker()
	}
	return crew.Run(ctx, nc, func(w, c int) {
		work[w](c*chunk, min((c+1)*chunk, n))
	})
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
