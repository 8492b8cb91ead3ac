package ui

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// labelTexts returns the canvas texts a Label's renderer shows, in order.
func labelTexts(l *widget.Label) []*canvas.Text {
	var out []*canvas.Text
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch o := o.(type) {
		case *canvas.Text:
			out = append(out, o)
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(o).Objects() {
				walk(c)
			}
		case *fyne.Container:
			for _, c := range o.Objects {
				walk(c)
			}
		}
	}
	walk(l)
	return out
}

// beside lays lb and ln out at the Label's least size (at least 400
// wide) and returns ln's objects and the Label's texts, as many.
func beside(t *testing.T, lb *widget.Label, ln *Lines) ([]fyne.CanvasObject, []*canvas.Text) {
	t.Helper()
	size := lb.MinSize().Max(fyne.NewSize(400, 0))
	lb.Resize(size)
	ln.Resize(size)
	want := labelTexts(lb)
	got := test.TempWidgetRenderer(t, ln).Objects()
	if len(got) != len(want) {
		t.Fatalf("%q: %d lines, a Label shows %d", ln.Text, len(got), len(want))
	}
	return got, want
}

// TestLinesSitLikeALabel: Lines asks for the size a Label with the same
// text, alignment, style and truncation asks for, and puts each line where
// the Label puts it, so that replacing one by the other moves nothing.
func TestLinesSitLikeALabel(t *testing.T) {
	test.NewTempApp(t)
	texts := []string{"", "clean\nlabel 7", "bsa-p2\nt 12 · MSE 0.0311", "t = 30   t* = 30 (MSE 0.0311; input 0.1180)", "#4123: 7 ✓ r 0.81\nmean digit r 0.42", "one\ntwo\nthree"}
	for _, trunc := range []fyne.TextTruncation{fyne.TextTruncateOff, fyne.TextTruncateEllipsis} {
		for _, align := range []fyne.TextAlign{fyne.TextAlignLeading, fyne.TextAlignCenter, fyne.TextAlignTrailing} {
			for _, style := range []fyne.TextStyle{{}, {Bold: true}, {Monospace: true}} {
				for _, s := range texts {
					lb := widget.NewLabelWithStyle(s, align, style)
					lb.Truncation = trunc
					ln := NewLines(s, align, style)
					ln.Truncation = trunc
					if a, b := lb.MinSize(), ln.MinSize(); a != b {
						t.Errorf("%q (truncation %v, align %v, style %+v): MinSize %v, a Label's %v", s, trunc, align, style, b, a)
					}
					got, want := beside(t, lb, ln)
					for i, o := range got {
						g, w := o.(*canvas.Text), want[i]
						if g.Text != w.Text || g.Position() != w.Position() || g.Size() != w.Size() || g.TextSize != w.TextSize || g.TextStyle != w.TextStyle || g.Color != w.Color || g.Alignment != w.Alignment {
							t.Errorf("%q line %d: %q at %v size %v (%v %+v %v), a Label's %q at %v size %v (%v %+v %v)", s, i,
								g.Text, g.Position(), g.Size(), g.TextSize, g.TextStyle, g.Color, w.Text, w.Position(), w.Size(), w.TextSize, w.TextStyle, w.Color)
						}
					}
				}
			}
		}
	}
}

// TestLinesCutToWidth: a line wider than the widget ends in "…" and fits,
// keeping as much of the line as fits (its naive twin tries every length),
// and SetText of another text draws it.
func TestLinesCutToWidth(t *testing.T) {
	test.NewTempApp(t)
	ln := newTitle("bsa-p2 (trained on Fashion-MNIST)\nt 12 · MSE 0.0311")
	full := ln.MinSize()
	ln.Resize(fyne.NewSize(120, full.Height))
	objs := test.TempWidgetRenderer(t, ln).Objects()
	first := objs[0].(*canvas.Text)
	if !strings.HasSuffix(first.Text, "…") || first.Position().X < 0 || first.Position().X+first.Size().Width > 120 {
		t.Errorf("a line cut to 120: %q at %v, %v wide", first.Text, first.Position(), first.Size().Width)
	}
	ln.SetText("clean\nlabel 3")
	if got := objs[0].(*canvas.Text).Text; got != "clean" {
		t.Errorf("after SetText the first line shows %q", got)
	}

	// cutToWidth against trying every length, with a made-up measure.
	rng := rand.New(rand.NewPCG(1, 2))
	width := func(s string) float32 {
		var w float32
		for _, r := range s {
			w += float32(1 + r%7)
		}
		return w
	}
	naive := func(line string, limit float32) string {
		runes := []rune(line)
		best := "…"
		for k := 0; k < len(runes); k++ {
			if c := strings.TrimRight(string(runes[:k]), " ") + "…"; width(c) <= limit {
				best = c
			}
		}
		return best
	}
	letters := []rune("ab cdé·0123…xyz MSE")
	for range 2000 {
		n := 1 + rng.IntN(40)
		runes := make([]rune, n)
		for i := range runes {
			runes[i] = letters[rng.IntN(len(letters))]
		}
		line := string(runes)
		limit := float32(rng.IntN(int(width(line)) + 1))
		if got, want := cutToWidth(line, limit, width), naive(line, limit); got != want {
			t.Fatalf("cutToWidth(%q, %v) = %q, trying every length gives %q", line, limit, got, want)
		}
	}
}

// TestLinesLead: a monospace readout split after its head sits as the
// whole line does: the same least size, the rest right after the head
// (the two widths add up to the whole line's), the line's text whole
// where it fits, and cut to the widget with "…" where not. A change of
// the head alone leaves the rest as it was (the text and place Refresh
// compares, so it is not drawn again); the head is drawn from kept
// characters (a GlyphText), which in one monospace font sit exactly as
// one text does.
func TestLinesLead(t *testing.T) {
	test.NewTempApp(t)
	style := fyne.TextStyle{Monospace: true}
	texts := []string{"t = 5    t* = 30 (MSE 0.0583; input 0.1096)", "t = 12   t* not reached yet", "t = 1000 4 models: their t* and errors are in the table\nsecond line"}
	for _, s := range texts {
		for _, w := range []float32{120, 260, 600} {
			whole := NewLines(s, fyne.TextAlignLeading, style)
			whole.Truncation = fyne.TextTruncateEllipsis
			split := NewLines(s, fyne.TextAlignLeading, style)
			split.Truncation = fyne.TextTruncateEllipsis
			split.Lead = readoutLead
			if a, b := whole.MinSize(), split.MinSize(); a != b {
				t.Errorf("%q: MinSize %v split, %v whole", s, b, a)
			}
			size := fyne.NewSize(w, whole.MinSize().Height)
			whole.Resize(size)
			split.Resize(size)
			wo := test.TempWidgetRenderer(t, whole).Objects()
			so := test.TempWidgetRenderer(t, split).Objects()
			if len(so) != len(wo)+1 {
				t.Fatalf("%q: %d texts split, %d whole", s, len(so), len(wo))
			}
			line, head, rest := wo[0].(*canvas.Text), so[0].(*GlyphText), so[len(wo)].(*canvas.Text)
			first := strings.Split(s, "\n")[0]
			if head.Text != first[:readoutLead] || head.Position() != line.Position() {
				t.Errorf("%q at %v: head %q at %v, the line at %v", s, w, head.Text, head.Position(), line.Position())
			}
			if rest.Position() != head.Position().AddXY(head.Size().Width, 0) {
				t.Errorf("%q at %v: the rest at %v, the head at %v, %v wide", s, w, rest.Position(), head.Position(), head.Size().Width)
			}
			full := fyne.MeasureText(first, theme.TextSize(), style).Width
			if fits := line.Text == first; fits {
				if head.Text+rest.Text != first || math.Abs(float64(head.Size().Width+rest.Size().Width-full)) > 1e-3 {
					t.Errorf("%q at %v: split into %q (%v) + %q (%v), the line %v wide", s, w, head.Text, head.Size().Width, rest.Text, rest.Size().Width, full)
				}
			} else if !strings.HasSuffix(rest.Text, "…") || rest.Position().X+rest.Size().Width > w-theme.InnerPadding() {
				t.Errorf("%q at %v: the rest %q ends at %v, cut at %v", s, w, rest.Text, rest.Position().X+rest.Size().Width, w-theme.InnerPadding())
			}
			for i := 1; i < len(wo); i++ {
				if a, b := wo[i].(*canvas.Text), so[i].(*canvas.Text); a.Text != b.Text || a.Position() != b.Position() {
					t.Errorf("%q at %v: line %d %q at %v split, %q at %v whole", s, w, i, b.Text, b.Position(), a.Text, a.Position())
				}
			}
		}
	}
	ln := NewLines(texts[0], fyne.TextAlignLeading, style)
	ln.Lead = readoutLead
	ln.Resize(fyne.NewSize(600, ln.MinSize().Height))
	objs := test.TempWidgetRenderer(t, ln).Objects()
	head, rest := objs[0].(*GlyphText), objs[1].(*canvas.Text)
	restAt := rest.Position()
	ln.SetText("t = 6    t* = 30 (MSE 0.0583; input 0.1096)")
	if head.Text != "t = 6    " || rest.Text != "t* = 30 (MSE 0.0583; input 0.1096)" || rest.Position() != restAt {
		t.Errorf("after the next step: %q and %q at %v (was at %v)", head.Text, rest.Text, rest.Position(), restAt)
	}
}

// TestLinesGlyphs: lines drawn from kept characters (Glyphs) sit within
// 2 px of where a Label puts its lines, with the same texts, ask for its
// size within 2 px, and cut a line too wide for the widget with "…" to
// fit it.
func TestLinesGlyphs(t *testing.T) {
	test.NewTempApp(t)
	texts := []string{"clean\nlabel 7", "bsa-p2\nt 12 · MSE 0.0311", "#4123: 7 ✓ r 0.81\nmean digit r 0.42", "one\ntwo\nthree"}
	near := func(a, b float32) bool { return math.Abs(float64(a-b)) <= 2 }
	for _, align := range []fyne.TextAlign{fyne.TextAlignLeading, fyne.TextAlignCenter, fyne.TextAlignTrailing} {
		for _, style := range []fyne.TextStyle{{}, {Bold: true}} {
			for _, s := range texts {
				lb := widget.NewLabelWithStyle(s, align, style)
				ln := NewLines(s, align, style)
				ln.Glyphs = true
				if a, b := lb.MinSize(), ln.MinSize(); !near(a.Width, b.Width) || a.Height != b.Height {
					t.Errorf("%q (align %v, style %+v): MinSize %v, a Label's %v", s, align, style, b, a)
				}
				got, want := beside(t, lb, ln)
				for i, o := range got {
					g, w := o.(*GlyphText), want[i]
					if g.Text != w.Text || !near(g.Position().X, w.Position().X) || g.Position().Y != w.Position().Y || !near(g.Size().Width, w.Size().Width) {
						t.Errorf("%q line %d: %q at %v size %v, a Label's %q at %v size %v", s, i, g.Text, g.Position(), g.Size(), w.Text, w.Position(), w.Size())
					}
				}
			}
		}
	}
	ln := NewLines("#38743: 7 ✓ r 0.79\nmean digit r 0.64", fyne.TextAlignLeading, fyne.TextStyle{})
	ln.Glyphs, ln.Truncation = true, fyne.TextTruncateEllipsis
	ln.Resize(fyne.NewSize(90, ln.MinSize().Height))
	for i, o := range test.TempWidgetRenderer(t, ln).Objects() {
		g := o.(*GlyphText)
		if !strings.HasSuffix(g.Text, "…") || g.Position().X+g.MinSize().Width > 90-theme.InnerPadding() {
			t.Errorf("line %d cut to 90: %q at %v, %v wide", i, g.Text, g.Position(), g.MinSize().Width)
		}
	}
}
