package sim

import (
	"attractorlab/models"
	"math"
)

// clamped is a copy of an image with every value clamped to [0,1], as
// the window shows it and the metrics read it.
func clamped(img []float32) []float32 {
	out := make([]float32, len(img))
	copy(out, img)
	clampPicture(out)
	return out
}

// clampPicture clamps every value of img to [0,1] in place: a state as
// the window shows it and the metrics read it.
func clampPicture(img []float32) {
	for k, v := range img {
		img[k] = min(max(v, 0), 1)
	}
}

// IsTransient reports a transient memory on one curve: the best step's
// MSE repairs the input's (Improves), and the last step's is above it
// again.
func IsTransient(best, input, last float64) bool { return Improves(best, input) && last > best }

// MSE returns the mean squared error of pred against clean over all pixels,
// the masked pixels and the unmasked pixels (§8). pred is clamped to [0,1]
// first. With no mask, masked is NaN and unmasked equals all.
func MSE(pred, clean []float32, pixelMask []bool) (all, masked, unmasked float64) {
	var sa, sm, su float64
	var nm int
	n := len(clean)
	pred = pred[:n]
	if pixelMask == nil {
		// Two running sums: their additions overlap.
		var s0, s1 float64
		k := 0
		for ; k+2 <= n; k += 2 {
			d0 := float64(min(max(pred[k], 0), 1) - clean[k])
			d1 := float64(min(max(pred[k+1], 0), 1) - clean[k+1])
			s0 += d0 * d0
			s1 += d1 * d1
		}
		if k < n {
			d := float64(min(max(pred[k], 0), 1) - clean[k])
			s0 += d * d
		}
		sa = s0 + s1
		su = sa
	} else {
		for k, c := range clean {
			p := min(max(pred[k], 0), 1)
			d := float64(p - c)
			d *= d
			sa += d
			if pixelMask[k] {
				sm += d
				nm++
			} else {
				su += d
			}
		}
	}
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
	b = b[:len(a)]
	// Two running sums each, in scalars: the float64 additions of one
	// chain wait for each other, two chains overlap.
	var ma0, ma1, mb0, mb1 float64
	k := 0
	for ; k+2 <= len(a); k += 2 {
		x, y := a[k:k+2:k+2], b[k:k+2:k+2]
		ma0 += float64(x[0])
		ma1 += float64(x[1])
		mb0 += float64(y[0])
		mb1 += float64(y[1])
	}
	if k < len(a) {
		ma0 += float64(a[k])
		mb0 += float64(b[k])
	}
	mA := (ma0 + ma1) / float64(len(a))
	mB := (mb0 + mb1) / float64(len(b))
	var ab0, ab1, aa0, aa1, bb0, bb1 float64
	k = 0
	for ; k+2 <= len(a); k += 2 {
		x, y := a[k:k+2:k+2], b[k:k+2:k+2]
		u0, v0 := float64(x[0])-mA, float64(y[0])-mB
		u1, v1 := float64(x[1])-mA, float64(y[1])-mB
		ab0 += u0 * v0
		aa0 += u0 * u0
		bb0 += v0 * v0
		ab1 += u1 * v1
		aa1 += u1 * u1
		bb1 += v1 * v1
	}
	if k < len(a) {
		u, v := float64(a[k])-mA, float64(b[k])-mB
		ab0 += u * v
		aa0 += u * u
		bb0 += v * v
	}
	aa, bb := aa0+aa1, bb0+bb1
	if aa == 0 || bb == 0 {
		return 0
	}
	return (ab0 + ab1) / math.Sqrt(aa*bb)
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
