package ui

import (
	"slices"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"
)

// The window's keys (Space, ←/→, PageUp/PageDown, Home, T, H, 1–9, F11,
// Esc) work whatever has focus, except a text entry being typed in. Fyne
// hands a key to the focused widget, and a click on a checkbox, a radio
// button, a list or a slider focuses it, so every focusable control of the
// window is one of the types below: each passes the window's keys on to
// the window and keeps the rest (Tab still moves the focus; Enter still
// presses a focused button).

// keyFunc handles a key for the window and reports whether it used it.
type keyFunc func(*fyne.KeyEvent) bool

// keysOnFyne is keys as a focused control calls it: on Fyne's goroutine.
// Fyne's web driver hands mouse events over to its goroutine but calls a
// key's handlers on the goroutine of the page's key event, where the
// window's widgets must not be touched (Fyne logs "Error in Fyne call
// thread" and hands each such call over, one by one); there the key is
// handed over whole, and the control waits for the answer.
func keysOnFyne(keys keyFunc) keyFunc {
	if !inBrowser() || keys == nil {
		return keys
	}
	return func(ev *fyne.KeyEvent) bool {
		var used bool
		fyne.DoAndWait(func() { used = keys(ev) })
		return used
	}
}

// submitOnFyne is a text field's OnSubmitted (Return, a key) run on
// Fyne's goroutine (keysOnFyne).
func submitOnFyne(f func(string)) func(string) {
	if !inBrowser() {
		return f
	}
	return func(text string) { fyne.Do(func() { f(text) }) }
}

// keyOnFyne is a window's key handler (Canvas.SetOnTypedKey) run on
// Fyne's goroutine (keysOnFyne).
func keyOnFyne(f func(*fyne.KeyEvent)) func(*fyne.KeyEvent) {
	if !inBrowser() {
		return f
	}
	return func(ev *fyne.KeyEvent) { fyne.Do(func() { f(ev) }) }
}

// usesRune reports whether the rune typed with a window key belongs to it
// (Space's ' ', T's 't', H's 'h', …): the focused control must not act on
// it too.
func usesRune(r rune) bool {
	switch r {
	case ' ', 't', 'T', 'h', 'H', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// lettersAsRunes is set in the browser, where Fyne's web driver hands the
// page's letter keys on as KeyUnknown (its key table has no letters; only
// the runes they type say which): there the window's letter keys (T, H,
// L, A, P, D) and the speed's [ and ] are read from the runes. On the
// desktop the key events carry them, and the runes must not act a second
// time.
var lettersAsRunes = false

// runeKey is the window key a typed rune stands for where letters come as
// runes (nil: none, or on the desktop).
func runeKey(r rune) *fyne.KeyEvent {
	if !lettersAsRunes {
		return nil
	}
	switch u := unicode.ToUpper(r); u {
	case 'T', 'H', 'L', 'A', 'P', 'D':
		return &fyne.KeyEvent{Name: fyne.KeyName(string(u))}
	case '[':
		return &fyne.KeyEvent{Name: fyne.KeyLeftBracket}
	case ']':
		return &fyne.KeyEvent{Name: fyne.KeyRightBracket}
	}
	return nil
}

// keyCheck is a check box that passes the window's keys on.
type keyCheck struct {
	widget.Check
	keys keyFunc
}

func newKeyCheck(label string, changed func(bool), keys keyFunc) *keyCheck {
	c := &keyCheck{keys: keysOnFyne(keys)}
	c.Text, c.OnChanged = label, changed
	c.ExtendBaseWidget(c)
	return c
}

func (c *keyCheck) TypedKey(ev *fyne.KeyEvent) {
	if !c.keys(ev) {
		c.Check.TypedKey(ev)
	}
}

func (c *keyCheck) TypedRune(r rune) {
	if ev := runeKey(r); ev != nil && c.keys(ev) {
		return
	}
	if !usesRune(r) {
		c.Check.TypedRune(r)
	}
}

// keySelect is a drop-down list that passes the window's keys on.
type keySelect struct {
	widget.Select
	keys keyFunc
}

func newKeySelect(options []string, changed func(string), keys keyFunc) *keySelect {
	s := &keySelect{keys: keysOnFyne(keys)}
	s.Options, s.OnChanged = options, changed
	s.PlaceHolder = "(choose one)"
	s.ExtendBaseWidget(s)
	return s
}

// TypedRune passes the window's letter keys on where they come as runes
// (runeKey).
func (s *keySelect) TypedRune(r rune) {
	if ev := runeKey(r); ev != nil && s.keys(ev) {
		return
	}
	s.Select.TypedRune(r)
}

func (s *keySelect) TypedKey(ev *fyne.KeyEvent) {
	if !s.keys(ev) {
		s.Select.TypedKey(ev)
	}
}

// keySlider is a slider that passes the window's keys on (←/→ step the
// model, not the slider).
type keySlider struct {
	widget.Slider
	keys keyFunc
}

func newKeySlider(lo, hi, step float64, keys keyFunc) *keySlider {
	s := &keySlider{keys: keysOnFyne(keys)}
	s.Min, s.Max, s.Step = lo, hi, step
	s.Orientation = widget.Horizontal
	s.ExtendBaseWidget(s)
	return s
}

// TypedRune passes the window's letter keys on where they come as runes
// (runeKey).
func (s *keySlider) TypedRune(r rune) {
	if ev := runeKey(r); ev != nil && s.keys(ev) {
		return
	}
	s.Slider.TypedRune(r)
}

func (s *keySlider) TypedKey(ev *fyne.KeyEvent) {
	if !s.keys(ev) {
		s.Slider.TypedKey(ev)
	}
}

// keyButton is a button that passes the window's keys on (Space plays,
// it does not press the focused button; Enter does).
type keyButton struct {
	widget.Button
	keys keyFunc
}

func newKeyButton(label string, icon fyne.Resource, tapped func(), keys keyFunc) *keyButton {
	b := &keyButton{keys: keysOnFyne(keys)}
	b.Text, b.Icon, b.OnTapped = label, icon, tapped
	b.ExtendBaseWidget(b)
	return b
}

// TypedRune passes the window's letter keys on where they come as runes
// (runeKey).
func (b *keyButton) TypedRune(r rune) {
	if ev := runeKey(r); ev != nil && b.keys(ev) {
		return
	}
	b.Button.TypedRune(r)
}

func (b *keyButton) TypedKey(ev *fyne.KeyEvent) {
	if b.keys(ev) {
		return
	}
	if ev.Name == fyne.KeyReturn || ev.Name == fyne.KeyEnter {
		onFyne(func() { b.Tapped(nil) })()
		return
	}
	b.Button.TypedKey(ev)
}

// choice is a row of buttons of which one is selected: the window's radio
// buttons (Fyne's own radio items take the focus and keep the keys).
type choice struct {
	box      *fyne.Container
	buttons  []*keyButton
	options  []string
	Selected string
	OnPicked func(string)
}

func newChoice(options []string, picked func(string), keys keyFunc) *choice {
	c := &choice{options: options, OnPicked: picked}
	var objs []fyne.CanvasObject
	for _, o := range options {
		o := o
		b := newKeyButton(o, nil, func() {
			if o != c.Selected {
				c.SetSelected(o)
				if c.OnPicked != nil {
					c.OnPicked(o)
				}
			}
		}, keys)
		c.buttons = append(c.buttons, b)
		objs = append(objs, b)
	}
	c.box = container.NewGridWithColumns(len(objs), objs...)
	return c
}

// SetSelected marks option s (no callback).
func (c *choice) SetSelected(s string) {
	c.Selected = s
	for k, b := range c.buttons {
		imp := widget.MediumImportance
		if c.options[k] == s {
			imp = widget.HighImportance
		}
		if b.Importance != imp {
			b.Importance = imp
			b.Refresh()
		}
	}
}

// keyEntry is a text field that Esc leaves: what was typed is dropped
// (esc puts the field back as it was) and the focus goes, so the window's
// keys work again.
type keyEntry struct {
	widget.Entry
	esc func()
}

func newKeyEntry(esc func()) *keyEntry {
	e := &keyEntry{esc: esc}
	e.Wrapping = fyne.TextWrapOff
	e.ExtendBaseWidget(e)
	return e
}

func (e *keyEntry) TypedKey(ev *fyne.KeyEvent) {
	if ev.Name == fyne.KeyEscape {
		if e.esc != nil {
			onFyne(e.esc)()
		}
		return
	}
	e.Entry.TypedKey(ev)
}

// showDialog shows d and remembers it until it closes: Esc closes the
// dialog shown last (closeDialog), as its Cancel or Close button does.
func (m *Main) showDialog(d dialog.Dialog) {
	m.dialogs = append(m.dialogs, d)
	d.SetOnClosed(func() {
		if k := slices.Index(m.dialogs, d); k >= 0 {
			m.dialogs = slices.Delete(m.dialogs, k, k+1)
		}
	})
	d.Show()
}

// closeDialog closes the dialog shown last and reports whether there was
// one.
func (m *Main) closeDialog() bool {
	if len(m.dialogs) == 0 {
		return false
	}
	m.dialogs[len(m.dialogs)-1].Hide()
	return true
}
