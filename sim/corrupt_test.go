package sim

import (
	"math"
	"testing"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

func TestCorruption(t *testing.T) {
	_, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	pt, _ := models.NewPatches(2)
	clean := test.Clean(3, mnist.PixelGain)
	for q, v := range clean {
		if v < 0 || v > 1 || (test.Raw(3)[q] >= 128 && v != 1) {
			t.Fatalf("gain: pixel %d = %g", q, v)
		}
	}
	c := Corruption{Kind: Mask, Fraction: 0.3, Seed: 4}
	a, b := c.Apply(clean, pt, 3), c.Apply(clean, pt, 3)
	n := 0
	for i, m := range a.Masked {
		if m != b.Masked[i] {
			t.Fatal("masking is not reproducible")
		}
		if m {
			n++
		}
	}
	if n != 58 { // ⌊0.3·196⌋
		t.Fatalf("%d tokens masked, want 58", n)
	}
	for q, m := range a.Pixel {
		if m && a.Input[q] != 0 || !m && a.Input[q] != clean[q] {
			t.Fatalf("pixel %d: masked=%v input %g clean %g", q, m, a.Input[q], clean[q])
		}
	}
	if other := (Corruption{Kind: Mask, Fraction: 0.3, Seed: 5}).Apply(clean, pt, 3); equalBools(other.Masked, a.Masked) {
		t.Fatal("a different seed gives the same mask")
	}
	nz := Corruption{Kind: Noise, Sigma2: 0.7, Seed: 1}.Apply(clean, pt, 3)
	_, sc := meanStd64(clean)
	_, sn := meanStd64(nz.Input)
	if math.Abs(sc-sn) > 1e-4 {
		t.Fatalf("noisy std %g, clean std %g: variance not restored", sn, sc)
	}
	if nz.Masked != nil {
		t.Fatal("noise has a mask")
	}
	if mse, _, _ := MSE(nz.Input, clean, nil); mse < 0.01 {
		t.Fatalf("noise MSE %g is too small for σ² = 0.7", mse)
	}
}

func equalBools(a, b []bool) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
