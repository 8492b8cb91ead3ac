package models

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Embedding is the fixed random spin embedding of §3: a token's pixels p are
// mapped to unit 2-vectors (p, 1−p)/‖·‖, concatenated (interleaved) into
// s ∈ R^{2A}, and embedded as x = F s with F ∈ R^{D×2A}.
type Embedding struct {
	*Patches
	D int       // embedding dimension, D ≥ 2A
	F []float32 // [D][2A], row-major
}

// NewEmbedding draws F as the Q factor of a D×2A Gaussian matrix divided by
// √(2A), from the given seed.
func NewEmbedding(p, d int, seed uint64) (*Embedding, error) {
	pt, err := NewPatches(p)
	if err != nil {
		return nil, err
	}
	a := 2 * pt.A
	if d < a {
		return nil, fmt.Errorf("embedding dimension %d is smaller than the spin dimension %d", d, a)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	g := mat.NewDense(d, a, nil)
	for r := 0; r < d; r++ {
		for c := 0; c < a; c++ {
			g.Set(r, c, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	e := &Embedding{Patches: pt, D: d, F: make([]float32, d*a)}
	s := 1 / math.Sqrt(float64(a))
	for r := 0; r < d; r++ {
		for c := 0; c < a; c++ {
			e.F[r*a+c] = float32(q.At(r, c) * s)
		}
	}
	return e, nil
}

// EmbeddingFromF wraps a stored F [d][2P²].
func EmbeddingFromF(p, d int, f []float32) (*Embedding, error) {
	pt, err := NewPatches(p)
	if err != nil {
		return nil, err
	}
	if len(f) != d*2*pt.A {
		return nil, fmt.Errorf("tensor F has %d values, want %d×%d", len(f), d, 2*pt.A)
	}
	return &Embedding{Patches: pt, D: d, F: append([]float32(nil), f...)}, nil
}

// Encode writes the embedded tokens of img (784 pixels in [0,1]) into x
// [N][D]. Tokens with masked[i] are the zero vector (§2). masked may be nil.
func (e *Embedding) Encode(x []float32, img []float32, masked []bool) {
	a := 2 * e.A
	s := make([]float32, a)
	for i := 0; i < e.N; i++ {
		xi := x[i*e.D : (i+1)*e.D]
		if masked != nil && masked[i] {
			clear(xi)
			continue
		}
		for k := 0; k < e.A; k++ {
			p := float64(img[e.Index[i*e.A+k]])
			n := math.Sqrt(p*p + (1-p)*(1-p))
			s[2*k] = float32(p / n)
			s[2*k+1] = float32((1 - p) / n)
		}
		for r := 0; r < e.D; r++ {
			var acc float32
			fr := e.F[r*a : (r+1)*a]
			for c, v := range s {
				acc += fr[c] * v
			}
			xi[r] = acc
		}
	}
}

// Decode writes the image of tokens x [N][D] into img: c = clamp(Fᵀx, 0, 1),
// pixel = c₀/(c₀+c₁), 0 where c₀+c₁ = 0 (§3).
func (e *Embedding) Decode(img []float32, x []float32) {
	a := 2 * e.A
	for i := 0; i < e.N; i++ {
		xi := x[i*e.D : (i+1)*e.D]
		for k := 0; k < e.A; k++ {
			var c0, c1 float32
			for r := 0; r < e.D; r++ {
				c0 += e.F[r*a+2*k] * xi[r]
				c1 += e.F[r*a+2*k+1] * xi[r]
			}
			c0 = min(max(c0, 0), 1)
			c1 = min(max(c1, 0), 1)
			var p float32
			if c0+c1 > 0 {
				p = c0 / (c0 + c1)
			}
			img[e.Index[i*e.A+k]] = p
		}
	}
}
