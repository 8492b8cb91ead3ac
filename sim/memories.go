package sim

import (
	"context"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// The stored digits as the window, reproduce and the metrics search them
// (docs/maths.md §8: the nearest memory, the mean digit).

// Memories is the stored training subset as the metrics use it.
type Memories struct {
	Set  *mnist.Set
	Mean []float32 // the mean training digit (the global attractor's look-alike)
	mem  *models.Memory
	done chan struct{} // closed when mem is ready
}

// NewMemories prepares the nearest-memory search over a training set. The
// mean digit is ready on return; the search (its standardised and 8-bit
// rows, about 50 ms) is prepared in the background, and Search waits for
// it, so a run can start stepping meanwhile.
func NewMemories(train *mnist.Set) *Memories {
	rows := make([][]float32, train.Len())
	slab := make([]float32, len(rows)*models.Pixels)
	models.Parallel(context.Background(), len(rows), 0, func(_, k int) {
		rows[k] = train.CleanTo(slab[k*models.Pixels:], k, mnist.PixelGain)
	})
	var sum [models.Pixels]float64
	for _, row := range rows {
		for q, v := range row[:models.Pixels] {
			sum[q] += float64(v)
		}
	}
	mean := make([]float32, models.Pixels)
	for q, v := range sum {
		mean[q] = float32(v / float64(len(rows)))
	}
	m := &Memories{Set: train, Mean: mean, done: make(chan struct{})}
	go func() {
		m.mem = models.NewMemory(rows)
		close(m.done)
	}()
	return m
}

// Search is the nearest-memory search, once it is prepared.
func (m *Memories) Search() *models.Memory {
	<-m.done
	return m.mem
}
