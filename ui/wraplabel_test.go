package ui

import (
	"math/rand/v2"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// TestWrapLabelSitsLikeALabel: at every width, a wrapLabel breaks its
// text into the lines a word-wrapped Label shows, puts them where the
// Label puts them and asks for the Label's size, so that the Training
// window's readouts look as they did.
func TestWrapLabelSitsLikeALabel(t *testing.T) {
	test.NewTempApp(t)
	texts := []string{
		"",
		"trained here, epoch 3, batch 40: a transient memory at t* = 12: MSE 0.0311 against the input's 0.1180, rising to 0.0712 by t = 100 · nearest stored digit at t*: a 7 (r 0.81) · state at t = 100 against the average digit: r 0.42",
		"‖J_ij‖ (trained here, end of epoch 2): left 0 to 0.813, middle 0.0121 to 0.344.",
		"cancelled in epoch 2; kept the finished ones: 1 epochs\nSave weights… writes it",
		"a_very_long_token_without_any_space_in_it_that_cannot_fit_on_one_line_at_all and then words",
	}
	for _, s := range texts {
		for _, w := range []float32{60, 120, 233, 410, 800} {
			lb := widget.NewLabel(s)
			lb.Wrapping = fyne.TextWrapWord
			wl := newWrapLabel(s)
			r := test.TempWidgetRenderer(t, wl)
			lb.Resize(fyne.NewSize(w, 400))
			wl.Resize(fyne.NewSize(w, 400))
			want := labelTexts(lb)
			got := r.Objects()
			if lb.MinSize() != wl.MinSize() {
				t.Errorf("%q at %g: MinSize %v, a Label's %v", s, w, wl.MinSize(), lb.MinSize())
			}
			if len(got) != len(want) {
				var ws, gs []string
				for _, x := range want {
					ws = append(ws, x.Text)
				}
				for _, x := range got {
					gs = append(gs, x.(*canvas.Text).Text)
				}
				t.Errorf("%q at %g: lines %q, a Label's %q", s, w, gs, ws)
				continue
			}
			for i, o := range got {
				g, x := o.(*canvas.Text), want[i]
				if g.Text != x.Text || g.Position() != x.Position() || g.TextSize != x.TextSize || g.Color != x.Color {
					t.Errorf("%q at %g line %d: %q at %v (%v %v), a Label's %q at %v (%v %v)", s, w, i,
						g.Text, g.Position(), g.TextSize, g.Color, x.Text, x.Position(), x.TextSize, x.Color)
				}
			}
		}
	}
}

// TestBreakWordsNaive: breakWords against its naive twin, which tries
// every way to end each line and keeps the longest that fits, on random
// texts and widths with a made-up measure.
func TestBreakWordsNaive(t *testing.T) {
	measure := func(s string) float32 {
		w := float32(0)
		for _, r := range s {
			w += 5 + float32(r%7)
		}
		return w
	}
	naive := func(text string, width float32) []string {
		var lines []string
		for _, p := range strings.Split(text, "\n") {
			words := strings.Split(p, " ")
			for len(words) > 0 {
				// The most words that fit, at least one.
				n := 1
				for k := 2; k <= len(words); k++ {
					if measure(strings.Join(words[:k], " ")) <= width {
						n = k
					} else {
						break
					}
				}
				wd := words[0]
				if n == 1 && measure(wd) > width {
					// A word alone wider than the line: its longest
					// prefix that fits (at least a rune) per line.
					for measure(wd) > width && len([]rune(wd)) > 1 {
						rs := []rune(wd)
						k := 1
						for k < len(rs) && measure(string(rs[:k+1])) <= width {
							k++
						}
						lines = append(lines, string(rs[:k]))
						wd = string(rs[k:])
					}
					words[0] = wd
					if len(words) > 1 && measure(wd+" "+words[1]) <= width {
						// The rest of the word starts the next line;
						// what fits beside it joins it.
						n = 1
						for k := 2; k <= len(words); k++ {
							if measure(strings.Join(words[:k], " ")) <= width {
								n = k
							} else {
								break
							}
						}
					}
				}
				lines = append(lines, strings.Join(words[:n], " "))
				words = words[n:]
			}
		}
		return lines
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("ab cdé‖ xyz\n 0.12 ·")
	for k := 0; k < 3000; k++ {
		n := rng.IntN(80)
		rs := make([]rune, n)
		for i := range rs {
			rs[i] = alphabet[rng.IntN(len(alphabet))]
		}
		text := string(rs)
		width := float32(5 + rng.IntN(200))
		got := breakWords(text, width, measure)
		want := naive(text, width)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("%q at %g: %q, the naive twin %q", text, width, got, want)
		}
	}
	if got := breakWords("a b\nc", -1, measure); strings.Join(got, "|") != "a b|c" {
		t.Fatalf("no width: %q", got)
	}
}

// TestWrapLabelKeepsUnchangedLines: a new text whose first line is the
// same leaves that line's text object as it was (the painter keeps its
// texture), and a text with fewer lines shows fewer.
func TestWrapLabelKeepsUnchangedLines(t *testing.T) {
	test.NewTempApp(t)
	wl := newWrapLabel("first line stays\nsecond line 0.123\nthird")
	r := test.TempWidgetRenderer(t, wl)
	wl.Resize(fyne.NewSize(400, 200))
	before := r.Objects()
	wl.SetText("first line stays\nsecond line 0.456")
	after := r.Objects()
	if len(after) != 2 || after[0] != before[0] || after[0].(*canvas.Text).Text != "first line stays" || after[1].(*canvas.Text).Text != "second line 0.456" {
		t.Fatalf("after SetText: %d lines", len(after))
	}
	h := wl.MinSize().Height
	wl.SetText("one")
	if len(r.Objects()) != 1 || wl.MinSize().Height >= h {
		t.Fatalf("one line: %d objects, height %g (was %g)", len(r.Objects()), wl.MinSize().Height, h)
	}
}
