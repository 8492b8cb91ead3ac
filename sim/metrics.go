package sim

import (
	"attractorlab/models"
	"math"
)

// MSE returns the mean squared error of pred against clean over all pixels,
// the masked pixels and the unmasked pixels (§8). pred is clamped to [0,1]
// first. With no mask, masked is NaN and unmasked equals all.
func MSE(pred, clean []float32, pixelMask []bool) (all, masked, unmasked float64) {
	var sa, sm, su float64
	var nm int
	for k, c := range clean {
		p := min(max(pred[k], 0), 1)
		d := float64(p - c)
		d *= d
		sa += d
		if pixelMask != nil && pixelMask[k] {
			sm += d
			nm++
		} else {
			su += d
		}
	}
	n := len(clean)
	all = sa / float64(n)
	masked = math.NaN()
	if nm > 0 {
		masked = sm / float64(nm)
	}
	unmasked = math.NaN()
	if n-nm > 0 {
		unmasked = su / float64(n-nm)
	}
	return
}

// Pearson is the correlation of a and b (0 when either is constant).
func Pearson(a, b []float32) float64 {
	var ma, mb float64
	for k := range a {
		ma += float64(a[k])
		mb += float64(b[k])
	}
	ma /= float64(len(a))
	mb /= float64(len(b))
	var sab, saa, sbb float64
	for k := range a {
		x, y := float64(a[k])-ma, float64(b[k])-mb
		sab += x * y
		saa += x * x
		sbb += y * y
	}
	if saa == 0 || sbb == 0 {
		return 0
	}
	return sab / math.Sqrt(saa*sbb)
}

// PatchVariance appends, for every masked token, the variance of its
// predicted pixels (the quantity of the paper's Fig. 2).
func PatchVariance(dst []float64, pred []float32, index []int, a int, masked []bool) []float64 {
	for i, m := range masked {
		if !m {
			continue
		}
		var s, ss float64
		for k := 0; k < a; k++ {
			v := float64(min(max(pred[index[i*a+k]], 0), 1))
			s += v
			ss += v * v
		}
		mu := s / float64(a)
		dst = append(dst, ss/float64(a)-mu*mu)
	}
	return dst
}

// PatchVarianceRaw is PatchVariance without the clamp to [0,1]; it also
// returns how many of the masked patches' pixels lie outside [0,1] (so a
// user can see whether clamping shapes Fig. 2).
func PatchVarianceRaw(dst []float64, pred []float32, index []int, a int, masked []bool) ([]float64, int) {
	outside := 0
	for i, m := range masked {
		if !m {
			continue
		}
		var s, ss float64
		for k := 0; k < a; k++ {
			v := float64(pred[index[i*a+k]])
			if v < 0 || v > 1 {
				outside++
			}
			s += v
			ss += v * v
		}
		mu := s / float64(a)
		dst = append(dst, ss/float64(a)-mu*mu)
	}
	return dst, outside
}

// TopPatterns returns the indices of the k largest weights, largest first
// (the stored patterns a modern Hopfield step weighs most).
func TopPatterns(weights []float32, k int) []int { return models.TopK(weights, len(weights), k) }
