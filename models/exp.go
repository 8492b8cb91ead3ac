package models

import "math"

// The constants of Go's exp (math/exp.go): ln 2 in two parts, log₂ e, the
// remez polynomial's coefficients, and the width around 0 where exp(x) is
// 1 + x.
const (
	expLn2Hi = 6.93147180369123816490e-01
	expLn2Lo = 1.90821492927058770002e-10
	expLog2e = 1.44269504088896338700e+00
	expP1    = 1.66666666666666657415e-01
	expP2    = -2.77777777770155933842e-03
	expP3    = 6.61375632143793436117e-05
	expP4    = -1.65339022054652515390e-06
	expP5    = 4.13813679705723846039e-08
	expNear0 = 1.0 / (1 << 28)
)

// expGo is math.Exp as Go's own code computes it where the CPU has no
// instruction for it (the page's WebAssembly among them): the same
// reduction, polynomial and scaling, the same operations in the same
// order, so the same bits (TestExpGoMatchesStdlib), without its two calls
// (exp, then Ldexp) for an argument in [−700, 700] not within 2⁻²⁸ of
// zero, where the result is a normal number and scaling it by 2ᵏ is adding
// k to its exponent. Any other argument goes to math.Exp.
func expGo(x float64) float64 {
	if !(x > -700 && x < 700) || (x > -expNear0 && x < expNear0) {
		return math.Exp(x) // NaN, far out, or 1 + x
	}
	var k int
	if x < 0 {
		k = int(expLog2e*x - 0.5)
	} else {
		k = int(expLog2e*x + 0.5)
	}
	hi := x - float64(k)*expLn2Hi
	lo := float64(k) * expLn2Lo
	r := hi - lo
	t := r * r
	c := r - t*(expP1+t*(expP2+t*(expP3+t*(expP4+t*expP5))))
	y := 1 - ((lo - (r*c)/(2-c)) - hi)
	// y is within [0.7, 1.5] and |k| ≤ 1010: y·2ᵏ is normal.
	return math.Float64frombits(math.Float64bits(y) + uint64(k)<<52)
}

// expLanesGo sets a[b] = exp(λ·x[b] − λ·mx[b]) for a chunk's sixteen
// images, each as expGo computes it (the same bits), in one call: the
// page's WebAssembly spent more on sixteen calls of expGo than on their
// arithmetic.
func expLanesGo(a, x, mx *[Lanes]float32, lambda float32) {
	for b := range a {
		x := float64(lambda*x[b] - lambda*mx[b])
		if !(x > -700 && x < 700) || (x > -expNear0 && x < expNear0) {
			a[b] = float32(math.Exp(x))
			continue
		}
		var k int
		if x < 0 {
			k = int(expLog2e*x - 0.5)
		} else {
			k = int(expLog2e*x + 0.5)
		}
		hi := x - float64(k)*expLn2Hi
		lo := float64(k) * expLn2Lo
		r := hi - lo
		t := r * r
		c := r - t*(expP1+t*(expP2+t*(expP3+t*(expP4+t*expP5))))
		y := 1 - ((lo - (r*c)/(2-c)) - hi)
		a[b] = float32(math.Float64frombits(math.Float64bits(y) + uint64(k)<<52))
	}
}
