package ui

import (
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"gonum.org/v1/plot/plotter"

	"attractorlab/sim"
	"attractorlab/sim/figures"
)

// outside lists the visible objects of the window that do not lie wholly
// inside its w×h content (a scroll's content may, so it is not entered).
func outside(m *Main, w, h float32) []string {
	var bad []string
	d := fyne.CurrentApp().Driver()
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		if o == nil || !o.Visible() {
			return
		}
		p, s := d.AbsolutePositionForObject(o), o.Size()
		if p.X < -0.5 || p.Y < -0.5 || p.X+s.Width > w+0.5 || p.Y+s.Height > h+0.5 {
			bad = append(bad, fmt.Sprintf("%T at %v size %v", o, p, s))
		}
		switch x := o.(type) {
		case *container.Scroll:
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(x).Objects() {
				walk(c)
			}
		}
	}
	walk(m.Content())
	return bad
}

// checkFocus checks presentation mode's window at 1280×800: nothing
// outside it, a state image per model of a readable size, an MSE plot at
// least 250 px tall and every row of the table in sight with its cells
// whole.
func checkFocus(t *testing.T, m *Main, what string) {
	t.Helper()
	if bad := outside(m, 1280, 800); len(bad) > 0 {
		t.Errorf("%s: %d objects outside the window, e.g. %s", what, len(bad), strings.Join(bad[:min(len(bad), 5)], "; "))
	}
	if h := m.msePlot.Size().Height; h < 250 || !m.msePlot.Visible() {
		t.Errorf("%s: the MSE plot is %v tall", what, h)
	}
	if w := m.msePlot.Size().Width; w < 600 {
		t.Errorf("%s: the MSE plot is %v wide", what, w)
	}
	for k, v := range m.states {
		if s := v.Size(); min(s.Width, s.Height) < 140 {
			t.Errorf("%s: state %d is %v", what, k, s)
		}
	}
	if need := readoutWidth(m.tLabel); m.tLabel.Size().Width+0.5 < need {
		t.Errorf("%s: the readout %q is cut (%v of %v)", what, m.tLabel.Text, m.tLabel.Size().Width, need)
	}
	n := len(m.snap.Lanes)
	if n < 2 {
		return
	}
	if m.answers == nil || len(m.answers.Objects) != (n+1)*len(answerColumns) {
		t.Fatalf("%s: no table of %d rows", what, n+1)
	}
	for _, o := range m.answers.Objects {
		l, ok := o.(*Lines)
		if sw, isSwatch := o.(*swatchLabel); isSwatch {
			l, ok = sw.label, true // a model's name, led by its colour
		}
		if !ok {
			t.Fatalf("%s: table cell %T", what, o)
		}
		need := fyne.MeasureText(l.Text, theme.TextSize(), l.TextStyle).Width + 2*theme.InnerPadding()
		if !l.Visible() || l.Size().Width+0.5 < need || l.Size().Height < l.MinSize().Height-0.5 {
			t.Errorf("%s: table cell %q is %v, needs %v wide", what, l.Text, l.Size(), need)
		}
	}
}

// TestPresentationFocusLayout: presentation mode fits a 1280×800 projector
// with one to four models, alone and with a lesson's bar above (its MSE
// plot was 0 to 30 px tall, the table's rows hidden and the right edge cut
// with three or four models).
func TestPresentationFocusLayout(t *testing.T) {
	m, w := newTestMain(t)
	m.togglePresentation()
	w.Resize(fyne.NewSize(1280, 800))
	for _, lanes := range [][]string{{"bsa-p2"}, {"bsa-p2", "block"}, {"bsa-p2", "block", "vit"}, {"bsa-p2", "bsa-p4", "block", "hopfield"}, {"bsa-p4", "block", "vit", "hopfield"}} {
		m.Engine.Restore(sim.PaperDemo(), 0)
		m.Engine.Update(func(st *sim.Settings) { st.Lanes = lanes })
		m.Engine.Settle()
		for range 3 {
			typeKey(w, fyne.KeyRight)
		}
		checkFocus(t, m, fmt.Sprint(lanes))
	}
	if testing.Short() {
		return // the lessons' slides run every model
	}
	ls, _ := m.ShippedLessons()
	for _, l := range ls {
		m.StartLesson(l)
		for step := 0; step <= 2*len(l.Slides); step++ {
			// A slide that trains opens the Training window, another
			// window: the main window is what is checked here.
			closeTraining(m)
			k, rev, _ := m.InLesson()
			checkFocus(t, m, fmt.Sprintf("lesson %s slide %d (revealed %v)", l.Name, k+1, rev))
			if k == len(l.Slides)-1 && (rev || l.Slides[k].Question == "") {
				break
			}
			typeKey(w, fyne.KeyRight)
		}
		typeKey(w, fyne.KeyEscape)
	}
}

// TestCompareMarksEachTStar: with several models the MSE plot marks each
// model's t* in the model's colour (a dot at its best error), and a lesson
// hides those not reached yet.
func TestCompareMarksEachTStar(t *testing.T) {
	m, _ := newTestMain(t)
	m.Engine.Restore(sim.PaperDemo(), 0)
	m.Engine.Update(func(st *sim.Settings) { st.Lanes = []string{"bsa-p2", "block"} })
	m.Engine.Settle()
	count := func(upto int) int {
		marks, err := tStarMarks(m.snap, figures.TrajectoryOptions{Upto: upto}, 0)
		if err != nil {
			t.Fatal(err)
		}
		dots := 0
		for _, p := range marks {
			if sc, ok := p.(*plotter.Scatter); ok {
				dots++
				if sc.GlyphStyle.Color != figures.ModelColor("bsa-p2") && sc.GlyphStyle.Color != figures.ModelColor("block") {
					t.Errorf("a t* dot in %v, no model's colour", sc.GlyphStyle.Color)
				}
			}
		}
		return dots
	}
	if got := count(0); got != 2 {
		t.Fatalf("%d t* dots for two models", got)
	}
	// A lesson at t = 0 (Upto 1) has reached no t*; at t = 10 the block's
	// (t* = 8) but not the bare model's (t* = 30).
	if got := count(1); got != 0 {
		t.Fatalf("%d t* dots at t = 0 of a lesson", got)
	}
	b0, b1 := m.snap.Lanes[0].Best, m.snap.Lanes[1].Best
	if got, want := count(min(b0, b1)+1), 1; b0 != b1 && got != want {
		t.Fatalf("%d t* dots between the two t* (%d, %d)", got, b0, b1)
	}
}
