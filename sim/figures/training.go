package figures

import (
	"image"
	"image/color"
	imgdraw "image/draw"
	"image/png"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LinePlot draws each series' Values against xs (Values[k] at xs[k]; NaN
// and ±Inf skipped), in its own colour or colour k of Palette, dashed
// where asked, with a dot on each point (a series without a name has no
// legend entry); x is whole numbers unless logX; logX puts x on a log scale (xs
// must then be positive). The training window's curves and the capacity
// experiment's figure use it.
func LinePlot(title, xLabel, yLabel string, xs []float64, logX bool, series []Series) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	if logX {
		// Ticks at the data's own x values, written out (100, 1000,
		// 10000), not 1e+03.
		p.X.Scale = plot.LogScale{}
		var ticks []plot.Tick
		for _, x := range xs {
			if x > 0 {
				ticks = append(ticks, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', -1, 64)})
			}
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	} else {
		p.X.Tick.Marker = IntTicks{}
	}
	p.Y.Tick.Marker = DistinctTicks{}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	for k, s := range series {
		var xy plotter.XYs
		for i, v := range s.Values {
			if i < len(xs) && !math.IsNaN(v) && !math.IsInf(v, 0) && !(logX && xs[i] <= 0) {
				xy = append(xy, plotter.XY{X: xs[i], Y: v})
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, err := seriesLine(xy, k, s, 2, 6, 1)
		if err != nil {
			return nil, err
		}
		p.Add(l)
		if s.Name != "" {
			p.Legend.Add(s.Name, l)
		}
		if len(xy) <= 60 {
			sc, err := plotter.NewScatter(xy)
			if err == nil {
				sc.GlyphStyle.Shape = draw.CircleGlyph{}
				sc.GlyphStyle.Radius = vg.Points(2.5)
				sc.GlyphStyle.Color = l.Color
				p.Add(sc)
			}
		}
	}
	padRange(p)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		if !logX || x > 0 {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	switch {
	case lo > hi: // no x at all
	case logX:
		p.X.Min, p.X.Max = lo/1.5, hi*1.5
	case lo == hi:
		p.X.Min, p.X.Max = lo-1, hi+1
	}
	return p, nil
}

// Steps is 1, 2, …, n as plot positions (epochs, distances).
func Steps(n int) []float64 {
	xs := make([]float64, n)
	for k := range xs {
		xs[k] = float64(k + 1)
	}
	return xs
}

// NormsImage draws an n×n matrix of non-negative values (the couplings'
// ‖J_ij‖) one pixel per entry in Viridis, 0 to the largest value; NaN is
// grey.
func NormsImage(v []float64, n int) *image.RGBA {
	_, hi := finiteSpan(v)
	return RangeImage(v, n, 0, hi)
}

// RangeImage is NormsImage from lo (dark) to hi (yellow).
func RangeImage(v []float64, n int, lo, hi float64) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, n, n))
	for k, x := range v[:n*n] {
		c := 0.0
		if hi > lo {
			c = (x - lo) / (hi - lo)
		}
		if math.IsNaN(x) {
			c = x
		}
		img.SetRGBA(k%n, k/n, Viridis(c))
	}
	return img
}

// finiteSpan is the least and the largest finite value of v (0, 0 when
// there is none).
func finiteSpan(v []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	if lo > hi {
		return 0, 0
	}
	return lo, hi
}

// SpanImage is RangeImage over v's own finite span, which it returns:
// small differences (means by displacement) made visible.
func SpanImage(v []float64, n int) (*image.RGBA, float64, float64) {
	lo, hi := finiteSpan(v)
	return RangeImage(v, n, lo, hi), lo, hi
}

// DistinctTicks are gonum's default ticks labelled with the fewest
// significant digits (at least 2) that tell every label apart: a loss
// from −1.1027 to −1.0589 reads −1.10, −1.08, −1.06, not −1.1 three times.
type DistinctTicks struct{}

// Ticks implements plot.Ticker.
func (DistinctTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for digits := 2; digits <= 8; digits++ {
		seen := map[string]bool{}
		ok := true
		for k := range ts {
			if ts[k].Label == "" {
				continue
			}
			l := strconv.FormatFloat(ts[k].Value, 'g', digits, 64)
			ok = ok && !seen[l]
			seen[l] = true
		}
		if ok || digits == 8 {
			for k := range ts {
				if ts[k].Label != "" {
					ts[k].Label = strconv.FormatFloat(ts[k].Value, 'g', digits, 64)
				}
			}
			return ts
		}
	}
	return ts
}

// WritePNGs renders plots side by side, each width/len(plots) wide with
// its legend in a column of its own on its right (RenderLegendRight), as
// one PNG.
func WritePNGs(w io.Writer, plots []*plot.Plot, width, height int) error {
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	imgdraw.Draw(img, img.Bounds(), image.White, image.Point{}, imgdraw.Src)
	pw := width / max(1, len(plots))
	for k, p := range plots {
		sub := RenderLegendRight(p, pw, height, 96)
		imgdraw.Draw(img, image.Rect(k*pw, 0, (k+1)*pw, height), sub, sub.Bounds().Min, imgdraw.Over)
	}
	return png.Encode(w, img)
}

// Diverging maps v in [−1, 1] (clamped) from blue (−1) through white (0)
// to red (+1); NaN is grey. The token energies' changes use it: blue
// lowered, red raised.
func Diverging(v float64) color.RGBA {
	if math.IsNaN(v) {
		return color.RGBA{150, 150, 150, 255}
	}
	v = min(max(v, -1), 1)
	lerp := func(a, b uint8, f float64) uint8 { return uint8(math.Round(float64(a) + (float64(b)-float64(a))*f)) }
	if v < 0 {
		f := -v
		return color.RGBA{lerp(255, 33, f), lerp(255, 102, f), lerp(255, 172, f), 255}
	}
	return color.RGBA{lerp(255, 178, v), lerp(255, 24, v), lerp(255, 43, v), 255}
}

// DivergingImage draws n×n values on Diverging, ±bound at the ends.
func DivergingImage(v []float64, n int, bound float64) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, n, n))
	for k, x := range v[:n*n] {
		c := 0.0
		if bound > 0 {
			c = x / bound
		}
		if math.IsNaN(x) {
			c = x
		}
		img.SetRGBA(k%n, k/n, Diverging(c))
	}
	return img
}
