package sim

import (
	"context"
	"fmt"
	"math"
	"testing"

	"attractorlab/assets"
	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// halfModel builds the shipped model name from its weights rounded to half
// precision, as the web build fetches them (models.WebWeights).
func halfModel(t *testing.T, name string) Model {
	t.Helper()
	half := func(file string) []byte {
		b, err := assets.ReadWeights(file)
		if err != nil {
			t.Fatal(err)
		}
		wire, err := models.WebWeights(b, file)
		if err != nil {
			t.Fatal(err)
		}
		st, err := models.UnwrapWeb(wire, file, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	switch name {
	case "bsa-p2", "bsa-p4":
		m, err := models.ParseBSA(half(name+".safetensors"), name)
		if err != nil {
			t.Fatal(err)
		}
		return &BSAModel{M: m, Dyn: DefaultDynamics()}
	}
	var nets [2]*models.Transformer[float32]
	for k, task := range []string{"mask", "noise"} {
		m, err := models.ParseTransformer(half(name+"-"+task+".safetensors"), name)
		if err != nil {
			t.Fatal(err)
		}
		nets[k] = m
	}
	return NewTransformerModel(nets[0], nets[1])
}

// mseCurve is the mean MSE over inputs at every step.
func mseCurve(t *testing.T, m Model, inputs []*Corrupted, clean [][]float32, steps int) []float64 {
	t.Helper()
	var curve []float64
	err := Run(context.Background(), m, inputs, steps, nil, func(tt, b int, pred []float32, _ float64) {
		for len(curve) <= tt {
			curve = append(curve, 0)
		}
		all, _, _ := MSE(pred, clean[b], nil)
		curve[tt] += all / float64(len(inputs))
	})
	if err != nil {
		t.Fatal(err)
	}
	return curve
}

// The web build's half-precision weights (docs/maths.md, "The web build")
// change what the paper's experiments measure by less than the figures
// show: on 10 test digits under both corruptions, the mean MSE curves of
// the float32 and half-precision networks differ by at most 1% of the
// curve's own scale at every step, and t* (the step of least mean MSE) is
// the same.
func TestHalfPrecisionWeights(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs four networks on 10 digits for 100 steps twice")
	}
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	cat := NewCatalogue(data.Train, WeightFiles{})
	for _, name := range []string{"bsa-p2", "bsa-p4", "block", "vit"} {
		full, err := cat.Model(name, DefaultSettings())
		if err != nil {
			t.Fatal(err)
		}
		half := halfModel(t, name)
		pt, _ := models.NewPatches(full.Info().MaskGrid())
		for _, c := range []Corruption{DefaultMask, DefaultNoise} {
			t.Run(fmt.Sprintf("%s/%v", name, c.Kind), func(t *testing.T) {
				var inputs []*Corrupted
				var clean [][]float32
				for k := 0; k < 10; k++ {
					cl := data.Test.Clean(k, mnist.PixelGain)
					inputs = append(inputs, c.Apply(cl, pt, k))
					clean = append(clean, cl)
				}
				a := mseCurve(t, full, inputs, clean, 100)
				b := mseCurve(t, half, inputs, clean, 100)
				scale, worst := 0.0, 0.0
				for k := range a {
					scale = max(scale, a[k])
					worst = max(worst, math.Abs(a[k]-b[k]))
				}
				ta, _ := BestStep(len(a), func(k int) float64 { return a[k] })
				tb, _ := BestStep(len(b), func(k int) float64 { return b[k] })
				t.Logf("largest |ΔMSE| %.2g (%.3g%% of the curve's largest value %.3g); t* %d and %d", worst, 100*worst/scale, scale, ta, tb)
				if worst > 0.01*scale || ta != tb {
					t.Errorf("half precision changes the curve: largest |ΔMSE| %.3g of %.3g; t* %d, float32 %d", worst, scale, tb, ta)
				}
			})
		}
	}
}
