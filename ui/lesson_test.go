package ui

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"attractorlab/sim"
	"attractorlab/sim/lesson"
)

// barText is what the lesson bar shows.
func barText(m *Main) string {
	return m.bar.title.Text + " | " + m.bar.counter.Text + " | " + m.bar.caption.String()
}

// TestLessonByKeys runs the first shipped lesson by keys alone: the
// question before and after its reveal, the numbers of the running model
// in the captions, back, and Esc keeping the state.
func TestLessonByKeys(t *testing.T) {
	m, w := newTestMain(t)
	ls, err := m.ShippedLessons()
	if err != nil || len(ls) != 8 {
		t.Fatalf("shipped lessons: %d, %v", len(ls), err)
	}
	l := ls[0]
	m.StartLesson(l)
	if !m.bar.box.Visible() || !strings.Contains(barText(m), "1 / 3") {
		t.Fatalf("lesson bar after start: visible %v, %q", m.bar.box.Visible(), barText(m))
	}
	lane := m.snap.Lanes[0]
	if want := l.Slides[0].Settings; m.snap.Settings.Index != want.Index || m.snap.T != 0 {
		t.Fatalf("slide 1: digit %d t %d, want digit %d t 0", m.snap.Settings.Index, m.snap.T, want.Index)
	}
	if got := barText(m); !strings.Contains(got, fmtMSE(lane.Frames[0].MSE)) || strings.Contains(got, "{") {
		t.Fatalf("slide 1 caption lacks the input's MSE %s: %q", fmtMSE(lane.Frames[0].MSE), got)
	}

	typeKey(w, fyne.KeyRight) // slide 2: the question, at t = 0
	if s, rev, _ := m.InLesson(); s != 1 || rev || m.snap.T != 0 {
		t.Fatalf("→: slide %d revealed %v t %d", s, rev, m.snap.T)
	}
	answer := l.Slides[1].Answer[:20]
	if got := barText(m); !strings.Contains(got, "Predict") || strings.Contains(got, answer) || !strings.Contains(got, "→ the answer") {
		t.Fatalf("question before its reveal: %q", got)
	}
	typeKey(w, fyne.KeyPageDown) // the reveal plays to t*
	lane = m.snap.Lanes[0]
	if s, rev, _ := m.InLesson(); s != 1 || !rev || m.snap.T != lane.Best {
		t.Fatalf("reveal: slide %d revealed %v t %d (t* %d)", s, rev, m.snap.T, lane.Best)
	}
	got := barText(m)
	for _, want := range []string{answer, "t* = " + itoa(lane.Best), fmtMSE(lane.BestMSE)} {
		if !strings.Contains(got, want) {
			t.Fatalf("answer lacks %q: %q", want, got)
		}
	}
	typeKey(w, fyne.KeyLeft) // undo the reveal
	if s, rev, _ := m.InLesson(); s != 1 || rev || m.snap.T != 0 {
		t.Fatalf("← after reveal: slide %d revealed %v t %d", s, rev, m.snap.T)
	}
	typeKey(w, fyne.KeyRight)
	typeKey(w, fyne.KeyRight) // slide 3: t* → 100
	if s, _, _ := m.InLesson(); s != 2 || m.snap.T != 100 {
		t.Fatalf("slide 3: slide %d t %d", s, m.snap.T)
	}
	if got := barText(m); !strings.Contains(got, "3 / 3") || !strings.Contains(got, fmtMSE(m.snap.Lanes[0].Frames[100].MSE)) {
		t.Fatalf("last slide: %q", got)
	}
	typeKey(w, fyne.KeyRight) // past the end: stays
	if s, _, _ := m.InLesson(); s != 2 {
		t.Fatal("→ on the last slide moved")
	}
	typeKey(w, fyne.KeyLeft) // back to slide 2, revealed
	if s, rev, _ := m.InLesson(); s != 1 || !rev || m.snap.T != m.snap.Lanes[0].Best {
		t.Fatalf("← from slide 3: slide %d revealed %v t %d", s, rev, m.snap.T)
	}
	typeKey(w, fyne.KeyEscape)
	if _, _, ok := m.InLesson(); ok || m.bar.box.Visible() {
		t.Fatal("Esc did not leave the lesson")
	}
	if m.snap.T != m.snap.Lanes[0].Best || m.snap.Settings.Index != 12 {
		t.Fatalf("Esc changed the state: t %d digit %d", m.snap.T, m.snap.Settings.Index)
	}
	typeKey(w, fyne.KeyRight) // outside the lesson → steps again
	if m.snap.T != m.snap.Lanes[0].Best+1 {
		t.Fatalf("→ after the lesson: t %d", m.snap.T)
	}
}

// TestBadLessonChangesNothing: a refused lesson file names file, line and
// field, and the window stays as it was.
func TestBadLessonChangesNothing(t *testing.T) {
	m, _ := newTestMain(t)
	before := m.snap.Settings
	bad := `{"version": 1, "title": "x", "slides": [
  {"title": "a", "scenario": {"models": ["gpt"]}, "run": {"to": 3}, "caption": "c"}]}`
	err := m.OpenLesson(strings.NewReader(bad), "bad.json")
	if err == nil || !strings.Contains(err.Error(), "bad.json:2: slides[0].scenario.models") {
		t.Fatalf("bad lesson: %v", err)
	}
	if _, _, ok := m.InLesson(); ok || m.bar.box.Visible() || m.snap.Settings.Index != before.Index || m.snap.T != 0 {
		t.Fatal("a refused lesson changed the window")
	}
}

// TestEveryShippedLessonRuns steps each shipped lesson to its end by keys:
// every slide's text is filled (no placeholder left, no refusal).
func TestEveryShippedLessonRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every model (-short)")
	}
	m, w := newTestMain(t)
	ls, _ := m.ShippedLessons()
	for _, l := range ls {
		m.StartLesson(l)
		for step := 0; ; step++ {
			got := barText(m)
			if strings.ContainsAny(m.barText, "{}") || strings.Contains(got, "refused") || strings.Contains(got, "…*") || m.snap.Err != "" {
				t.Fatalf("%s, slide %s: %q (err %q)", l.Name, m.bar.counter.Text, got, m.snap.Err)
			}
			s, rev, _ := m.InLesson()
			if s == len(l.Slides)-1 && (rev || l.Slides[s].Question == "") {
				break
			}
			if step > 2*len(l.Slides) {
				t.Fatalf("%s: → did not reach the last slide", l.Name)
			}
			typeKey(w, fyne.KeyRight)
		}
		typeKey(w, fyne.KeyEscape)
	}
}

func fmtMSE(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
func itoa(v int) string       { return strconv.Itoa(v) }

// TestCaptionSegments: bold and italic runs, a paragraph per line, and a
// '*' that is no emphasis left as written.
func TestCaptionSegments(t *testing.T) {
	segs := captionSegments("a **bold 7** and *it* at t* = 3\nnext *pass through*. **done**, ok")
	var got []string
	for _, s := range segs {
		ts := s.(*widget.TextSegment)
		mark := ""
		if ts.Style.TextStyle.Bold {
			mark += "B"
		}
		if ts.Style.TextStyle.Italic {
			mark += "I"
		}
		if !ts.Style.Inline {
			mark += "¶"
		}
		got = append(got, mark+":"+ts.Text)
	}
	// Punctuation after a span stays with it (no space, no break before it).
	want := []string{":a ", "B:bold 7", ": and ", "I:it", "¶: at t* = 3", ":next ", "I:pass through.", ": ", "B:done,", "¶: ok"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("segments %q, want %q", got, want)
	}
}

// TestLessonShotNumbers: the numbers an exported slide shows are those a
// fresh window gives for the same scenario and step.
func TestLessonShotNumbers(t *testing.T) {
	deps := testDeps(t)
	m0, _ := newTestMain(t)
	ls, _ := m0.ShippedLessons()
	l := ls[1] // masking: a question at t = 0, the answer at t = 1
	var shots []Shot
	err := LessonShots(deps, l, 1280, 800, "Light", func(s Shot) error { shots = append(shots, s); return nil })
	if err != nil || len(shots) != 3 {
		t.Fatalf("%d shots, %v", len(shots), err)
	}
	if b := shots[1].Image.Bounds(); b.Dx() != 1280 || b.Dy() != 800 {
		t.Fatalf("shot size %v", b)
	}
	ans := shots[1]
	if !ans.Revealed || ans.Snapshot.T != 1 {
		t.Fatalf("second shot: revealed %v at t %d", ans.Revealed, ans.Snapshot.T)
	}
	// A fresh window on the same scenario, at t = 1.
	m, w := newTestMain(t)
	m.Engine.Restore(l.Slides[0].Settings, 1)
	_ = w
	f := m.snap.Lanes[0].At(1)
	for _, want := range []string{fmtMSE(f.MSE), fmtMSE(m.snap.Lanes[0].Frames[0].MSE)} {
		if !strings.Contains(ans.Text, want) {
			t.Fatalf("the answer %q lacks the window's %s", ans.Text, want)
		}
	}
}

// TestPresentationFits: every shipped lesson's slides fit presentation
// mode on a 1280×800 screen (the compare slides included) and on a
// 1920×1080 one, where the type is larger (issue 31: it was no larger
// than at 1280); the type follows the window when it is resized.
func TestPresentationFits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every shipped slide (-short; make test runs it without the race detector)")
	}
	for _, c := range []struct {
		size  fyne.Size
		scale float32
	}{{fyne.NewSize(1280, 800), 1.5}, {fyne.NewSize(1920, 1080), 2.025}} {
		m, w := newTestMain(t)
		w.Resize(c.size)
		m.togglePresentation()
		if got := m.app.Settings().Theme().(*appTheme).scale; got != c.scale {
			t.Fatalf("at %v the type scale is %v, want %v", c.size, got, c.scale)
		}
		ls, _ := m.ShippedLessons()
		for _, l := range ls {
			m.StartLesson(l)
			for k := range l.Slides {
				m.openSlide(k, false)
				if need := m.Content().MinSize(); need.Width > c.size.Width || need.Height > c.size.Height {
					t.Errorf("%v: %s slide %d needs %v in presentation mode", c.size, l.Name, k+1, need)
				}
			}
			m.LeaveLesson()
		}
	}
	m, w := newTestMain(t)
	m.togglePresentation()
	w.Resize(fyne.NewSize(1920, 1080))
	for deadline := time.Now().Add(10 * time.Second); m.app.Settings().Theme().(*appTheme).scale != 2.025; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("resized to 1920×1080, the type scale stays %v", m.app.Settings().Theme().(*appTheme).scale)
		}
	}
}

// TestLessonHidesTheFuture: before a question is answered the window shows
// nothing after the shown step: no t*, and the curve only up to t.
func TestLessonHidesTheFuture(t *testing.T) {
	m, w := newTestMain(t)
	ls, _ := m.ShippedLessons()
	m.StartLesson(ls[0])
	typeKey(w, fyne.KeyRight) // the question, at t = 0
	if m.msePlot.TStar >= 0 || !strings.Contains(m.tLabel.Text, "not reached yet") {
		t.Fatalf("before the reveal: t* marker at %v, t label %q", m.msePlot.TStar, m.tLabel.Text)
	}
	typeKey(w, fyne.KeyRight) // the answer, at t*
	if m.msePlot.TStar != float64(m.snap.Lanes[0].Best) || strings.Contains(m.tLabel.Text, "not reached") {
		t.Fatalf("after the reveal: t* marker at %v, t label %q", m.msePlot.TStar, m.tLabel.Text)
	}
	typeKey(w, fyne.KeyEscape)
	typeKey(w, fyne.KeyHome)
	if m.msePlot.TStar < 0 {
		t.Fatal("outside a lesson t* is shown from t = 0")
	}
}

// TestEveryQuestionSlideRevealsNothing: on every shipped question slide,
// before →, nothing answers the question: no t* marker, no model's t* or
// best error in the table, an MSE axis that does not reach where the
// curve will go, no training started.
func TestEveryQuestionSlideRevealsNothing(t *testing.T) {
	m, _ := newTestMain(t)
	ls, _ := m.ShippedLessons()
	asked := 0
	for _, l := range ls {
		m.StartLesson(l)
		for k, s := range l.Slides {
			if s.Question == "" {
				continue
			}
			asked++
			m.openSlide(k, false)
			name := fmt.Sprintf("%s slide %d", l.Name, k+1)
			sn := m.snap
			// A t* the run has already passed (a slide that starts at t*)
			// is the past, not the answer.
			if ts := m.msePlot.TStar; ts >= 0 && int(ts) > sn.T {
				t.Errorf("%s: a t* marker at %v, ahead of t = %d, before the answer", name, ts, sn.T)
			}
			if m.pendingTrain != nil || (m.train != nil && m.train.running) {
				t.Errorf("%s: training started before the answer", name)
			}
			if m.answers != nil && len(sn.Lanes) > 1 {
				for _, o := range m.answers.Objects {
					if lb, ok := o.(*widget.Label); ok && lb.Text == "none" {
						t.Errorf("%s: the table says %q before the answer", name, lb.Text)
					}
				}
			}
			// The MSE axis is what the values shown so far (t ≤ the step
			// shown, and the input's line) give, with its margin: the
			// steps to come do not stretch it.
			p, err := m.msePlot.Build()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, se := range mseSeries(sn) {
				for tt, v := range se.Values {
					if (tt <= sn.T || se.Reference) && !math.IsNaN(v) {
						lo, hi = math.Min(lo, v), math.Max(hi, v)
					}
				}
			}
			margin := 0.05 * (hi - lo)
			if margin == 0 {
				margin = math.Max(0.1*math.Abs(hi), 0.05*float64(b2i(hi == 0)))
			}
			if p.Y.Max > hi+margin+1e-9 || p.Y.Min < lo-margin-1e-9 {
				t.Errorf("%s: the MSE axis spans %.4f … %.4f; the values shown so far, %.4f … %.4f (the run to come stretched it)", name, p.Y.Min, p.Y.Max, lo, hi)
			}
		}
		m.LeaveLesson()
	}
	if asked < 6 {
		t.Fatalf("only %d question slides found", asked)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestLessonsMenuSaysWhyALessonIsMissing: with bsa-p2's weights refused
// (a bad --weights-p2), the lessons that need it are listed greyed with
// the reason, not left out without a word.
func TestLessonsMenuSaysWhyALessonIsMissing(t *testing.T) {
	deps := testDeps(t)
	bad := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := os.WriteFile(bad, []byte("not weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	deps.Catalogue = sim.NewCatalogue(deps.Data.Train, sim.WeightFiles{"bsa-p2": bad})
	deps.Catalogue.LoadAll()
	a := test.NewTempApp(t)
	w := test.NewTempWindow(t, nil)
	set := sim.DefaultSettings()
	set.Lanes = []string{"block"}
	m := NewMainSync(a, w, deps, set)
	menu := m.lessonsMenu()
	names, _ := lesson.ShippedNames()
	greyed := 0
	for _, it := range menu.Items {
		if it.Disabled && strings.Contains(it.Label, "bsa-p2 did not load") {
			greyed++
		}
	}
	if greyed == 0 || len(menu.Items) < len(names) {
		var labels []string
		for _, it := range menu.Items {
			labels = append(labels, it.Label)
		}
		t.Fatalf("lessons menu %q: want every shipped lesson, those needing bsa-p2 greyed with why", labels)
	}
}
