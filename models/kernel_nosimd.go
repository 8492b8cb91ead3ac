//go:build !(goexperiment.simd && amd64 && !purego)

package models

// hasAVX512 reports whether the AVX-512 kernels can run here (for tests):
// never in a build without GOEXPERIMENT=simd.
func hasAVX512() bool { return false }

// The AVX-512 names resolve to the portable kernels so tests compile in
// every build; the tests skip them when hasAVX512 is false.
var (
	scoresAVX512   = scoresGo
	wsumAVX512     = wsumGo
	gradAVX512     = gradGo
	expShiftAVX512 = expShiftGo
	maxfAVX512     = maxfGo
)

var dotQAVX512 = dotQGo
var fieldsAVX512 = fieldsGo
var gemmAVX512 = gemmGo
var geluAVX512 = geluNaive
