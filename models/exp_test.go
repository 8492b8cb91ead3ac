package models

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// expStdlib is Go's own math.Exp as written in its math package (exp and
// expmulti, scaling with math.Ldexp): what math.Exp runs in WebAssembly.
// It is expGo's naive twin.
func expStdlib(x float64) float64 {
	const (
		Ln2Hi     = 6.93147180369123816490e-01
		Ln2Lo     = 1.90821492927058770002e-10
		Log2e     = 1.44269504088896338700e+00
		Overflow  = 7.09782712893383973096e+02
		Underflow = -7.45133219101941108420e+02
		NearZero  = 1.0 / (1 << 28)
		P1        = 1.66666666666666657415e-01
		P2        = -2.77777777770155933842e-03
		P3        = 6.61375632143793436117e-05
		P4        = -1.65339022054652515390e-06
		P5        = 4.13813679705723846039e-08
	)
	switch {
	case math.IsNaN(x):
		return x
	case x > Overflow:
		return math.Inf(1)
	case x < Underflow:
		return 0
	case -NearZero < x && x < NearZero:
		return 1 + x
	}
	var k int
	switch {
	case x < 0:
		k = int(Log2e*x - 0.5)
	case x > 0:
		k = int(Log2e*x + 0.5)
	}
	hi := x - float64(k)*Ln2Hi
	lo := float64(k) * Ln2Lo
	r := hi - lo
	t := r * r
	c := r - t*(P1+t*(P2+t*(P3+t*(P4+t*P5))))
	y := 1 - ((lo - (r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}

// TestExpGoMatchesStdlib checks expGo's bits against Go's own exp on
// arguments softmaxes give (small negatives), across the whole range, at
// its edges and at random bit patterns; in WebAssembly against math.Exp
// itself too, elsewhere (where math.Exp is the CPU's code) within 4 ulps.
func TestExpGoMatchesStdlib(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	edges := []float64{0, math.Copysign(0, -1), 1, -1, 700, -700, math.Nextafter(700, 0), math.Nextafter(-700, 0),
		699.99, -699.99, 709.78, -708.4, -745.1, -746, 710, 1.0 / (1 << 28), -1.0 / (1 << 28),
		math.Nextafter(1.0/(1<<28), 1), math.Nextafter(-1.0/(1<<28), -1), 1e-300, -1e-300,
		math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		0.5 * math.Ln2, -0.5 * math.Ln2, 88.7, -87.3, -103.97}
	n := 2_000_000
	if testing.Short() {
		n = 300_000
	}
	wasm := runtime.GOARCH == "wasm"
	for i := range n + len(edges) {
		var x float64
		switch {
		case i < len(edges):
			x = edges[i]
		case i%4 == 0:
			x = -rng.Float64() * 40 // a softmax's λ(s − max)
		case i%4 == 1:
			x = (rng.Float64()*2 - 1) * 760
		case i%4 == 2:
			x = (rng.Float64()*2 - 1) * 1e-7
		default:
			x = math.Float64frombits(rng.Uint64())
		}
		got, want := expGo(x), expStdlib(x)
		if !wasm && (!(x > -700 && x < 700) || (x > -1.0/(1<<28) && x < 1.0/(1<<28))) {
			// expGo hands these to math.Exp, which here is the CPU's
			// code, not Go's.
			want = math.Exp(x)
		}
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("expGo(%v) = %v (%#x), Go's exp %v (%#x)", x, got, math.Float64bits(got), want, math.Float64bits(want))
		}
		lib := math.Exp(x)
		if wasm {
			if math.Float64bits(got) != math.Float64bits(lib) && !(math.IsNaN(got) && math.IsNaN(lib)) {
				t.Fatalf("expGo(%v) = %v, math.Exp %v", x, got, lib)
			}
		} else if d := math.Abs(got - lib); d > 4*ulp(lib) {
			t.Fatalf("expGo(%v) = %v, math.Exp %v: more than 4 ulps apart", x, got, lib)
		}
	}
}

func ulp(x float64) float64 {
	x = math.Abs(x)
	return math.Nextafter(x, math.Inf(1)) - x
}

// BenchmarkExp is a query row's exps of a chunk (196 keys × 16 images),
// through math.Exp and through expGo.
func BenchmarkExp(b *testing.B) {
	s := make([]float32, 196*Lanes)
	for i := range s {
		s[i] = -float32(i%97) * 0.3
	}
	for _, f := range []struct {
		name string
		exp  func(float64) float64
	}{{"math", math.Exp}, {"expGo", expGo}} {
		b.Run(f.name, func(b *testing.B) {
			var sum float32
			for b.Loop() {
				for _, v := range s {
					sum += float32(f.exp(float64(v)))
				}
			}
			sinkF32 = sum
		})
	}
}

var sinkF32 float32

// TestExpLanes: the sixteen-image exps give expGo's bits (expLanesGo) and
// the kernels' expK's (expLanes, what this build runs) lane by lane, on
// softmax arguments, invalid keys' scores (−1e30), a row whose every key
// is invalid, large λ, and random float32 bit patterns.
func TestExpLanes(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for i := range 20_000 {
		var x, mx [Lanes]float32
		lambda := float32(0.1 + rng.Float64()*20)
		for b := range x {
			switch {
			case i%5 == 0:
				x[b] = math.Float32frombits(rng.Uint32())
				mx[b] = math.Float32frombits(rng.Uint32())
			case b == 3:
				x[b] = invalidScore
				mx[b] = float32(rng.NormFloat64())
			case b == 5:
				x[b], mx[b] = invalidScore, invalidScore
			case i%7 == 0:
				lambda = 1e9
				fallthrough
			default:
				mx[b] = float32(rng.NormFloat64() * 3)
				x[b] = mx[b] - float32(rng.Float64()*4)
			}
		}
		var got, lanes [Lanes]float32
		expLanesGo(&got, &x, &mx, lambda)
		expLanes(&lanes, &x, &mx, lambda)
		for b := range x {
			arg := float64(lambda*x[b] - lambda*mx[b])
			want, k := float32(expGo(arg)), float32(expK(arg))
			same := func(a, b float32) bool {
				return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
			}
			if !same(got[b], want) {
				t.Fatalf("expLanesGo lane %d: exp(%v) = %v, expGo's %v", b, arg, got[b], want)
			}
			if !same(lanes[b], k) {
				t.Fatalf("expLanes lane %d: exp(%v) = %v, expK's %v", b, arg, lanes[b], k)
			}
		}
	}
}
