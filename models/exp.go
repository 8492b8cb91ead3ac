package models

import "math"

// expGo is math.Exp as Go's own code computes it where the CPU has no
// instruction for it (the page's WebAssembly among them): the same
// reduction, polynomial and scaling, the same operations in the same
// order, so the same bits (TestExpGoMatchesStdlib), without its two calls
// (exp, then Ldexp) for an argument in [−700, 700] not within 2⁻²⁸ of
// zero, where the result is a normal number and scaling it by 2ᵏ is adding
// k to its exponent. Any other argument goes to math.Exp.
func expGo(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		log2e = 1.44269504088896338700e+00
		p1    = 1.66666666666666657415e-01
		p2    = -2.77777777770155933842e-03
		p3    = 6.61375632143793436117e-05
		p4    = -1.65339022054652515390e-06
		p5    = 4.13813679705723846039e-08
		near0 = 1.0 / (1 << 28)
	)
	if !(x > -700 && x < 700) || (x > -near0 && x < near0) {
		return math.Exp(x) // NaN, far out, or 1 + x
	}
	var k int
	if x < 0 {
		k = int(log2e*x - 0.5)
	} else {
		k = int(log2e*x + 0.5)
	}
	hi := x - float64(k)*ln2Hi
	lo := float64(k) * ln2Lo
	r := hi - lo
	t := r * r
	c := r - t*(p1+t*(p2+t*(p3+t*(p4+t*p5))))
	y := 1 - ((lo - (r*c)/(2-c)) - hi)
	// y is within [0.7, 1.5] and |k| ≤ 1010: y·2ᵏ is normal.
	return math.Float64frombits(math.Float64bits(y) + uint64(k)<<52)
}

// expLanesGo sets a[b] = exp(λ·x[b] − λ·mx[b]) for a chunk's sixteen
// images, each as expGo computes it (the same bits), in one call: the
// page's WebAssembly spent more on sixteen calls of expGo than on their
// arithmetic.
func expLanesGo(a, x, mx *[Lanes]float32, lambda float32) {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		log2e = 1.44269504088896338700e+00
		p1    = 1.66666666666666657415e-01
		p2    = -2.77777777770155933842e-03
		p3    = 6.61375632143793436117e-05
		p4    = -1.65339022054652515390e-06
		p5    = 4.13813679705723846039e-08
		near0 = 1.0 / (1 << 28)
	)
	for b := range a {
		x := float64(lambda*x[b] - lambda*mx[b])
		if !(x > -700 && x < 700) || (x > -near0 && x < near0) {
			a[b] = float32(math.Exp(x))
			continue
		}
		var k int
		if x < 0 {
			k = int(log2e*x - 0.5)
		} else {
			k = int(log2e*x + 0.5)
		}
		hi := x - float64(k)*ln2Hi
		lo := float64(k) * ln2Lo
		r := hi - lo
		t := r * r
		c := r - t*(p1+t*(p2+t*(p3+t*(p4+t*p5))))
		y := 1 - ((lo - (r*c)/(2-c)) - hi)
		a[b] = float32(math.Float64frombits(math.Float64bits(y) + uint64(k)<<52))
	}
}
