package sim

import (
	"math"
	"testing"

	"attractorlab/models"
)

func TestMetrics(t *testing.T) {
	clean := []float32{0, 1, 0.5, 0.5}
	pred := []float32{-1, 2, 0.5, 0} // clamped to 0, 1, .5, 0
	all, m, u := MSE(pred, clean, []bool{false, false, false, true})
	if all != 0.0625 || m != 0.25 || u != 0 {
		t.Fatalf("MSE = %g %g %g", all, m, u)
	}
	if p := Pearson([]float32{1, 2, 3}, []float32{2, 4, 6}); math.Abs(p-1) > 1e-12 {
		t.Fatalf("Pearson %g", p)
	}
	if p := Pearson([]float32{1, 1, 1}, []float32{2, 4, 6}); p != 0 {
		t.Fatalf("Pearson of a constant %g", p)
	}
	v := PatchVariance(nil, []float32{0, 1, 0.5, 0.5}, []int{0, 1, 2, 3}, 2, []bool{true, true})
	if v[0] != 0.25 || v[1] != 0 {
		t.Fatalf("patch variance %v", v)
	}
}

func TestPatchVarianceRaw(t *testing.T) {
	pt, _ := models.NewPatches(4)
	pred := make([]float32, models.Pixels)
	masked := make([]bool, pt.N)
	masked[3], masked[10] = true, true
	for k := 0; k < pt.A; k++ {
		pred[pt.Index[3*pt.A+k]] = float32(k%2) * 0.5  // in range: 0 or 0.5
		pred[pt.Index[10*pt.A+k]] = float32(k%2)*3 - 1 // −1 or 2: all outside
	}
	clamped := PatchVariance(nil, pred, pt.Index, pt.A, masked)
	raw, out := PatchVarianceRaw(nil, pred, pt.Index, pt.A, masked)
	if out != pt.A || len(raw) != 2 {
		t.Fatalf("%d pixels outside, %d variances", out, len(raw))
	}
	if math.Abs(raw[0]-0.0625) > 1e-9 || raw[0] != clamped[0] {
		t.Fatalf("in-range patch: raw %g clamped %g, want 0.0625", raw[0], clamped[0])
	}
	if math.Abs(raw[1]-2.25) > 1e-9 || math.Abs(clamped[1]-0.25) > 1e-9 {
		t.Fatalf("outside patch: raw %g (want 2.25), clamped %g (want 0.25)", raw[1], clamped[1])
	}
}
