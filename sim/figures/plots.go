package figures

import (
	"attractorlab/sim"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Palette is a colour-blind-safe qualitative palette (Okabe–Ito).
var Palette = []color.RGBA{
	{0, 114, 178, 255},   // blue
	{230, 159, 0, 255},   // orange
	{0, 158, 115, 255},   // green
	{204, 121, 167, 255}, // purple
	{86, 180, 233, 255},  // sky
	{213, 94, 0, 255},    // vermillion
	{0, 0, 0, 255},       // black
}

// ModelColor is model's colour in every plot, legend, table and frame:
// its registry row's (sim.Registry: the Palette's first six, in order), so
// a model keeps its colour whichever others it is compared with; a model
// trained in the window has its TrainedColors colour. Other names get the
// palette's last colour.
func ModelColor(model string) color.RGBA {
	for _, sp := range sim.Registry {
		if sp.Name == model {
			return sp.Color
		}
	}
	for k, n := range sim.TrainedNames {
		if n == model {
			return TrainedColors[k%len(TrainedColors)]
		}
	}
	return Palette[len(Palette)-1]
}

// TrainedColors are the colours of the models trained in the window
// (sim.TrainedNames, in order): brown and indigo, apart from the palette's
// and readable on light and dark backgrounds (the palette's black is not).
var TrainedColors = []color.RGBA{
	{166, 86, 40, 255},
	{120, 94, 240, 255},
}

// isModel reports whether name is one of the catalogue's models.
func isModel(name string) bool {
	for _, n := range sim.ModelNames {
		if n == name {
			return true
		}
	}
	return false
}

// Series is one line of an MSE-vs-t plot.
type Series struct {
	Name   string
	Values []float64 // index t
	// Color, when set, draws the line in it (a model's own colour,
	// ModelColor) instead of colour k of Palette for the k-th series.
	Color  color.Color
	Dashed bool
	// Reference draws a thin dotted grey line (the input's MSE) instead
	// of a palette colour.
	Reference bool
	// Apart draws the value at t = 0 as a hollow circle not joined to the
	// line from t = 1 (a quantity measured differently at t = 0).
	Apart bool
}

// ReferenceColor is the colour of reference lines (the input's MSE).
var ReferenceColor = color.RGBA{140, 140, 140, 255}

// MSEPlot draws MSE against t on a log-scaled t axis (t ≥ 1, as the paper's
// Fig. 1), with the t = 0 input MSE as a dotted line and t* marked.
func MSEPlot(title string, series []Series, input float64, tstar int) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "iteration t"
	p.Y.Label.Text = "MSE"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = LogTicks125{}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(12)
	p.Add(plotter.NewGrid())
	maxT := 1
	for k, s := range series {
		var xy plotter.XYs
		for t := 1; t < len(s.Values); t++ {
			if !math.IsNaN(s.Values[t]) && !math.IsInf(s.Values[t], 0) {
				xy = append(xy, plotter.XY{X: float64(t), Y: s.Values[t]})
			}
		}
		if len(xy) == 0 {
			continue
		}
		maxT = max(maxT, len(s.Values)-1)
		l, err := seriesLine(xy, k, s, 2, 6, 1)
		if err != nil {
			return nil, err
		}
		p.Add(l)
		p.Legend.Add(s.Name, l)
	}
	if !math.IsNaN(input) && !math.IsInf(input, 0) {
		l, err := plotter.NewLine(plotter.XYs{{X: 1, Y: input}, {X: float64(maxT), Y: input}})
		if err == nil {
			l.Color = color.RGBA{120, 120, 120, 255}
			l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("input, t=0 (%.4f)", input), l)
		}
	}
	if tstar >= 1 && len(series) > 0 && tstar < len(series[0].Values) {
		sc, err := plotter.NewScatter(plotter.XYs{{X: float64(tstar), Y: series[0].Values[tstar]}})
		if err == nil {
			sc.GlyphStyle.Shape = draw.CircleGlyph{}
			sc.GlyphStyle.Radius = vg.Points(5)
			sc.GlyphStyle.Color = color.RGBA{200, 30, 30, 255}
			p.Add(sc)
			p.Legend.Add(fmt.Sprintf("t* = %d (%.4f)", tstar, series[0].Values[tstar]), sc)
		}
	}
	padRange(p)
	return p, nil
}

// seriesLine is series s drawn as line k of a plot, width points wide: in
// its own colour or colour k of Palette, dashed (dash points on) where
// asked; a reference is a thin (refWidth) dotted grey line.
func seriesLine(xy plotter.XYs, k int, s Series, width, dash, refWidth float64) (*plotter.Line, error) {
	l, err := paletteLine(xy, k, width, s.Dashed, dash)
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", s.Name, err)
	}
	if s.Color != nil {
		l.Color = s.Color
	}
	if s.Reference {
		l.Color, l.Width = ReferenceColor, vg.Points(refWidth)
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	}
	return l, nil
}

// paletteLine is line k of a plot: colour k of Palette, width points wide,
// dashed (dash points on, 3 off) or solid.
func paletteLine(xy plotter.XYs, k int, width float64, dashed bool, dash float64) (*plotter.Line, error) {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil, err
	}
	l.Color = Palette[k%len(Palette)]
	l.Width = vg.Points(width)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(dash), vg.Points(3)}
	}
	return l, nil
}

// drawable refuses a curve no plot can show: no step after the input, or
// no finite MSE at any step (a diverged run).
func drawable(c *sim.Curve) error {
	if len(c.Rows) < 2 {
		return fmt.Errorf("%s: no step after the input to plot", c.Model)
	}
	for _, r := range c.Rows[1:] {
		if !math.IsNaN(r.MSE) && !math.IsInf(r.MSE, 0) {
			return nil
		}
	}
	return fmt.Errorf("%s: no finite MSE at any step after the input: nothing to plot", c.Model)
}

// padRange widens an axis whose data span a single value (one step, a flat
// curve) so every scale can draw it: a log t axis runs from 1 to at least 2.
func padRange(p *plot.Plot) {
	if _, ok := p.X.Scale.(plot.LogScale); ok {
		p.X.Min = 1
		if !(p.X.Max >= 2) || math.IsInf(p.X.Max, 0) {
			p.X.Max = 2
		}
	}
	_, logY := p.Y.Scale.(plot.LogScale)
	switch {
	case logY && (!(p.Y.Min > 0) || p.Y.Min > p.Y.Max):
		p.Y.Min, p.Y.Max = 1e-3, 1 // nothing positive to draw
	case p.Y.Min == p.Y.Max && logY:
		p.Y.Min, p.Y.Max = p.Y.Min/2, p.Y.Max*2
	case p.Y.Min == p.Y.Max:
		p.Y.Min, p.Y.Max = p.Y.Min-0.05, p.Y.Max+0.05
	}
}

// Render draws a plot into an image of w×h pixels at the given DPI.
func Render(p *plot.Plot, w, h int, dpi float64) image.Image {
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(w)*vg.Inch/vg.Length(dpi), vg.Length(h)*vg.Inch/vg.Length(dpi)), vgimg.UseDPI(int(dpi)))
	dc := draw.New(glyphCanvasOf(c))
	withFittedTicks(p, dc, func() { p.Draw(dc) })
	return c.Image()
}

// WritePNGLegendRight renders a plot as a PNG with its legend beside it
// (RenderLegendRight) at 96 dpi.
func WritePNGLegendRight(w io.Writer, p *plot.Plot, width, height int) error {
	return png.Encode(w, RenderLegendRight(p, width, height, 96))
}

// WritePNG renders a plot as a PNG.
func WritePNG(w io.Writer, p *plot.Plot, width, height int) error {
	return png.Encode(w, Render(p, width, height, 96))
}

// CurvePlot is the mse.png of `reproduce`: total MSE and, for masking, the
// masked and unmasked MSE.
func CurvePlot(c *sim.Curve) (*plot.Plot, error) {
	if err := drawable(c); err != nil {
		return nil, err
	}
	col := func(f func(sim.Row) float64) []float64 {
		v := make([]float64, len(c.Rows))
		for t, r := range c.Rows {
			v[t] = f(r)
		}
		return v
	}
	series := []Series{{Name: "MSE (all pixels)", Values: col(func(r sim.Row) float64 { return r.MSE })}}
	if c.Task == sim.Mask {
		series = append(series,
			Series{Name: "MSE (masked pixels)", Values: col(func(r sim.Row) float64 { return r.MSEMasked }), Dashed: true},
			Series{Name: "MSE (unmasked pixels)", Values: col(func(r sim.Row) float64 { return r.MSEUnmasked }), Dashed: true})
	}
	// t* is marked only where it beats the input; otherwise the legend
	// says which step came closest.
	b := c.Summary().Best
	ts := -1
	if b.Improves {
		ts = b.T
	}
	p, err := MSEPlot(fmt.Sprintf("%s, %s task: MSE vs iteration", c.Model, c.Task), series, c.Rows[0].MSE, ts)
	if err == nil && !b.Improves {
		p.Legend.Add(b.Short() + ": no step beats the input")
	}
	if err == nil {
		// The curves start low on the left and end high on the right:
		// the left middle is free for the legend.
		p.Legend.YOffs = -vg.Points(80)
		err = addBand(p, c)
	}
	return p, err
}

// addBand shades the middle half of the digits' MSE (between the
// quartiles) behind the mean curve, when the curve has quartiles.
func addBand(p *plot.Plot, c *sim.Curve) error {
	var lo, hi []float64
	for _, r := range c.Rows[1:] { // the t axis is logarithmic: from t = 1
		if math.IsNaN(r.MSEQ25) || math.IsNaN(r.MSEQ75) {
			return nil // a curve.csv from before the quartiles
		}
		lo, hi = append(lo, r.MSEQ25), append(hi, r.MSEQ75)
	}
	return shade(p, 1, lo, hi, Palette[0], "middle half of the digits (q25–q75)")
}

// shade fills between lo and hi (values at t = t0, t0+1, …) in a light
// tint of c, adds it to the legend as label ("" none) and widens the y
// range to hold it.
func shade(p *plot.Plot, t0 int, lo, hi []float64, c color.RGBA, label string) error {
	if len(lo) < 2 {
		return nil
	}
	var ring plotter.XYs
	for k, v := range lo {
		ring = append(ring, plotter.XY{X: float64(t0 + k), Y: v})
	}
	for k := len(hi) - 1; k >= 0; k-- {
		ring = append(ring, plotter.XY{X: float64(t0 + k), Y: hi[k]})
	}
	band, err := plotter.NewPolygon(ring)
	if err != nil {
		return err
	}
	band.Color = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 50}
	band.LineStyle.Width = 0
	p.Add(band)
	if label != "" {
		p.Legend.Add(label, band)
	}
	for _, v := range hi {
		p.Y.Max = math.Max(p.Y.Max, v*1.05)
	}
	for _, v := range lo {
		p.Y.Min = math.Min(p.Y.Min, v)
	}
	return nil
}

// Band is one model's ensemble for BandPlot: the quartiles of its digits'
// MSE at t = 0, 1, ….
type Band struct {
	Name             string
	Q25, Median, Q75 []float64
}

// BandPlot draws each model's median MSE over its digits with the middle
// half (q25–q75) shaded, on one t axis (linear, from t = 0) and one MSE
// axis.
func BandPlot(title string, bands []Band) (*plot.Plot, error) {
	if len(bands) == 0 {
		return nil, fmt.Errorf("no ensemble yet")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "iteration t"
	p.Y.Label.Text = "MSE (median, q25–q75 shaded)"
	p.X.Tick.Marker = IntTicks{}
	p.Y.Tick.Marker = PlainTicks{}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	p.Y.Min, p.Y.Max = math.Inf(1), math.Inf(-1)
	maxT := 1
	for k, b := range bands {
		c := bandColor(k, b.Name)
		if err := shade(p, 0, b.Q25, b.Q75, c, ""); err != nil {
			return nil, err
		}
		var xy plotter.XYs
		for t, v := range b.Median {
			if !math.IsNaN(v) {
				xy = append(xy, plotter.XY{X: float64(t), Y: v})
				p.Y.Min, p.Y.Max = math.Min(p.Y.Min, v), math.Max(p.Y.Max, v)
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, err := paletteLine(xy, k, 2, false, 0)
		if err != nil {
			return nil, err
		}
		l.Color = c
		p.Add(l)
		p.Legend.Add(b.Name, l)
		maxT = max(maxT, len(b.Median)-1)
	}
	if math.IsInf(p.Y.Min, 0) {
		return nil, fmt.Errorf("no finite MSE in the ensemble")
	}
	// Each model's baseline: its inputs' median MSE (t = 0), dotted across
	// the run, so a step is read against doing nothing. Models that share
	// the input share one line.
	seen := map[float64]bool{}
	for k, b := range bands {
		if len(b.Median) == 0 || math.IsNaN(b.Median[0]) || seen[b.Median[0]] {
			continue
		}
		in := b.Median[0]
		seen[in] = true
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: in}, {X: float64(maxT), Y: in}})
		if err != nil {
			return nil, err
		}
		l.Color = bandColor(k, b.Name)
		l.Width = vg.Points(1)
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s input, t = 0 (median %.4f)", b.Name, in), l)
	}
	p.X.Min, p.X.Max = 0, float64(maxT)
	p.Y.Min, p.Y.Max = fitRange(p.Y.Min, p.Y.Max, false)
	return p, nil
}

// bandColor is band k's colour: its model's, else the palette's k-th.
func bandColor(k int, name string) color.RGBA {
	if isModel(name) {
		return ModelColor(name)
	}
	return Palette[k%len(Palette)]
}

// TStarHistogram counts, for each model, its digits' own t* (one bin per
// step, 1 … maxT) as outlined bars in the model's colour, the first model
// filled.
func TStarHistogram(title string, names []string, tstars [][]int, maxT int) (*plot.Plot, error) {
	if len(names) == 0 || maxT < 1 {
		return nil, fmt.Errorf("no ensemble yet")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "the digit's own t* (click a bar: load a digit with it)"
	p.Y.Label.Text = "digits"
	p.X.Tick.Marker = IntTicks{}
	p.Y.Tick.Marker = IntTicks{}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	top := 1
	for k, ts := range tstars {
		counts := make([]int, maxT+1)
		for _, t := range ts {
			if t >= 1 && t <= maxT {
				counts[t]++
			}
		}
		var xy plotter.XYs // stairs: each bin spans t ± 0.5
		for t := 1; t <= maxT; t++ {
			xy = append(xy, plotter.XY{X: float64(t) - 0.5, Y: float64(counts[t])}, plotter.XY{X: float64(t) + 0.5, Y: float64(counts[t])})
			top = max(top, counts[t])
		}
		l, err := paletteLine(xy, k, 1.5, false, 0)
		if err != nil {
			return nil, err
		}
		c := Palette[k%len(Palette)]
		if isModel(names[k]) {
			c = ModelColor(names[k])
		}
		l.Color = c
		if k == 0 {
			l.FillColor = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 90}
		}
		p.Add(l)
		p.Legend.Add(names[k], l)
	}
	p.X.Min, p.X.Max = 0.5, float64(maxT)+0.5
	p.Y.Min, p.Y.Max = 0, float64(top)*1.1
	return p, nil
}

// TrajectoryOptions shape a TrajectoryPlot.
type TrajectoryOptions struct {
	// LogY draws the values on a logarithmic axis (only positive values
	// are drawn).
	LogY bool
	// Legend draws the series' names inside the plot (an exported plot;
	// the window shows its legend beside the plot instead).
	Legend bool
	// Now and Best mark t (the step shown) and t* with labelled vertical
	// lines (an exported plot; the window draws its own markers so they
	// move without redrawing the plot). Negative: no marker.
	Now, Best int
	// Upto, when positive, draws values for t < Upto only (a lesson hides
	// what has not happened yet), and the y axis spans only what is drawn
	// (with the references, known from t = 0): an axis scaled to the whole
	// run told where the curve would go before it was played. It grows
	// with the run.
	Upto int
	// XMax, when positive, ends the t axis there (a lesson's short run is
	// drawn across the plot, not as a sliver of the look-ahead's 100 steps).
	XMax int
}

// The marker colours are used by no curve (Palette, ReferenceColor): t is
// red, t* magenta, in the window and in exported plots alike.
var (
	NowColor  = color.RGBA{220, 40, 40, 255}
	BestColor = color.RGBA{190, 30, 190, 255}
)

// TrajectoryPlot is the window's plot: values against a linear t axis from
// 0, one series per line (colour k of Palette). The y axis spans every
// finite value of every series with a margin, so no line leaves the plot.
func TrajectoryPlot(title, ylabel string, series []Series, o TrajectoryOptions) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "t"
	p.X.Tick.Marker = IntTicks{}
	p.Y.Label.Text = ylabel
	p.Y.Tick.Marker = PlainTicks{}
	if o.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = LogTicks125{}
		p.Y.Label.Text = ylabel + " (log)"
	}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	lo, hi, maxT := math.Inf(1), math.Inf(-1), 0
	for k, s := range series {
		var xy plotter.XYs
		if s.Apart && len(s.Values) > 0 {
			if v := s.Values[0]; !math.IsNaN(v) && !math.IsInf(v, 0) && (!o.LogY || v > 0) {
				sc, err := plotter.NewScatter(plotter.XYs{{X: 0, Y: v}})
				if err != nil {
					return nil, fmt.Errorf("plot %s: %w", s.Name, err)
				}
				sc.GlyphStyle.Shape = draw.RingGlyph{}
				sc.GlyphStyle.Radius = vg.Points(3.5)
				sc.GlyphStyle.Color = Palette[k%len(Palette)]
				if s.Color != nil {
					sc.GlyphStyle.Color = s.Color
				}
				p.Add(sc)
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		for t, v := range s.Values {
			if s.Apart && t == 0 {
				continue
			}
			if o.XMax > 0 && t > o.XMax {
				break
			}
			if !math.IsNaN(v) && !math.IsInf(v, 0) && (!o.LogY || v > 0) {
				// A reference (the input's MSE) is known from t = 0:
				// Upto does not cut it.
				maxT = max(maxT, t)
				if o.Upto <= 0 || t < o.Upto || s.Reference {
					xy = append(xy, plotter.XY{X: float64(t), Y: v})
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, err := seriesLine(xy, k, s, 1.6, 5, 1.2)
		if err != nil {
			return nil, err
		}
		p.Add(l)
		if o.Legend {
			p.Legend.Add(s.Name, l)
		}
	}
	if o.XMax > 0 {
		maxT = o.XMax
	}
	if lo <= hi {
		p.Y.Min, p.Y.Max = fitRange(lo, hi, o.LogY)
		p.X.Min, p.X.Max = 0, float64(max(maxT, 1))
	}
	mark := func(t int, c color.RGBA, label string) {
		if t < 0 || lo > hi {
			return
		}
		l, err := plotter.NewLine(plotter.XYs{{X: float64(t), Y: p.Y.Min}, {X: float64(t), Y: p.Y.Max}})
		if err != nil {
			return
		}
		l.Color, l.Width = c, vg.Points(1.6)
		p.Add(l)
		p.Legend.Add(label, l)
	}
	mark(o.Best, BestColor, fmt.Sprintf("t* = %d (best step)", o.Best))
	mark(o.Now, NowColor, fmt.Sprintf("t = %d (shown)", o.Now))
	padRange(p)
	return p, nil
}

// fitRange is the y range that shows every value from lo to hi with a
// margin of 5% of the span (of the decades, on a log axis) on each side.
func fitRange(lo, hi float64, logY bool) (float64, float64) {
	if logY {
		a, b := math.Log10(lo), math.Log10(hi)
		m := 0.05 * math.Max(b-a, 0.1)
		return math.Pow(10, a-m), math.Pow(10, b+m)
	}
	m := 0.05 * (hi - lo)
	if m == 0 {
		// One value (a lesson before its first step): a tenth of it each
		// side, an axis about the value, not a span that hints where the
		// curve could go.
		m = 0.1 * math.Abs(hi)
		if m == 0 {
			m = 0.05
		}
	}
	return lo - m, hi + m
}

// Rendered is a plot drawn into an image, with where its data lie.
type Rendered struct {
	Image       image.Image
	XPix        func(x float64) float64 // the pixel column of data x
	Top, Bottom float64                 // the pixel rows the data area spans
	// ToData is the data point under pixel (px, py), for linear axes.
	ToData func(px, py float64) (x, y float64)
}

// RenderMapped draws p into a w×h image at dpi and maps data to pixels
// and back.
func RenderMapped(p *plot.Plot, w, h int, dpi float64) Rendered {
	fitTitle(p, vg.Length(w)*vg.Inch/vg.Length(dpi))
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(w)*vg.Inch/vg.Length(dpi), vg.Length(h)*vg.Inch/vg.Length(dpi)), vgimg.UseDPI(int(dpi)),
		vgimg.UseBackgroundColor(p.BackgroundColor))
	dc := draw.New(glyphCanvasOf(c))
	var da draw.Canvas
	withFittedTicks(p, dc, func() {
		p.Draw(dc)
		da = p.DataCanvas(dc) // the area drawn, its labels thinned
	})
	tx, ty := p.Transforms(&da)
	scale := dpi / 72
	hpx := float64(h)
	x0, x1, y0, y1 := float64(tx(p.X.Min)), float64(tx(p.X.Max)), float64(ty(p.Y.Min)), float64(ty(p.Y.Max))
	toData := func(px, py float64) (float64, float64) {
		fx := (px/scale - x0) / (x1 - x0)
		fy := ((hpx-py)/scale - y0) / (y1 - y0)
		return p.X.Min + fx*(p.X.Max-p.X.Min), p.Y.Min + fy*(p.Y.Max-p.Y.Min)
	}
	return Rendered{Image: c.Image(), XPix: func(x float64) float64 { return float64(tx(x)) * scale },
		Top: hpx - float64(da.Max.Y)*scale, Bottom: hpx - float64(da.Min.Y)*scale, ToData: toData}
}

// IntTicks marks whole steps on a t axis, 1, 2, 5, 10, 20, 50, … apart so
// that at most about six are labelled (gonum's default would write 2.50
// on a five-step axis).
type IntTicks struct{}

// Ticks implements plot.Ticker.
func (IntTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	if !(span >= 0) || math.IsInf(span, 0) {
		return nil
	}
	step, mult := 1.0, 1.0
	for k := 0; span/step > 6; k++ {
		step = []float64{2, 5, 10}[k%3] * mult
		if k%3 == 2 {
			mult *= 10
		}
	}
	var ts []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+1e-9 && len(ts) <= 100; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.Itoa(int(math.Round(v)))})
	}
	return ts
}

// LogTicks125 labels a logarithmic axis at 1, 2, 3 and 5 times powers of
// ten (gonum's LogTicks labels powers of ten only, which leaves an MSE
// axis from 0.02 to 0.4 with a single label), with unlabelled minor ticks
// between.
type LogTicks125 struct{}

// Ticks implements plot.Ticker.
func (LogTicks125) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for m := 1.0; m < 10; m++ {
			v := m * math.Pow(10, e)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 3 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', 3, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// PlainTicks are gonum's default ticks labelled without needless decimals
// ("-1025", not "-1025.00"; "0.05", not "0.050").
type PlainTicks struct{}

// Ticks implements plot.Ticker.
func (PlainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for k := range ts {
		if ts[k].Label != "" {
			ts[k].Label = strconv.FormatFloat(ts[k].Value, 'g', 6, 64)
		}
	}
	return ts
}

// RenderLegendRight draws p into a w×h image with its legend in a column
// of its own on the right, outside the data area, so no entry covers a
// curve (an exported plot; a plot without legend entries is drawn as
// Render draws it).
func RenderLegendRight(p *plot.Plot, w, h int, dpi float64) image.Image {
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(w)*vg.Inch/vg.Length(dpi), vg.Length(h)*vg.Inch/vg.Length(dpi)), vgimg.UseDPI(int(dpi)))
	DrawLegendRight(p, draw.New(glyphCanvasOf(c)))
	return c.Image()
}

// DrawLegendRight draws p on dc with its legend in a column of its own on
// the right (RenderLegendRight on any canvas: a picture, SVG, PDF).
func DrawLegendRight(p *plot.Plot, dc draw.Canvas) {
	leg := p.Legend
	r := leg.Rectangle(dc)
	lw := r.Max.X - r.Min.X
	if lw <= 0 {
		withFittedTicks(p, dc, func() { p.Draw(dc) })
		return
	}
	gap := vg.Points(10)
	right := dc.Max.X - lw - gap
	p.Legend = plot.NewLegend()
	p.Legend.TextStyle = leg.TextStyle
	pc := draw.Crop(dc, 0, right-dc.Max.X, 0, 0)
	withFittedTicks(p, pc, func() { p.Draw(pc) })
	p.Legend = leg
	lc := draw.Crop(dc, right-dc.Min.X+gap/2, 0, 0, 0)
	leg.Top, leg.Left, leg.XOffs = true, true, 0
	// Level with the top of the data area, below the title.
	leg.YOffs = -(p.Title.TextStyle.Height(p.Title.Text) + p.Title.Padding)
	leg.Draw(lc)
}

// WriteVector writes p as SVG or PDF ("svg", "pdf"), w×h points, its
// legend beside it; the PDF embeds its fonts.
func WriteVector(out io.Writer, p *plot.Plot, format string, w, h float64) error {
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch format {
	case "svg":
		c = vgsvg.New(vg.Points(w), vg.Points(h))
	case "pdf":
		pc := vgpdf.New(vg.Points(w), vg.Points(h))
		pc.EmbedFonts(true)
		c = pc
	default:
		return fmt.Errorf("format %q is not svg or pdf", format)
	}
	dc := draw.New(c)
	if p.BackgroundColor != nil {
		// The whole page, the legend's column too: p.Draw fills only
		// the plot's part, and a legend on a transparent ground vanished
		// on a dark slide.
		dc.SetColor(p.BackgroundColor)
		dc.Fill(dc.Rectangle.Path())
	}
	DrawLegendRight(p, dc)
	_, err := c.WriteTo(out)
	return err
}

// fitTitle wraps the title's lines at spaces so that none is wider than
// width: a plot narrower than its title (the energy plot's "(negative
// pseudo-likelihood)" in a window of 800×600) had it cut at both ends. A
// word wider than width stays whole; a title that fits is left as it is.
func fitTitle(p *plot.Plot, width vg.Length) {
	sty := p.Title.TextStyle
	if p.Title.Text == "" || sty.Handler == nil || sty.Font.Size == 0 {
		return
	}
	var out []string
	for _, line := range strings.Split(p.Title.Text, "\n") {
		if sty.Width(line) <= width {
			out = append(out, line)
			continue
		}
		cur := ""
		for _, word := range strings.Fields(line) {
			if cur == "" {
				cur = word
			} else if try := cur + " " + word; sty.Width(try) <= width {
				cur = try
			} else {
				out = append(out, cur)
				cur = word
			}
		}
		if cur != "" {
			out = append(out, cur)
		}
	}
	p.Title.Text = strings.Join(out, "\n")
}
