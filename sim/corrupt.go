package sim

import (
	"math"
	"math/rand/v2"

	"attractorlab/models"
)

// Kind is a corruption kind (§2).
type Kind int

const (
	Mask  Kind = iota // mask a fraction of the tokens
	Noise             // add Gaussian noise, then restore the pixel variance
)

func (k Kind) String() string {
	if k == Noise {
		return "noise"
	}
	return "mask"
}

// Corruption names a reproducible corruption: the same (image, kind, level,
// seed) always gives the same corrupted image.
type Corruption struct {
	Kind     Kind
	Fraction float64 // masking: fraction of tokens (0.3)
	Sigma2   float64 // noise: variance σ² (0.7)
	Seed     uint64
}

// Corrupted is a corrupted image and what the metrics need to know about it.
type Corrupted struct {
	Clean  []float32 // gain-adjusted clean image (784)
	Input  []float32 // corrupted pixels: masked tokens 0; noise unclamped
	Masked []bool    // masked tokens (nil for noise)
	Pixel  []bool    // masked pixels (nil for noise)
}

// Clamped returns Input clamped to [0,1] (what the bare self-attention encodes).
func (c *Corrupted) Clamped() []float32 { return clamped(c.Input) }

// Apply corrupts clean image number image (its index, used to seed) for the
// tokenisation pt. Masked tokens are chosen as in §2: ⌊f·N⌋ distinct tokens.
// c must hold validated levels (Settings.Validate, MaskFraction and
// NoiseSigma2): a fraction up to MaskFraction.Max leaves MinVisible tokens
// on every grid.
func (c Corruption) Apply(clean []float32, pt *models.Patches, image int) *Corrupted {
	out := &Corrupted{Clean: clean, Input: append([]float32(nil), clean...)}
	rng := rand.New(rand.NewPCG(c.Seed, uint64(image)<<2|uint64(c.Kind)))
	switch c.Kind {
	case Mask:
		k := int(math.Floor(c.Fraction * float64(pt.N)))
		out.Masked = make([]bool, pt.N)
		for _, i := range rng.Perm(pt.N)[:k] {
			out.Masked[i] = true
		}
		out.Pixel = pt.PixelMask(out.Masked)
		for q, m := range out.Pixel {
			if m {
				out.Input[q] = 0
			}
		}
	case Noise:
		sigma := math.Sqrt(c.Sigma2)
		q := make([]float64, len(clean))
		for k, p := range clean {
			q[k] = float64(p) + sigma*rng.NormFloat64()
		}
		mq, sq := meanStd(q)
		_, sp := meanStd64(clean)
		f := 0.0
		if sq > 0 {
			f = sp / sq
		}
		for k := range q {
			out.Input[k] = float32(mq + (q[k]-mq)*f)
		}
	}
	return out
}

func meanStd(x []float64) (float64, float64) {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return m, math.Sqrt(s / float64(len(x)))
}

func meanStd64(x []float32) (float64, float64) {
	y := make([]float64, len(x))
	for k, v := range x {
		y[k] = float64(v)
	}
	return meanStd(y)
}
