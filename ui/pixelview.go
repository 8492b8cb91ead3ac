package ui

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// PixelView draws a 28×28 image scaled up with crisp pixels, optionally
// with the patch grid, outlines around masked pixels, a per-pixel overlay
// (an attention row painted over the image) and a selected patch. Taps
// report the patch under the pointer; hovering reports the pixel.
type PixelView struct {
	widget.BaseWidget

	Pixels  []float32 // 784 values in [0,1]
	Mask    []bool    // masked pixels, outlined
	Grid    int       // patch side for the grid (0: none)
	Overlay []float32 // 784 values in [0,1] painted with viridis (nil: none)
	// OverlayLo and OverlayHi are the values Overlay's 0 and 1 stand for,
	// written at the ends of the overlay's colour bar.
	OverlayLo, OverlayHi float32
	Selected             int         // selected patch on the Grid (−1: none)
	Frame                color.Color // a border in this colour (a model's own colour in compare mode; nil: none)
	// OnTapped receives the patch index (on Grid, or P=1 pixel when 0).
	OnTapped func(patch int)
	// OnHover receives the pixel under the pointer, or −1 when it leaves.
	OnHover func(pixel int)

	// cells is the 28×28 picture, scaled up without smoothing: a step
	// uploads 3 KB, not a texture of the view's size. marks draws what
	// does not change with the step (the grid, the masked pixels'
	// outlines, the selected patch, the frame) over it, transparent
	// elsewhere; it is drawn again only when they change (marked).
	cells   *canvas.Image
	cellImg *image.RGBA
	marks   *canvas.Raster
	marked  marksKey
	// marksDrawn and cellsDrawn count the layers' refreshes (their test).
	marksDrawn, cellsDrawn int
	legend                 *overlayLegend
}

// marksKey is what the marks layer shows.
type marksKey struct {
	mask           [13]uint64 // the masked pixels, a bit each
	masked         bool       // Mask is set
	grid, selected int
	frame          color.RGBA
	framed         bool
}

func (v *PixelView) marksKey() marksKey {
	k := marksKey{masked: v.Mask != nil, grid: v.Grid, selected: v.Selected, framed: v.Frame != nil}
	for q, m := range v.Mask {
		if m && q < 784 {
			k.mask[q/64] |= 1 << (q % 64)
		}
	}
	if v.Frame != nil {
		k.frame = color.RGBAModel.Convert(v.Frame).(color.RGBA)
	}
	return k
}

// NewPixelView returns an empty view.
func NewPixelView() *PixelView {
	v := &PixelView{Selected: -1}
	v.ExtendBaseWidget(v)
	return v
}

// CreateRenderer builds the layers once; Refresh redraws them.
func (v *PixelView) CreateRenderer() fyne.WidgetRenderer {
	v.cellImg = image.NewRGBA(image.Rect(0, 0, 28, 28))
	v.cells = canvas.NewImageFromImage(v.cellImg)
	v.cells.FillMode = canvas.ImageFillStretch
	v.cells.ScaleMode = canvas.ImageScalePixels
	v.marks = canvas.NewRaster(v.drawMarks)
	v.marks.ScaleMode = canvas.ImageScalePixels
	v.marked = v.marksKey()
	v.legend = newOverlayLegend()
	v.paintCells()
	return &pixelRenderer{v: v}
}

// paintCells writes each pixel's colour into the 28×28 picture (black
// while there are no pixels, as draw leaves it) and reports whether any
// changed. A picture that did not (the clean digit and the input, at
// every step) is not uploaded again: in the page each refresh costs a
// texture upload and Fyne's check of the calling goroutine.
func (v *PixelView) paintCells() (changed bool) {
	if len(v.Pixels) != 784 {
		for _, b := range v.cellImg.Pix {
			if b != 0 {
				clear(v.cellImg.Pix)
				return true
			}
		}
		return false
	}
	for q := range 784 {
		c := v.cellColor(q)
		p := v.cellImg.Pix[q*4 : q*4+4 : q*4+4]
		if p[0] != c.R || p[1] != c.G || p[2] != c.B || p[3] != c.A {
			p[0], p[1], p[2], p[3] = c.R, c.G, c.B, c.A
			changed = true
		}
	}
	return changed
}

type pixelRenderer struct{ v *PixelView }

// pixelViewMin is a PixelView's smallest side.
const pixelViewMin = 96

func (r *pixelRenderer) Layout(s fyne.Size) {
	side := min(s.Width, s.Height)
	r.v.cells.Move(fyne.NewPos((s.Width-side)/2, (s.Height-side)/2))
	r.v.cells.Resize(fyne.NewSize(side, side))
	r.v.marks.Resize(s)
	r.v.legend.place(r.v, s)
}
func (r *pixelRenderer) MinSize() fyne.Size { return fyne.NewSize(pixelViewMin, pixelViewMin) }
func (r *pixelRenderer) Refresh()           { r.v.refreshLayers() }

// Refresh redraws the view: the picture always, the marks when they
// changed. It refreshes the layers, not the widget: Fyne drops the
// textures of everything inside a refreshed object, and the marks layer
// (a texture of the view's size) would be drawn and uploaded again on
// every step.
func (v *PixelView) Refresh() {
	if v.cells == nil {
		v.BaseWidget.Refresh() // builds the renderer, which draws both
		return
	}
	v.refreshLayers()
}

func (v *PixelView) refreshLayers() {
	if v.paintCells() {
		v.cellsDrawn++
		v.cells.Refresh()
	}
	if k := v.marksKey(); k != v.marked {
		v.marked = k
		v.marksDrawn++
		v.marks.Refresh()
	}
	v.legend.place(v, v.Size())
}
func (r *pixelRenderer) Objects() []fyne.CanvasObject {
	return append([]fyne.CanvasObject{r.v.cells, r.v.marks}, r.v.legend.objects()...)
}
func (r *pixelRenderer) Destroy() {}

// overlayLegend is the overlay's colour bar along the bottom of the image,
// its ends labelled with the values they stand for.
type overlayLegend struct {
	back   *canvas.Rectangle
	bar    *canvas.Image
	lo, hi *canvas.Text
}

func newOverlayLegend() *overlayLegend {
	l := &overlayLegend{back: canvas.NewRectangle(color.NRGBA{0, 0, 0, 170}), bar: canvas.NewImageFromImage(overlayBar),
		lo: canvas.NewText("", color.White), hi: canvas.NewText("", color.White)}
	l.bar.FillMode = canvas.ImageFillStretch
	l.bar.ScaleMode = canvas.ImageScaleSmooth
	return l
}

// overlayBar is viridis from 0 (left) to 1 (right), as the overlay paints.
var overlayBar = func() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 256, 1))
	for x := 0; x < 256; x++ {
		img.SetRGBA(x, 0, viridis(float64(x)/255))
	}
	return img
}()

func (l *overlayLegend) objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{l.back, l.bar, l.lo, l.hi}
}

// place shows the legend at the bottom of v's image while v has an
// overlay, hides it otherwise.
func (l *overlayLegend) place(v *PixelView, s fyne.Size) {
	side := min(s.Width, s.Height)
	if v.Overlay == nil || side < 80 {
		for _, o := range l.objects() {
			o.Hide()
		}
		return
	}
	ts := max(theme.CaptionTextSize()*0.9, 9)
	l.lo.Text, l.hi.Text = fmt.Sprintf("α %.3g", v.OverlayLo), fmt.Sprintf("%.3g", v.OverlayHi)
	for _, t := range []*canvas.Text{l.lo, l.hi} {
		t.TextSize = ts
		t.Resize(t.MinSize())
	}
	th := l.lo.MinSize().Height
	ox, oy := (s.Width-side)/2, (s.Height-side)/2
	h := th + 6
	y := oy + side - h
	l.back.Move(fyne.NewPos(ox, y))
	l.back.Resize(fyne.NewSize(side, h))
	lw, hw := l.lo.MinSize().Width, l.hi.MinSize().Width
	l.lo.Move(fyne.NewPos(ox+3, y+3))
	l.hi.Move(fyne.NewPos(ox+side-hw-3, y+3))
	bx := ox + lw + 8
	l.bar.Move(fyne.NewPos(bx, y+h/2-3))
	l.bar.Resize(fyne.NewSize(max(ox+side-hw-8-bx, 4), 6))
	for _, o := range l.objects() {
		o.Show()
		o.Refresh()
	}
}

// square returns the side and offsets of the largest centred square.
func square(w, h int) (side, ox, oy int) {
	side = min(w, h)
	return side, (w - side) / 2, (h - side) / 2
}

// draw paints the view at w × h: each of the 784 cells' colour is worked
// out once, each column's and row's cell and place in it once, and the
// pixels are written straight into the image, a row like the one above
// it copied (drawNaive, the test's twin, places every pixel by itself:
// the same image; the page pays for it on every step).
func (v *PixelView) draw(w, h int) image.Image { return v.paint(w, h, true) }

// drawMarks paints the marks layer at w × h: draw's image where it shows
// a mark (the grid, an outline, the selected patch, the frame),
// transparent where it shows a pixel's colour.
func (v *PixelView) drawMarks(w, h int) image.Image { return v.paint(w, h, false) }

// paint is draw, with the pixels' colours (cells) or without them.
func (v *PixelView) paint(w, h int, cells bool) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	side, ox, oy := square(w, h)
	if side < 28 || len(v.Pixels) != 784 {
		return img
	}
	cell := float64(side) / 28
	outline := color.RGBA{230, 90, 40, 255}
	gridC := color.RGBA{90, 90, 110, 255}
	var base [784]color.RGBA
	for q := range base {
		if cells {
			base[q] = v.cellColor(q)
		}
	}
	// Each column's (and row's) cell, and where in its cell it lies, as
	// drawNaive works them out: on a grid line, near the cell's low or
	// high edge, on the selected patch's border.
	type place struct {
		cell                int
		grid, low, high, in bool // in: inside the selected patch's row (column) of patches
		border              bool // on the selected patch's border along this axis
	}
	edge := 1.5 / cell
	e2 := 2.5 / cell
	sr, sc := -1, -1
	if v.Selected >= 0 && v.Grid > 0 {
		g := 28 / v.Grid
		sr, sc = v.Selected/g, v.Selected%g
	}
	places := func(sel int) []place {
		out := make([]place, side)
		for x := range out {
			px := min(int(float64(x)/cell), 27)
			fx := float64(x)/cell - float64(px)
			pl := place{cell: px, low: fx < edge, high: fx > 1-edge}
			if v.Grid > 0 {
				pl.grid = px%v.Grid == 0 && fx < edge/1.5
				pl.in = px/v.Grid == sel
				lx := float64(px%v.Grid) + fx
				pl.border = lx < e2 || lx > float64(v.Grid)-e2
			}
			out[x] = pl
		}
		return out
	}
	cols, rows := places(sc), places(sr)
	for y := range side {
		ry := rows[y]
		row := img.Pix[(oy+y)*img.Stride+ox*4 : (oy+y)*img.Stride+(ox+side)*4]
		if y > 0 && rows[y-1] == ry {
			// The same cells, edges and borders as the row above.
			copy(row, img.Pix[(oy+y-1)*img.Stride+ox*4:])
			continue
		}
		py := ry.cell
		for x, cx := range cols {
			q := py*28 + cx.cell
			c := base[q]
			if cx.grid || ry.grid {
				c = gridC
			}
			if v.Mask != nil && v.Mask[q] {
				if (cx.low && (cx.cell == 0 || !v.Mask[q-1])) || (cx.high && (cx.cell == 27 || !v.Mask[q+1])) ||
					(ry.low && (py == 0 || !v.Mask[q-28])) || (ry.high && (py == 27 || !v.Mask[q+28])) {
					c = outline
				}
			}
			if sr >= 0 && ry.in && cx.in && (cx.border || ry.border) {
				c = color.RGBA{255, 40, 40, 255}
			}
			p := row[x*4 : x*4+4 : x*4+4]
			p[0], p[1], p[2], p[3] = c.R, c.G, c.B, c.A
		}
	}
	v.paintFrame(img, side, ox, oy)
	return img
}

// cellColor is pixel q's grey, with the attention painted over it where
// there is an Overlay (opaque where it is high).
func (v *PixelView) cellColor(q int) color.RGBA {
	g := uint8(min(max(v.Pixels[q], 0), 1)*255 + 0.5)
	c := color.RGBA{g, g, g, 255}
	if v.Overlay != nil {
		ov := float64(v.Overlay[q])
		o := viridis(ov)
		a := 0.2 + 0.75*ov
		mix := func(x, y uint8) uint8 { return uint8(float64(x)*(1-a) + float64(y)*a) }
		c = color.RGBA{mix(c.R, o.R), mix(c.G, o.G), mix(c.B, o.B), 255}
	}
	return c
}

// paintFrame draws the Frame border (if any) round the side × side picture
// at (ox, oy).
func (v *PixelView) paintFrame(img *image.RGBA, side, ox, oy int) {
	if v.Frame == nil {
		return
	}
	fc := color.RGBAModel.Convert(v.Frame).(color.RGBA)
	bw := max(side/40, 3)
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			if x < bw || y < bw || x >= side-bw || y >= side-bw {
				img.SetRGBA(ox+x, oy+y, fc)
			}
		}
	}
}

// pixelAt maps a position in the widget to a pixel (−1 outside the image).
func (v *PixelView) pixelAt(p fyne.Position) int {
	s := v.Size()
	side := math.Min(float64(s.Width), float64(s.Height))
	ox, oy := (float64(s.Width)-side)/2, (float64(s.Height)-side)/2
	x, y := (float64(p.X)-ox)/side*28, (float64(p.Y)-oy)/side*28
	if x < 0 || y < 0 || x >= 28 || y >= 28 {
		return -1
	}
	return int(y)*28 + int(x)
}

// Tapped reports the patch under the pointer.
func (v *PixelView) Tapped(e *fyne.PointEvent) {
	q := v.pixelAt(e.Position)
	if q < 0 || v.OnTapped == nil {
		return
	}
	g := max(v.Grid, 1)
	v.OnTapped((q/28/g)*(28/g) + (q%28)/g)
}

// MouseIn starts hover reporting.
func (v *PixelView) MouseIn(e *desktop.MouseEvent) { v.MouseMoved(e) }

// MouseMoved reports the pixel under the pointer.
func (v *PixelView) MouseMoved(e *desktop.MouseEvent) {
	if v.OnHover != nil {
		v.OnHover(v.pixelAt(e.Position))
	}
}

// MouseOut ends hover reporting.
func (v *PixelView) MouseOut() {
	if v.OnHover != nil {
		v.OnHover(-1)
	}
}

// describe is the hover text for pixel q.
func describe(name string, px []float32, q int) string {
	if q < 0 || q >= len(px) {
		return ""
	}
	return fmt.Sprintf("%s pixel (%d,%d) = %.3f", name, q/28, q%28, px[q])
}
