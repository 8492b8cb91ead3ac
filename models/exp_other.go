//go:build !wasm

package models

import "math"

// expK is the kernels' exp: math.Exp, which on amd64 and arm64 is the
// CPU's own code (and need not give expGo's bits).
func expK(x float64) float64 { return math.Exp(x) }
