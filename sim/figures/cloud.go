package figures

import (
	"image"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// cloud is the stored digits' faint cloud in the state-space map: many
// thousand small discs. On a raster canvas (the window, PNGs) it paints
// them into the canvas's pixels directly (10,000 discs in a few
// milliseconds, where as glyphs through the path rasteriser they took
// tens of ms every redraw); on a vector canvas (SVG, PDF) it draws each
// disc as a glyph, like plotter.Scatter: its naive twin, which
// TestCloudRasterMatchesGlyphs compares.
type cloud struct {
	xys    []plotter.XYs // by label
	colors []color.NRGBA // each label's colour, faint
	radius vg.Length
}

// DataRange is the points' extent.
func (c *cloud) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, xy := range c.xys {
		if len(xy) == 0 {
			continue
		}
		a, b, cc, d := plotter.XYRange(xy)
		xmin, xmax, ymin, ymax = math.Min(xmin, a), math.Max(xmax, b), math.Min(ymin, cc), math.Max(ymax, d)
	}
	return
}

// Plot draws the cloud.
func (c *cloud) Plot(cv draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&cv)
	img, dpi := rasterOf(cv)
	if img == nil {
		for l, xy := range c.xys {
			style := draw.GlyphStyle{Color: c.colors[l], Radius: c.radius, Shape: draw.CircleGlyph{}}
			for _, p := range xy {
				pt := vg.Point{X: trX(p.X), Y: trY(p.Y)}
				if cv.Contains(pt) {
					cv.DrawGlyph(style, pt)
				}
			}
		}
		return
	}
	// vgimg's pixels: x right from the left edge, y down from the top,
	// at dpi/72 pixels a point (the canvas's y runs up from the bottom).
	scale := dpi / float64(vg.Inch)
	h := float64(img.Bounds().Dy())
	clip := image.Rect(int(math.Floor(float64(cv.Min.X)*scale)), int(math.Floor(h-float64(cv.Max.Y)*scale)),
		int(math.Ceil(float64(cv.Max.X)*scale)), int(math.Ceil(h-float64(cv.Min.Y)*scale))).Intersect(img.Bounds())
	rad := float64(c.radius) * scale
	for l, xy := range c.xys {
		col := c.colors[l]
		for _, p := range xy {
			x, y := trX(p.X), trY(p.Y)
			if !cv.Contains(vg.Point{X: x, Y: y}) {
				continue
			}
			disc(img, clip, float64(x)*scale, h-float64(y)*scale, rad, col)
		}
	}
}

// rasterOf is the picture and resolution of the raster canvas under cv
// (draw.Canvas wraps canvases in canvases): a vgimg canvas drawing into
// an *image.RGBA; nil for any other (SVG, PDF).
func rasterOf(cv draw.Canvas) (*image.RGBA, float64) {
	var c vg.Canvas = cv.Canvas
	for {
		switch d := c.(type) {
		case draw.Canvas:
			c = d.Canvas
		case *draw.Canvas:
			c = d.Canvas
		case *vgimg.Canvas:
			img, _ := d.Image().(*image.RGBA)
			return img, d.DPI()
		case *glyphCanvas:
			c = d.Canvas
		default:
			return nil, 0
		}
	}
}

// disc blends a disc of colour col (its alpha the disc's opacity) centred
// at (cx, cy) pixels over img inside clip, each pixel covered by the share
// of it the disc covers (sampled 4×4), as "over" on premultiplied pixels.
// Each column's four squared sample offsets and each row's are worked out
// once, and a pixel whose farthest sample is inside (whose nearest is
// outside) counts 16 (0) without the other fifteen: the same counts as
// discNaive, its twin in the tests, which squares every sample's offsets.
func disc(img *image.RGBA, clip image.Rectangle, cx, cy, rad float64, col color.NRGBA) {
	x0, x1 := max(clip.Min.X, int(math.Floor(cx-rad))), min(clip.Max.X-1, int(math.Ceil(cx+rad)))
	y0, y1 := max(clip.Min.Y, int(math.Floor(cy-rad))), min(clip.Max.Y-1, int(math.Ceil(cy+rad)))
	if x1 < x0 || y1 < y0 {
		return
	}
	r2 := rad * rad
	// sq holds a pixel's four squared sample offsets along an axis, with
	// their least and greatest.
	type sq struct {
		d      [4]float64
		lo, hi float64
	}
	offsets := func(p int, c float64) sq {
		var s sq
		for k := range 4 {
			d := float64(p) + (float64(k)+0.5)/4 - c
			s.d[k] = d * d
		}
		s.lo, s.hi = min(s.d[0], s.d[1], s.d[2], s.d[3]), max(s.d[0], s.d[1], s.d[2], s.d[3])
		return s
	}
	var colsBuf [16]sq
	cols := colsBuf[:0]
	for x := x0; x <= x1; x++ {
		cols = append(cols, offsets(x, cx))
	}
	for y := y0; y <= y1; y++ {
		ry := offsets(y, cy)
		for i, cxs := range cols {
			var n int
			switch {
			case cxs.lo+ry.lo > r2:
				continue
			case cxs.hi+ry.hi <= r2:
				n = 16
			default:
				for _, dy := range ry.d {
					for _, dx := range cxs.d {
						if dx+dy <= r2 {
							n++
						}
					}
				}
			}
			a := float64(col.A) / 255 * float64(n) / 16
			o := img.PixOffset(x0+i, y)
			p := img.Pix[o : o+4 : o+4]
			for k, c := range [4]uint8{col.R, col.G, col.B, 255} {
				p[k] = uint8(math.Round(float64(c)*a + float64(p[k])*(1-a)))
			}
		}
	}
}
