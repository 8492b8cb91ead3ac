package sim

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestOneTStar: every place that names a best step — reproduce's mean
// curve (Curve.Best, Summary), each digit's own (DigitBests, tstar.csv),
// the window's recorded lanes (best, Lane.Answer), sweeps and training
// (BestOf) — finds the same step on the same curve, with ties (the first
// of equal values), NaN steps (left out), flat curves and curves that
// never beat the input; and a step is named t* only where it improves on
// the input (issue 32: three copies of the rule).
func TestOneTStar(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 1))
	curves := [][]float64{
		{0.1, 0.1, 0.1, 0.1},           // flat: best t = 1, no improvement
		{0.04, 0.05, 0.06, 0.05, 0.07}, // never below the input (masking's bare model)
		{0.1, 0.08, 0.06, 0.06, 0.09},  // a tie: the first
		{0.1, math.NaN(), 0.07, 0.05},  // a NaN step left out
		{0.1, 0.1 * (1 - 1e-7), 0.2},   // lower by rounding only: no t*
		{0.1},                          // the input alone
	}
	for range 200 {
		n := 2 + rng.IntN(30)
		c := make([]float64, n)
		for k := range c {
			c[k] = math.Round(rng.Float64()*20) / 100 // coarse: ties are common
		}
		curves = append(curves, c)
	}
	for _, c := range curves {
		T := len(c)
		at := func(t int) float64 { return c[t] }
		bt, bm := BestStep(T, at)
		cv := &Curve{Task: Noise, Rows: make([]Row, T)}
		frames := make([]*Frame, T)
		for k, v := range c {
			cv.Rows[k] = Row{T: k, MSE: v}
			frames[k] = &Frame{T: k}
			frames[k].MSE = v
		}
		ct, cm := cv.Best()
		ft, fm := best(frames)
		b := BestOf(T, at)
		s := cv.Summary()
		d := DigitBests(1, T, func(t, _ int) float64 { return c[t] }, func(int) int { return 0 })[0]
		same := func(v, w float64) bool { return v == w || math.IsNaN(v) && math.IsNaN(w) }
		if ct != bt || b.T != bt || s.T != bt || d.TStar != bt || (T > 1 && ft != bt) ||
			!same(cm, bm) || !same(b.MSE, bm) || !same(d.MSETStar, bm) || (bt > 0 && !same(fm, bm)) {
			t.Fatalf("%v: BestStep %d (%v), Curve.Best %d (%v), best %d (%v), BestOf %d, Summary %d, DigitBests %d",
				c, bt, bm, ct, cm, ft, fm, b.T, s.T, d.TStar)
		}
		want := bt >= 1 && bm < c[0]*(1-1e-6)
		if b.Improves != want || s.Improves != want {
			t.Fatalf("%v: improves %v / %v, want %v", c, b.Improves, s.Improves, want)
		}
		ln := Lane{Frames: frames, Best: ft, BestMSE: fm}
		if named := strings.HasPrefix(ln.Answer(false), "t* = "); named != want {
			t.Fatalf("%v: the window's answer %q, improves %v", c, ln.Answer(false), want)
		}
		if named := strings.HasPrefix(b.String(), "t* = "); named != want || (b.TStarText() == "none") == want {
			t.Fatalf("%v: %q / %q, improves %v", c, b.String(), b.TStarText(), want)
		}
	}
}
