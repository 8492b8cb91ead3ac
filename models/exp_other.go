//go:build !wasm

package models

import "math"

// expK is the kernels' exp: math.Exp, which on amd64 and arm64 is the
// CPU's own code (and need not give expGo's bits).
func expK(x float64) float64 { return math.Exp(x) }

// expLanes sets a[b] = expK(λ·x[b] − λ·mx[b]) over a chunk's sixteen
// images.
func expLanes(a, x, mx *[Lanes]float32, lambda float32) {
	for b := range a {
		a[b] = float32(math.Exp(float64(lambda*x[b] - lambda*mx[b])))
	}
}
