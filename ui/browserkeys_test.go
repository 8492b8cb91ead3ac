package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
)

// The browser never hands the page Page Up, Page Down or Home, and F11 is
// its own: its Help lists 0 and P instead, which work on the desktop too.
func TestBrowserKeys(t *testing.T) {
	for _, r := range keysFor(true) {
		for _, gone := range []string{"Page", "Home", "F11"} {
			if strings.Contains(r.keys, gone) {
				t.Errorf("the browser's Help lists %q (%s): the page never receives %s", r.keys, r.action, gone)
			}
		}
	}
	var zero, p bool
	for _, r := range keysFor(true) {
		zero = zero || r.keys == "0"
		p = p || r.keys == "P"
	}
	if !zero || !p {
		t.Fatal("the browser's Help lacks 0 (t = 0) or P (presentation)")
	}
	m, w := newTestMain(t)
	typeKey(w, fyne.KeyRight)
	typeKey(w, fyne.KeyRight)
	if m.snap.T != 2 {
		t.Fatalf("→ →: t = %d", m.snap.T)
	}
	typeKey(w, fyne.Key0)
	if m.snap.T != 0 {
		t.Fatalf("0: t = %d, want 0", m.snap.T)
	}
	typeKey(w, fyne.KeyP)
	if !m.presentation {
		t.Fatal("P did not start presentation mode")
	}
	typeKey(w, fyne.KeyP)
	if m.presentation {
		t.Fatal("P did not leave presentation mode")
	}
}
