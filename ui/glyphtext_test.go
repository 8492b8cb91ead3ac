package ui

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

// glyphTexts are readouts as the window shows them, and a few with
// characters from other fonts.
var glyphTexts = []string{
	"tallest bar: 100% of the patches", "bsa-p2 (none at t = 0)",
	"0.042", "t 12 · MSE 0.0311", "t = 1000 ", "#38743: 7 ✓ r 0.79", "mean digit r 0.64",
	"bsa-p2 (trained on Fashion-MNIST)", "γ = 0.25 → 1e-3", "tallest bar: 90% of the patches",
}

// ink is how dark each column of img is (its naive twin is reading the
// picture by eye): the sum over rows of 1 − luminance, on white.
func ink(img image.Image) []float64 {
	b := img.Bounds()
	out := make([]float64, b.Dx())
	for x := b.Min.X; x < b.Max.X; x++ {
		for y := b.Min.Y; y < b.Max.Y; y++ {
			g := color.GrayModel.Convert(img.At(x, y)).(color.Gray)
			out[x-b.Min.X] += 1 - float64(g.Y)/255
		}
	}
	return out
}

// inked is the first and last column with ink.
func inked(col []float64) (int, int) {
	lo, hi := -1, -1
	for x, v := range col {
		if v > 0.05 {
			if lo < 0 {
				lo = x
			}
			hi = x
		}
	}
	return lo, hi
}

// drawn is what the test painter draws of o alone, on white, at o's
// least size.
func drawn(t *testing.T, o fyne.CanvasObject) image.Image {
	t.Helper()
	bg := canvas.NewRectangle(color.White)
	w := test.NewTempWindow(t, container.NewStack(bg, container.NewWithoutLayout(o)))
	w.SetPadded(false)
	size := o.MinSize()
	o.Resize(size)
	o.Move(fyne.NewPos(4, 2))
	w.Resize(size.AddWidthHeight(8, 4))
	return w.Canvas().Capture()
}

// freeBudget lets every GlyphText make its new pieces at once during the
// test.
func freeBudget(t *testing.T) {
	b := &pieceBudget
	was := b.max
	b.max = 1 << 30
	t.Cleanup(func() { b.max = was })
}

// frozenBudget stops the clock of the pieces' budget in a fresh window
// for the test, so that what is drawn whole and what from pieces depends
// on the texts shown, not on the machine's speed. It returns a function
// that moves the clock on.
func frozenBudget(t *testing.T) func(time.Duration) {
	b := &pieceBudget
	was := b.now
	clock := time.Now().Add(time.Hour) // a fresh window of the budget
	b.now = func() time.Time { return clock }
	t.Cleanup(func() { b.now = was })
	return func(d time.Duration) { clock = clock.Add(d) }
}

// inPieces returns a GlyphText drawing s from its pieces: shown first
// with another text, then changed to s (with the budget freed).
func inPieces(t *testing.T, s string, c color.Color, style fyne.TextStyle) *GlyphText {
	t.Helper()
	g := NewGlyphText("·", c)
	g.TextStyle = style
	r := test.TempWidgetRenderer(t, g)
	g.SetText(s)
	if n := len(pieces(s)); n > 1 && len(r.Objects()) != n+1 {
		t.Fatalf("%q: %d objects, not its %d pieces", s, len(r.Objects()), n)
	}
	return g
}

// TestGlyphTextDrawsAsText: a GlyphText draws what a canvas.Text of the
// same text, colour, size and style draws: the ink starts at the same
// column, ends within 2 px of it, and the ink up to each column agrees
// (apart only by the kerning it leaves out and whole pixels).
// Its least size is the text's, within 2 px.
func TestGlyphTextDrawsAsText(t *testing.T) {
	test.NewTempApp(t)
	freeBudget(t)
	for _, style := range []fyne.TextStyle{{}, {Bold: true}, {Monospace: true}} {
		for _, s := range glyphTexts {
			name := fmt.Sprintf("%q %+v", s, style)
			want := &canvas.Text{Text: s, Color: color.Black, TextSize: theme.TextSize(), TextStyle: style}
			got := inPieces(t, s, color.Black, style)
			ws, gs := want.MinSize(), got.MinSize()
			if math.Abs(float64(ws.Width-gs.Width)) > 2 || ws.Height != gs.Height {
				t.Errorf("%s: least size %v, the text's %v", name, gs, ws)
			}
			if style.Monospace && !strings.ContainsAny(s, "·✓γ→") && ws != gs {
				// one font, no kerning: exactly the text's
				t.Errorf("%s: least size %v, the text's %v", name, gs, ws)
			}
			wi, gi := ink(drawn(t, want)), ink(drawn(t, got))
			wlo, whi := inked(wi)
			glo, ghi := inked(gi)
			if wlo < 0 || glo != wlo || math.Abs(float64(ghi-whi)) > 2 {
				t.Errorf("%s: ink from column %d to %d, the text's from %d to %d", name, glo, ghi, wlo, whi)
				continue
			}
			// The ink up to each column: a character left out or doubled
			// moves all of its ink from there on (a digit's is 15 to 25),
			// and moves where the ink ends (checked above); kerning, and
			// each character standing on a whole pixel, move a column's
			// worth (up to 11 here). The order of the pieces is
			// TestGlyphTextKeepsItsPieces'.
			const limit = 14.0
			var cw, cg, worst float64
			for x := range min(len(wi), len(gi)) {
				cw += wi[x]
				cg += gi[x]
				worst = max(worst, math.Abs(cw-cg))
			}
			if math.Abs(cw-cg) > 0.02*cw || worst > limit {
				t.Errorf("%s: ink %.1f, the text's %.1f; the ink up to a column apart by up to %.2f", name, cg, cw, worst)
			}
		}
	}
}

// pieces is the naive twin of glyphPieces: s cut before and after every
// character that is not a letter, with the spaces dropped.
func pieces(s string) []string {
	var out []string
	word := ""
	for _, c := range s {
		if unicode.IsLetter(c) {
			word += string(c)
			continue
		}
		if word != "" {
			out = append(out, word)
			word = ""
		}
		if !unicode.IsSpace(c) {
			out = append(out, string(c))
		}
	}
	if word != "" {
		out = append(out, word)
	}
	return out
}

// TestGlyphTextKeepsItsPieces: stepping through readouts, a GlyphText
// shows one kept canvas.Text a piece (a word, or another character; a
// space none), in the text's order, left to right, each keeping its own
// piece for good (a text whose Text changed would be shaped and
// rasterised again); it makes a text only for a piece it has not shown
// as often at once before.
func TestGlyphTextKeepsItsPieces(t *testing.T) {
	test.NewTempApp(t)
	freeBudget(t)
	g := NewGlyphText("t 0 · MSE 0.0500", nil)
	r := test.TempWidgetRenderer(t, g)
	own := map[*canvas.Text]string{}
	most := map[string]int{} // the most times each piece was shown at once
	for step := 1; step < 300; step++ {
		s := fmt.Sprintf("t %d · MSE %.4f", step, 0.04+0.01*math.Sin(float64(step)))
		if step%50 == 7 {
			s = glyphTexts[step/50]
		}
		g.SetText(s)
		g.Resize(g.MinSize())
		want := pieces(s)
		count := map[string]int{}
		for _, p := range want {
			count[p]++
			most[p] = max(most[p], count[p])
		}
		var texts []*canvas.Text
		for _, o := range r.Objects() {
			if tx, ok := o.(*canvas.Text); ok {
				texts = append(texts, tx)
			}
		}
		if len(texts) != len(want) {
			t.Fatalf("%q: %d texts, %d pieces %q", s, len(texts), len(want), want)
		}
		for i, tx := range texts {
			if tx.Text != want[i] {
				t.Fatalf("%q: text %d shows %q, want %q", s, i, tx.Text, want[i])
			}
			if was, ok := own[tx]; ok && was != tx.Text {
				t.Fatalf("%q: a text that showed %q now shows %q", s, was, tx.Text)
			}
			own[tx] = tx.Text
			if i > 0 && tx.Position().X < texts[i-1].Position().X+texts[i-1].Size().Width-1e-3 {
				t.Fatalf("%q: piece %d at %v overlaps the one before (at %v, %v wide)", s, i, tx.Position(), texts[i-1].Position(), texts[i-1].Size().Width)
			}
		}
	}
	made := 0
	for _, n := range most {
		made += n
	}
	if len(own) != made {
		t.Errorf("%d texts made, for %d pieces at most shown at once", len(own), made)
	}

	// Another colour (a theme's change) draws the text whole in it, then
	// its next text (soon after) from new pieces in that colour.
	g.Color = color.NRGBA{R: 200, A: 255}
	g.Refresh()
	for k, s := range []string{g.Text, "t 1 · MSE 0.0409"} {
		if k > 0 {
			g.SetText(s)
		}
		n := 0
		for _, o := range r.Objects() {
			if tx, ok := o.(*canvas.Text); ok {
				n++
				if tx.Color != g.Color {
					t.Fatalf("after a new colour: %q in %v", tx.Text, tx.Color)
				}
				if _, ok := own[tx]; ok {
					t.Fatalf("after a new colour: %q drawn by a text of the old one", tx.Text)
				}
			}
		}
		if want := []int{1, len(pieces(s))}[k]; n != want {
			t.Errorf("after a new colour, %q: %d texts, want %d", s, n, want)
		}
	}
}

// TestGlyphTextWholeUnlessOften: a GlyphText draws its first text whole
// (one canvas.Text), a text replacing one shown less than a second before
// from pieces, and one replacing a text shown longer whole again; a change
// whose new pieces would overrun the budget of the moment is drawn whole,
// and drawn from pieces once a new window of the budget has begun.
func TestGlyphTextWholeUnlessOften(t *testing.T) {
	test.NewTempApp(t)
	b := &pieceBudget
	later := frozenBudget(t)
	texts := func(g *GlyphText) []string {
		var out []string
		for _, o := range test.TempWidgetRenderer(t, g).Objects() {
			if tx, ok := o.(*canvas.Text); ok {
				out = append(out, tx.Text)
			}
		}
		return out
	}
	g := NewGlyphText("bsa-p2", nil)
	if got := texts(g); !slices.Equal(got, []string{"bsa-p2"}) {
		t.Fatalf("first text: drawn as %q", got)
	}
	later(b.window)
	g.SetText("t 1 · MSE 0.0409") // 10 new pieces, 0.1 s after the first text
	if got, want := texts(g), pieces("t 1 · MSE 0.0409"); !slices.Equal(got, want) {
		t.Fatalf("a text changed soon: drawn as %q, want %q", got, want)
	}
	g.SetText("t 2 · MSE 0.0418") // only "2" and "8" are new: within the budget
	if got, want := texts(g), pieces("t 2 · MSE 0.0418"); !slices.Equal(got, want) {
		t.Fatalf("the next text: drawn as %q, want %q", got, want)
	}
	later(pieceEvery)
	g.SetText("t 3 · MSE 0.0427")
	if got := texts(g); !slices.Equal(got, []string{"t 3 · MSE 0.0427"}) {
		t.Fatalf("a text changed after %v: drawn as %q", pieceEvery, got)
	}
	g.SetText("t 4 · MSE 0.0436") // soon after: pieces again, a few of them new ("3", "6")
	if got, want := texts(g), pieces("t 4 · MSE 0.0436"); !slices.Equal(got, want) {
		t.Fatalf("a text changed soon again: drawn as %q, want %q", got, want)
	}
	h := NewGlyphText("bsa-p4", nil)
	texts(h)
	h.SetText("#38743: 7 ✓ r 0.79") // 14 new pieces: over what is left
	if got := texts(h); !slices.Equal(got, []string{"#38743: 7 ✓ r 0.79"}) {
		t.Fatalf("over the budget: drawn as %q", got)
	}
	later(b.window)
	h.SetText("#38743: 7 ✓ r 0.78")
	if got, want := texts(h), pieces("#38743: 7 ✓ r 0.78"); !slices.Equal(got, want) {
		t.Fatalf("in a new window of the budget: drawn as %q, want %q", got, want)
	}
}
