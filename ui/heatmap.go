package ui

import (
	"fmt"
	"image"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Heatmap draws a Rows×Cols matrix (an attention map: query rows, key
// columns) with viridis on a fixed range and a labelled colour bar. Hover
// reports the entry; a tap selects the row.
type Heatmap struct {
	widget.BaseWidget

	Values     []float32
	Rows, Cols int
	Lo, Hi     float32 // colour range (shared across compare lanes)
	Selected   int     // highlighted row (−1: none)
	OnTapped   func(row int)
	OnHover    func(row, col int) // −1, −1 when the pointer leaves

	img    *canvas.Image
	bar    *canvas.Image
	hi, lo *canvas.Text
	sel    *canvas.Rectangle
}

// NewHeatmap returns an empty heatmap.
func NewHeatmap() *Heatmap {
	h := &Heatmap{Selected: -1, Hi: 1}
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
	h.hi = canvas.NewText("", theme.Color(theme.ColorNameForeground))
	h.lo = canvas.NewText("", theme.Color(theme.ColorNameForeground))
	h.sel = canvas.NewRectangle(color.Transparent)
	h.sel.StrokeColor = color.RGBA{255, 60, 60, 255}
	h.sel.StrokeWidth = 1.5
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
	h.lo.Move(fyne.NewPos(bx+barWidth+4, pos.Y+sz.Height-th))
	if h.Selected >= 0 && h.Rows > 0 {
		rh := sz.Height / float32(h.Rows)
		h.sel.Move(fyne.NewPos(pos.X, pos.Y+rh*float32(h.Selected)))
		h.sel.Resize(fyne.NewSize(sz.Width, max(rh, 2)))
		h.sel.Show()
	} else {
		h.sel.Hide()
	}
}

func (r *heatRenderer) MinSize() fyne.Size {
	return fyne.NewSize(80+barWidth+barGap+labelWidth, 80)
}

func (r *heatRenderer) Refresh() {
	h := r.h
	fg := theme.Color(theme.ColorNameForeground)
	h.hi.Color, h.lo.Color = fg, fg
	size := theme.CaptionTextSize()
	h.hi.TextSize, h.lo.TextSize = size, size
	h.hi.Text = fmt.Sprintf("%.3g", h.Hi)
	h.lo.Text = fmt.Sprintf("%.3g", h.Lo)
	if h.Rows > 0 && h.Cols > 0 && len(h.Values) == h.Rows*h.Cols {
		img := image.NewRGBA(image.Rect(0, 0, h.Cols, h.Rows))
		span := float64(h.Hi - h.Lo)
		if span <= 0 {
			span = 1
		}
		for k, v := range h.Values {
			img.SetRGBA(k%h.Cols, k/h.Cols, viridis((float64(v)-float64(h.Lo))/span))
		}
		h.img.Image = img
	}
	h.img.Refresh()
	h.hi.Refresh()
	h.lo.Refresh()
	r.Layout(h.Size())
}

func (r *heatRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.h.img, r.h.bar, r.h.hi, r.h.lo, r.h.sel}
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

// MouseMoved reports the entry under the pointer.
func (h *Heatmap) MouseMoved(e *desktop.MouseEvent) {
	if h.OnHover != nil {
		h.OnHover(h.cellAt(e.Position))
	}
}

// MouseOut ends hover reporting.
func (h *Heatmap) MouseOut() {
	if h.OnHover != nil {
		h.OnHover(-1, -1)
	}
}

// Value returns the entry at (row, col).
func (h *Heatmap) Value(row, col int) float32 {
	if row < 0 || col < 0 || row >= h.Rows || col >= h.Cols || len(h.Values) != h.Rows*h.Cols {
		return 0
	}
	return h.Values[row*h.Cols+col]
}
