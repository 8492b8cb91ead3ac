package figures

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"attractorlab/sim"
)

// vectorOnly hides a raster canvas's DPI, so the cloud draws glyphs on it
// as it does on SVG and PDF: the naive twin of its raster path.
type vectorOnly struct{ vg.CanvasSizer }

// The cloud painted pixel by pixel looks as it does drawn disc by disc:
// the same discs at the same places, the same faint colours.
func TestCloudRasterMatchesGlyphs(t *testing.T) {
	s := randomSpace(3000)
	p, err := StateSpacePlot(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	render := func(vector bool) *image.RGBA {
		c := vgimg.NewWith(vgimg.UseWH(900*vg.Inch/96, 700*vg.Inch/96), vgimg.UseDPI(96))
		var cv vg.CanvasSizer = c
		if vector {
			cv = vectorOnly{c}
		}
		p.Draw(draw.New(cv))
		return c.Image().(*image.RGBA)
	}
	raster, glyphs := render(false), render(true)
	var sum, n float64
	worst := 0.0
	// Mean difference over 8×8 blocks: single pixels differ by the
	// discs' anti-aliasing; the blocks must agree.
	b := raster.Bounds()
	for by := b.Min.Y; by+8 <= b.Max.Y; by += 8 {
		for bx := b.Min.X; bx+8 <= b.Max.X; bx += 8 {
			var d float64
			for y := by; y < by+8; y++ {
				for x := bx; x < bx+8; x++ {
					o := raster.PixOffset(x, y)
					for k := range 3 {
						d += float64(raster.Pix[o+k]) - float64(glyphs.Pix[o+k])
					}
				}
			}
			d = math.Abs(d) / (64 * 3)
			sum += d
			n++
			worst = math.Max(worst, d)
		}
	}
	if mean := sum / n; mean > 1 || worst > 12 {
		t.Errorf("raster and glyph clouds differ: mean %.2f, worst 8×8 block %.2f (of 255)", mean, worst)
	}
	t.Logf("raster against glyphs: mean %.3f, worst 8×8 block %.2f (of 255)", sum/n, worst)
}

func BenchmarkStateSpacePlot(b *testing.B) {
	s := randomSpace(10000)
	b.ReportAllocs()
	for b.Loop() {
		p, err := StateSpacePlot(s, nil)
		if err != nil {
			b.Fatal(err)
		}
		sink = Render(p, 900, 700, 96)
	}
}

var sink image.Image

// randomSpace is a state space of n points scattered about the origin,
// labelled at random (seeded).
func randomSpace(n int) *sim.StateSpace {
	rng := rand.New(rand.NewPCG(3, 4))
	s := &sim.StateSpace{Share: [2]float64{0.1, 0.07}}
	for range n {
		s.Points = append(s.Points, [2]float64{rng.NormFloat64() * 3, rng.NormFloat64() * 2})
		s.Labels = append(s.Labels, uint8(rng.IntN(10)))
	}
	return s
}

// discNaive is disc sampling every one of a pixel's 16 points: its twin.
// It blends a disc of colour col (its alpha the disc's opacity) centred
// at (cx, cy) pixels over img inside clip, each pixel covered by the share
// of it the disc covers (sampled 4×4), as "over" on premultiplied pixels.
func discNaive(img *image.RGBA, clip image.Rectangle, cx, cy, rad float64, col color.NRGBA) {
	x0, x1 := max(clip.Min.X, int(math.Floor(cx-rad))), min(clip.Max.X-1, int(math.Ceil(cx+rad)))
	y0, y1 := max(clip.Min.Y, int(math.Floor(cy-rad))), min(clip.Max.Y-1, int(math.Ceil(cy+rad)))
	r2 := rad * rad
	for y := y0; y <= y1; y++ {
		for x := x0; x <= x1; x++ {
			n := 0
			for sy := range 4 {
				dy := float64(y) + (float64(sy)+0.5)/4 - cy
				for sx := range 4 {
					dx := float64(x) + (float64(sx)+0.5)/4 - cx
					if dx*dx+dy*dy <= r2 {
						n++
					}
				}
			}
			if n == 0 {
				continue
			}
			a := float64(col.A) / 255 * float64(n) / 16
			o := img.PixOffset(x, y)
			p := img.Pix[o : o+4 : o+4]
			for k, c := range [4]uint8{col.R, col.G, col.B, 255} {
				p[k] = uint8(math.Round(float64(c)*a + float64(p[k])*(1-a)))
			}
		}
	}
}

// TestDiscMatchesNaive: disc paints discNaive's bytes for random centres,
// radii (below a pixel to several), colours and clips, over random pixels.
func TestDiscMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 300 {
		a := image.NewRGBA(image.Rect(0, 0, 40, 30))
		for k := range a.Pix {
			a.Pix[k] = uint8(rng.IntN(256))
		}
		b := image.NewRGBA(a.Rect)
		copy(b.Pix, a.Pix)
		clip := image.Rect(rng.IntN(10), rng.IntN(10), 25+rng.IntN(16), 20+rng.IntN(11))
		cx, cy := rng.Float64()*44-2, rng.Float64()*34-2
		rad := 0.2 + rng.Float64()*6
		col := color.NRGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256))}
		disc(a, clip, cx, cy, rad, col)
		discNaive(b, clip, cx, cy, rad, col)
		for k := range a.Pix {
			if a.Pix[k] != b.Pix[k] {
				t.Fatalf("trial %d (centre %.3f, %.3f, radius %.3f): byte %d is %d, the naive disc's %d", trial, cx, cy, rad, k, a.Pix[k], b.Pix[k])
			}
		}
	}
}
