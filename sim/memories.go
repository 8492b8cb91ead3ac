package sim

import (
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
// it, so a run can start stepping meanwhile. The digits' pixels are made
// one digit at a time, for the mean and again for the search, rather than
// all at once (31 MB for 10,000 digits, which the page would keep).
func NewMemories(train *mnist.Set) *Memories {
	var sum [models.Pixels]float64
	row := make([]float32, models.Pixels)
	for k := range train.Len() {
		for q, v := range train.CleanTo(row, k, mnist.PixelGain) {
			sum[q] += float64(v)
		}
	}
	mean := make([]float32, models.Pixels)
	for q, v := range sum {
		mean[q] = float32(v / float64(train.Len()))
	}
	m := &Memories{Set: train, Mean: mean, done: make(chan struct{})}
	go func() {
		// The digits' own bytes and the value of each: in the page the
		// search keeps these instead of 31 MB of standardised rows.
		pal := mnist.Palette(mnist.PixelGain)
		m.mem = models.NewMemoryOfCodes(train.Len(), models.Pixels, train.Images, &pal)
		close(m.done)
	}()
	return m
}

// Search is the nearest-memory search, once it is prepared.
func (m *Memories) Search() *models.Memory {
	<-m.done
	return m.mem
}
