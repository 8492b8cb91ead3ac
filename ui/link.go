package ui

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"attractorlab/sim"
	"attractorlab/sim/lesson"
	"attractorlab/sim/mnist"
)

// Links (sim.EncodeLink, sim.ParseLink) carry a whole scenario, or name a
// shipped lesson, in an address: File → Copy link puts one to what the
// window shows on the clipboard, and OpenLink opens one (`attractorlab gui
// --link`, and the web page's own address at start-up).

// linkBasePref is the preference holding the address of the hosted page
// that links start with (File → Link address…).
const linkBasePref = "link_base"

// LinkBase is the page address links start with: the user's choice, or
// sim.DefaultLinkBase.
func (m *Main) LinkBase() string {
	return m.app.Preferences().StringWithFallback(linkBasePref, sim.DefaultLinkBase)
}

// SetLinkBase makes links start with base from now on (and in later
// runs), or refuses it as sim.CheckLinkBase does. The web build may set
// the page's own address.
func (m *Main) SetLinkBase(base string) error {
	if err := sim.CheckLinkBase(base); err != nil {
		return err
	}
	m.app.Preferences().SetString(linkBasePref, base)
	return nil
}

// CopyLink puts a link to what the window shows — its settings at the step
// shown — on the clipboard (File → Copy link).
func (m *Main) CopyLink() {
	if m.snap == nil {
		return
	}
	link, err := sim.EncodeLink(m.LinkBase(), m.snap.Settings, m.snap.T)
	if err != nil {
		m.showError(fmt.Errorf("copy link: %w (File → Link address… sets the address)", err))
		return
	}
	m.app.Clipboard().SetContent(link)
	m.setStatus(fmt.Sprintf("link copied (%d characters)", utf8.RuneCountInString(link)))
}

// StateLink is a link to what the window shows (its settings at the step
// shown), "" before the first snapshot: the page keeps it to come back to
// when the browser's Back leaves a link.
func (m *Main) StateLink() string {
	if m.snap == nil {
		return ""
	}
	link, err := sim.EncodeLink(m.LinkBase(), m.snap.Settings, m.snap.T)
	if err != nil {
		return ""
	}
	return link
}

// ReturnTo reopens a state StateLink gave (the browser's Back to the page
// as it was before a link opened), saying so in the status line.
func (m *Main) ReturnTo(state string) {
	if err := m.openLink(state); err != nil {
		m.Warn(err.Error())
		return
	}
	m.setStatus("back to where the page was before the link")
}

// showLinkBase asks for the page address links start with (File → Link
// address…). An address sim.CheckLinkBase refuses is reported and the
// dialog stays to correct it.
func (m *Main) showLinkBase() {
	var d dialog.Dialog
	entry := newKeyEntry(func() { d.Hide() })
	entry.SetText(m.LinkBase())
	entry.SetPlaceHolder(sim.DefaultLinkBase)
	problem := widget.NewLabel("")
	problem.Wrapping = fyne.TextWrapWord
	problem.Importance = widget.DangerImportance
	problem.Hide()
	save := func() {
		base := strings.TrimSpace(entry.Text)
		if err := m.SetLinkBase(base); err != nil {
			problem.SetText(err.Error())
			problem.Show()
			return
		}
		if base == "" {
			m.setStatus("links are now relative (#s=…): they open on the page they are followed from")
		} else {
			m.setStatus("links now start with " + base)
		}
		d.Hide()
	}
	entry.OnSubmitted = submitOnFyne(func(string) { save() })
	note := widget.NewLabel("The address of the page that runs Attractor Lab in a browser. " +
		"Copy link writes it, then #s= and the scenario. Empty: relative links (#s=…).")
	note.Wrapping = fyne.TextWrapWord
	body := container.NewVBox(note, entry, problem)
	d = dialog.NewCustomWithoutButtons("Link address", body, m.win)
	ok := widget.NewButton("Save", save)
	ok.Importance = widget.HighImportance
	d.(*dialog.CustomDialog).SetButtons([]fyne.CanvasObject{
		widget.NewButton("Cancel", func() { d.Hide() }),
		widget.NewButton("Default", func() { entry.SetText(sim.DefaultLinkBase) }),
		ok})
	d.Resize(fyne.NewSize(560, d.MinSize().Height))
	m.showDialog(d)
	m.win.Canvas().Focus(entry)
}

// OpenLink opens what a link carries: a scenario, restored as File → Open
// restores a scenario file (the settings and the step), or a shipped
// lesson, started at its first slide. A link that is refused
// (sim.Catalogue.ParseLink; a digit this window's data does not have; a
// lesson that does not run here) changes nothing: the window says why, in
// a dialog and the status line (Warn). The web build calls it with the
// page's address at start-up, `attractorlab gui --link` with the flag's.
func (m *Main) OpenLink(raw string) {
	if err := m.openLink(raw); err != nil {
		m.Warn(err.Error())
	}
}

func (m *Main) openLink(raw string) error {
	names, err := lesson.ShippedNames()
	if err != nil {
		return fmt.Errorf("link: %w", err)
	}
	target, err := m.deps.Catalogue.ParseLink(raw, names)
	if err != nil {
		return err
	}
	if target.Lesson != "" {
		l, err := lesson.Load(target.Lesson, m.lessonLimits())
		if err != nil {
			return fmt.Errorf("link: %w", err)
		}
		m.StartLesson(l)
		return nil
	}
	st := target.Settings
	src, err := m.sourceFor(st.Dataset)
	if err != nil {
		return fmt.Errorf("link: %w", err)
	}
	set := src.Data.Test
	if st.Split == sim.TrainSplit {
		set = src.Data.Train
	}
	if n := set.Len(); st.Index >= n {
		return fmt.Errorf("link: field index = %d is out of range (allowed 0 … %d: the %s split here has %d digits)", st.Index, n-1, st.Split, n)
	}
	m.LeaveLesson()
	m.Engine.Restore(st, target.T)
	what := "digit"
	if st.DatasetName() != mnist.MNISTName {
		what = mnist.DatasetLabel(st.Dataset) + " picture"
	}
	m.setStatus(fmt.Sprintf("opened the link: %s %s %d at t = %d", st.Split, what, st.Index, target.T))
	return nil
}
