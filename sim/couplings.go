package sim

import (
	"math"

	"attractorlab/models"
)

// What the bare self-attention's couplings look like (docs/maths.md,
// "Reading the couplings"): how strongly each token attends to each other
// one, and how that strength falls with the distance between their
// patches — the locality that pseudo-likelihood training finds by itself.

// CouplingNorms returns ‖J_ij‖, the Frobenius norm of the d×d coupling of
// query token i to key token j, for every pair (row-major N×N; the
// diagonal, which the model does not have, is 0).
func CouplingNorms(m *models.BSA) []float64 {
	n, d, np := m.N, m.D, m.NP
	out := make([]float64, n*n)
	for i := range n {
		ji := m.J[i*d*d*np : (i+1)*d*d*np]
		row := out[i*n : (i+1)*n]
		for re := range d * d {
			jr := ji[re*np : re*np+n]
			for j, v := range jr {
				row[j] += float64(v) * float64(v)
			}
		}
		for j := range row {
			row[j] = math.Sqrt(row[j])
		}
		row[i] = 0
	}
	return out
}

// Locality is the mean of norms (CouplingNorms of a model whose tokens
// form a side×side grid) over the pairs at each displacement of the key's
// patch from the query's, (Δrow, Δcol) with each in −(side−1) … side−1: a
// (2·side−1)² grid, row-major, Δrow = Δcol = 0 (no pair) at its centre as
// NaN.
func Locality(norms []float64, side int) []float64 {
	w := 2*side - 1
	return meanByPair(norms, side, w*w, func(dr, dc int) int { return (dr+side-1)*w + dc + side - 1 })
}

// meanByPair averages norms (side×side tokens) over the pairs i ≠ j in
// each of n groups, the group of a pair given by its displacement; a group
// with no pair is NaN.
func meanByPair(norms []float64, side, n int, group func(dr, dc int) int) []float64 {
	sum := make([]float64, n)
	count := make([]int, n)
	tokens := side * side
	for i := range tokens {
		for j := range tokens {
			if i == j {
				continue
			}
			k := group(j/side-i/side, j%side-i%side)
			sum[k] += norms[i*tokens+j]
			count[k]++
		}
	}
	for k := range sum {
		if count[k] == 0 {
			sum[k] = math.NaN()
			continue
		}
		sum[k] /= float64(count[k])
	}
	return sum
}

// LocalityByDistance is the mean of norms over the pairs whose patches lie
// at each Chebyshev distance (max(|Δrow|, |Δcol|)) 1 … side−1: index 0 is
// distance 1.
func LocalityByDistance(norms []float64, side int) []float64 {
	return meanByPair(norms, side, side-1, func(dr, dc int) int { return max(abs(dr), abs(dc)) - 1 })
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
