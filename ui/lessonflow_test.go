package ui

import (
	"image/color"
	"regexp"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"attractorlab/sim/figures"
	"attractorlab/sim/lesson"
)

// shippedLesson starts the shipped lesson name in a test window.
func shippedLesson(t *testing.T, name string) (*Main, fyne.Window, *lesson.Lesson) {
	t.Helper()
	m, w := newTestMain(t)
	ls, err := m.ShippedLessons()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.Name == name {
			m.StartLesson(l)
			return m, w, l
		}
	}
	t.Fatalf("no shipped lesson %s", name)
	return nil, nil, nil
}

// midRun shows what an engine playing the current cue publishes at step
// t, before the run reaches its end (a synchronous engine plays a cue to
// its end before it returns).
func midRun(m *Main, t int) {
	sn := *m.snap
	sn.T, sn.Playing, sn.CueDone = t, true, false
	m.apply(&sn)
}

// TestRevealLineIsPlainText: while the reveal plays, the bar says where
// it runs to as written ("t*"), not with the '*' of t* taken for the end
// of an italic run ("running to t = t …*").
func TestRevealLineIsPlainText(t *testing.T) {
	m, w, _ := shippedLesson(t, "transient-memory")
	typeKey(w, fyne.KeyRight) // the question
	typeKey(w, fyne.KeyRight) // the reveal, to t*
	midRun(m, 3)
	got := m.bar.caption.String()
	if !strings.Contains(got, "running to t* …") {
		t.Fatalf("reveal line: %q", got)
	}
	for _, s := range m.bar.caption.Segments {
		if ts := s.(*widget.TextSegment); strings.HasSuffix(ts.Text, "*") || strings.HasSuffix(ts.Text, "t = t") {
			t.Fatalf("a segment of the reveal line reads %q (italic %v)", ts.Text, ts.Style.TextStyle.Italic)
		}
	}
}

// TestArrowDuringRevealShowsTheAnswer: → while the reveal still plays
// finishes it and shows the answer; it does not skip past it to the next
// slide. The next → goes on.
func TestArrowDuringRevealShowsTheAnswer(t *testing.T) {
	m, w, l := shippedLesson(t, "transient-memory")
	typeKey(w, fyne.KeyRight) // the question
	typeKey(w, fyne.KeyRight) // the reveal, to t*
	midRun(m, 3)
	typeKey(w, fyne.KeyRight)
	s, rev, _ := m.InLesson()
	best := m.snap.Lanes[0].Best
	if s != 1 || !rev || m.snap.T != best {
		t.Fatalf("→ during the reveal: slide %d revealed %v at t %d (t* %d)", s+1, rev, m.snap.T, best)
	}
	if got := barText(m); !strings.Contains(got, l.Slides[1].Answer[:20]) || !strings.Contains(got, "t* = "+itoa(best)) {
		t.Fatalf("→ during the reveal did not show the answer: %q", got)
	}
	typeKey(w, fyne.KeyRight)
	if s, _, _ := m.InLesson(); s != 2 {
		t.Fatalf("→ after the answer: slide %d", s+1)
	}
	// A slide without a question: → while it plays finishes its run.
	midRun(m, 40)
	typeKey(w, fyne.KeyRight)
	if s, _, _ := m.InLesson(); s != 2 || m.snap.T != 100 {
		t.Fatalf("→ during the last slide's run: slide %d at t %d", s+1, m.snap.T)
	}
}

// TestCaptionNumbersOnlyWhenFinal: while a slide's run plays, its caption
// does not print the moving numbers as if they were the sentence's ("by t
// = 100 the error is 0.1005" at t = 50); they appear when the run reaches
// its end.
func TestCaptionNumbersOnlyWhenFinal(t *testing.T) {
	m, w, _ := shippedLesson(t, "transient-memory")
	typeKey(w, fyne.KeyRight)
	typeKey(w, fyne.KeyRight)
	typeKey(w, fyne.KeyRight) // the fall: t* → 100
	final := m.snap.Lanes[0].At(100)
	if got := barText(m); !strings.Contains(got, fmtMSE(final.MSE)) {
		t.Fatalf("the run's end lacks MSE(100) %s: %q", fmtMSE(final.MSE), got)
	}
	midRun(m, 50)
	live := m.snap.Lanes[0].At(50)
	got := barText(m)
	if strings.Contains(got, fmtMSE(live.MSE)) || strings.Contains(got, fmtMSE(final.MSE)) || !strings.Contains(got, "by t = 100 the error is …") {
		t.Fatalf("at t = 50 of a run to 100 the caption reads %q (MSE(50) %s)", got, fmtMSE(live.MSE))
	}
	if strings.ContainsAny(m.barText, "{}") {
		t.Fatalf("placeholders shown: %q", m.barText)
	}
}

// cited are the models whose t* a text cites ({t_star}, {mse_t_star},
// {t_star:vit}, …); "" is the first model.
var cited = regexp.MustCompile(`\{(?:mse_)?t_star(?::([a-z0-9-]+))?\}`)

// TestAnswersCiteWhatIsShown: when a slide's run has ended, every model
// whose t* its words cite has reached it on screen: the table does not say
// "not yet" beside a sentence that gives that t* (the three-models answer
// once showed t = 7 while citing t* = 30).
func TestAnswersCiteWhatIsShown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every shipped slide (-short)")
	}
	m, w := newTestMain(t)
	ls, _ := m.ShippedLessons()
	for _, l := range ls {
		m.StartLesson(l)
		for step := 0; step <= 2*len(l.Slides); step++ {
			k, rev, _ := m.InLesson()
			s := l.Slides[k]
			text := s.Caption
			if rev {
				text += s.Answer
			}
			for _, c := range cited.FindAllStringSubmatch(text, -1) {
				lane := m.snap.Lanes[0]
				for _, ln := range m.snap.Lanes {
					if ln.Info.Name == c[1] {
						lane = ln
					}
				}
				if m.snap.T < lane.Best {
					t.Errorf("%s slide %d (revealed %v) cites t* = %d of %s but shows t = %d", l.Name, k+1, rev, lane.Best, lane.Info.Name, m.snap.T)
				}
			}
			if m.answers != nil && strings.Contains(text, "t_star") {
				for _, o := range m.answers.Objects {
					if cellText(o) == "not yet" {
						t.Errorf("%s slide %d: the table says \"not yet\" beside %q", l.Name, k+1, barText(m))
						break
					}
				}
			}
			if k == len(l.Slides)-1 && (rev || s.Question == "") {
				break
			}
			typeKey(w, fyne.KeyRight)
		}
		typeKey(w, fyne.KeyEscape)
	}
}

// refPixels is the longest row of the MSE plot (as the window builds it)
// drawn in the input's reference colour: the dotted line of the input's
// MSE, hundreds of pixels long when drawn across the plot.
func refPixels(t *testing.T, m *Main) int {
	t.Helper()
	p, err := m.msePlot.Build()
	if err != nil {
		t.Fatal(err)
	}
	c := vgimg.New(8*vg.Inch, 5*vg.Inch)
	p.Draw(draw.New(c))
	img := c.Image()
	want := figures.ReferenceColor
	b := img.Bounds()
	most := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		n := 0
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if absd(c.R, want.R) < 20 && absd(c.G, want.G) < 20 && absd(c.B, want.B) < 20 {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func absd(a, b uint8) int { return max(int(a), int(b)) - min(int(a), int(b)) }

// TestInputLineFromTZero: a question asked at t = 0 shows the input's MSE
// as the dotted reference across the plot: the line the prediction is
// about (it was cut at t < 1 with the rest of the future).
func TestInputLineFromTZero(t *testing.T) {
	m, w, _ := shippedLesson(t, "transient-memory")
	typeKey(w, fyne.KeyRight) // the question, at t = 0
	if m.snap.T != 0 {
		t.Fatalf("the question shows t = %d", m.snap.T)
	}
	at0 := refPixels(t, m)
	typeKey(w, fyne.KeyEscape)
	m.Engine.Seek(100)
	full := refPixels(t, m)
	t.Logf("reference pixels: %d at t = 0, %d at 100", at0, full)
	if full < 150 || at0 < full/2 {
		t.Fatalf("input line: %d reference pixels at t = 0 of a lesson, %d outside one", at0, full)
	}
}

// TestEscLeavesNoBand: Esc leaves the lesson and its band: the panels
// take the window's height again at once (the first Esc left an empty
// band where the lesson bar was).
func TestEscLeavesNoBand(t *testing.T) {
	for _, pres := range []bool{false, true} {
		m, w := newTestMain(t)
		if pres {
			m.togglePresentation()
		}
		w.Resize(fyne.NewSize(1280, 800))
		before := m.panels.Position()
		size := m.panels.Size()
		ls, _ := m.ShippedLessons()
		m.StartLesson(ls[0])
		if m.panels.Position().Y <= before.Y {
			t.Fatalf("presentation %v: the lesson bar takes no room", pres)
		}
		typeKey(w, fyne.KeyEscape)
		if _, _, ok := m.InLesson(); ok {
			t.Fatal("Esc did not leave the lesson")
		}
		if m.panels.Position() != before || m.panels.Size() != size {
			t.Fatalf("presentation %v: after Esc the panels are at %v, %v; before the lesson %v, %v", pres, m.panels.Position(), m.panels.Size(), before, size)
		}
		if pres != m.presentation {
			t.Fatal("the Esc that left the lesson also left presentation mode")
		}
		// Left at a question: what the lesson hid (t*) is shown at once.
		m.StartLesson(ls[0])
		typeKey(w, fyne.KeyRight)
		if m.msePlot.TStar >= 0 {
			t.Fatal("the question shows t*")
		}
		typeKey(w, fyne.KeyEscape)
		if m.msePlot.TStar < 0 || strings.Contains(m.tLabel.Text, "not reached") {
			t.Fatalf("presentation %v: after Esc t* stays hidden (%v, %q)", pres, m.msePlot.TStar, m.tLabel.Text)
		}
	}
}
