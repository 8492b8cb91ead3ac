package figures

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Heat is one panel of a basin map: Z[row][col] over the map's columns
// (X) and rows (Y).
type Heat struct {
	Title   string
	Z       [][]float64
	NaN     string // what a grey cell means, e.g. "never escapes"
	Integer bool   // the colour bar counts whole steps
	// Range, when set (lo < hi), is the colour range instead of the
	// values' own: a share on [0, 1], a difference centred on 0.
	Range [2]float64
}

// Basin is a set of heatmaps over one grid (corruption level × a
// parameter), drawn side by side, each above its colour bar.
type Basin struct {
	Title          string // above the panels ("" none)
	XLabel, YLabel string
	X, Y           []float64
	Panels         []Heat
	// Mark, when set, outlines the cell (column, row) in every panel:
	// the setting a person loaded from the map.
	Mark *[2]int
}

// grid is one panel as gonum's GridXYZ, on cell indices (the levels need
// not be evenly spaced; the ticks carry their values). An infinite value
// is drawn as a missing one (grey), and every value is kept within the
// colour range, so extreme values cannot index past gonum's palette.
type grid struct {
	z      [][]float64
	x, y   int
	lo, hi float64 // the colour range (span)
}

func newGrid(z [][]float64, x, y int) grid {
	g := grid{z: z, x: x, y: y}
	g.lo, g.hi = span(z)
	return g
}

func (g grid) Dims() (int, int) { return g.x, g.y }
func (g grid) Z(c, r int) float64 {
	v := g.z[r][c]
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return math.NaN()
	}
	return min(max(v, g.lo), g.hi)
}
func (g grid) X(c int) float64   { return float64(c) }
func (g grid) Y(r int) float64   { return float64(r) }
func (g grid) Min() (lo float64) { return g.lo }
func (g grid) Max() (hi float64) { return g.hi }

// span is the colour range of z's finite values: never empty (a single
// value is widened), never so narrow that its ticks cannot step at the
// values' magnitude, never wider than a float64 holds.
func span(z [][]float64) (lo, hi float64) {
	const limit = math.MaxFloat64 / 4
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, row := range z {
		for _, v := range row {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if lo > hi { // nothing finite
		return 0, 1
	}
	lo, hi = max(lo, -limit), min(hi, limit)
	// At least 0.5 either side of a single value, and at least a
	// millionth of the magnitude across.
	minSpan := max(1, math.Max(math.Abs(lo), math.Abs(hi))*0x1p-20)
	if d := hi - lo; d < minSpan {
		w := (minSpan - d) / 2
		lo, hi = lo-w, hi+w
	}
	return lo, hi
}

// valueTicks labels cell indices with the grid's values.
type valueTicks []float64

func (v valueTicks) Ticks(lo, hi float64) []plot.Tick {
	step := max(1, (len(v)+7)/8) // at most 8 labels
	var ts []plot.Tick
	for k, x := range v {
		t := plot.Tick{Value: float64(k)}
		if k%step == 0 {
			t.Label = strconv.FormatFloat(x, 'g', 6, 64)
		}
		ts = append(ts, t)
	}
	return ts
}

// Plots are each panel's heatmap and colour bar, in order (heatmap,
// bar, heatmap, bar, …), for a caller to style before Render.
func (b Basin) Plots() ([]*plot.Plot, error) {
	if len(b.X) == 0 || len(b.Y) == 0 {
		return nil, fmt.Errorf("basin map: empty grid (%d × %d)", len(b.X), len(b.Y))
	}
	var out []*plot.Plot
	for _, h := range b.Panels {
		if len(h.Z) != len(b.Y) {
			return nil, fmt.Errorf("basin map %q: %d rows for %d values", h.Title, len(h.Z), len(b.Y))
		}
		for _, row := range h.Z {
			if len(row) != len(b.X) {
				return nil, fmt.Errorf("basin map %q: a row of %d for %d values", h.Title, len(row), len(b.X))
			}
		}
		g := newGrid(h.Z, len(b.X), len(b.Y))
		if h.Range[0] < h.Range[1] {
			g.lo, g.hi = h.Range[0], h.Range[1]
		}
		hm := plotter.NewHeatMap(g, viridisPalette{})
		hm.NaN = NaNColor
		p := plot.New()
		p.Title.Text = h.Title
		p.X.Label.Text = b.XLabel
		p.Y.Label.Text = b.YLabel
		p.X.Tick.Marker = valueTicks(b.X)
		p.Y.Tick.Marker = valueTicks(b.Y)
		p.Add(hm)
		if m := b.Mark; m != nil && m[0] >= 0 && m[0] < len(b.X) && m[1] >= 0 && m[1] < len(b.Y) {
			p.Add(cellOutline{m[0], m[1]})
		}
		p.X.Padding, p.Y.Padding = 0, 0
		p.X.Min, p.X.Max = -0.5, float64(len(b.X))-0.5
		p.Y.Min, p.Y.Max = -0.5, float64(len(b.Y))-0.5
		out = append(out, p)

		lo, hi := g.lo, g.hi
		bar := plot.New()
		bar.HideY()
		bar.X.Label.Text = h.Title
		if h.NaN != "" && hasNaN(h.Z) {
			bar.X.Label.Text += "   (grey: " + h.NaN + ")"
		}
		cm := viridisMap{lo: lo, hi: hi}
		bar.Add(&plotter.ColorBar{ColorMap: &cm})
		bar.X.Min, bar.X.Max = lo, hi
		bar.X.Padding = 0
		if h.Integer {
			bar.X.Tick.Marker = IntTicks{}
		} else {
			bar.X.Tick.Marker = PlainTicks{}
		}
		out = append(out, bar)
	}
	return out, nil
}

// cellOutline is a black and white frame around cell (col, row), seen
// on every colour of the palette.
type cellOutline struct{ col, row int }

func (o cellOutline) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	x, y := float64(o.col), float64(o.row)
	var pts []vg.Point
	for _, q := range [][2]float64{{x - 0.5, y - 0.5}, {x + 0.5, y - 0.5}, {x + 0.5, y + 0.5}, {x - 0.5, y + 0.5}, {x - 0.5, y - 0.5}} {
		pts = append(pts, vg.Point{X: tx(q[0]), Y: ty(q[1])})
	}
	c.StrokeLines(draw.LineStyle{Color: color.Black, Width: vg.Points(3.5)}, pts)
	c.StrokeLines(draw.LineStyle{Color: color.White, Width: vg.Points(1.5)}, pts)
}

func hasNaN(z [][]float64) bool {
	for _, row := range z {
		for _, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return true
			}
		}
	}
	return false
}

// Cell maps a pixel of a rendered basin map to its panel, column and row.
type Cell func(x, y float64) (panel, col, row int, ok bool)

// Render draws plots (from Plots) side by side into a w×h image: each
// heatmap over the top 80 % of its column, its colour bar below. It
// returns the image and the map from pixels to cells.
func (b Basin) Render(plots []*plot.Plot, w, h int, dpi float64) (image.Image, Cell) {
	bg := color.Color(color.White) // vgimg's own default
	if len(plots) > 0 {
		bg = plots[0].BackgroundColor
	}
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(w)*vg.Inch/vg.Length(dpi), vg.Length(h)*vg.Inch/vg.Length(dpi)), vgimg.UseDPI(int(dpi)),
		vgimg.UseBackgroundColor(bg))
	dc := draw.New(glyphCanvasOf(c))
	if b.Title != "" && len(plots) > 0 {
		sty := plots[0].Title.TextStyle
		hgt := sty.Height(b.Title) * 2.2
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - hgt*0.2}, b.Title)
		dc.Max.Y -= hgt
	}
	n := len(plots) / 2
	type area struct{ x0, x1, y0, y1 float64 } // in pixels, y down
	var areas []area
	scale := dpi / 72
	for k := 0; k < n; k++ {
		col := dc
		width := (dc.Max.X - dc.Min.X) / vg.Length(n)
		col.Min.X = dc.Min.X + vg.Length(k)*width
		col.Max.X = col.Min.X + width
		top, bottom := col, col
		split := col.Min.Y + 0.2*(col.Max.Y-col.Min.Y)
		top.Min.Y = split
		bottom.Max.Y = split
		// The bar spans the heatmap's width.
		var da draw.Canvas
		drawn := false
		withFittedTicks(plots[2*k], top, func() {
			if drawn = drawPlot(plots[2*k], top); drawn {
				da = plots[2*k].DataCanvas(top) // the area drawn, its labels thinned
			}
		})
		if !drawn {
			areas = append(areas, area{}) // no cell here
			continue
		}
		bottom.Min.X, bottom.Max.X = da.Min.X, da.Max.X
		withFittedTicks(plots[2*k+1], bottom, func() { drawPlot(plots[2*k+1], bottom) })
		tx, ty := plots[2*k].Transforms(&da)
		x0, x1 := float64(tx(-0.5))*scale, float64(tx(float64(len(b.X))-0.5))*scale
		yTop := float64(h) - float64(ty(float64(len(b.Y))-0.5))*scale
		yBot := float64(h) - float64(ty(-0.5))*scale
		areas = append(areas, area{x0, x1, yTop, yBot})
	}
	cell := func(x, y float64) (int, int, int, bool) {
		for k, a := range areas {
			if x >= a.x0 && x < a.x1 && y >= a.y0 && y < a.y1 {
				col := int((x - a.x0) / (a.x1 - a.x0) * float64(len(b.X)))
				row := int((a.y1 - y) / (a.y1 - a.y0) * float64(len(b.Y))) // row 0 at the bottom
				return k, min(col, len(b.X)-1), min(row, len(b.Y)-1), true
			}
		}
		return 0, 0, 0, false
	}
	return c.Image(), cell
}

// drawPlot draws p into c, or leaves out what does not fit: gonum panics
// on a canvas smaller than a plot's axes and labels (a small window), and
// such a panel is left blank instead.
func drawPlot(p *plot.Plot, c draw.Canvas) bool { return onCanvas(c, func() { p.Draw(c) }) }

// WritePNG renders the basin map as a w×h PNG in gonum's default style.
func (b Basin) WritePNG(w io.Writer, width, height int) error {
	plots, err := b.Plots()
	if err != nil {
		return err
	}
	img, _ := b.Render(plots, width, height, 96)
	return png.Encode(w, img)
}
