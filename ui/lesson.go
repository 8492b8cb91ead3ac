package ui

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"attractorlab/sim"
	"attractorlab/sim/lesson"
)

// A lesson runs in the window: each slide sets its scenario and runs the
// models (sim.Engine.Cue), and the lesson bar above the panels shows the
// slide's title, counter and caption, filled with the running models'
// numbers. → and PageDown reveal a question's answer, then go to the next
// slide; ← and PageUp undo that; Esc leaves the lesson and keeps the
// models as they are. Every other key works as outside a lesson.

// lessonRun is the lesson being presented.
type lessonRun struct {
	l        *lesson.Lesson
	slide    int
	revealed bool  // the slide's question has been answered
	ticket   int64 // the engine's cue for what is shown
}

// lessonBar is the band above the panels that shows a slide.
type lessonBar struct {
	box     *fyne.Container
	bg      *canvas.Rectangle
	title   *widget.Label
	counter *widget.Label
	head    *fyne.Container // the title and, on its right, the counter
	caption *widget.RichText
}

func newLessonBar() *lessonBar {
	b := &lessonBar{
		title:   widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		counter: widget.NewLabel(""),
		caption: widget.NewRichText(),
	}
	b.title.Truncation = fyne.TextTruncateEllipsis
	b.caption.Wrapping = fyne.TextWrapWord
	b.bg = canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	b.bg.CornerRadius = theme.InputRadiusSize()
	// The labels pad their text: no padding around them.
	b.head = container.NewBorder(nil, nil, nil, b.counter, b.title)
	b.box = container.NewStack(b.bg, container.NewBorder(b.head, nil, nil, nil, b.caption))
	b.box.Hide()
	return b
}

// ShippedLessons are the lessons embedded in the app that run with the
// models and digits this window has (read once).
func (m *Main) ShippedLessons() ([]*lesson.Lesson, error) {
	if m.shipped == nil && m.shippedErr == nil {
		m.shipped, m.shippedErr = lesson.Shipped(m.lessonLimits())
	}
	return m.shipped, m.shippedErr
}

func (m *Main) lessonLimits() lesson.Limits {
	return lesson.LimitsOf(m.deps.Data, m.deps.Catalogue)
}

// OpenLesson reads a lesson file (name is used in errors) and starts it; a
// refused file leaves the window as it was.
func (m *Main) OpenLesson(r io.Reader, name string) error {
	l, err := lesson.Read(r, name, m.lessonLimits())
	if err != nil {
		return err
	}
	m.StartLesson(l)
	return nil
}

// OpenLessonFile reads the lesson file at path as `lesson check` does
// (lesson.ReadFile) and starts it; a refused file leaves the window as it
// was.
func (m *Main) OpenLessonFile(path string) error {
	l, err := lesson.ReadFile(path, m.lessonLimits())
	if err != nil {
		return err
	}
	m.StartLesson(l)
	return nil
}

// openLesson asks for a lesson file (Lessons → Open lesson…).
func (m *Main) openLesson() {
	m.openJSON("lesson", m.OpenLessonFile, m.OpenLesson, lesson.MaxSize)
}

// StartLesson presents l from its first slide.
func (m *Main) StartLesson(l *lesson.Lesson) {
	m.lesson = &lessonRun{l: l}
	m.bar.box.Show()
	m.body.Refresh() // the panels make room for the bar
	m.openSlide(0, false)
	m.setStatus("lesson: → next · ← back · Esc leaves it")
	m.refreshMenu()
}

// LeaveLesson ends the lesson; the models stay as they are, to explore.
func (m *Main) LeaveLesson() {
	m.pendingTrain = nil
	if m.lesson == nil {
		return
	}
	m.reportLesson("left the lesson " + m.lesson.l.Name)
	m.lesson = nil
	m.bar.box.Hide()
	if m.train != nil {
		m.train.showLesson("", "")
	}
	m.body.Refresh() // the panels take the bar's room back
	if m.snap != nil {
		// What the lesson hid (the curves after t, each t*) is shown.
		m.lastPlotKey = ""
		m.drawPlots(m.snap)
		m.drawText(m.snap)
	}
	m.setStatus("left the lesson: the models stay as the last slide left them")
	m.refreshMenu()
}

// InLesson reports the lesson's slide (0-based) and whether its answer is
// shown, or ok = false outside a lesson.
func (m *Main) InLesson() (slide int, revealed, ok bool) {
	if m.lesson == nil {
		return 0, false, false
	}
	return m.lesson.slide, m.lesson.revealed, true
}

func mark(t int, best bool) sim.Mark { return sim.Mark{T: t, Best: best} }

// openSlide shows slide k: its question at From, or (revealed, or no
// question) the run from From to To, played at the slide's speed when
// going forward and jumped to when coming back.
func (m *Main) openSlide(k int, back bool) {
	lr := m.lesson
	s := lr.l.Slides[k]
	lr.slide = k
	lr.revealed = back && s.Question != ""
	set := s.Settings
	from, to := mark(s.Run.From, s.Run.FromBest), mark(s.Run.To, s.Run.ToBest)
	switch {
	case s.Question != "" && !lr.revealed:
		lr.ticket = m.Engine.Cue(&set, from, from, 0)
	case back:
		lr.ticket = m.Engine.Cue(&set, from, to, 0)
	default:
		lr.ticket = m.Engine.Cue(&set, from, to, s.Run.Speed)
	}
	m.pendingTrain = nil // a slide left before its training started starts none
	if s.Train != nil && m.train != nil {
		// A slide about a training of its own: the run under way (a
		// previous slide's) stops, and its form shows the slide's.
		m.train.queued = nil
		note := ""
		if s.Question != "" && !lr.revealed {
			note = "this slide's training starts when the answer is revealed (→)"
		}
		if m.train.running {
			m.train.note = note
			m.train.stopRun()
		} else if note != "" {
			m.train.status.SetText(note)
		}
	}
	if s.Train != nil && !back && s.Question == "" {
		// Trained once the slide's scenario is in place (its digit is the
		// one re-run): apply starts it when the cue has been taken. A
		// question about the training starts it on the reveal.
		m.pendingTrain = &pendingTrain{form: *s.Train, ticket: lr.ticket}
		m.startPendingTrain()
	}
	m.drawLesson()
	state := ""
	if lr.revealed {
		state = ", answer"
	}
	m.reportLesson(fmt.Sprintf("lesson %s: slide %d / %d%s", lr.l.Name, k+1, len(lr.l.Slides), state))
}

// reportLesson tells OnLesson where the lesson is.
func (m *Main) reportLesson(what string) {
	if m.OnLesson != nil {
		m.OnLesson(what)
	}
}

// lessonNext reveals the answer, or goes to the next slide (→, PageDown);
// while the slide's run (or a reveal) still plays, it finishes the run at
// once, so no answer is skipped.
func (m *Main) lessonNext() {
	lr := m.lesson
	s := lr.l.Slides[lr.slide]
	switch {
	case (s.Question == "" || lr.revealed) && !m.runDone():
		to := mark(s.Run.To, s.Run.ToBest)
		lr.ticket = m.Engine.Cue(nil, to, to, 0)
		m.drawLesson()
	case s.Question != "" && !lr.revealed:
		lr.revealed = true
		lr.ticket = m.Engine.Cue(nil, mark(s.Run.From, s.Run.FromBest), mark(s.Run.To, s.Run.ToBest), s.Run.Speed)
		if s.Train != nil {
			// The question was about this training: it starts now.
			m.pendingTrain = &pendingTrain{form: *s.Train, ticket: lr.ticket}
			m.startPendingTrain()
		}
		m.drawLesson()
		m.reportLesson(fmt.Sprintf("lesson %s: slide %d / %d, answer", lr.l.Name, lr.slide+1, len(lr.l.Slides)))
	case lr.slide+1 < len(lr.l.Slides):
		m.openSlide(lr.slide+1, false)
	default:
		m.setStatus("the last slide: Esc leaves the lesson (the models stay), ← goes back")
	}
}

// runDone reports whether the engine shows the end of the lesson's last
// cue (a cue not yet taken, or still playing, is not done).
func (m *Main) runDone() bool {
	return m.snap != nil && m.snap.Cue == m.lesson.ticket && m.snap.CueDone
}

// lessonBack undoes lessonNext (←, PageUp).
func (m *Main) lessonBack() {
	lr := m.lesson
	s := lr.l.Slides[lr.slide]
	switch {
	case s.Question != "" && lr.revealed:
		lr.revealed = false
		from := mark(s.Run.From, s.Run.FromBest)
		lr.ticket = m.Engine.Cue(nil, from, from, 0)
		m.drawLesson()
		m.reportLesson(fmt.Sprintf("lesson %s: slide %d / %d", lr.l.Name, lr.slide+1, len(lr.l.Slides)))
	case lr.slide > 0:
		m.openSlide(lr.slide-1, true)
	default:
		m.setStatus("the first slide: → goes on, Esc leaves the lesson")
	}
}

// lessonKey handles the keys a lesson changes and reports whether k was one.
func (m *Main) lessonKey(k *fyne.KeyEvent) bool {
	if m.lesson == nil {
		return false
	}
	switch k.Name {
	case fyne.KeyRight, fyne.KeyPageDown:
		m.lessonNext()
	case fyne.KeyLeft, fyne.KeyPageUp:
		m.lessonBack()
	case fyne.KeyEscape:
		m.LeaveLesson()
	default:
		return false
	}
	return true
}

// drawLesson fills the lesson bar from the current snapshot: the text
// appears once the engine shows the slide's cue, and an answer once its
// run has reached its end.
func (m *Main) drawLesson() {
	lr := m.lesson
	if lr == nil {
		return
	}
	s := lr.l.Slides[lr.slide]
	if c := theme.Color(theme.ColorNameInputBackground); c != m.bar.bg.FillColor {
		m.bar.bg.FillColor = c // the theme changed (light, dark)
		m.bar.bg.Refresh()
	}
	setText(m.bar.title, s.Title)
	counter := fmt.Sprintf("%d / %d", lr.slide+1, len(lr.l.Slides))
	if s.Question != "" && !lr.revealed {
		counter = "→ the answer    " + counter
	}
	if counter != m.bar.counter.Text {
		m.bar.counter.SetText(counter)
		m.bar.head.Refresh() // the counter's new width
	}
	md := slideText(s, m.snap, lr)
	if md != m.barText {
		m.barText = md
		m.bar.caption.Segments = captionSegments(md)
		m.bar.caption.Refresh()
		// The bar above the window's body is laid out at its minimum
		// height: a caption that needs fewer lines than the last one
		// (a new lesson after a long answer) gives the plots the room
		// back only when the body is laid out again.
		if h := m.bar.box.MinSize().Height; h != m.barHeight {
			m.barHeight = h
			if m.body != nil {
				m.body.Refresh()
			}
		}
		if m.train != nil {
			m.train.showLesson(s.Title, md)
		}
	}
}

// captionSegments lays out a caption: a paragraph per line, **bold** and
// *italic* runs (a '*' opens emphasis only before a letter and closes it
// only after one, so "t*" stays as written).
func captionSegments(text string) []widget.RichTextSegment {
	var segs []widget.RichTextSegment
	for _, line := range strings.Split(text, "\n") {
		var runs []*widget.TextSegment
		bold, italic := false, false
		var cur strings.Builder
		flush := func() {
			if cur.Len() > 0 {
				runs = append(runs, &widget.TextSegment{Text: cur.String(), Style: widget.RichTextStyle{
					Inline: true, ColorName: theme.ColorNameForeground, SizeName: theme.SizeNameText,
					TextStyle: fyne.TextStyle{Bold: bold, Italic: italic}}})
				cur.Reset()
			}
		}
		rs := []rune(line)
		for i := 0; i < len(rs); i++ {
			n := 1
			if rs[i] == '*' && i+1 < len(rs) && rs[i+1] == '*' {
				n = 2
			}
			if rs[i] != '*' {
				cur.WriteRune(rs[i])
				continue
			}
			open := i+n < len(rs) && rs[i+n] != ' '
			shut := i > 0 && rs[i-1] != ' '
			on := &italic
			if n == 2 {
				on = &bold
			}
			switch {
			case *on && shut:
				// Punctuation right after the span goes with it: Fyne lays
				// a new segment out after a space, which read "pass
				// through ." and let a line break before the period.
				i += n - 1
				for i+1 < len(rs) && strings.ContainsRune(".,;:!?)", rs[i+1]) {
					cur.WriteRune(rs[i+1])
					i++
				}
				flush()
				*on = false
			case !*on && open && !shut:
				flush()
				*on = true
				i += n - 1
			default:
				cur.WriteString(string(rs[i : i+n]))
				i += n - 1
			}
		}
		flush()
		if len(runs) == 0 {
			runs = append(runs, &widget.TextSegment{Text: " ", Style: widget.RichTextStyleParagraph})
		}
		runs[len(runs)-1].Style.Inline = false
		for _, r := range runs {
			segs = append(segs, r)
		}
	}
	return segs
}

// slideText is what the lesson bar shows of slide s for snapshot sn: a
// paragraph per line, with **bold** and *italic* (captionSegments).
func slideText(s lesson.Slide, sn *sim.Snapshot, lr *lessonRun) string {
	ready := sn != nil && sn.Cue == lr.ticket && (sn.CueDone || sn.Playing)
	if !ready {
		if sn != nil && sn.Cue == lr.ticket && sn.Err != "" {
			return "The slide's scenario was refused: " + sn.Err
		}
		return "…"
	}
	// A sentence's numbers are those of the step it speaks of: while the
	// run plays towards it they are not known yet ("…").
	fill := func(text string) string {
		if sn.CueDone {
			return lesson.Fill(text, sn)
		}
		return placeholder.ReplaceAllStringFunc(text, func(p string) string {
			if strings.HasPrefix(p, "{mse_input") { // the input's: known from t = 0
				return lesson.Fill(p, sn)
			}
			return "…"
		})
	}
	out := fill(s.Caption)
	if s.Question != "" {
		out += "\n**" + fill(s.Question) + "**"
		switch {
		case !lr.revealed:
			// The counter says → shows the answer; its line is kept
			// so the panels do not move when it comes.
			out += "\n "
		case sn.CueDone:
			out += "\n" + fill(s.Answer)
		default:
			// Plain text: the '*' of t* is no emphasis.
			out += fmt.Sprintf("\nrunning to %s …", target(s.Run))
		}
	}
	return out
}

// placeholder is a lesson text's {name} or {name:model} (lesson.Fill).
var placeholder = regexp.MustCompile(`\{[a-z_]+(?::[a-z0-9-]+)?\}`)

// target names a run's last step.
func target(r lesson.Run) string {
	if r.ToBest {
		return "t*"
	}
	return fmt.Sprintf("t = %d", r.To)
}

// refreshMenu rebuilds the menu bar (Leave lesson follows the lesson),
// which presentation mode hides.
func (m *Main) refreshMenu() {
	if !m.presentation {
		m.win.SetMainMenu(m.menu())
	}
}

// lessonUnavailable says in a few words why shipped lesson name did not
// load, from the shipped lessons' joined error: the model it needs.
func lessonUnavailable(err error, name string) string {
	if err == nil {
		return "unavailable"
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(line, "shipped lesson "+name+":") {
			continue
		}
		if _, rest, ok := strings.Cut(line, `model "`); ok {
			if model, _, ok := strings.Cut(rest, `"`); ok {
				return "unavailable, " + model + " did not load (see the warning at start)"
			}
		}
		return "unavailable (" + strings.TrimPrefix(line, "shipped lesson "+name+": ") + ")"
	}
	return "unavailable"
}

// lessonsMenu lists the shipped lessons, Open lesson… and Leave lesson.
func (m *Main) lessonsMenu() *fyne.Menu {
	var items []*fyne.MenuItem
	ls, err := m.ShippedLessons()
	if err != nil {
		fyne.LogError("shipped lessons", err)
	}
	byName := map[string]*lesson.Lesson{}
	for _, l := range ls {
		byName[l.Name] = l
	}
	// Every shipped lesson is listed: one that cannot run here (a model
	// it needs did not load: a bad --weights) is listed greyed with why,
	// rather than left out without a word.
	names, _ := lesson.ShippedNames()
	for k, name := range names {
		if l, ok := byName[name]; ok {
			items = append(items, fyne.NewMenuItem(fmt.Sprintf("%d. %s", k+1, l.Title), onFyne(func() { m.StartLesson(l) })))
			continue
		}
		it := fyne.NewMenuItem(fmt.Sprintf("%d. %s: %s", k+1, name, lessonUnavailable(err, name)), nil)
		it.Disabled = true
		items = append(items, it)
	}
	leave := fyne.NewMenuItem("Leave lesson (Esc)", onFyne(m.LeaveLesson))
	leave.Disabled = m.lesson == nil
	items = append(items, fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Open lesson…", onFyne(m.openLesson)), leave)
	return fyne.NewMenu("Lessons", items...)
}
