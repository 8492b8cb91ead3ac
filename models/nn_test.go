package models

import (
	"math"
	"math/rand/v2"
	"testing"
)

func rnd64(rng *rand.Rand, n int, s float64) []float64 {
	x := make([]float64, n)
	for k := range x {
		x[k] = rng.NormFloat64() * s
	}
	return x
}

// fdCheck compares grad with central differences of loss with respect to
// every element of x (float64), failing above relative error 1e-6 (norm)
// or 1e-4 (worst entry, relative to max(|fd|, 1e-3)).
func fdCheck(t *testing.T, name string, x []float64, loss func() float64, grad []float64) {
	t.Helper()
	const h = 1e-6
	var num, den, worst float64
	for k := range x {
		old := x[k]
		x[k] = old + h
		lp := loss()
		x[k] = old - h
		lm := loss()
		x[k] = old
		fd := (lp - lm) / (2 * h)
		num += (grad[k] - fd) * (grad[k] - fd)
		den += fd * fd
		worst = math.Max(worst, math.Abs(grad[k]-fd)/math.Max(math.Abs(fd), 1e-3))
	}
	if den == 0 {
		t.Fatalf("%s: zero gradient everywhere: the check is vacuous", name)
	}
	if rel := math.Sqrt(num / den); rel > 1e-6 || worst > 1e-4 {
		t.Fatalf("%s: gradient relative error %.3g (norm), %.3g (worst entry)", name, rel, worst)
	}
}

func TestLinearGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	T, I, O := 5, 7, 4
	in, w, b, R := rnd64(rng, T*I, 1), rnd64(rng, O*I, 0.5), rnd64(rng, O, 0.5), rnd64(rng, T*O, 1)
	out := make([]float64, T*O)
	loss := func() float64 { LinearForward(out, in, w, b, T, I, O); return dot64(out, R) }
	dIn, dW, dB := make([]float64, T*I), make([]float64, O*I), make([]float64, O)
	loss()
	LinearBackward(dIn, dW, dB, R, in, w, T, I, O)
	fdCheck(t, "linear/in", in, loss, dIn)
	fdCheck(t, "linear/w", w, loss, dW)
	fdCheck(t, "linear/b", b, loss, dB)
}

func TestLayerNormGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	T, C := 4, 9
	in, w, b, R := rnd64(rng, T*C, 2), rnd64(rng, C, 1), rnd64(rng, C, 1), rnd64(rng, T*C, 1)
	out, mean, rstd := make([]float64, T*C), make([]float64, T), make([]float64, T)
	loss := func() float64 { LayerNormForward(out, mean, rstd, in, w, b, T, C); return dot64(out, R) }
	loss()
	// The normalised rows have mean 0 and (population) variance 1 before w, b.
	ones, zeros := make([]float64, C), make([]float64, C)
	for c := range ones {
		ones[c] = 1
	}
	LayerNormForward(out, mean, rstd, in, ones, zeros, T, C)
	var m, v float64
	for _, x := range out[:C] {
		m += x / float64(C)
	}
	for _, x := range out[:C] {
		v += (x - m) * (x - m) / float64(C)
	}
	if math.Abs(m) > 1e-12 || math.Abs(v-1) > 1e-4 {
		t.Fatalf("normalised row: mean %g variance %g", m, v)
	}
	loss()
	dIn, dW, dB := make([]float64, T*C), make([]float64, C), make([]float64, C)
	LayerNormBackward(dIn, dW, dB, R, in, w, mean, rstd, T, C)
	fdCheck(t, "layernorm/in", in, loss, dIn)
	fdCheck(t, "layernorm/w", w, loss, dW)
	fdCheck(t, "layernorm/b", b, loss, dB)
}

func TestGELUGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	in, R := rnd64(rng, 40, 2), rnd64(rng, 40, 1)
	out := make([]float64, 40)
	loss := func() float64 { GELUForward(out, in); return dot64(out, R) }
	loss()
	// PyTorch reference values of the exact GELU.
	probe := []float64{-1, 0, 1, 2}
	want := []float64{-0.15865525393145707, 0, 0.8413447460685429, 1.9544997361036416}
	got := make([]float64, 4)
	GELUForward(got, probe)
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-12 {
			t.Fatalf("GELU(%g) = %g, want %g", probe[k], got[k], want[k])
		}
	}
	dIn := make([]float64, 40)
	GELUBackward(dIn, in, R)
	fdCheck(t, "gelu", in, loss, dIn)
}

func TestAttentionGradient(t *testing.T) {
	for _, relu := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(4, 4))
		T, C, H := 6, 8, 2
		qkv, R := rnd64(rng, T*3*C, 1), rnd64(rng, T*C, 1)
		out, att := make([]float64, T*C), make([]float64, H*T*T)
		loss := func() float64 { AttentionForward(out, att, qkv, T, C, H, relu); return dot64(out, R) }
		loss()
		if !relu {
			for r := 0; r < H*T; r++ {
				var s float64
				for _, a := range att[r*T : (r+1)*T] {
					s += a
				}
				if math.Abs(s-1) > 1e-12 {
					t.Fatalf("softmax row %d sums to %g", r, s)
				}
			}
		}
		dQKV := make([]float64, T*3*C)
		AttentionBackward(dQKV, R, qkv, att, T, C, H, relu)
		name := map[bool]string{false: "attention/softmax", true: "attention/relu"}[relu]
		fdCheck(t, name, qkv, loss, dQKV)
	}
}

// TestLayersFloat32MatchFloat64: the float32 instantiations used for
// training agree with the float64 ones the gradient checks use.
func TestLayersFloat32MatchFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	T, C, H := 7, 16, 4
	qkv := rnd64(rng, T*3*C, 1)
	q32 := make([]float32, len(qkv))
	for k, v := range qkv {
		q32[k] = float32(v)
	}
	o64, a64 := make([]float64, T*C), make([]float64, H*T*T)
	o32, a32 := make([]float32, T*C), make([]float32, H*T*T)
	AttentionForward(o64, a64, qkv, T, C, H, false)
	AttentionForward(o32, a32, q32, T, C, H, false)
	for k := range o64 {
		if math.Abs(float64(o32[k])-o64[k]) > 1e-5*math.Max(1, math.Abs(o64[k])) {
			t.Fatalf("attention out[%d]: float32 %g, float64 %g", k, o32[k], o64[k])
		}
	}
}

// TestEmbedGradients checks the patch embedding with positions and the
// output (unembedding on x − pos) against finite differences, on every
// parameter and on the state.
func TestEmbedGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	pt, _ := NewPatches(4)
	T, A, D := pt.N, pt.A, 6
	img := rnd64(rng, Pixels, 1)
	w, b, pos := rnd64(rng, D*A, 0.5), rnd64(rng, D, 0.5), rnd64(rng, T*D, 0.5)
	R := rnd64(rng, T*D, 1)
	x, tok := make([]float64, T*D), make([]float64, T*A)
	embed := func() float64 { PatchEmbedForward(x, tok, img, w, b, pos, pt.Index, T, A, D); return dot64(x, R) }
	embed()
	dW, dB, dPos := make([]float64, D*A), make([]float64, D), make([]float64, T*D)
	PatchEmbedBackward(dW, dB, dPos, R, tok, T, A, D)
	fdCheck(t, "embed weight", w, embed, dW)
	fdCheck(t, "embed bias", b, embed, dB)
	fdCheck(t, "pos (embedding)", pos, embed, dPos)

	ow, ob := rnd64(rng, A*D, 0.5), rnd64(rng, A, 0.5)
	xs := rnd64(rng, T*D, 1)
	Rimg := rnd64(rng, Pixels, 1)
	out, shifted := make([]float64, Pixels), make([]float64, T*D)
	unembed := func() float64 {
		UnembedForward(out, shifted, xs, ow, ob, pos, pt.Index, T, A, D)
		return dot64(out, Rimg)
	}
	unembed()
	dX, dOW, dOB, dPos2 := make([]float64, T*D), make([]float64, A*D), make([]float64, A), make([]float64, T*D)
	UnembedBackward(dX, dOW, dOB, dPos2, Rimg, shifted, ow, pt.Index, T, A, D)
	fdCheck(t, "out weight", ow, unembed, dOW)
	fdCheck(t, "out bias", ob, unembed, dOB)
	fdCheck(t, "pos (output)", pos, unembed, dPos2)
	fdCheck(t, "state", xs, unembed, dX)
}

// dot64 is Σ x_i·y_i over len(x) ≤ len(y).
func dot64(x, y []float64) float64 {
	var s float64
	for i, v := range x {
		s += v * y[i]
	}
	return s
}
