package figures

import (
	"image"
	"image/color"
	"math"
	"sync"

	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
)

// Text in a plot's picture: vgimg draws each glyph of each string afresh,
// rasterising its outline and compositing its mask through x/image/draw's
// general transform (an interface call per pixel), from a font face it
// makes again for every string. In the page that was 35–45% of a plot's
// 30–50 ms. glyphCanvas draws upright text (no rotation, translation or
// scale in force) from masks kept per glyph and sub-pixel position, with
// the arithmetic the transform does for such text (a whole-pixel
// translation, whose bilinear weights are 1 and 0), so the picture is the
// same to the bit (TestGlyphCanvasSameBits); text drawn otherwise (the y
// axis' rotated label) goes to vgimg as before.

// glyphCanvas is a vgimg canvas whose upright text comes from the glyphs
// its faces keep (glyphs).
type glyphCanvas struct {
	*vgimg.Canvas
	img *image.RGBA
	// colors is vgimg's colour stack, moved whether a transform is in
	// force at each Push level.
	colors []color.Color
	moved  []bool
}

// newGlyphCanvas wraps c, whose picture is an *image.RGBA (vgimg's); nil
// where it is not.
func newGlyphCanvas(c *vgimg.Canvas) *glyphCanvas {
	img, ok := c.Image().(*image.RGBA)
	if !ok {
		return nil
	}
	return &glyphCanvas{Canvas: c, img: img, colors: []color.Color{color.Black}, moved: []bool{false}}
}

// glyphCanvasOf is c wrapped where it can be.
func glyphCanvasOf(c *vgimg.Canvas) vg.CanvasSizer {
	if g := newGlyphCanvas(c); g != nil {
		return g
	}
	return c
}

func (c *glyphCanvas) SetColor(clr color.Color) {
	c.Canvas.SetColor(clr)
	if clr == nil {
		clr = color.Black
	}
	c.colors[len(c.colors)-1] = clr
}

func (c *glyphCanvas) Push() {
	c.Canvas.Push()
	c.colors = append(c.colors, c.colors[len(c.colors)-1])
	c.moved = append(c.moved, c.moved[len(c.moved)-1])
}

func (c *glyphCanvas) Pop() {
	c.Canvas.Pop()
	c.colors = c.colors[:len(c.colors)-1]
	c.moved = c.moved[:len(c.moved)-1]
}

func (c *glyphCanvas) Rotate(t float64) {
	c.Canvas.Rotate(t)
	c.moved[len(c.moved)-1] = true
}

func (c *glyphCanvas) Translate(pt vg.Point) {
	c.Canvas.Translate(pt)
	c.moved[len(c.moved)-1] = true
}

func (c *glyphCanvas) Scale(x, y float64) {
	c.Canvas.Scale(x, y)
	c.moved[len(c.moved)-1] = true
}

// FillString draws str as vgimg does: its gg context draws at (x, h−y)
// dots with an identity matrix, each glyph at a whole-pixel translation.
func (c *glyphCanvas) FillString(f font.Face, pt vg.Point, str string) {
	if c.moved[len(c.moved)-1] || f.Font.Size == 0 {
		c.Canvas.FillString(f, pt, str)
		return
	}
	dpi := c.DPI()
	_, h := c.Size()
	x, y := pt.X.Dots(dpi), h.Dots(dpi)-pt.Y.Dots(dpi)
	face := glyphs.face(f, dpi)
	sr, sg, sb, sa := c.colors[len(c.colors)-1].RGBA()
	dot := fixed.Point26_6{X: fix26(x), Y: fix26(y)}
	prev := rune(-1)
	for _, r := range str {
		if prev >= 0 {
			dot.X += face.kern(prev, r)
		}
		g, ok := face.glyph(r, dot)
		if !ok {
			continue
		}
		c.blend(g, int(dot.X>>6), int(dot.Y>>6), sr, sg, sb, sa)
		dot.X += g.advance
		prev = r
	}
}

// blend composites glyph g at the whole-pixel offset (ox, oy) in the
// colour (sr, sg, sb, sa) (premultiplied, 16 bits) over the picture, as
// x/image/draw's Kernel.Transform does for a whole-pixel translation with
// a source mask: each channel p·m/0xffff, then q·(0xffff−a)/0xffff + p,
// stored as its high byte.
func (c *glyphCanvas) blend(g *glyph, ox, oy int, sr, sg, sb, sa uint32) {
	r := g.rect.Add(image.Pt(ox, oy))
	clip := r.Intersect(c.img.Rect)
	for y := clip.Min.Y; y < clip.Max.Y; y++ {
		mrow := g.mask[(y-r.Min.Y)*g.rect.Dx():]
		drow := c.img.Pix[c.img.PixOffset(clip.Min.X, y):]
		for x := clip.Min.X; x < clip.Max.X; x++ {
			m := uint32(mrow[x-r.Min.X]) * 0x101
			if m == 0 {
				drow = drow[4:]
				continue
			}
			pr, pg, pb, pa := sr*m/0xffff, sg*m/0xffff, sb*m/0xffff, sa*m/0xffff
			a1 := 0xffff - pa
			drow[0] = uint8((uint32(drow[0])*0x101*a1/0xffff + pr) >> 8)
			drow[1] = uint8((uint32(drow[1])*0x101*a1/0xffff + pg) >> 8)
			drow[2] = uint8((uint32(drow[2])*0x101*a1/0xffff + pb) >> 8)
			drow[3] = uint8((uint32(drow[3])*0x101*a1/0xffff + pa) >> 8)
			drow = drow[4:]
		}
	}
}

// fix26 is gg's rounding of a position in dots to 26.6 fixed point.
func fix26(v float64) fixed.Int26_6 { return fixed.Int26_6(math.Round(v * 64)) }

// A glyph is one rune's mask at one sub-pixel position: rect is relative
// to the dot's whole pixel, mask its alpha, row by row.
type glyph struct {
	rect    image.Rectangle
	mask    []uint8
	advance fixed.Int26_6
}

type glyphKey struct {
	r      rune
	fx, fy fixed.Int26_6 // the dot's sub-pixel part
}

type faceKey struct {
	font font.Font
	src  *opentype.Font // the typeface's outlines (a theme's font may share its name)
	dpi  float64
}

// glyphFace is one font at one size and resolution: its face (made once)
// and the glyphs it has drawn.
type glyphFace struct {
	mu     sync.Mutex
	face   xfont.Face
	glyphs map[glyphKey]*glyph
	kerns  map[[2]rune]fixed.Int26_6
}

// maxGlyphs bounds what a face keeps (a few hundred bytes each): beyond
// it the face starts again.
const maxGlyphs = 2048

func (f *glyphFace) kern(a, b rune) fixed.Int26_6 {
	f.mu.Lock()
	defer f.mu.Unlock()
	k, ok := f.kerns[[2]rune{a, b}]
	if !ok {
		k = f.face.Kern(a, b)
		if len(f.kerns) >= maxGlyphs {
			clear(f.kerns)
		}
		f.kerns[[2]rune{a, b}] = k
	}
	return k
}

func (f *glyphFace) glyph(r rune, dot fixed.Point26_6) (*glyph, bool) {
	key := glyphKey{r: r, fx: dot.X & 63, fy: dot.Y & 63}
	f.mu.Lock()
	defer f.mu.Unlock()
	if g, ok := f.glyphs[key]; ok {
		return g, g != nil
	}
	// Drawn at the sub-pixel position alone: a whole-pixel shift of the
	// dot only moves the mask.
	dr, mask, mp, adv, ok := f.face.Glyph(fixed.Point26_6{X: key.fx, Y: key.fy}, r)
	var g *glyph
	if ok {
		g = &glyph{rect: dr, advance: adv, mask: make([]uint8, dr.Dx()*dr.Dy())}
		for y := 0; y < dr.Dy(); y++ {
			for x := 0; x < dr.Dx(); x++ {
				_, _, _, a := mask.At(mp.X+x, mp.Y+y).RGBA()
				g.mask[y*dr.Dx()+x] = uint8(a >> 8)
			}
		}
	}
	if len(f.glyphs) >= maxGlyphs {
		clear(f.glyphs)
	}
	f.glyphs[key] = g
	return g, ok
}

// glyphs are the faces the plots have drawn text in.
var glyphs glyphFaces

type glyphFaces struct {
	mu    sync.Mutex
	faces map[faceKey]*glyphFace
}

func (fs *glyphFaces) face(f font.Face, dpi float64) *glyphFace {
	key := faceKey{font: f.Font, src: f.Face, dpi: dpi}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if g, ok := fs.faces[key]; ok {
		return g
	}
	if fs.faces == nil {
		fs.faces = map[faceKey]*glyphFace{}
	}
	g := &glyphFace{face: f.FontFace(dpi), glyphs: map[glyphKey]*glyph{}, kerns: map[[2]rune]fixed.Int26_6{}}
	fs.faces[key] = g
	return g
}
