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
	errs, _ := ValidationErrs(context.Background(), m, set, 0, min(n, set.Len()), seed, attn, workers)
	return MeanValidation(errs)
}

// ValidationErrs is ValidateBSA's error of each of the digits from …
// from+n−1 of set (in range). A digit's error depends only on its index,
// so the errors of consecutive ranges, joined, are those of the whole
// range, to the bit (TestTrainJobValidatedElsewhere): the page splits the validation
// among its workers. A cancelled ctx stops it with ctx's error.
func ValidationErrs(ctx context.Context, m *models.BSA, set *mnist.Set, from, n int, seed uint64, attn models.AttnKind, workers int) ([]float64, error) {
	inputs := make([]*Corrupted, n)
	c := DefaultMask
	c.Seed = seed
	for k := range inputs {
		inputs[k] = c.Apply(set.Clean(from+k, mnist.PixelGain), m.Patches, from+k)
	}
	const steps = 5
	errs := make([]float64, n)
	dyn := DefaultDynamics()
	dyn.Attn = attn
	err := RunBSA(ctx, m, dyn, inputs, steps, models.NewCrew(workers), func(t, b int, pred []float32, _ float64) {
		if t == steps {
			_, errs[b], _ = MSE(pred, inputs[b].Clean, inputs[b].Pixel)
		}
	})
	return errs, err
}

// MeanValidation is ValidateBSA's value from the digits' errors, added in
// order (NaN for none).
func MeanValidation(errs []float64) float64 {
	var s float64
	for _, e := range errs {
		s += e
	}
	if len(errs) == 0 {
		return math.NaN()
	}
	return s / float64(len(errs))
}
