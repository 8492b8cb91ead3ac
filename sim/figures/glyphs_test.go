package figures

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// differ counts the pixels where a and b differ.
func differ(a, b *image.RGBA) int {
	n := 0
	for i := 0; i < len(a.Pix); i += 4 {
		if a.Pix[i] != b.Pix[i] || a.Pix[i+1] != b.Pix[i+1] || a.Pix[i+2] != b.Pix[i+2] || a.Pix[i+3] != b.Pix[i+3] {
			n++
		}
	}
	return n
}

// Text drawn from the kept glyphs is vgimg's to the bit: random strings
// at random sub-pixel places, sizes and colours (translucent ones over
// text already drawn among them), the same string twice (its glyphs kept
// from the first), and rotated text, which vgimg still draws.
func TestGlyphCanvasSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const runes = "0123456789.,-+eE()=*tMSEabcdefghijklmnopqrstuvwxyzABCDXYZ —×→ɣéü"
	alphabet := []rune(runes)
	for trial := range 40 {
		w, h := 200+rng.IntN(300), 100+rng.IntN(200)
		bg := color.NRGBA{uint8(rng.IntN(256)), 200, 255, 255}
		mk := func() *vgimg.Canvas {
			return vgimg.NewWith(vgimg.UseWH(vg.Length(w)*vg.Inch/96, vg.Length(h)*vg.Inch/96), vgimg.UseDPI(96),
				vgimg.UseBackgroundColor(bg))
		}
		plain, fast := mk(), mk()
		g := newGlyphCanvas(fast)
		if g == nil {
			t.Fatal("vgimg's picture is not an *image.RGBA")
		}
		type op struct {
			f     font.Face
			pt    vg.Point
			s     string
			c     color.Color
			angle float64
		}
		var ops []op
		for range 12 {
			n := 1 + rng.IntN(14)
			var s []rune
			for range n {
				s = append(s, alphabet[rng.IntN(len(alphabet))])
			}
			size := vg.Length(6 + rng.Float64()*18)
			f := font.From(plot.DefaultFont, size)
			fc := font.DefaultCache.Lookup(f, size)
			o := op{f: fc, pt: vg.Point{X: vg.Length(rng.Float64()*float64(w)) * vg.Inch / 96, Y: vg.Length(rng.Float64()*float64(h)) * vg.Inch / 96},
				s: string(s), c: color.NRGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(128 + rng.IntN(128))}}
			if rng.IntN(5) == 0 {
				o.angle = 1.5707963267948966
			}
			ops = append(ops, o, o) // each string twice: the second from kept glyphs
		}
		for _, c := range []vg.Canvas{plain, g} {
			for _, o := range ops {
				c.SetColor(o.c)
				if o.angle != 0 {
					c.Push()
					c.Rotate(o.angle)
				}
				c.FillString(o.f, o.pt, o.s)
				if o.angle != 0 {
					c.Pop()
				}
			}
		}
		a, b := plain.Image().(*image.RGBA), fast.Image().(*image.RGBA)
		if n := differ(a, b); n != 0 {
			t.Fatalf("trial %d (%d×%d): %d pixels differ from vgimg's text", trial, w, h, n)
		}
	}
}

// A whole plot drawn on a glyphCanvas is the one vgimg draws.
func TestGlyphCanvasPlotSameBits(t *testing.T) {
	c := syntheticCurve(0)
	p, err := CurvePlot(c)
	if err != nil {
		t.Fatal(err)
	}
	mk := func() *vgimg.Canvas {
		return vgimg.NewWith(vgimg.UseWH(640*vg.Inch/96, 400*vg.Inch/96), vgimg.UseDPI(96))
	}
	plain, fast := mk(), mk()
	withFittedTicks(p, draw.New(plain), func() { p.Draw(draw.New(plain)) })
	dc := draw.New(newGlyphCanvas(fast))
	withFittedTicks(p, dc, func() { p.Draw(dc) })
	if n := differ(plain.Image().(*image.RGBA), fast.Image().(*image.RGBA)); n != 0 {
		t.Fatalf("%d pixels differ", n)
	}
}

// BenchmarkPlotText draws the window's MSE plot (one model, 100 steps,
// 520×260 pixels) with vgimg's text and with the kept glyphs.
func BenchmarkPlotText(b *testing.B) {
	v := make([]float64, 101)
	for t := range v {
		v[t] = 0.05 + 0.04*math.Exp(-float64(t)/10) + 0.01*math.Sin(float64(t)/7)
	}
	for _, fast := range []bool{false, true} {
		name := "vgimg"
		if fast {
			name = "glyphs"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := MSEPlot("MSE to the clean digit", []Series{{Name: "bsa-p2", Values: v}}, 0.09, 30)
				if err != nil {
					b.Fatal(err)
				}
				c := vgimg.NewWith(vgimg.UseWH(520*vg.Inch/96, 260*vg.Inch/96), vgimg.UseDPI(96))
				cv := vg.CanvasSizer(c)
				if fast {
					cv = glyphCanvasOf(c)
				}
				dc := draw.New(cv)
				withFittedTicks(p, dc, func() { p.Draw(dc) })
				sink = c.Image()
			}
		})
	}
}
