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
// The label beside the square is narrower by the square, so a name too
// long for the cell ends in "…" instead of running into the next one.
type swatchLabel struct {
	widget.BaseWidget
	label  *Lines
	swatch *canvas.Rectangle
}

func newSwatchLabel() *swatchLabel {
	l := &swatchLabel{label: NewLines("", fyne.TextAlignLeading, fyne.TextStyle{}), swatch: canvas.NewRectangle(color.Transparent)}
	l.label.Truncation = fyne.TextTruncateEllipsis
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

func (l *swatchLabel) CreateRenderer() fyne.WidgetRenderer { return &swatchRenderer{l: l} }

type swatchRenderer struct{ l *swatchLabel }

// swatchSide is the side of the square; it sits in the label's leading
// padding and pushes the label over by its width.
func swatchSide() float32 { return theme.TextSize() * 0.6 }

func (r *swatchRenderer) Layout(s fyne.Size) {
	w := swatchSide()
	r.l.label.Move(fyne.NewPos(w, 0))
	r.l.label.Resize(fyne.NewSize(s.Width-w, s.Height))
	r.l.swatch.Move(fyne.NewPos(theme.InnerPadding()/4, (s.Height-w)/2))
	r.l.swatch.Resize(fyne.NewSize(w, w))
}

func (r *swatchRenderer) MinSize() fyne.Size {
	return r.l.label.MinSize().AddWidthHeight(swatchSide(), 0)
}

func (r *swatchRenderer) Refresh() {
	r.l.label.Refresh()
	r.l.swatch.Refresh()
}

func (r *swatchRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.l.swatch, r.l.label}
}

func (r *swatchRenderer) Destroy() {}
