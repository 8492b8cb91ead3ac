package ui

import (
	"bytes"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"

	"attractorlab/sim"
)

// ctrl is the platform's shortcut modifier (Ctrl; ⌘ on macOS) with key k.
func ctrl(k fyne.KeyName) fyne.Shortcut {
	return &desktop.CustomShortcut{KeyName: k, Modifier: fyne.KeyModifierShortcutDefault}
}

// menu is the window's menu bar. Its shortcuts (Ctrl+O, Ctrl+S, Ctrl+E)
// work whatever has the focus, a text entry included: the menu sees them
// first.
func (m *Main) menu() *fyne.MainMenu {
	item := func(label string, sc fyne.Shortcut, f func()) *fyne.MenuItem {
		it := fyne.NewMenuItem(label, onFyne(f))
		it.Shortcut = sc
		return it
	}
	plain := func(label string, f func()) *fyne.MenuItem { return fyne.NewMenuItem(label, onFyne(f)) }
	present := "Presentation (F11 or P; Esc leaves)"
	if inBrowser() {
		present = "Presentation (P; Esc leaves)"
	}
	file := fyne.NewMenu("File",
		item("Open scenario…", ctrl(fyne.KeyO), m.openScenario),
		item("Save scenario…", ctrl(fyne.KeyS), m.saveScenario),
		fyne.NewMenuItemSeparator(),
		plain("Draw a digit…", m.showDraw),
		plain("Open a picture as the digit…", m.openPicture),
		plain("Open a folder of pictures as a data set…", m.openFolder),
		fyne.NewMenuItemSeparator(),
		item("Export…", ctrl(fyne.KeyE), m.showExport),
		fyne.NewMenuItemSeparator(),
		plain("Copy link", m.CopyLink),
		plain("Link address…", m.showLinkBase),
	)
	view := fyne.NewMenu("View",
		plain("Paper demo (a noisy digit under the bare model, at t*)", m.PaperDemo),
		plain(present, m.togglePresentation),
		plain("Per-token energy (each token's e_i and its change)…", m.showTokenEnergy),
		item("State space (the trajectories among the stored digits)…", ctrl(fyne.KeyG), m.showStateSpace),
		item("Dynamics (why the memory is transient: the step's Jacobian)…", ctrl(fyne.KeyD), m.showDynamics),
	)
	push := fyne.NewMenu("Push",
		item("Push the state at t (choose patches)…", ctrl(fyne.KeyP), m.showPush),
		item("Kick the state at t (noise on every pixel)", ctrl(fyne.KeyK), m.kick),
		plain("Along the escape direction and a random one (the push test)…", m.pushAlong),
		// Fyne's drivers turn Ctrl+Z into its Undo shortcut, never into
		// a custom Ctrl+Z: the item answers that.
		item("Undo the last push", &fyne.ShortcutUndo{}, m.undoPush),
		plain("Remove every push", m.clearPushes),
		fyne.NewMenuItemSeparator(),
		item("Side by side: the pushed runs ⇄ the runs as they were", ctrl(fyne.KeyJ), m.toggleUnpushed),
	)
	population := fyne.NewMenu("Population",
		item("Ensemble of the chosen models…", ctrl(fyne.KeyM), m.showEnsemble),
		item("Basin map…", ctrl(fyne.KeyB), m.showBasin),
	)
	training := fyne.NewMenu("Training",
		item("Train the bare self-attention, live…", ctrl(fyne.KeyI), m.showTraining),
	)
	help := fyne.NewMenu("Help",
		plain("Keys", m.showKeys),
		plain("About Attractor Lab", m.showAbout),
	)
	return fyne.NewMainMenu(file, view, push, population, training, m.lessonsMenu(), help)
}

// PaperDemo shows the phenomenon: a noisy digit under the bare
// self-attention with the paper's parameters, at its transient memory t*.
func (m *Main) PaperDemo() {
	m.Engine.Restore(sim.PaperDemo(), 0)
	m.Engine.ShowBest()
	m.setStatus("paper demo: noise σ² 0.7 on a test digit, bare self-attention P=2; the curve dips to t*, then rises toward the average digit")
}

// saveScenario writes the current scenario (Ctrl+S).
func (m *Main) saveScenario() {
	if m.snap == nil {
		return
	}
	var buf bytes.Buffer
	if err := sim.WriteScenario(&buf, m.snap); err != nil {
		m.showError(err)
		return
	}
	m.saveAs("scenario.json", buf.Bytes())
}

// keyRow is one line of Help → Keys: the keys and what they do. A row
// with no keys heads a group.
type keyRow struct{ keys, action string }

// onFyne runs f on Fyne's goroutine. The desktop calls menu items and
// shortcuts there already; Fyne's web driver calls them on a goroutine of
// its own, and f is handed over.
func onFyne(f func()) func() {
	if !inBrowser() {
		return f
	}
	return func() { fyne.Do(f) }
}

// keysHelp lists the window's keys where it runs (keysFor).
func keysHelp() []keyRow { return keysFor(inBrowser()) }

// inBrowser tells whether this is the web build.
func inBrowser() bool { return browserSave != nil }

// keysFor lists the window's keys on the desktop or (web) in a browser,
// whose page never receives Page Up, Page Down or Home (Fyne's web driver
// does not pass them on) and whose F11 is the browser's own full screen:
// 0 and P are there instead, and work on the desktop too.
func keysFor(web bool) []keyRow {
	pick := func(desktop, browser string) string {
		if web {
			return browser
		}
		return desktop
	}
	return []keyRow{
		{"Space", "play / pause"},
		{"[  ]", "play slower / faster (1 … 120 steps/s)"},
		{pick("→  or  Page Down", "→"), "one step forward"},
		{pick("←  or  Page Up", "←"), "one step back"},
		{pick("Home  or  0", "0"), "back to t = 0"},
		{"T", "jump to t*, the best step (the transient memory)"},
		{"1 … 9", "show one model alone (the order of the Models list)"},
		{"H", "next attention head (block and ViT)"},
		{"L", "MSE axis logarithmic or linear"},
		{"A", "attention colours: per map, shared, per row, log"},
		{"D", "light or dark theme"},
		{pick("F11  or  P", "P"), "presentation mode"},
		{"Esc", "leave presentation mode, a lesson, a text field or a dialog"},
		{"Ctrl+O", pick("open a scenario", "open a scenario (the browser's file picker)")},
		{"Ctrl+S", pick("save the scenario", "download the scenario")},
		{"Ctrl+E", pick("export a picture or the numbers", "export a picture or the numbers (a download)")},
		{"Ctrl+P", "push the state at t: erase patches or add noise to them (the run branches)"},
		{"Ctrl+K", "kick the state at t: noise on every pixel"},
		{"Ctrl+Z", "take the last push back"},
		{"", "In a lesson"},
		{pick("→  or  Page Down", "→"), "show the answer, then the next slide"},
		{pick("←  or  Page Up", "←"), "back a slide"},
		{"Esc", "leave the lesson (the models stay)"},
	}
}

// keysNote ends Help → Keys.
const keysNote = "The keys work whatever control was clicked last, except while typing in a text field."

// keysGrid lays Help → Keys out as two columns, the keys in bold on the
// left, each action beside them.
func keysGrid() fyne.CanvasObject {
	var cells []fyne.CanvasObject
	for _, r := range keysHelp() {
		if r.keys == "" {
			cells = append(cells, widget.NewLabel(""),
				widget.NewLabelWithStyle(r.action, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
			continue
		}
		cells = append(cells, widget.NewLabelWithStyle(r.keys, fyne.TextAlignTrailing, fyne.TextStyle{Bold: true}),
			widget.NewLabel(r.action))
	}
	note := widget.NewLabel(keysNote)
	note.Importance = widget.LowImportance
	return container.NewVBox(container.New(layout.NewFormLayout(), cells...), widget.NewSeparator(), note)
}

// showKeys shows Help → Keys: in a window too low for all its rows (a
// 1366×768 screen) they scroll, and the dialog's title and Close stay in
// view.
func (m *Main) showKeys() {
	grid := keysGrid()
	scroll := container.NewVScroll(grid)
	need := grid.MinSize()
	// The dialog's title, its button and their padding take about
	// keysChrome of the window's height.
	room := m.win.Canvas().Size().Height - keysChrome
	scroll.SetMinSize(fyne.NewSize(need.Width, max(min(need.Height, room), 120)))
	m.showDialog(dialog.NewCustom("Keys", "Close", scroll, m.win))
}

// keysChrome is the height Help → Keys keeps for the dialog around the
// rows: its title, its Close button, their padding and a margin.
const keysChrome = 190

func (m *Main) showAbout() {
	v := m.deps.Version
	if v == "" {
		v = "(development build)"
	}
	m.showDialog(dialog.NewInformation("About Attractor Lab", fmt.Sprintf(
		"Attractor Lab %s\n\nWatch self-attention behave as an attractor network on MNIST digits:\n"+
			"a transient memory, then the fall toward a global attractor.\n\n"+
			"After D'Amico & Negri, \"Self-attention as an attractor network:\n"+
			"transient memories without backpropagation\".\n\nNumerics: %s.", v, kernelsText()), m.win))
}

// kernelsText is the numerical kernels in use, for About.
func kernelsText() string {
	t, _ := sim.Kernels()
	return t
}
