package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// guarded returns a slice of n random values followed by guard values that
// a kernel must not touch.
const guard = 16

func guarded(rng *rand.Rand, n int) []float32 {
	b := make([]float32, n+guard)
	for k := range b {
		b[k] = 12345
	}
	for k := 0; k < n; k++ {
		b[k] = float32(rng.NormFloat64())
	}
	return b[: n : n+guard]
}

func checkGuard(t *testing.T, name string, b []float32) {
	t.Helper()
	full := b[:cap(b)]
	for k := len(b); k < len(full); k++ {
		if full[k] != 12345 {
			t.Fatalf("%s: write past the end at %d", name, k)
		}
	}
}

func closeTo(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

type impl struct {
	name     string
	scores   func(jt, xh, xi, v, s []float32, d, np int)
	wsum     func(a, v, out []float32, d, np int)
	grad     func(g, xh, a, c []float32, d, np int)
	expShift func(dst, s []float32, lambda, shift float32) float32
	maxf     func(s []float32) float32
}

func impls(t *testing.T) []impl {
	out := []impl{{"go", scoresGo, wsumGo, gradGo, expShiftGo, maxfGo}}
	if hasAVX512() {
		out = append(out, impl{"avx512", scoresAVX512, wsumAVX512, gradAVX512, expShiftAVX512, maxfAVX512})
	} else {
		t.Run("avx512", needFast)
	}
	return out
}

// needFast skips t, saying why, where this binary has no AVX-512 kernels
// (a build without GOEXPERIMENT=simd, or a CPU without AVX-512): there the
// fast names are the portable kernels, and comparing them with the
// portable ones would compare Go with itself.
func needFast(t *testing.T) {
	t.Helper()
	if !hasAVX512() {
		_, why := Kernels()
		t.Skipf("no AVX-512 kernels to test: %s", why)
	}
}

// TestMain says once, on stderr, when the fast kernels' tests skip.
func TestMain(m *testing.M) {
	if !hasAVX512() {
		name, why := Kernels()
		what := "the portable kernels only"
		if name == "avx512-asm" {
			what, why = "the portable kernels and the assembly ones", "this binary was built without GOEXPERIMENT=simd"
		}
		fmt.Fprintf(os.Stderr, "models: testing %s; the AVX-512 Go-SIMD kernels' tests skip (%s)\n", what, why)
	}
	os.Exit(m.Run())
}

func TestKernelsMatchNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range impls(t) {
		for _, sz := range []struct{ d, np int }{{1, 16}, {3, 16}, {8, 208}, {5, 48}, {32, 64}} {
			d, np := sz.d, sz.np
			jt := guarded(rng, d*d*np)
			xh := guarded(rng, d*np)
			xi := guarded(rng, d)
			v1, s1 := guarded(rng, d*np), guarded(rng, np)
			v2, s2 := make([]float32, d*np), make([]float32, np)
			k.scores(jt, xh, xi, v1, s1, d, np)
			scoresNaive(jt, xh, xi, v2, s2, d, np)
			checkGuard(t, k.name+" scores v", v1)
			checkGuard(t, k.name+" scores s", s1)
			for j := range s2 {
				if !closeTo(float64(s1[j]), float64(s2[j]), 1e-4) {
					t.Fatalf("%s scores d=%d np=%d: s[%d]=%g want %g", k.name, d, np, j, s1[j], s2[j])
				}
			}
			for j := range v2 {
				if !closeTo(float64(v1[j]), float64(v2[j]), 1e-4) {
					t.Fatalf("%s scores d=%d: v[%d]=%g want %g", k.name, d, j, v1[j], v2[j])
				}
			}
			a := guarded(rng, np)
			o1, o2 := guarded(rng, d), make([]float32, d)
			k.wsum(a, v2, o1, d, np)
			wsumNaive(a, v2, o2, d, np)
			checkGuard(t, k.name+" wsum", o1)
			for r := range o2 {
				if !closeTo(float64(o1[r]), float64(o2[r]), 1e-4) {
					t.Fatalf("%s wsum d=%d: out[%d]=%g want %g", k.name, d, r, o1[r], o2[r])
				}
			}
			g1 := guarded(rng, d*d*np)
			g2 := append([]float32(nil), g1...)
			c := guarded(rng, d)
			k.grad(g1, xh, a, c, d, np)
			gradNaive(g2, xh, a, c, d, np)
			checkGuard(t, k.name+" grad", g1)
			for j := range g2 {
				if !closeTo(float64(g1[j]), float64(g2[j]), 1e-5) {
					t.Fatalf("%s grad d=%d: g[%d]=%g want %g", k.name, d, j, g1[j], g2[j])
				}
			}
		}
	}
}

func TestExpShiftMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, k := range impls(t) {
		for _, n := range []int{1, 15, 16, 17, 208} {
			s := guarded(rng, n)
			for j := range s {
				s[j] *= 10
				if rng.IntN(7) == 0 {
					s[j] = invalidScore
				}
			}
			s[0] = 25 // a large valid score
			if n > 3 {
				s[n-2] = 30 // the maximum, in the tail past the last full vector
			}
			want := float32(invalidScore)
			for _, v := range s {
				want = max(want, v)
			}
			if got := k.maxf(s); got != want {
				t.Fatalf("%s maxf n=%d: %g, want %g", k.name, n, got, want)
			}
			for _, lam := range []float32{0.3, 1, 5} {
				shift := lam * 25
				d1, d2 := guarded(rng, n), make([]float32, n)
				s1 := k.expShift(d1, s, lam, shift)
				s2 := expShiftNaive(d2, s, lam, shift)
				checkGuard(t, k.name+" expShift", d1)
				if !closeTo(float64(s1), float64(s2), 1e-5) {
					t.Fatalf("%s expShift n=%d λ=%g: sum %g want %g", k.name, n, lam, s1, s2)
				}
				for j := range d2 {
					if s[j] <= invalidBelow && d1[j] != 0 {
						t.Fatalf("%s expShift: invalid key %d got %g", k.name, j, d1[j])
					}
					if math.Abs(float64(d1[j]-d2[j])) > 1e-6*float64(d2[j])+1e-37 {
						t.Fatalf("%s expShift n=%d: dst[%d]=%g want %g", k.name, n, j, d1[j], d2[j])
					}
				}
			}
		}
	}
}

func BenchmarkKernelScores(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range []struct{ d, np int }{{8, 208}, {32, 64}} {
		d, np := sz.d, sz.np
		jt, xh, xi := guarded(rng, d*d*np), guarded(rng, d*np), guarded(rng, d)
		v, s := make([]float32, d*np), make([]float32, np)
		for _, k := range []struct {
			name string
			f    func(jt, xh, xi, v, s []float32, d, np int)
		}{{"naive", scoresNaive}, {"go", scoresGo}, {"dispatch-" + kernelName, scores}} {
			b.Run(k.name+"/d="+itoa(d), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					k.f(jt, xh, xi, v, s, d, np)
				}
			})
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestPortableSameOrder: the portable scores and weighted sum add their
// products in the naive twins' order, and the gradient in its plain
// loops', so their numbers are those to the bit (the page's numbers did not change when they were unrolled),
// for lengths that are and are not a multiple of their eight.
func TestPortableSameOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = rng.Float32()*2 - 1
		}
		return x
	}
	same := func(what string, d, np int, got, want []float32) {
		t.Helper()
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s d=%d np=%d: [%d] = %g, the naive twin's %g", what, d, np, i, got[i], want[i])
			}
		}
	}
	for _, sz := range []struct{ d, np int }{{1, 1}, {3, 7}, {2, 16}, {5, 50}, {8, 208}, {784, 48}, {16, 784}} {
		d, np := sz.d, sz.np
		a, v := random(np), random(d*np)
		got, want := make([]float32, d), make([]float32, d)
		wsumGo(a, v, got, d, np)
		wsumNaive(a, v, want, d, np)
		same("wsum", d, np, got, want)
		if d > 64 {
			continue
		}
		jt, xh, xi := random(d*d*np), random(d*np), random(d)
		v1, s1 := random(d*np), random(np)
		v2, s2 := make([]float32, d*np), make([]float32, np)
		scoresGo(jt, xh, xi, v1, s1, d, np)
		scoresNaive(jt, xh, xi, v2, s2, d, np)
		same("scores v", d, np, v1, v2)
		same("scores s", d, np, s1, s2)
		// The gradient's products associate as gradGo always did, not as
		// the naive twin's: its loops before they were unrolled are the
		// reference.
		c, g1 := random(d), random(d*d*np)
		g2 := append([]float32(nil), g1...)
		gradGo(g1, xh, a, c, d, np)
		gradLoop(g2, xh, a, c, d, np)
		same("grad", d, np, g1, g2)
	}
}

// gradLoop is gradGo with plain loops, as it was before it was unrolled.
func gradLoop(g, xh, a, c []float32, d, np int) {
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

// TestMaxMinF: maxF and minF give the builtins' bits for every pair of
// special values (±0, ±Inf, NaN, the extremes) and for random bit
// patterns: here and, under Node, in WebAssembly, where the builtins are
// the runtime's.
func TestMaxMinF(t *testing.T) {
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, invalidScore}
	same := func(a, b float32) bool {
		return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
	}
	check := func(a, b float32) {
		if got, want := maxF(a, b), max(a, b); !same(got, want) {
			t.Fatalf("maxF(%v, %v) = %v (%#x), max %v (%#x)", a, b, got, math.Float32bits(got), want, math.Float32bits(want))
		}
		if got, want := minF(a, b), min(a, b); !same(got, want) {
			t.Fatalf("minF(%v, %v) = %v (%#x), min %v (%#x)", a, b, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for _, a := range special {
		for _, b := range special {
			check(a, b)
		}
	}
	rng := rand.New(rand.NewPCG(15, 16))
	for range 200_000 {
		a, b := math.Float32frombits(rng.Uint32()), math.Float32frombits(rng.Uint32())
		check(a, b)
		check(a, a)
		check(a, -a)
	}
}
