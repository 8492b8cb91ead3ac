package figures

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// EigGroup is a set of eigenvalues drawn in one colour: a step's leading
// eigenvalues over the digits.
type EigGroup struct {
	Label  string
	Values []complex128
}

// SpectrumPlot draws eigenvalues in the complex plane with the unit circle
// (|λ| = 1: inside, a direction shrinks step by step; outside, it grows),
// zoomed to the values: the leading eigenvalues of a step sit near 1, so
// the circle shows as an arc through (1, 0).
func SpectrumPlot(title string, groups []EigGroup) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "Re λ"
	p.Y.Label.Text = "Im λ"
	p.Add(plotter.NewGrid())
	lo, hi, im := math.Inf(1), math.Inf(-1), 0.0
	for _, g := range groups {
		for _, v := range g.Values {
			if math.IsNaN(real(v)) || math.IsNaN(imag(v)) {
				continue
			}
			lo, hi = min(lo, real(v)), max(hi, real(v))
			im = max(im, math.Abs(imag(v)))
		}
	}
	if math.IsInf(lo, 0) {
		return nil, fmt.Errorf("spectrum: no eigenvalue to draw")
	}
	// The view: the values and the circle's crossing at 1, with a margin;
	// the imaginary axis as wide as the real one so the arc is round.
	lo, hi = min(lo, 1), max(hi, 1)
	w := max(hi-lo, 2*im, 0.02) * 1.15
	mid := (lo + hi) / 2
	p.X.Min, p.X.Max = mid-w/2, mid+w/2
	p.Y.Min, p.Y.Max = -w/2, w/2
	var arc plotter.XYs
	for k := 0; k <= 2000; k++ {
		th := 2 * math.Pi * float64(k) / 2000
		x, y := math.Cos(th), math.Sin(th)
		if x >= p.X.Min && x <= p.X.Max && y >= p.Y.Min && y <= p.Y.Max {
			arc = append(arc, plotter.XY{X: x, Y: y})
		}
	}
	if len(arc) > 1 {
		l, err := plotter.NewLine(arc)
		if err != nil {
			return nil, err
		}
		l.Color = ReferenceColor
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add("unit circle |λ| = 1", l)
	}
	for k, g := range groups {
		var xy plotter.XYs
		for _, v := range g.Values {
			if !math.IsNaN(real(v)) && !math.IsNaN(imag(v)) {
				xy = append(xy, plotter.XY{X: real(v), Y: imag(v)})
			}
		}
		if len(xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Shape = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PlusGlyph{}, draw.CrossGlyph{}, draw.RingGlyph{}}[k%6]
		sc.GlyphStyle.Radius = vg.Points(3)
		sc.GlyphStyle.Color = Palette[k%len(Palette)]
		p.Add(sc)
		p.Legend.Add(g.Label, sc)
	}
	p.Legend.Top = true
	return p, nil
}

// ScatterPlot draws points (x, y) with a label per axis, x on a log scale
// when logX (every x > 0).
func ScatterPlot(title, xLabel, yLabel string, x, y []float64, logX bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Add(plotter.NewGrid())
	var xy plotter.XYs
	for i := range x {
		if math.IsNaN(x[i]) || math.IsNaN(y[i]) || logX && !(x[i] > 0) {
			continue
		}
		xy = append(xy, plotter.XY{X: x[i], Y: y[i]})
	}
	if len(xy) == 0 {
		return nil, fmt.Errorf("%s: no point to draw", title)
	}
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: 3}
	}
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Radius = vg.Points(2.5)
	sc.GlyphStyle.Color = color.RGBA{0, 114, 178, 200}
	p.Add(sc)
	padRange(p)
	if p.X.Min == p.X.Max {
		p.X.Min, p.X.Max = p.X.Min*0.99, p.X.Max*1.01
	}
	return p, nil
}
