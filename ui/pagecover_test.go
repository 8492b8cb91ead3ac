package ui

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
)

// TestPageCover lays windows over the main window as Fyne's web driver
// does (inner windows in a MultipleWindows overlay) and checks that the
// main content is hidden exactly while one covers the whole canvas, and
// shown again when it is moved, shrunk or closed.
func TestPageCover(t *testing.T) {
	m, w := newTestMain(t)
	// The watch's clock never ticks: the test calls coverTick itself (in
	// Fyne's test driver a goroutine's fyne.Do runs beside the test).
	ticks := make(chan time.Time)
	defer close(ticks)
	m.coverTicks = ticks
	c := w.Canvas()
	size := c.Size()
	small := container.NewInnerWindow("Push", canvas.NewRectangle(nil))
	big := container.NewInnerWindow("Training", canvas.NewRectangle(nil))
	multi := container.NewMultipleWindows(small)
	multi.Resize(size)
	c.Overlays().Add(multi)
	small.Resize(fyne.NewSize(size.Width/2, size.Height/2))
	content := m.win.Content()
	shown := func(want bool, what string) {
		t.Helper()
		if content.Visible() != want {
			t.Fatalf("%s: the main content shown %v, want %v", what, content.Visible(), want)
		}
	}
	m.checkCover()
	shown(true, "a window over half the page")
	multi.Add(big)
	big.Resize(size)
	m.checkCover()
	shown(false, "a window over the whole page")
	if !m.coverWatch {
		t.Fatal("no watch while the content is hidden")
	}
	for _, c := range []struct {
		what string
		pos  fyne.Position
		size fyne.Size
		want bool
	}{
		{"moved right by a pixel", fyne.NewPos(1, 0), size, true},
		{"moved down by a pixel", fyne.NewPos(0, 1), size, true},
		{"a pixel narrower", fyne.NewPos(0, 0), size.SubtractWidthHeight(1, 0), true},
		{"larger than the page, to its left", fyne.NewPos(-20, -5), size.AddWidthHeight(40, 10), false},
		{"back over the page", fyne.NewPos(0, 0), size, false},
	} {
		big.Move(c.pos)
		big.Resize(c.size)
		m.checkCover()
		shown(c.want, c.what)
		if !c.want {
			continue
		}
		big.Move(fyne.NewPos(0, 0))
		big.Resize(size)
		m.checkCover()
		shown(false, c.what+", then back")
	}
	// The watch sees a window dragged away without being told, and is
	// done then.
	big.Move(fyne.NewPos(30, 0))
	alive := time.Now()
	if done := m.coverTick(&alive); !done || !content.Visible() || m.coverWatch {
		t.Fatalf("a window dragged off the page: the watch done %v, the content shown %v, watching %v", done, content.Visible(), m.coverWatch)
	}
	big.Move(fyne.NewPos(0, 0))
	m.checkCover()
	if done := m.coverTick(&alive); done || content.Visible() {
		t.Fatalf("a window over the page: the watch done %v, the content shown %v", done, content.Visible())
	}
	// Closed windows (hidden, as Fyne's driver hides them) cover nothing.
	big.Hide()
	m.checkCover()
	shown(true, "the covering window closed")
	big.Show()
	m.checkCover()
	shown(false, "shown again")
	multi.Hide()
	m.checkCover()
	shown(true, "all windows closed")
}

// TestFitPage: on the desktop a large window is sized as any other.
func TestFitPage(t *testing.T) {
	m, _ := newTestMain(t)
	a, b := m.newWindow("a"), m.newWindow("b")
	want := fyne.NewSize(900, 700)
	m.fitWindow(a, canvas.NewRectangle(nil), want)
	m.fitPage(b, canvas.NewRectangle(nil), want)
	if a.Canvas().Size() != b.Canvas().Size() {
		t.Fatalf("fitPage %v, fitWindow %v", b.Canvas().Size(), a.Canvas().Size())
	}
}
