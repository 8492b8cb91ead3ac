package ui

import (
	"strings"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// wrapLabel is a word-wrapped label for a readout whose text changes
// while the window runs (the Training window's status, re-run and
// couplings lines). It lays out like a widget.Label with
// fyne.TextWrapWord: as wide as its container lets it be, as tall as its
// lines.
//
// Fyne's Label finds each line's end by measuring ever shorter prefixes
// of the rest of the text, each shaped anew: for a 250-character text
// that is dozens of shapings of long strings per change, 0.3 s of one
// task in the page with its CPU throttled 4× (a slow laptop). wrapLabel
// measures each word once (Fyne keeps a string's measure) and breaks
// between words, and it leaves a line's text object alone when its line
// did not change, so the painter keeps that line's texture.
type wrapLabel struct {
	widget.BaseWidget
	// Text is the label's text. Set it with SetText.
	Text string

	// The lines of Text broken for width at text size size; valid while
	// brokenText == Text.
	lines      []string
	width      float32
	size       float32
	brokenText string
	broken     bool
}

func newWrapLabel(text string) *wrapLabel {
	l := &wrapLabel{Text: text}
	l.ExtendBaseWidget(l)
	return l
}

// SetText shows s; the same text again changes nothing.
func (l *wrapLabel) SetText(s string) {
	if s == l.Text {
		return
	}
	l.Text = s
	l.Refresh()
}

// Resize lays the lines out for the new width and, when their number
// changed, refreshes: the label's least height follows its width, and
// its container is laid out again for it (as Fyne's RichText does).
func (l *wrapLabel) Resize(s fyne.Size) {
	if s == l.Size() {
		return
	}
	before := len(l.linesFor(l.Size().Width))
	l.BaseWidget.Resize(s)
	if len(l.linesFor(s.Width)) != before {
		l.Refresh()
	}
}

func (l *wrapLabel) textSize() float32 {
	return l.Theme().Size(theme.SizeNameText)
}

// linesFor returns Text's lines for a label width w (its inner padding
// taken off); w ≤ 0, before a first layout, breaks only at newlines.
func (l *wrapLabel) linesFor(w float32) []string {
	size := l.textSize()
	if l.broken && l.brokenText == l.Text && l.width == w && l.size == size {
		return l.lines
	}
	inner := w - 2*l.Theme().Size(theme.SizeNameInnerPadding)
	if w <= 0 {
		inner = -1
	}
	l.lines = breakWords(l.Text, inner, func(s string) float32 {
		return fyne.MeasureText(s, size, fyne.TextStyle{}).Width
	})
	l.brokenText, l.width, l.size, l.broken = l.Text, w, size, true
	return l.lines
}

// breakWords breaks text into lines no wider than width (measured by
// measure), between words: at each newline, and at spaces as in Fyne's
// word wrap (a line's end space dropped). A word wider than a line is
// broken between characters. width < 0 breaks at newlines only.
func breakWords(text string, width float32, measure func(string) float32) []string {
	paras := strings.Split(text, "\n")
	if width < 0 {
		return paras
	}
	space := measure(" ")
	var lines []string
	for _, p := range paras {
		words := strings.Split(p, " ")
		var line strings.Builder
		lw := float32(0) // line's width; 0 with no word yet
		empty := true
		for _, wd := range words {
			ww := measure(wd)
			if !empty && lw+space+ww <= width {
				line.WriteByte(' ')
				line.WriteString(wd)
				lw += space + ww
				continue
			}
			if !empty {
				lines = append(lines, line.String())
				line.Reset()
			}
			// The word starts a line; one wider than the line is
			// broken between characters, at least one a line.
			for ww > width && utf8.RuneCountInString(wd) > 1 {
				cut := fitRunes(wd, width, measure)
				lines = append(lines, wd[:cut])
				wd = wd[cut:]
				ww = measure(wd)
			}
			line.WriteString(wd)
			lw, empty = ww, false
		}
		lines = append(lines, line.String())
	}
	return lines
}

// fitRunes returns the byte length of the longest prefix of s (at least
// its first rune) no wider than width.
func fitRunes(s string, width float32, measure func(string) float32) int {
	_, first := utf8.DecodeRuneInString(s)
	best := first
	for i := range s {
		if i == 0 {
			continue
		}
		if measure(s[:i]) > width {
			break
		}
		best = i
	}
	return best
}

func (l *wrapLabel) CreateRenderer() fyne.WidgetRenderer {
	r := &wrapLabelRenderer{l: l}
	r.Refresh()
	return r
}

type wrapLabelRenderer struct {
	l     *wrapLabel
	texts []*canvas.Text
	objs  []fyne.CanvasObject
}

func (r *wrapLabelRenderer) lineHeight() float32 {
	return fyne.MeasureText("M", r.l.textSize(), fyne.TextStyle{}).Height
}

func (r *wrapLabelRenderer) MinSize() fyne.Size {
	pad := r.l.Theme().Size(theme.SizeNameInnerPadding)
	n := len(r.l.linesFor(r.l.Size().Width))
	return fyne.NewSize(2*pad, float32(n)*r.lineHeight()+2*pad)
}

// Layout puts Text's lines for size's width one under another, reusing
// the text objects; only a line whose text, colour or size changed is
// refreshed (drawn again).
func (r *wrapLabelRenderer) Layout(size fyne.Size) {
	l := r.l
	th := l.Theme()
	pad := th.Size(theme.SizeNameInnerPadding)
	ts := l.textSize()
	col := th.Color(theme.ColorNameForeground, fyne.CurrentApp().Settings().ThemeVariant())
	lines := l.linesFor(size.Width)
	h := r.lineHeight()
	for len(r.texts) < len(lines) {
		t := canvas.NewText("", col)
		r.texts = append(r.texts, t)
	}
	r.objs = make([]fyne.CanvasObject, 0, len(lines))
	for i, s := range lines {
		t := r.texts[i]
		changed := t.Text != s || t.TextSize != ts || t.Color != col
		t.Text, t.TextSize, t.Color = s, ts, col
		t.Move(fyne.NewPos(pad, pad+float32(i)*h))
		t.Resize(fyne.NewSize(max(size.Width-2*pad, 0), h))
		if changed {
			t.Refresh()
		}
		r.objs = append(r.objs, t)
	}
}

func (r *wrapLabelRenderer) Objects() []fyne.CanvasObject { return r.objs }

func (r *wrapLabelRenderer) Refresh() {
	r.Layout(r.l.Size())
	canvas.Refresh(r.l)
}

func (r *wrapLabelRenderer) Destroy() {}
