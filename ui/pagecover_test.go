package ui

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
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

// countRefresh counts its refreshes.
type countRefresh struct {
	widget.BaseWidget
	n int
}

func (c *countRefresh) Refresh() { c.n++ }
func (c *countRefresh) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(canvas.NewRectangle(nil))
}

// TestThemeInParts: in the page a new theme refreshes the window's
// objects in themeParts parts, each after a frame, every object once; a
// theme set before the parts are done stops the older refresh, and the
// newer refreshes everything. Shown.Theming is true until the last part;
// D in the page switches the theme at once and finishes the refresh
// after the parts.
func TestThemeInParts(t *testing.T) {
	m, w := newTestMain(t)
	var later []func()
	m.afterFrame = func(f func()) { later = append(later, f) }
	objs := make([]*countRefresh, 10)
	list := make([]fyne.CanvasObject, len(objs))
	for k := range objs {
		objs[k] = &countRefresh{}
		list[k] = objs[k]
	}
	refreshed := func() (n int) {
		for _, o := range objs {
			n += o.n
		}
		return n
	}
	m.refreshInParts(list)
	if got := refreshed(); got != len(objs)/themeParts || len(later) != 1 || !m.Shown().Theming {
		t.Fatalf("the first part: %d of %d objects refreshed, %d parts waiting, theming %v", got, len(objs), len(later), m.Shown().Theming)
	}
	next := later[0]
	later = nil
	next()
	// A newer theme before the last part: it starts over.
	m.refreshInParts(list)
	stale := later[0]
	later = later[1:]
	for len(later) > 0 {
		f := later[0]
		later = later[1:]
		f()
	}
	stale() // the older refresh's next part: nothing
	for k, o := range objs {
		want := 2
		if k >= 2*len(objs)/themeParts {
			want = 1 // the first refresh stopped before its last part
		}
		if o.n != want {
			t.Fatalf("object %d refreshed %d times, want %d", k, o.n, want)
		}
	}
	if m.Shown().Theming || len(later) != 0 {
		t.Fatalf("after the last part: theming %v, %d parts waiting", m.Shown().Theming, len(later))
	}

	// D in the page.
	saved := browserSave
	browserSave = func(string, []byte) error { return nil }
	defer func() { browserSave = saved }()
	dark := m.Shown().Dark
	typeKey(w, fyne.KeyD)
	if s := m.Shown(); s.Dark == dark || !s.Theming || len(later) != 1 {
		t.Fatalf("D in the page: dark %v (was %v), theming %v, %d parts waiting", s.Dark, dark, s.Theming, len(later))
	}
	for n := 1; len(later) > 0; n++ {
		f := later[0]
		later = later[1:]
		f()
		if n >= themeParts {
			t.Fatalf("%d parts after the first", n)
		}
	}
	if s := m.Shown(); s.Theming || s.Dark == dark {
		t.Fatalf("D's refresh done: theming %v, dark %v (was %v)", s.Theming, s.Dark, dark)
	}
}
