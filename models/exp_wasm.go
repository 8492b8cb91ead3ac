//go:build wasm

package models

// expK is the kernels' exp: in WebAssembly math.Exp is Go's own code,
// which expGo computes to the same bits, twice as fast there
// (BenchmarkExp).
func expK(x float64) float64 { return expGo(x) }
