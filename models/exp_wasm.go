//go:build wasm

package models

// expK is the kernels' exp: in WebAssembly math.Exp is Go's own code,
// which expGo computes to the same bits, twice as fast there
// (BenchmarkExp).
func expK(x float64) float64 { return expGo(x) }

// expLanes sets a[b] = expK(λ·x[b] − λ·mx[b]) over a chunk's sixteen
// images: expLanesGo, one call for the sixteen.
func expLanes(a, x, mx *[Lanes]float32, lambda float32) { expLanesGo(a, x, mx, lambda) }
