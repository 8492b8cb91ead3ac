package sim

import (
	"context"
	"math"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// ValidateBSA is the training monitor: the mean masked-pixel MSE
// after 5 steps of the evaluation dynamics on the first n digits of set,
// masked at 30% with the given seed, with the attention attn, on workers
// goroutines (≤ 0: every core; the value does not depend on it).
func ValidateBSA(m *models.BSA, set *mnist.Set, n int, seed uint64, attn models.AttnKind, workers int) float64 {
	n = min(n, set.Len())
	inputs := make([]*Corrupted, n)
	c := DefaultMask
	c.Seed = seed
	for k := range inputs {
		inputs[k] = c.Apply(set.Clean(k, mnist.PixelGain), m.Patches, k)
	}
	const steps = 5
	errs := make([]float64, n)
	dyn := DefaultDynamics()
	dyn.Attn = attn
	RunBSA(context.Background(), m, dyn, inputs, steps, models.NewCrew(workers), func(t, b int, pred []float32, _ float64) {
		if t == steps {
			_, errs[b], _ = MSE(pred, inputs[b].Clean, inputs[b].Pixel)
		}
	})
	var s float64
	for _, e := range errs {
		s += e
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}
