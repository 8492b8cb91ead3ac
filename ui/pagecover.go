package ui

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
)

// In the page, Fyne's web driver draws every window in the one canvas: a
// window is an inner window laid over the main window's content, and each
// frame paints the content beneath as well as the window over it. The
// Training and Basin map windows fill the page there (fitPage; at a
// laptop's size they covered nearly all of it already), and while a window
// covers the whole page (any window, on a small screen) the main window's
// content is hidden, so a frame paints only what can be seen: with the
// Training window open and a run going, a frame drew 324 objects, of which
// 224 were the main window's (docs/browser.md, "A window over the whole
// page").

// coverEvery is how often, while the main window's content is hidden, the
// page looks again whether a window still covers it (a window dragged or
// resized by its corner, the browser window made larger).
const coverEvery = 250 * time.Millisecond

// keepAliveEvery is how often hidden content is measured: Fyne destroys a
// widget's renderer that nothing asked for in a minute, and making them all
// again would be the first frame of a window.
const keepAliveEvery = 20 * time.Second

// newWindow makes a window of the app. In the page, its Show and its
// closing look whether the main window's content is still to be drawn.
func (m *Main) newWindow(title string) fyne.Window {
	w := m.app.NewWindow(title)
	if !inBrowser() {
		return w
	}
	return &pageWindow{Window: w, m: m}
}

// pageWindow is a window in the page (an inner window of the main one).
type pageWindow struct {
	fyne.Window
	m *Main
}

func (w *pageWindow) Show() {
	w.Window.Show()
	w.m.checkCover()
}

func (w *pageWindow) SetOnClosed(f func()) {
	w.Window.SetOnClosed(func() {
		if f != nil {
			f()
		}
		// Fyne takes the window out of the page after this returns.
		fyne.Do(w.m.checkCover)
	})
}

// fitPage is fitWindow for a large window: in the page it fills the page
// (and so covers the main window's content); on the desktop it is
// fitWindow.
func (m *Main) fitPage(w fyne.Window, content fyne.CanvasObject, want fyne.Size) {
	if room := m.win.Canvas().Size(); inBrowser() && room.Width > 0 && room.Height > 0 {
		want = room
	}
	m.fitWindow(w, content, want)
}

// pageCovered reports whether a shown inner window covers the whole of the
// main window's canvas.
func pageCovered(c fyne.Canvas) bool {
	size := c.Size()
	if size.Width <= 0 || size.Height <= 0 {
		return false
	}
	for _, o := range c.Overlays().List() {
		multi, ok := o.(*container.MultipleWindows)
		if !ok || !multi.Visible() {
			continue
		}
		for _, w := range multi.Windows {
			if w == nil || !w.Visible() {
				continue
			}
			p, s := w.Position(), w.Size()
			if p.X <= 0 && p.Y <= 0 && p.X+s.Width >= size.Width && p.Y+s.Height >= size.Height {
				return true
			}
		}
	}
	return false
}

// checkCover hides the main window's content while a window covers the
// page and shows it again when none does; while hidden it looks again
// every coverEvery. On Fyne's goroutine.
func (m *Main) checkCover() {
	content := m.win.Content()
	if content == nil {
		return
	}
	covered := pageCovered(m.win.Canvas())
	if covered != content.Visible() {
		return // hidden already where covered, shown where not
	}
	if !covered {
		content.Show()
		return
	}
	// A key typed now is for the window over the page, not for a control
	// of the hidden content that had the focus.
	m.win.Canvas().Unfocus()
	content.Hide()
	if m.coverWatch {
		return
	}
	m.coverWatch = true
	ticks, stop := m.coverTicks, func() {}
	if ticks == nil {
		tk := time.NewTicker(coverEvery)
		ticks, stop = tk.C, tk.Stop
	}
	go func() {
		defer stop()
		alive := time.Now()
		for {
			select {
			case <-m.ctx.Done():
				return
			case _, ok := <-ticks:
				if !ok {
					return
				}
			}
			var done bool
			fyne.DoAndWait(func() { done = m.coverTick(&alive) })
			if done {
				return
			}
		}
	}()
}

// coverTick is the watch's look at the page: it shows the main content
// again where no window covers it any more (and then reports that the
// watch is done), and measures the hidden content every keepAliveEvery
// since *alive. On Fyne's goroutine.
func (m *Main) coverTick(alive *time.Time) (done bool) {
	m.checkCover()
	content := m.win.Content()
	if content == nil || content.Visible() {
		m.coverWatch = false
		return true
	}
	if time.Since(*alive) >= keepAliveEvery {
		content.MinSize()
		*alive = time.Now()
	}
	return false
}
