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
	// Lead, when more than 0 (with the leading alignment), draws the
	// first Lead runes of the first line as a text of their own and the
	// rest beside it: the readout, whose head changes each step ("t = 12
	// ") and whose rest does not, has only its head drawn again (in the
	// page each changed text is shaped and rasterised afresh). Meant for
	// a monospace style, where the two pieces sit exactly as one text.
	// The head is a GlyphText: its changing digits are drawn from kept
	// pieces.
	Lead int
	// Glyphs draws each line as a GlyphText (while it changes often, one
	// kept canvas.Text a word or other character) instead of a
	// canvas.Text: for lines whose numbers change with every step. They
	// sit at the sum of their pieces' advances (no kerning between
	// pieces), within 2 px of where a Label puts them.
	Glyphs bool
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
	l      *Lines
	texts  []*canvas.Text // a text a line, then the first line's rest when it is split (lead)
	glyphs []*GlyphText   // with Glyphs, a line each; texts[i] is then unused, except the rest
	head   *GlyphText     // the first line's head when it is split (lead)
	full   []string       // each line's whole text (texts[i].Text may be cut)
	objs   []fyne.CanvasObject
}

// lead is where the first line is split (Lines.Lead), in bytes; 0: it
// is not.
func (r *linesRenderer) lead() int {
	if len(r.full) == 0 {
		return 0
	}
	return r.l.leadCut(r.full[0])
}

// leadCut is where a first line is split (Lines.Lead): the byte offset
// after its first Lead runes; 0 when it is not split (no Lead, another
// alignment, or no rest beside the head).
func (l *Lines) leadCut(line string) int {
	if l.Lead <= 0 || l.Alignment != fyne.TextAlignLeading {
		return 0
	}
	n := 0
	for i := range line {
		if n == l.Lead {
			return i
		}
		n++
	}
	return 0
}

// lineSize is the size of a line drawn whole (first: the first line),
// measured as it is drawn: from its pieces' sizes where it is a
// GlyphText (Glyphs, and the head of a split line), so
// that a line whose numbers change is not shaped anew to be measured.
func (l *Lines) lineSize(line string, first bool, textSize float32) fyne.Size {
	if l.Glyphs {
		return glyphsSize(line, textSize, l.TextStyle)
	}
	if cut := l.leadCut(line); first && cut > 0 {
		hm := glyphsSize(line[:cut], textSize, l.TextStyle)
		rm := fyne.MeasureText(line[cut:], textSize, l.TextStyle)
		return fyne.NewSize(hm.Width+rm.Width, max(hm.Height, rm.Height))
	}
	return fyne.MeasureText(line, textSize, l.TextStyle)
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
	n := len(r.full)
	if r.lead() > 0 {
		n++
	}
	for len(r.texts) < n {
		r.texts = append(r.texts, &canvas.Text{})
	}
	r.texts = r.texts[:n]
	r.objs = r.objs[:0]
	lead := r.lead()
	if r.l.Glyphs {
		for len(r.glyphs) < len(r.full) {
			r.glyphs = append(r.glyphs, NewGlyphText("", nil))
		}
		r.glyphs = r.glyphs[:len(r.full)]
	}
	if lead > 0 && r.head == nil {
		r.head = NewGlyphText("", nil)
	}
	look := func(g *GlyphText) {
		if g != nil && (g.Color != fg || g.TextSize != textSize || g.TextStyle != r.l.TextStyle) {
			g.Color, g.TextSize, g.TextStyle = fg, textSize, r.l.TextStyle
			g.Refresh()
		}
	}
	for _, g := range r.glyphs {
		look(g)
	}
	look(r.head)
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
		switch {
		case i == 0 && lead > 0:
			r.objs = append(r.objs, r.head)
		case r.l.Glyphs && i < len(r.full):
			r.objs = append(r.objs, r.glyphs[i])
		default:
			r.objs = append(r.objs, t)
		}
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
	lead := r.lead()
	for i, t := range r.texts[:len(r.full)] {
		line := r.full[i]
		if i == 0 && lead > 0 {
			// The head, then the rest beside it, cut to what is left.
			head, rest := r.head, r.texts[len(r.full)]
			head.SetText(line[:lead])
			rest.Text = line[lead:]
			hm := glyphsSize(head.Text, textSize, r.l.TextStyle)
			rm := fyne.MeasureText(rest.Text, textSize, rest.TextStyle)
			if r.l.Truncation == fyne.TextTruncateEllipsis && hm.Width+rm.Width > width {
				rest.Text = cutToWidth(rest.Text, width-hm.Width, func(s string) float32 { return fyne.MeasureText(s, textSize, rest.TextStyle).Width })
				rm = fyne.MeasureText(rest.Text, textSize, rest.TextStyle)
			}
			head.Move(fyne.NewPos(pad, y))
			head.Resize(hm)
			rest.Move(fyne.NewPos(pad+hm.Width, y))
			rest.Resize(rm)
			y += max(hm.Height, rm.Height)
			continue
		}
		measure := func(s string) fyne.Size { return fyne.MeasureText(s, textSize, r.l.TextStyle) }
		if r.l.Glyphs {
			measure = func(s string) fyne.Size { return glyphsSize(s, textSize, r.l.TextStyle) }
		}
		shown := line
		m := measure(line)
		if r.l.Truncation == fyne.TextTruncateEllipsis && m.Width > width {
			shown = cutToWidth(line, width, func(s string) float32 { return measure(s).Width })
			m = measure(shown)
		}
		x := pad
		switch r.l.Alignment {
		case fyne.TextAlignCenter:
			x += (width - m.Width) / 2
		case fyne.TextAlignTrailing:
			x += width - m.Width
		}
		var o fyne.CanvasObject = t
		if r.l.Glyphs {
			r.glyphs[i].SetText(shown)
			o = r.glyphs[i]
		} else {
			t.Text = shown
		}
		o.Move(fyne.NewPos(x, y))
		o.Resize(m)
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
	for i, line := range r.full {
		m := r.l.lineSize(line, i == 0, textSize)
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
