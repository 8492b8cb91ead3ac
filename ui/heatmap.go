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

// Heatmap draws a Rows×Cols matrix (an attention map: query rows, key
// columns) with viridis and a labelled colour bar. Hover reports the entry;
// a tap selects the row. When the map has fewer than two pixels per entry
// it is drawn aggregated into Block×Block blocks (for attention: one block
// per row of patches, in the colour of the largest weight a query patch of
// the one row gives a key patch of the other) and, under the pointer, a
// lens shows the entries themselves on the same colour scale.
type Heatmap struct {
	widget.BaseWidget

	Values     []float32
	Rows, Cols int
	Scale      attnScale
	Hi         float32 // top of the colour range for the shared scale
	Block      int     // tokens per aggregated block (0: never aggregate)
	Selected   int     // highlighted row (−1: none)
	OnTapped   func(row int)
	OnHover    func(row, col int) // −1, −1 when the pointer leaves

	img    *canvas.Image
	bar    *canvas.Image
	hi, lo *GlyphText // the colour bar's ends: they change with every step
	sel    *canvas.Rectangle
	lens   *canvas.Image
	frame  *canvas.Rectangle // the lens's border
	axes   *canvas.Text      // what rows and columns are
	shown  []float32         // Values on the colour scale, 0…1
	lensAt [2]int            // token under the pointer (−1: no lens)
}

// attnScale is how attention weights map to colour.
type attnScale int

const (
	scalePerMap  attnScale = iota // 0 … the map's largest weight
	scaleShared                   // 0 … the largest weight of every map shown
	scaleRowNorm                  // each query row 0 … its own largest weight
	scaleLog                      // log10 over three decades below the largest
)

var attnScaleNames = []string{"per map", "shared", "per row", "log"}

// minPixelsPerEntry is the least a map entry is drawn with before the map
// is aggregated.
const minPixelsPerEntry = 2

// NewHeatmap returns an empty heatmap.
func NewHeatmap() *Heatmap {
	h := &Heatmap{Selected: -1, Hi: 1, lensAt: [2]int{-1, -1}}
	h.ExtendBaseWidget(h)
	return h
}

var colourBar = func() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 1, 256))
	for y := 0; y < 256; y++ {
		img.SetRGBA(0, y, viridis(1-float64(y)/255))
	}
	return img
}()

// CreateRenderer builds the objects once.
func (h *Heatmap) CreateRenderer() fyne.WidgetRenderer {
	h.img = canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
	h.img.ScaleMode = canvas.ImageScalePixels
	h.img.FillMode = canvas.ImageFillStretch
	h.bar = canvas.NewImageFromImage(colourBar)
	h.bar.FillMode = canvas.ImageFillStretch
	h.hi = NewGlyphText("", theme.Color(theme.ColorNameForeground))
	h.lo = NewGlyphText("", theme.Color(theme.ColorNameForeground))
	h.sel = canvas.NewRectangle(color.Transparent)
	h.sel.StrokeColor = color.RGBA{255, 60, 60, 255}
	h.sel.StrokeWidth = 1.5
	h.lens = canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
	h.lens.ScaleMode = canvas.ImageScalePixels
	h.lens.FillMode = canvas.ImageFillStretch
	h.axes = canvas.NewText("rows: query ↓   columns: key →", theme.Color(theme.ColorNameForeground))
	h.frame = canvas.NewRectangle(color.Transparent)
	h.frame.StrokeColor = color.RGBA{255, 255, 255, 255}
	h.frame.StrokeWidth = 1.5
	r := &heatRenderer{h: h}
	r.Refresh()
	return r
}

type heatRenderer struct{ h *Heatmap }

const barWidth, barGap, labelWidth = 12, 4, 44

func (r *heatRenderer) mapRect(s fyne.Size) (fyne.Position, fyne.Size) {
	lw := float32(labelWidth)
	if r.h.hi != nil {
		lw = max(lw, r.h.hi.MinSize().Width+6)
	}
	side := min(s.Width-barWidth-barGap-lw, s.Height)
	return fyne.NewPos(0, (s.Height-side)/2), fyne.NewSize(side, side)
}

func (r *heatRenderer) Layout(s fyne.Size) {
	h := r.h
	pos, sz := r.mapRect(s)
	h.img.Move(pos)
	h.img.Resize(sz)
	bx := pos.X + sz.Width + barGap
	h.bar.Move(fyne.NewPos(bx, pos.Y))
	h.bar.Resize(fyne.NewSize(barWidth, sz.Height))
	th := h.hi.MinSize().Height
	h.hi.Move(fyne.NewPos(bx+barWidth+4, pos.Y))
	h.hi.Resize(h.hi.MinSize())
	h.lo.Move(fyne.NewPos(bx+barWidth+4, pos.Y+sz.Height-th))
	h.lo.Resize(h.lo.MinSize())
	if h.Selected >= 0 && h.Rows > 0 {
		rh := sz.Height / float32(h.Rows)
		h.sel.Move(fyne.NewPos(pos.X, pos.Y+rh*float32(h.Selected)))
		h.sel.Resize(fyne.NewSize(sz.Width, max(rh, 2)))
		h.sel.Show()
	} else {
		h.sel.Hide()
	}
	// The axes are named under the map when there is room.
	h.axes.TextSize = theme.CaptionTextSize()
	h.axes.Text = "rows: query ↓   columns: key →"
	if h.aggregated(sz) {
		h.axes.Text = "query ↓ key →; a block: its largest"
	}
	if as := h.axes.MinSize(); h.Rows > 0 && as.Width <= s.Width && pos.Y+sz.Height+as.Height <= s.Height {
		h.axes.Move(fyne.NewPos(pos.X, pos.Y+sz.Height))
		h.axes.Show()
	} else {
		h.axes.Hide()
	}
	r.placeLens(pos, sz)
}

// lensTokens is the side of the lens, in entries.
const lensTokens = 20

// placeLens shows, while the pointer is over an aggregated map, the
// entries around it at full resolution in the corner away from it.
func (r *heatRenderer) placeLens(pos fyne.Position, sz fyne.Size) {
	h := r.h
	q, k := h.lensAt[0], h.lensAt[1]
	if q < 0 || !h.aggregated(sz) || len(h.shown) != h.Rows*h.Cols {
		h.lens.Hide()
		h.frame.Hide()
		return
	}
	q0 := min(max(q-lensTokens/2, 0), max(h.Rows-lensTokens, 0))
	k0 := min(max(k-lensTokens/2, 0), max(h.Cols-lensTokens, 0))
	n := min(lensTokens, h.Rows, h.Cols)
	img := image.NewRGBA(image.Rect(0, 0, n, n))
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			c := viridis(float64(h.shown[(q0+y)*h.Cols+k0+x]))
			if q0+y == q && k0+x == k {
				c = color.RGBA{255, 60, 60, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	h.lens.Image = img
	// Big enough to read single entries even over a small map (compare
	// mode): it may then cover the neighbouring panel while hovered.
	side := max(sz.Width*0.55, 4*lensTokens)
	lp := pos // top left, unless the pointer is there
	if float32(q)/float32(h.Rows) < 0.5 && float32(k)/float32(h.Cols) < 0.5 {
		lp = fyne.NewPos(pos.X+sz.Width-side, pos.Y+sz.Height-side)
	}
	h.lens.Move(lp)
	h.lens.Resize(fyne.NewSize(side, side))
	h.frame.Move(lp)
	h.frame.Resize(fyne.NewSize(side, side))
	h.lens.Show()
	h.frame.Show()
	h.lens.Refresh()
	h.frame.Refresh()
}

// aggregated reports whether the map is drawn in blocks at this size.
func (h *Heatmap) aggregated(sz fyne.Size) bool {
	return h.Block > 1 && h.Rows%h.Block == 0 && h.Cols%h.Block == 0 &&
		sz.Width/float32(h.Cols) < minPixelsPerEntry
}

func (r *heatRenderer) MinSize() fyne.Size {
	return fyne.NewSize(50+barWidth+barGap+labelWidth, 50)
}

func (r *heatRenderer) Refresh() {
	h := r.h
	fg := theme.Color(theme.ColorNameForeground)
	h.axes.Color = fg
	size := theme.CaptionTextSize()
	var lo, hi string
	if h.Rows > 0 && h.Cols > 0 && len(h.Values) == h.Rows*h.Cols {
		h.shown, lo, hi = scaleAttention(h.Values, h.Rows, h.Cols, h.Scale, h.Hi)
		rows, cols, vals := h.Rows, h.Cols, h.shown
		if _, sz := r.mapRect(h.Size()); h.aggregated(sz) {
			// Each block in the colour of its largest entry, on the
			// entries' own scale: the colour bar reads for the blocks
			// and for the lens over them alike.
			rows, cols = h.Rows/h.Block, h.Cols/h.Block
			vals = blockMax(h.shown, h.Rows, h.Cols, h.Block)
		}
		img := image.NewRGBA(image.Rect(0, 0, cols, rows))
		for k, v := range vals {
			img.SetRGBA(k%cols, k/cols, viridis(float64(v)))
		}
		h.img.Image = img
	} else {
		// Nothing to show (t = 0: no step has attended yet): blank.
		h.img.Image = image.NewRGBA(image.Rect(0, 0, 1, 1))
		h.shown = nil
	}
	h.img.Refresh()
	setGlyphText(h.hi, hi, fg, size)
	setGlyphText(h.lo, lo, fg, size)
	r.Layout(h.Size())
}

// scaleAttention maps attention weights to 0…1 for colouring and returns
// the labels of the colour bar's two ends.
func scaleAttention(v []float32, rows, cols int, s attnScale, shared float32) (out []float32, lo, hi string) {
	out = make([]float32, len(v))
	var top float32
	for _, x := range v {
		top = max(top, x)
	}
	switch s {
	case scaleShared:
		top = max(shared, top)
		fallthrough
	case scalePerMap:
		if top > 0 {
			for k, x := range v {
				out[k] = x / top
			}
		}
		return out, "0", fmt.Sprintf("%.3g", top)
	case scaleRowNorm:
		for q := 0; q < rows; q++ {
			row := v[q*cols : (q+1)*cols]
			var m float32
			for _, x := range row {
				m = max(m, x)
			}
			for k, x := range row {
				if m > 0 {
					out[q*cols+k] = x / m
				}
			}
		}
		return out, "0", "row max"
	default: // scaleLog: three decades below the largest weight
		if top <= 0 {
			return out, "", ""
		}
		lt := math.Log10(float64(top))
		for k, x := range v {
			if x > 0 {
				out[k] = float32(min(max((math.Log10(float64(x))-lt+3)/3, 0), 1))
			}
		}
		return out, fmt.Sprintf("%.1g", top/1000), fmt.Sprintf("%.3g", top)
	}
}

// blockMax is the largest entry of each b×b block of a rows×cols matrix.
func blockMax(v []float32, rows, cols, b int) []float32 {
	r, c := rows/b, cols/b
	out := make([]float32, r*c)
	for q := 0; q < rows; q++ {
		for k := 0; k < cols; k++ {
			out[(q/b)*c+k/b] = max(out[(q/b)*c+k/b], v[q*cols+k])
		}
	}
	return out
}

func (r *heatRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.h.img, r.h.bar, r.h.hi, r.h.lo, r.h.axes, r.h.sel, r.h.lens, r.h.frame}
}
func (r *heatRenderer) Destroy() {}

func (h *Heatmap) cellAt(p fyne.Position) (int, int) {
	r := &heatRenderer{h: h}
	pos, sz := r.mapRect(h.Size())
	if h.Rows == 0 || p.X < pos.X || p.Y < pos.Y || p.X >= pos.X+sz.Width || p.Y >= pos.Y+sz.Height {
		return -1, -1
	}
	return int((p.Y - pos.Y) / sz.Height * float32(h.Rows)), int((p.X - pos.X) / sz.Width * float32(h.Cols))
}

// Tapped selects the row under the pointer.
func (h *Heatmap) Tapped(e *fyne.PointEvent) {
	if row, _ := h.cellAt(e.Position); row >= 0 && h.OnTapped != nil {
		h.OnTapped(row)
	}
}

// MouseIn starts hover reporting.
func (h *Heatmap) MouseIn(e *desktop.MouseEvent) { h.MouseMoved(e) }

// MouseMoved reports the entry under the pointer and moves the lens.
func (h *Heatmap) MouseMoved(e *desktop.MouseEvent) { h.hoverAt(e.Position) }

func (h *Heatmap) hoverAt(p fyne.Position) {
	q, k := h.cellAt(p)
	if h.OnHover != nil {
		h.OnHover(q, k)
	}
	h.lensAt = [2]int{q, k}
	r := &heatRenderer{h: h}
	if h.img != nil {
		r.placeLens(r.mapRect(h.Size()))
	}
}

// MouseOut ends hover reporting and hides the lens.
func (h *Heatmap) MouseOut() {
	if h.OnHover != nil {
		h.OnHover(-1, -1)
	}
	h.lensAt = [2]int{-1, -1}
	if h.img != nil {
		h.lens.Hide()
		h.frame.Hide()
	}
}

// Value returns the entry at (row, col).
func (h *Heatmap) Value(row, col int) float32 {
	if row < 0 || col < 0 || row >= h.Rows || col >= h.Cols || len(h.Values) != h.Rows*h.Cols {
		return 0
	}
	return h.Values[row*h.Cols+col]
}
