package ui

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"attractorlab/models"
	"attractorlab/sim"
	"attractorlab/sim/lesson"
)

// menuItem is the item label of the window's menu menu.
func menuItem(t *testing.T, w fyne.Window, menu, label string) *fyne.MenuItem {
	t.Helper()
	for _, mn := range w.MainMenu().Items {
		if mn.Label != menu {
			continue
		}
		for _, it := range mn.Items {
			if it.Label == label {
				return it
			}
		}
	}
	t.Fatalf("no %s → %s", menu, label)
	return nil
}

// dialogEntry is the text field of the dialog shown last.
func dialogEntry(w fyne.Window) *keyEntry {
	if top := w.Canvas().Overlays().Top(); top != nil {
		return findEntry(top)
	}
	return nil
}

// findEntry is the last text field in o's tree (nil: none).
func findEntry(o fyne.CanvasObject) *keyEntry {
	var found *keyEntry
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch v := o.(type) {
		case *keyEntry:
			found = v
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(v).Objects() {
				walk(c)
			}
		}
	}
	walk(o)
	return found
}

// linkSettings are settings away from the defaults: another digit, a
// seed, hand-masked patches, two models, every parameter changed.
func linkSettings() sim.Settings {
	st := sim.DefaultSettings()
	st.Index = 42
	st.Corruption.Seed = 7
	st.Corruption.Fraction = 0.4
	st.Toggled = []int{3, 20}
	st.Lanes = []string{"bsa-p4", "hopfield"}
	st.Dyn = models.Dynamics{Lambda: 1.7, Gamma: 0.25, Attn: models.ReluSeqlen}
	st.Hop = sim.HopfieldParams{Beta: 2.5, K: 30, Async: true}
	return st
}

// TestCopyLink: File → Copy link puts on the clipboard a link that reads
// back as the window's settings at the step shown, starting with the
// address File → Link address… set; the status line says how long it is.
// An address the link cannot start with is refused in the dialog.
func TestCopyLink(t *testing.T) {
	m, w := newTestMain(t)
	want := linkSettings()
	m.Engine.Restore(want, 9)
	m.Engine.Settle()
	if !reflect.DeepEqual(m.snap.Settings, want) || m.snap.T != 9 {
		t.Fatalf("the window shows %+v at t = %d", m.snap.Settings, m.snap.T)
	}
	copyLink := menuItem(t, w, "File", "Copy link")
	copyLink.Action()
	link := m.app.Clipboard().Content()
	if !strings.HasPrefix(link, sim.DefaultLinkBase+"#s=") {
		t.Fatalf("clipboard %q", link)
	}
	if want := "link copied (" + strconv.Itoa(len(link)) + " characters)"; m.status.Text != want {
		t.Fatalf("status %q, want %q", m.status.Text, want)
	}
	got, err := sim.ParseLink(link, nil)
	if err != nil || got.T != 9 || !reflect.DeepEqual(got.Settings, want) {
		t.Fatalf("the link reads back as %+v t=%d (%v), want %+v t=9", got.Settings, got.T, err, want)
	}

	menuItem(t, w, "File", "Link address…").Action()
	e := dialogEntry(w)
	if e == nil || e.Text != sim.DefaultLinkBase {
		t.Fatalf("Link address… shows no field holding the default address")
	}
	e.SetText("https://example.org/lab/?x=1")
	e.OnSubmitted(e.Text)
	if len(m.dialogs) != 1 || m.LinkBase() != sim.DefaultLinkBase {
		t.Fatalf("an address with a query was taken (%d dialogs, base %q)", len(m.dialogs), m.LinkBase())
	}
	e.SetText(" https://example.org/lab/ ")
	e.OnSubmitted(e.Text)
	if len(m.dialogs) != 0 || m.app.Preferences().String("link_base") != "https://example.org/lab/" {
		t.Fatalf("the address was not saved: %d dialogs, base %q", len(m.dialogs), m.LinkBase())
	}
	m.Engine.Seek(3)
	copyLink.Action()
	link = m.app.Clipboard().Content()
	got, err = sim.ParseLink(link, nil)
	if !strings.HasPrefix(link, "https://example.org/lab/#s=") || err != nil || got.T != 3 || !reflect.DeepEqual(got.Settings, want) {
		t.Fatalf("link %q reads back as %+v t=%d (%v)", link, got.Settings, got.T, err)
	}
}

// TestOpenLink: a scenario link restores the digit, the settings and the
// step; a lesson link starts the lesson at its first slide; a bad link
// changes nothing and says why over the window.
func TestOpenLink(t *testing.T) {
	m, _ := newTestMain(t)
	want := linkSettings()
	link, err := sim.EncodeLink(sim.DefaultLinkBase, want, 12)
	if err != nil {
		t.Fatal(err)
	}
	m.OpenLink(link)
	m.Engine.Settle()
	if m.snap.Settings.Index != 42 || m.snap.T != 12 || !reflect.DeepEqual(m.snap.Settings, want) || len(m.dialogs) != 0 {
		t.Fatalf("after the link: %+v at t = %d, %d dialogs", m.snap.Settings, m.snap.T, len(m.dialogs))
	}

	m.OpenLink("https://example.org/lab/?lesson=masking")
	if slide, revealed, ok := m.InLesson(); !ok || slide != 0 || revealed || m.lesson.l.Name != "masking" || !m.bar.box.Visible() {
		t.Fatalf("lesson link: in lesson %v, slide %d", ok, slide)
	}
	// A scenario link leaves the lesson.
	m.OpenLink(link)
	m.Engine.Settle()
	if _, _, ok := m.InLesson(); ok || m.snap.T != 12 {
		t.Fatalf("a scenario link during a lesson: in lesson %v, t = %d", ok, m.snap.T)
	}

	names, err := lesson.ShippedNames()
	if err != nil {
		t.Fatal(err)
	}
	bad := []struct{ link, want string }{
		{sim.DefaultLinkBase + "?lesson=hopfeld", `link: lesson "hopfeld" is not a shipped lesson (` + strings.Join(names, ", ") + ")"},
		{"garbage", "link: names neither a scenario"},
		{"#s=garbage!", "link: the scenario is not base64url"},
		{"#s=" + strings.Repeat("\x00", 3), "link: the scenario is not base64url"},
		{sim.DefaultLinkBase + "#s=" + link[len(sim.DefaultLinkBase)+3:len(link)-12], "link: this link is cut short"},
	}
	big := want
	n := m.deps.Data.Test.Len()
	big.Index = n
	if l, err := sim.EncodeLink("", big, 0); err == nil {
		bad = append(bad, struct{ link, want string }{l, fmt.Sprintf("link: field index = %d is out of range (allowed 0 … %d: the test split here has %d digits)", n, n-1, n)})
	} else {
		t.Fatal(err)
	}
	for _, c := range bad {
		m.OpenLink(c.link)
		m.Engine.Settle()
		if !strings.HasPrefix(m.status.Text, c.want) || len(m.dialogs) != 1 {
			t.Fatalf("%q: status %q (%d dialogs), want %s…", c.link, m.status.Text, len(m.dialogs), c.want)
		}
		if !reflect.DeepEqual(m.snap.Settings, want) || m.snap.T != 12 {
			t.Fatalf("%q changed the window: %+v at t = %d", c.link, m.snap.Settings, m.snap.T)
		}
		for m.closeDialog() {
		}
	}
}
