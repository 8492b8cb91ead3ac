package figures

import (
	"image"
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
