//go:build js

package main

import (
	"context"
	"encoding/json"
	"syscall/js"
	"time"

	"fyne.io/fyne/v2"

	"attractorlab/sim"
	"attractorlab/ui"
)

// pageAddress is the page the web build runs in: its whole address (a link
// to open when it is one) and the address without query or fragment (the
// base of the links File → Copy link makes).
func pageAddress() (href, base string, ok bool) {
	loc := js.Global().Get("location")
	if loc.IsUndefined() {
		return "", "", false
	}
	return loc.Get("href").String(), loc.Get("origin").String() + loc.Get("pathname").String(), true
}

// pageReady fills the window in (opening, on Fyne's goroutine), then tells
// the page the window is up: it takes its loading screen away and notes
// the time. From then on the page's attractorlab.shownJSON holds what the
// window shows (ui.Shown) — set as each snapshot is drawn, with shownAt
// its time, and looked at again every tenth of a second (the status line
// and dialogs change without a snapshot).
func pageReady(ctx context.Context, m *ui.Main, opening func()) {
	fyne.DoAndWait(opening)
	page := js.Global().Get("attractorlab")
	if page.IsUndefined() {
		return
	}
	perf := js.Global().Get("performance")
	last := ""
	set := func(s ui.Shown) { // on Fyne's goroutine
		if b, err := json.Marshal(s); err == nil && string(b) != last {
			last = string(b)
			page.Set("shownJSON", last)
			page.Set("shownAt", perf.Call("now"))
		}
	}
	publish := func() { fyne.DoAndWait(func() { set(m.Shown()) }) }
	fyne.DoAndWait(func() { m.OnApplied = func() { set(m.Shown()) } })
	publish()
	// A link to this page clicked while it is open changes only the
	// fragment (the browser does not reload): the window opens it. The
	// page as it was before (an address that is not a link) is kept, so
	// the browser's Back returns to it instead of reporting an address
	// that names nothing to open.
	before := map[string]string{} // address → the state it showed when a link replaced it
	js.Global().Call("addEventListener", "hashchange", js.FuncOf(func(_ js.Value, args []js.Value) any {
		href := js.Global().Get("location").Get("href").String()
		old := ""
		if len(args) > 0 && args[0].Get("oldURL").Type() == js.TypeString {
			old = args[0].Get("oldURL").String()
		}
		fyne.Do(func() {
			if old != "" && !sim.IsLink(old) {
				if st := m.StateLink(); st != "" {
					before[old] = st
				}
			}
			switch st, ok := before[href]; {
			case sim.IsLink(href):
				m.OpenLink(href)
			case ok:
				m.ReturnTo(st)
			}
		})
		return nil
	}))
	// The session is remembered as the desktop remembers it when its
	// window closes: a page is left (closed, reloaded, navigated away)
	// without closing the app, so it is saved then, into the browser's
	// local storage. The page's own thread is the app's: nothing else runs
	// while this does.
	save := js.FuncOf(func(js.Value, []js.Value) any {
		m.SavePreferences()
		return nil
	})
	js.Global().Call("addEventListener", "pagehide", save)
	if !page.Get("ready").IsUndefined() {
		page.Call("ready")
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
			publish()
		}
	}
}
