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
	kernelWhy  = "a build for another architecture or with the purego tag (make build, or GOEXPERIMENT=simd go build ./app on amd64, builds the AVX-512 kernels)"
)

// Kernels says which kernels run: "avx512" (and "" as the reason);
// "avx512-asm", the assembly ones alone, in a build without the SIMD
// experiment (kernel_asm.go), and what that leaves portable; or "go", the
// portable ones, with the reason (a purego or non-amd64 build, or a CPU
// without AVX-512).
func Kernels() (name, why string) {
	if kernelName == "avx512" {
		return kernelName, ""
	}
	return kernelName, kernelWhy
}

// The other kernels, each beside the first: the transformers' matrix
// product and GELU (reference loops gemmNaive and geluNaive in gemm.go),
// the bare model's 16-image chunk (portable twins *Go in bsachunk.go,
// checked against the per-image step), and the nearest-memory search
// (dotQNaive in memory.go, quantDotsNaive in quant.go). The init in
// kernel_simd.go is the one place any of them is pointed at its AVX-512
// version; kernel_nosimd.go gives the AVX-512 names to the portable ones
// where the experiment is off, so the tests compile in every build and
// skip loudly (needFast).

// gemm is the matrix kernel of the batched transformer (tbatch.go):
//
//	C[i·ldc+j] += Σ_p A(i,p)·B[p·ldb+j],  i < m, j < n, p < k,
//
// with A(i,p) = A[i·lda+p], or A[p·lda+i] when aT (A stored transposed).
// Linear forward is C = X·Wᵀ with a pre-transposed W, linear backward is
// dX += dY·W and dW += dYᵀ·X (aT), and attention's four products are the
// same shape per head. Like the BSA kernels it has a naive twin (the
// definition, for the tests), a portable Go version and an AVX-512 one.
var gemm = gemmGo

// gelu is the exact GELU of the batched transformer: g[k] = h·Φ(h) and its
// derivative dg[k] = Φ(h) + h·φ(h), kept for backward (so backward needs
// no transcendental function).
var gelu = geluNaive

// chunkScores: v[j][r][·] = Σ_e J_i[j][r][e]·xh[j][e][·] and
// s[j][·] = Σ_r xi[r][·]·v[j][r][·], for the n keys of one query.
var chunkScores = chunkScoresGo

// chunkClamp caps every score at clamp.
var chunkClamp = chunkClampGo

// chunkSoftmax, per image b: the largest valid score mx, the weights
// a_j = exp(λ(s_j − mx)) of valid keys and their sum. With weigh it also writes
// out[r][b] = Σ_j a_j v[j][r][b] (unnormalised).
var chunkSoftmax = chunkSoftmaxGo

// chunkNormalize is layerNorm on the lanes: for each row r and image b, the
// weighted mean and sum of squares over the tokens (float64, in token
// order), sd = √(ss/den) (0 when den is 0) and xh = w·(x − μ)/(sd + 10⁻⁹).
var chunkNormalize = chunkNormalizeGo

// chunkResidual writes xn[r][b] = g[b]·out[r][b] + x[r][b] for one token.
var chunkResidual = chunkResidualGo

// chunkRenorm writes x = xn / (mean token norm + 10⁻⁹) for every image
// (§4 step 4): per image, each token's norm from its float64 sum of squares,
// their float64 mean in token order, and the float32 factor.
var chunkRenorm = chunkRenormGo

// chunkDecode: for token i and pixel k of its patch, with
// c_0 = clamp(Σ_r F[r][2k]·x[i][r]) and c_1 likewise with F[r][2k+1],
// px[i·a+k][·] = c_0/(c_0 + c_1), or 0 when both are 0 (§3).
var chunkDecode = chunkDecodeGo

// standardizeTo writes standardize(x) into out and returns it (float64
// sums; the AVX-512 version sums in 8 lanes).
var standardizeTo = standardizeGo

// fields is the classical Hopfield network's field of every pixel at once
// (hopfield.go, ClassicHopfield.Fields): f[a] = Σ_b w[b·n+a]·x[b] for
// a < n, each a's sum in b's order, a product then a sum — the bits of
// fieldsNaive, the per-pixel loop.
var fields = fieldsGo

// The search's kernels. dotQ is Σ a[i]·b[i] in float32, the exact product
// of the search; dots1x4 and dots4x6 take four and twenty-four of them with the
// same arithmetic (so the same bits), out[c*4+r] = dotQ(z[c], m[r]) (dots4x6: out[c*6+r]).
// Their loops check no bounds: every slice holds at least len(z) values.
// dist is ‖a − b‖ from a float64 sum, len(a) ≤ len(b).
// argmax is the index of ub's first maximum; above appends to dst the k
// with ub[k] ≥ thr in increasing order and reports false once more than
// limit would be appended.
// adamChunk is the AdamW step of a chunk of couplings (adamStep.apply).
var adamChunk = adamGo

var (
	dotQ    = dotQGo
	dots1x4 = dots1x4Go
	dots4x6 = dots4x6Go
	argmax  = argmaxGo
	above   = aboveGo
	dist    = distGo
)

// quantDots is the kernel: for quantPreds predictions p_c (8-bit, pstride
// apart) and quantGroups groups of 16 packed rows (gstride bytes apart),
// out[c·ostride + g·16 + r] = Σ_i u_{g,r}[i]·p_c[i] over steps runs of 4
// values, exact in int32.
var quantDots = quantDotsGo

// quantAllPreds: quantDots is a kernel that always multiplies quantPreds
// predictions (the VNNI one); else bounds asks the portable kernel for
// the predictions there are.
var quantAllPreds = false

// quantBound writes ub[k] = s_k·t·(dots[k] − off) + ‖f‖·s_k‖q_k‖ + ‖z‖·‖e_k‖
// for the m rows (dots[k] − off = p·q_k exactly: |p·q_k| ≤ 127²·q4 stays
// within float32's exact integers for rows up to 1,040 values).
var quantBound = quantBoundGo

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
			addMul(vr, jt[(r*d+e)*np:(r*d+e+1)*np], xh[e*np:(e+1)*np])
		}
		addScaled(s, xi[r], vr)
	}
}

// addMul sets dst[j] += x[j]·y[j], and addScaled dst[j] += c·x[j], eight
// elements to a loop turn (the page's WebAssembly spends more on a loop's
// turn than on a product). Each element's sum is the plain loop's, to the
// bit: the portable kernels' numbers did not change when they were
// unrolled (TestPortableSameOrder).
func addMul(dst, x, y []float32) {
	n := len(dst)
	x, y = x[:n], y[:n]
	j := 0
	for ; j+8 <= n; j += 8 {
		d, a, b := dst[j:j+8:j+8], x[j:j+8:j+8], y[j:j+8:j+8]
		d[0] += a[0] * b[0]
		d[1] += a[1] * b[1]
		d[2] += a[2] * b[2]
		d[3] += a[3] * b[3]
		d[4] += a[4] * b[4]
		d[5] += a[5] * b[5]
		d[6] += a[6] * b[6]
		d[7] += a[7] * b[7]
	}
	for ; j < n; j++ {
		dst[j] += x[j] * y[j]
	}
}

func addScaled(dst []float32, c float32, x []float32) {
	n := len(dst)
	x = x[:n]
	j := 0
	for ; j+8 <= n; j += 8 {
		d, a := dst[j:j+8:j+8], x[j:j+8:j+8]
		d[0] += c * a[0]
		d[1] += c * a[1]
		d[2] += c * a[2]
		d[3] += c * a[3]
		d[4] += c * a[4]
		d[5] += c * a[5]
		d[6] += c * a[6]
		d[7] += c * a[7]
	}
	for ; j < n; j++ {
		dst[j] += c * x[j]
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

// wsumGo sums in the naive twin's order, one product after another, eight
// to a loop turn: the page's WebAssembly spends more on a loop's turn (its
// bounds checks and jumps) than on a product, and the same order keeps
// the numbers to the bit (TestPortableSameOrder).
func wsumGo(a, v, out []float32, d, np int) {
	a = a[:np]
	for r := 0; r < d; r++ {
		vr := v[r*np : (r+1)*np]
		var acc float32
		j := 0
		for ; j+8 <= np; j += 8 {
			x, y := a[j:j+8:j+8], vr[j:j+8:j+8]
			acc += x[0] * y[0]
			acc += x[1] * y[1]
			acc += x[2] * y[2]
			acc += x[3] * y[3]
			acc += x[4] * y[4]
			acc += x[5] * y[5]
			acc += x[6] * y[6]
			acc += x[7] * y[7]
		}
		for ; j < np; j++ {
			acc += a[j] * vr[j]
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
			addScaled(g[(r*d+e)*np:(r*d+e+1)*np], c[r], w)
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

// expShiftGo is expShiftNaive through expK (the same bits).
func expShiftGo(dst, s []float32, lambda, shift float32) float32 {
	var sum float32
	for j := range dst {
		if s[j] <= invalidBelow {
			dst[j] = 0
			continue
		}
		dst[j] = float32(expK(float64(lambda*s[j] - shift)))
		sum += dst[j]
	}
	return sum
}

func maxfGo(s []float32) float32 {
	mx := float32(invalidScore)
	for _, v := range s {
		mx = maxF(mx, v)
	}
	return mx
}

// maxF and minF are the builtins max and min of two float32s, with the
// same result for every input (a NaN if either is one; max prefers +0 to
// −0, min −0 to +0), written as comparisons: in WebAssembly the builtins
// are calls into the runtime (fmax32, fmin32), which made a softmax's
// largest score cost three times its comparisons. They inline.
func maxF(a, b float32) float32 {
	switch {
	case a > b:
		return a
	case b > a:
		return b
	case a != a:
		return a
	case b != b:
		return b
	case a == 0 && math.Float32bits(a) != 0:
		return b // −0 and ±0
	}
	return a
}

func minF(a, b float32) float32 {
	switch {
	case a < b:
		return a
	case b < a:
		return b
	case a != a:
		return a
	case b != b:
		return b
	case a == 0 && math.Float32bits(a) == 0:
		return b // +0 and ±0
	}
	return a
}
