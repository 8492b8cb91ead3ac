package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"attractorlab/sim"
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

// TestBrowserLetterKeys: Fyne's web driver hands letter keys on as
// KeyUnknown with the rune they type; there the window reads T, H, L, A,
// P, [ and ] from the runes — on the window and through a focused control —
// while on the desktop a rune never acts a second time after its key.
func TestBrowserLetterKeys(t *testing.T) {
	m, w := newTestMain(t)
	m.Engine.Restore(sim.PaperDemo(), 0)
	m.Engine.Settle()
	typeRune := w.Canvas().(interface{ OnTypedRune() func(rune) }).OnTypedRune()
	// The desktop: the key did it; its rune does nothing more.
	typeRune('p')
	if m.presentation {
		t.Fatal("on the desktop the rune p toggled presentation mode as well as its key")
	}
	typeRune(']')
	if m.speed.Value != 10 {
		t.Fatalf("on the desktop the rune ] changed the speed to %g as well as its key", m.speed.Value)
	}
	dark0 := m.darkShown()
	typeRune('d')
	if m.darkShown() != dark0 {
		t.Fatal("on the desktop the rune d switched the theme as well as its key")
	}
	lettersAsRunes = true
	defer func() { lettersAsRunes = false }()
	w.Canvas().(interface{ OnTypedKey() func(*fyne.KeyEvent) }).OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyUnknown})
	typeRune('t')
	if m.snap.T != 30 {
		t.Fatalf("browser, t: at step %d, want t* = 30", m.snap.T)
	}
	typeRune('P')
	if !m.presentation {
		t.Fatal("browser, P: no presentation mode")
	}
	typeRune('p')
	typeRune(']')
	if m.speed.Value != 15 || m.snap.Speed != 15 {
		t.Fatalf("browser, ]: speed %g (the engine's %g), want 15", m.speed.Value, m.snap.Speed)
	}
	m.speed.TypedRune('[') // through the focused speed slider
	if m.speed.Value != 10 {
		t.Fatalf("browser, [ on the focused speed slider: speed %g, want 10", m.speed.Value)
	}
	// Through a focused control: the log-scale check box.
	m.Engine.Seek(0)
	m.side.logCheck.TypedRune('t')
	if m.snap.T != 30 || m.presentation {
		t.Fatalf("browser, t on a focused check box: at step %d (presentation %v)", m.snap.T, m.presentation)
	}
	logY := m.logY
	m.side.logCheck.TypedRune('l')
	if m.logY == logY {
		t.Fatal("browser, l on the focused check box did not switch the axis")
	}
	dark := m.darkShown()
	typeRune('d')
	if m.darkShown() == dark {
		t.Fatal("browser, d: the theme stayed")
	}
	m.side.themeSel.TypedRune('D') // through the focused theme selector
	if m.darkShown() != dark {
		t.Fatal("browser, D on the focused theme selector: the theme did not switch back")
	}
}

// TestBrowserThemeInPlace: in the browser the theme is changed in place
// (Fyne's web driver dies on a new one); presentation mode's larger type
// and the theme chooser still take effect.
func TestBrowserThemeInPlace(t *testing.T) {
	m, w := newTestMain(t)
	saved := browserSave
	browserSave = func(string, []byte) error { return nil }
	defer func() { browserSave = saved }()
	before := m.app.Settings().Theme()
	typeKey(w, fyne.KeyP)
	th, ok := m.app.Settings().Theme().(*appTheme)
	if !ok || th != before || th.scale != 1.5 || !m.presentation {
		t.Fatalf("presentation in the browser: the same theme %v, scale %v", th == before, th.scale)
	}
	typeKey(w, fyne.KeyP)
	m.side.themeSel.SetSelected("Light")
	if th := m.app.Settings().Theme().(*appTheme); th != before || th.scale != 1 || th.variant == nil || *th.variant != theme.VariantLight {
		t.Fatalf("the theme chooser in the browser: same %v, scale %v, variant %v", th == before, th.scale, th.variant)
	}
}
