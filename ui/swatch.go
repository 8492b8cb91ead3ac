package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// swatchLabel is a label led by a square of a colour: a model's name in
// the compare table, in the colour of its lines and its state's frame.
type swatchLabel struct {
	widget.Label
	swatch *canvas.Rectangle
}

func newSwatchLabel() *swatchLabel {
	l := &swatchLabel{swatch: canvas.NewRectangle(color.Transparent)}
	l.Truncation = fyne.TextTruncateEllipsis
	l.ExtendBaseWidget(l)
	return l
}

// SetColor sets the swatch's colour (nil: none).
func (l *swatchLabel) SetColor(c color.Color) {
	if c == nil {
		c = color.Transparent
	}
	if l.swatch.FillColor != c {
		l.swatch.FillColor = c
		l.swatch.Refresh()
	}
}

func (l *swatchLabel) CreateRenderer() fyne.WidgetRenderer {
	return &swatchRenderer{inner: l.Label.CreateRenderer(), l: l}
}

type swatchRenderer struct {
	inner fyne.WidgetRenderer
	l     *swatchLabel
}

// swatchSide is the side of the square, its gap included: it sits in the
// label's leading padding and pushes the text over by a little more.
func swatchSide() float32 { return theme.TextSize() * 0.6 }

func (r *swatchRenderer) Layout(s fyne.Size) {
	w := swatchSide()
	r.inner.Layout(fyne.NewSize(s.Width-w, s.Height))
	for _, o := range r.inner.Objects() {
		o.Move(o.Position().AddXY(w, 0))
	}
	side := w
	r.l.swatch.Move(fyne.NewPos(theme.InnerPadding()/4, (s.Height-side)/2))
	r.l.swatch.Resize(fyne.NewSize(side, side))
}

func (r *swatchRenderer) MinSize() fyne.Size {
	return r.inner.MinSize().AddWidthHeight(swatchSide(), 0)
}

func (r *swatchRenderer) Refresh() {
	r.inner.Refresh()
	r.Layout(r.l.Size())
}

func (r *swatchRenderer) Objects() []fyne.CanvasObject {
	return append([]fyne.CanvasObject{r.l.swatch}, r.inner.Objects()...)
}

func (r *swatchRenderer) Destroy() { r.inner.Destroy() }
