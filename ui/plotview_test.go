package ui

import (
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// TestPlotImageFitsTexture: a plot is drawn at the pixel size Fyne's
// painter gives its image (the size rounded), so it is uploaded as drawn
// and never scaled again in software. Sizes whose fraction is .5 or more
// were drawn a pixel short (truncated).
func TestPlotImageFitsTexture(t *testing.T) {
	test.NewTempApp(t)
	p := NewPlotView()
	p.SetPlot(func() (*plot.Plot, error) {
		pl := plot.New()
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 1}, {X: 10, Y: 0.5}})
		if err != nil {
			return nil, err
		}
		pl.Add(l)
		return pl, nil
	})
	test.TempWidgetRenderer(t, p)
	for _, s := range []fyne.Size{{Width: 300, Height: 200}, {Width: 300.6, Height: 200.5}, {Width: 301.4, Height: 199.7}} {
		p.Resize(s) // lays the plot out: drawn at this size
		b := p.img.Image.Bounds()
		want := [2]int{int(math.Round(float64(s.Width))), int(math.Round(float64(s.Height)))}
		if got := [2]int{b.Dx(), b.Dy()}; got != want {
			t.Errorf("a plot of %v on a canvas of scale 1 drawn %v px, the painter's texture %v", s, got, want)
		}
	}
}
