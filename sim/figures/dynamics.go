package figures

import (
	"fmt"
	"image/color"
	"math"
	"strings"

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
	p.X.Tick.Marker, p.Y.Tick.Marker = PlainTicks{}, PlainTicks{} // 0.9975, not a rounded 0.998 beside 1
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
// when logX and every x > 0 (else on a linear one).
func ScatterPlot(title, xLabel, yLabel string, x, y []float64, logX bool) (*plot.Plot, error) {
	for _, v := range x {
		if !(v > 0) && !math.IsNaN(v) {
			logX = false
		}
	}
	if !logX {
		xLabel = strings.TrimSuffix(xLabel, " (log scale)")
	}
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
		p.X.Tick.Marker = LogTicks125{}
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
	if logX {
		// padRange starts a log axis at 1 (a step axis); growth factors
		// can be below 1, and a narrow range would sit in a corner.
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range xy {
			lo, hi = min(lo, v.X), max(hi, v.X)
		}
		p.X.Min, p.X.Max = lo/1.05, hi*1.05
		if hi < 3*lo {
			// Too narrow for 1-2-5 ticks: plain ones, still on the log axis.
			p.X.Tick.Marker = plot.DefaultTicks{}
		}
	}
	if p.X.Min == p.X.Max {
		p.X.Min, p.X.Max = p.X.Min*0.99, p.X.Max*1.01
	}
	// Counts (steps) get whole-number ticks, and half a step of room
	// so the points at the ends sit off the axes.
	whole := true
	for _, v := range xy {
		whole = whole && v.Y == math.Round(v.Y)
	}
	if whole {
		p.Y.Tick.Marker = IntTicks{}
		p.Y.Min, p.Y.Max = p.Y.Min-0.5, p.Y.Max+0.5
	}
	return p, nil
}

// AlongPlot draws one quantity against the step t (a line through the
// steps computed so far) with a dotted reference line at ref when it is a
// number (the unit circle's 1 for the spectral radius).
func AlongPlot(title, yLabel string, t, y []float64, ref float64, refLabel string, maxT int) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "iteration t"
	p.Y.Label.Text = yLabel
	p.Y.Tick.Marker = PlainTicks{}
	p.Add(plotter.NewGrid())
	var xy plotter.XYs
	for i := range t {
		if !math.IsNaN(y[i]) && !math.IsInf(y[i], 0) {
			xy = append(xy, plotter.XY{X: t[i], Y: y[i]})
		}
	}
	if len(xy) == 0 {
		return nil, fmt.Errorf("%s: nothing computed yet", title)
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil, err
	}
	l.Color = Palette[0]
	l.Width = vg.Points(2)
	p.Add(l)
	if len(xy) == 1 {
		sc, _ := plotter.NewScatter(xy)
		sc.GlyphStyle.Color = Palette[0]
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		p.Add(sc)
	}
	if !math.IsNaN(ref) {
		r, err := plotter.NewLine(plotter.XYs{{X: 0, Y: ref}, {X: float64(maxT), Y: ref}})
		if err == nil {
			r.Color = ReferenceColor
			r.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
			p.Add(r)
			p.Legend.Add(refLabel, r)
		}
	}
	p.X.Min, p.X.Max = 0, float64(max(maxT, 1))
	padRange(p)
	// The legend in the right-hand corner the curve's end leaves free.
	lo, hi := p.Y.Min, p.Y.Max
	if !math.IsNaN(ref) {
		lo, hi = min(lo, ref), max(hi, ref)
	}
	p.Legend.Top = xy[len(xy)-1].Y < (lo+hi)/2
	return p, nil
}

// PushSeries is one pushed run of the push test: its distance from the
// run s = 0 … k steps after the push, and the linear prediction.
type PushSeries struct {
	Name            string
	Real, Predicted []float64
}

// PushPlot draws each pushed run's distance from the run (solid) beside
// its linear prediction (dashed, the same colour), on a log scale.
func PushPlot(title string, runs []PushSeries) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "steps after the push"
	p.X.Tick.Marker = IntTicks{}
	p.Y.Label.Text = "distance from the run ‖X′ − X‖"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = LogTicks125{}
	p.Add(plotter.NewGrid())
	// On the left, in the corner the runs leave empty: they start
	// together, at the top when the pushes shrink (the bare model's
	// contracting flow), at the bottom when they grow.
	p.Legend.Left = true
	lo, hi, start := math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, r := range runs {
		for _, ys := range [][]float64{r.Real, r.Predicted} {
			for s, v := range ys {
				if v > 0 && !math.IsInf(v, 0) {
					lo, hi = min(lo, math.Log(v)), max(hi, math.Log(v))
					if s == 0 {
						start = max(start, math.Log(v))
					}
				}
			}
		}
	}
	p.Legend.Top = start < (lo+hi)/2
	any := false
	for k, r := range runs {
		for j, ys := range [][]float64{r.Real, r.Predicted} {
			var xy plotter.XYs
			for s, v := range ys {
				if v > 0 && !math.IsInf(v, 0) {
					xy = append(xy, plotter.XY{X: float64(s), Y: v})
				}
			}
			if len(xy) < 2 {
				continue
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return nil, err
			}
			l.Color = Palette[k%len(Palette)]
			l.Width = vg.Points(2)
			name := r.Name + ": the pushed run"
			if j == 1 {
				l.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
				name = r.Name + ": linear prediction"
			}
			p.Add(l)
			p.Legend.Add(name, l)
			any = true
		}
	}
	if !any {
		return nil, fmt.Errorf("%s: nothing to draw", title)
	}
	return p, nil
}
