package models

import "math"

// Kernels of the bare self-attention. Storage is "lanes over keys": a token
// row of the couplings J[i] is held as [r][e][np] (np = N rounded up to 16),
// the layer-normed state as x̂ᵀ [e][np], so the inner loops run over the key
// index j with unit stride.
//
// Each kernel has three implementations: a naive twin (the definition, used
// by the tests), a portable Go version, and an AVX-512 version built with
// GOEXPERIMENT=simd (kernel_simd.go). The variables below point at the
// fastest one the CPU supports.
var (
	// scores: v[r*np+j] = Σ_e jt[(r*d+e)*np+j]·xh[e*np+j]; s[j] = Σ_r xi[r]·v[r*np+j].
	scores = scoresGo
	// wsum: out[r] = Σ_j a[j]·v[r*np+j].
	wsum = wsumGo
	// grad: g[(r*d+e)*np+j] += c[r]·a[j]·xh[e*np+j].
	grad = gradGo
	// expShift: dst[j] = exp(λ·s[j] − shift) where s[j] > invalidBelow, else 0; returns Σ dst.
	expShift = expShiftGo
	// maxf: the largest element (invalidScore for an empty slice).
	maxf = maxfGo
	// kernelName says which implementation the variables point at, and
	// kernelWhy, for the portable ones, why.
	kernelName = "go"
	kernelWhy  = "this binary was built without GOEXPERIMENT=simd (make build, or GOEXPERIMENT=simd go build ./app, builds the AVX-512 kernels)"
)

// Kernels says which kernels run: "avx512" (and "" as the reason), or
// "go", the portable ones, with the reason (a build without the SIMD
// experiment, or a CPU without AVX-512).
func Kernels() (name, why string) {
	if kernelName != "go" {
		return kernelName, ""
	}
	return kernelName, kernelWhy
}

// invalidScore marks a key a query may not attend to (s_ii, masked keys on
// the first step, padding). Any score at or below invalidBelow is excluded.
const (
	invalidScore = -1e30
	invalidBelow = -1e29
)

func scoresNaive(jt, xh, xi, v, s []float32, d, np int) {
	for j := 0; j < np; j++ {
		s[j] = 0
		for r := 0; r < d; r++ {
			var acc float32
			for e := 0; e < d; e++ {
				acc += jt[(r*d+e)*np+j] * xh[e*np+j]
			}
			v[r*np+j] = acc
			s[j] += xi[r] * acc
		}
	}
}

func scoresGo(jt, xh, xi, v, s []float32, d, np int) {
	s = s[:np]
	clear(s)
	for r := 0; r < d; r++ {
		vr := v[r*np : (r+1)*np]
		clear(vr)
		for e := 0; e < d; e++ {
			jr := jt[(r*d+e)*np : (r*d+e+1)*np]
			xe := xh[e*np : (e+1)*np]
			for j := range vr {
				vr[j] += jr[j] * xe[j]
			}
		}
		c := xi[r]
		for j := range s {
			s[j] += c * vr[j]
		}
	}
}

func wsumNaive(a, v, out []float32, d, np int) {
	for r := 0; r < d; r++ {
		var acc float32
		for j := 0; j < np; j++ {
			acc += a[j] * v[r*np+j]
		}
		out[r] = acc
	}
}

func wsumGo(a, v, out []float32, d, np int) {
	a = a[:np]
	for r := 0; r < d; r++ {
		vr := v[r*np : (r+1)*np]
		var acc float32
		for j, x := range a {
			acc += x * vr[j]
		}
		out[r] = acc
	}
}

func gradNaive(g, xh, a, c []float32, d, np int) {
	for r := 0; r < d; r++ {
		for e := 0; e < d; e++ {
			for j := 0; j < np; j++ {
				g[(r*d+e)*np+j] += c[r] * a[j] * xh[e*np+j]
			}
		}
	}
}

func gradGo(g, xh, a, c []float32, d, np int) {
	a = a[:np]
	w := make([]float32, np)
	for e := 0; e < d; e++ {
		xe := xh[e*np : (e+1)*np]
		for j, x := range a {
			w[j] = x * xe[j]
		}
		for r := 0; r < d; r++ {
			cr := c[r]
			gr := g[(r*d+e)*np : (r*d+e+1)*np]
			for j, x := range w {
				gr[j] += cr * x
			}
		}
	}
}

func expShiftNaive(dst, s []float32, lambda, shift float32) float32 {
	var sum float32
	for j := range dst {
		if s[j] <= invalidBelow {
			dst[j] = 0
			continue
		}
		dst[j] = float32(math.Exp(float64(lambda*s[j] - shift)))
		sum += dst[j]
	}
	return sum
}

func expShiftGo(dst, s []float32, lambda, shift float32) float32 {
	return expShiftNaive(dst, s, lambda, shift)
}

func maxfGo(s []float32) float32 {
	mx := float32(invalidScore)
	for _, v := range s {
		mx = max(mx, v)
	}
	return mx
}
