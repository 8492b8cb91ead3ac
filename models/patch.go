package models

import "fmt"

// Image geometry shared by every model.
const (
	Side   = 28          // image side in pixels
	Pixels = Side * Side // pixels per image
)

// Patches describes the tokenisation of a 28×28 image into non-overlapping
// P×P patches in row-major order, pixels inside a patch row-major (§1).
type Patches struct {
	P     int   // patch side
	N     int   // number of tokens, (28/P)²
	A     int   // pixels per patch, P²
	Index []int // Index[i*A+k] = image pixel of pixel k of token i
}

// NewPatches returns the tokenisation for patch side p (a divisor of 28).
func NewPatches(p int) (*Patches, error) {
	if p <= 0 || Side%p != 0 {
		return nil, fmt.Errorf("patch side %d does not divide %d", p, Side)
	}
	g := Side / p
	pt := &Patches{P: p, N: g * g, A: p * p}
	pt.Index = make([]int, pt.N*pt.A)
	for i := 0; i < pt.N; i++ {
		r0, c0 := (i/g)*p, (i%g)*p
		for k := 0; k < pt.A; k++ {
			pt.Index[i*pt.A+k] = (r0+k/p)*Side + c0 + k%p
		}
	}
	return pt, nil
}

// Token returns the token that holds image pixel px.
func (pt *Patches) Token(px int) int {
	g := Side / pt.P
	return (px/Side/pt.P)*g + (px%Side)/pt.P
}

// PixelMask expands a per-token mask to a per-pixel mask.
func (pt *Patches) PixelMask(tokens []bool) []bool {
	m := make([]bool, Pixels)
	for i, on := range tokens {
		if on {
			pt.MarkPixels(m, i)
		}
	}
	return m
}

// MarkPixels sets dst (Pixels long) true at the pixels of the given
// tokens.
func (pt *Patches) MarkPixels(dst []bool, tokens ...int) {
	for _, i := range tokens {
		for _, q := range pt.Index[i*pt.A : (i+1)*pt.A] {
			dst[q] = true
		}
	}
}
