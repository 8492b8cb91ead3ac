package ui

import (
	"context"
	"fmt"
	"image"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/software"
	"fyne.io/fyne/v2/test"

	"attractorlab/sim"
	"attractorlab/sim/lesson"
)

// Shot is one picture of a lesson as presentation mode shows it: a slide,
// or a question slide once its answer is revealed.
type Shot struct {
	Slide    int // 0-based
	Revealed bool
	Text     string // the lesson bar's text (**bold**, *italic*, a paragraph per line)
	Image    image.Image
	Snapshot *sim.Snapshot // what the models showed
}

// SizeError says a picture size is smaller than the window's content needs.
type SizeError struct{ Width, Height, MinWidth, MinHeight int }

func (e *SizeError) Error() string {
	return fmt.Sprintf("%dx%d is smaller than presentation mode needs (at least %dx%d)", e.Width, e.Height, e.MinWidth, e.MinHeight)
}

// LessonShots runs lesson l headless (Fyne's in-memory driver and software
// painter, no display) in presentation mode at width×height pixels, and
// hands each slide's picture to emit in order: a question slide gives two
// (the question, then the revealed answer). theme is "Light" or "Dark".
// It replaces the current Fyne app: call it from a command, not the window.
func LessonShots(deps Deps, l *lesson.Lesson, width, height int, themeName string, emit func(Shot) error) error {
	return LessonShotsContext(context.Background(), deps, l, width, height, themeName, emit)
}

// LessonShotsContext is LessonShots stopped by ctx: it is checked before
// each slide is run, drawn and handed on, and its error (ctx.Err) is
// returned once it is done.
func LessonShotsContext(ctx context.Context, deps Deps, l *lesson.Lesson, width, height int, themeName string, emit func(Shot) error) error {
	// Off the main goroutine, where Fyne's in-memory driver applies a
	// theme change at once (on it, later, on another goroutine).
	done := make(chan error)
	go func() { done <- lessonShots(ctx, deps, l, width, height, themeName, emit) }()
	return <-done
}

func lessonShots(ctx context.Context, deps Deps, l *lesson.Lesson, width, height int, themeName string, emit func(Shot) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a := test.NewApp()
	defer a.Quit()
	win := a.NewWindow("Attractor Lab")
	m := NewMainSync(a, win, deps, l.Slides[0].Settings)
	m.themeChoice = themeName
	// A slide shows every panel whole: none scrolls, so the window needs
	// the panels' own size.
	m.panels.Direction = container.ScrollNone
	win.SetContent(m.Content())
	size := fyne.NewSize(float32(width), float32(height))
	win.Resize(size)
	m.togglePresentation()
	m.StartLesson(l)
	m.setStatus("")
	if need := m.Content().MinSize(); need.Width > size.Width || need.Height > size.Height {
		return &SizeError{Width: width, Height: height, MinWidth: int(need.Width + 0.999), MinHeight: int(need.Height + 0.999)}
	}
	for {
		k, revealed, _ := m.InLesson()
		if m.snap.Err != "" {
			return fmt.Errorf("%s, slide %d: %s", l.Name, k+1, m.snap.Err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		c := software.NewCanvas()
		c.SetPadded(true)
		c.SetContent(m.Content())
		c.Resize(size)
		img := c.Capture()
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := emit(Shot{Slide: k, Revealed: revealed, Text: m.barText, Image: img, Snapshot: m.snap}); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if k == len(l.Slides)-1 && (revealed || l.Slides[k].Question == "") {
			return nil
		}
		m.lessonNext()
	}
}
