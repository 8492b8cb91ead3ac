package ui

import (
	"image/color"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Lines is a few lines of text that change with every step: a panel's
// title ("bsa-p2 / t 12 · MSE 0.0311"), the readout, the nearest memory.
// It draws and sits like a Label with the same fields (the same padding,
// alignment and style), one canvas.Text a line. A Label
// keeps its text as rich text: each change splits, shapes and measures it
// again, twice over for a line cut with an ellipsis, in a shaper made
// afresh each time; stepping in the page spent about a sixth of each step
// there. Here a changed line is measured once (Fyne keeps the size of
// every text measured) and only a line wider than the widget is cut.
type Lines struct {
	widget.BaseWidget
	Text      string
	Alignment fyne.TextAlign
	TextStyle fyne.TextStyle
	// Truncation is fyne.TextTruncateEllipsis (each line too wide for
	// the widget ends in "…", and the widget asks for no width) or
	// fyne.TextTruncateOff (it asks for its widest line's width).
	Truncation fyne.TextTruncation
}

// NewLines returns lines of text laid out like a Label's.
func NewLines(text string, align fyne.TextAlign, style fyne.TextStyle) *Lines {
	l := &Lines{Text: text, Alignment: align, TextStyle: style}
	l.ExtendBaseWidget(l)
	return l
}

// SetText shows s, redrawing only when it differs from the text shown.
func (l *Lines) SetText(s string) {
	if s == l.Text {
		return
	}
	l.Text = s
	l.Refresh()
}

func (l *Lines) CreateRenderer() fyne.WidgetRenderer {
	r := &linesRenderer{l: l}
	r.Refresh()
	return r
}

type linesRenderer struct {
	l     *Lines
	texts []*canvas.Text
	full  []string // each line's whole text (texts[i].Text may be cut)
	objs  []fyne.CanvasObject
}

// metrics are the theme's sizes the layout needs.
func (r *linesRenderer) metrics() (textSize, pad float32) {
	th := r.l.Theme()
	return th.Size(theme.SizeNameText), th.Size(theme.SizeNameInnerPadding)
}

func (r *linesRenderer) Refresh() {
	th := r.l.Theme()
	v := fyne.CurrentApp().Settings().ThemeVariant()
	textSize := th.Size(theme.SizeNameText)
	fg := th.Color(theme.ColorNameForeground, v)
	r.full = strings.Split(r.l.Text, "\n")
	for len(r.texts) < len(r.full) {
		r.texts = append(r.texts, &canvas.Text{})
	}
	r.texts = r.texts[:len(r.full)]
	r.objs = r.objs[:0]
	type drawn struct {
		text  string
		color color.Color
		size  float32
		style fyne.TextStyle
		align fyne.TextAlign
	}
	was := make([]drawn, len(r.texts))
	for i, t := range r.texts {
		was[i] = drawn{t.Text, t.Color, t.TextSize, t.TextStyle, t.Alignment}
		t.Color, t.TextSize, t.TextStyle, t.Alignment = fg, textSize, r.l.TextStyle, r.l.Alignment
		r.objs = append(r.objs, t)
	}
	r.Layout(r.l.Size())
	// Only a line drawn differently is refreshed: each refresh costs a
	// look at the goroutine's stack (Fyne's check of its thread rule).
	for i, t := range r.texts {
		if (drawn{t.Text, t.Color, t.TextSize, t.TextStyle, t.Alignment}) != was[i] {
			t.Refresh()
		}
	}
}

// Layout places the lines as a Label does, each cut to the width where
// truncation is on.
func (r *linesRenderer) Layout(size fyne.Size) {
	textSize, pad := r.metrics()
	width := size.Width - 2*pad
	y := pad
	for i, t := range r.texts {
		line := r.full[i]
		t.Text = line
		m := fyne.MeasureText(line, textSize, t.TextStyle)
		if r.l.Truncation == fyne.TextTruncateEllipsis && m.Width > width {
			t.Text = cutToWidth(line, width, func(s string) float32 { return fyne.MeasureText(s, textSize, t.TextStyle).Width })
			m = fyne.MeasureText(t.Text, textSize, t.TextStyle)
		}
		x := pad
		switch r.l.Alignment {
		case fyne.TextAlignCenter:
			x += (width - m.Width) / 2
		case fyne.TextAlignTrailing:
			x += width - m.Width
		}
		t.Move(fyne.NewPos(x, y))
		t.Resize(m)
		y += m.Height // a Label's lines of one text have no spacing between them
	}
}

// cutToWidth is the longest start of line that, followed by "…", is at
// most width wide by measure (just "…" when none is; trailing spaces
// dropped before it).
func cutToWidth(line string, width float32, measure func(string) float32) string {
	runes := []rune(line)
	lo, hi := 0, len(runes) // the answer keeps lo runes: lo fits, hi does not
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if measure(strings.TrimRight(string(runes[:mid]), " ")+"…") <= width {
			lo = mid
		} else {
			hi = mid
		}
	}
	return strings.TrimRight(string(runes[:lo]), " ") + "…"
}

func (r *linesRenderer) MinSize() fyne.Size {
	textSize, pad := r.metrics()
	var w, h float32
	for _, line := range r.full {
		m := fyne.MeasureText(line, textSize, r.l.TextStyle)
		w = max(w, m.Width)
		h += m.Height
	}
	if r.l.Truncation == fyne.TextTruncateEllipsis {
		// As a Label cut with an ellipsis: the width of "M…".
		// (a Label adds no padding to that width).
		w = fyne.MeasureText("M", textSize, fyne.TextStyle{}).Width + fyne.MeasureText("…", textSize, fyne.TextStyle{}).Width
		return fyne.NewSize(w, h+2*pad)
	}
	return fyne.NewSize(w+2*pad, h+2*pad)
}

func (r *linesRenderer) Objects() []fyne.CanvasObject { return r.objs }
func (r *linesRenderer) Destroy()                     {}
