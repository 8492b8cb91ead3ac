package figures

import (
	"bytes"
	"image/png"
	"math"
	"testing"

	"gonum.org/v1/plot"
)

// TestDynamicsPlots: the spectrum's view holds every eigenvalue and the
// unit circle's crossing at 1 with a round arc (as wide as it is tall);
// the other plots draw, and each refuses nothing to draw by name.
func TestDynamicsPlots(t *testing.T) {
	p, err := SpectrumPlot("s", []EigGroup{{Label: "t = 1", Values: []complex128{1.09, 1.02, complex(0.99, 0.01), complex(0.99, -0.01)}}, {Label: "t*", Values: []complex128{0.97}}})
	if err != nil {
		t.Fatal(err)
	}
	if !(p.X.Min < 0.97 && p.X.Max > 1.09 && p.Y.Min < -0.01 && p.Y.Max > 0.01) || math.Abs((p.X.Max-p.X.Min)-(p.Y.Max-p.Y.Min)) > 1e-12 {
		t.Fatalf("view x %v … %v, y %v … %v", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
	if _, err := SpectrumPlot("s", nil); err == nil {
		t.Fatal("an empty spectrum drew")
	}
	a, err := AlongPlot("radius", "|λ|", []float64{1, 2, 3}, []float64{1.1, 1.0, 0.99}, 1, "unit circle", 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AlongPlot("radius", "|λ|", nil, nil, 1, "", 100); err == nil {
		t.Fatal("nothing computed drew")
	}
	s, err := ScatterPlot("g", "growth", "escape", []float64{0.9, 1.1, 6.8}, []float64{30, 20, 12}, true)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := PushPlot("push", []PushSeries{{Name: "escape", Real: []float64{1e-3, 9e-4, 8e-4}, Predicted: []float64{1e-3, 9e-4, 8.1e-4}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PushPlot("push", []PushSeries{{Name: "x", Real: []float64{0}, Predicted: []float64{0}}}); err == nil {
		t.Fatal("a push with nothing to draw drew")
	}
	for _, pl := range []*plot.Plot{p, a, s, pp} {
		var b bytes.Buffer
		if err := WritePNG(&b, pl, 400, 300); err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(&b); err != nil {
			t.Fatal(err)
		}
	}
}
