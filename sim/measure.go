package sim

import "math"

// Measures are the numbers of one state (docs/maths.md §8). The window's
// frames and the batch runs' curves measure every state with measure, so
// a frame's numbers and a curve's per-image numbers are the same
// numbers; only the search for the nearest memory differs in how it is
// run (the window follows one trajectory, a batch run searches each
// image's states together), and both set it with setNearest.
type Measures struct {
	Energy    float64 // NaN where undefined
	MSE       float64
	MSEMask   float64 // NaN without a mask
	MSEOther  float64
	CorrClean float64 // Pearson correlation with the clean digit
	CorrMean  float64 // correlation with the mean training digit (NaN without memories)
	Nearest   int     // position of the nearest stored training digit in the stored subset
	NearIdx   int     // its index in the MNIST training file (what the window and CSV show)
	NearCorr  float64 // its Pearson correlation
	NearLbl   uint8   // its label
}

// measure measures state img (a decoded prediction in [0,1]) of energy
// energy against the clean digit and its pixel mask (nil: no mask), and
// against the memories' mean digit when mem is not nil.
func measure(img, clean []float32, pixel []bool, energy float64, mem *Memories) Measures {
	m := Measures{Energy: energy, CorrMean: math.NaN(), NearCorr: math.NaN()}
	m.MSE, m.MSEMask, m.MSEOther = MSE(img, clean, pixel)
	m.CorrClean = Pearson(img, clean)
	if mem != nil {
		m.CorrMean = Pearson(img, mem.Mean)
	}
	return m
}

// setNearest records that stored digit k of mem, at correlation corr, is
// the state's nearest memory.
func (m *Measures) setNearest(mem *Memories, k int, corr float32) {
	m.Nearest, m.NearCorr, m.NearLbl = k, float64(corr), mem.Set.Labels[k]
	m.NearIdx = mem.Set.Index[k]
}
