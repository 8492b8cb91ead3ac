package ui

import (
	"fmt"
	"testing"

	"fyne.io/fyne/v2"
)

// TestWindowsFitTheScreen: on a laptop's 1366×768 (the page a student
// opens) and on 800×600, every secondary window is no larger than the main
// window, and its content's least size fits in it (a taller content
// scrolls inside the window instead of pushing its bottom off the screen).
func TestWindowsFitTheScreen(t *testing.T) {
	for _, sz := range []fyne.Size{{Width: 1366, Height: 768}, {Width: 800, Height: 600}} {
		m, w := newTestMain(t)
		w.Resize(sz)
		room := w.Canvas().Size()
		for _, c := range []struct {
			name string
			open func()
			win  func() fyne.Window
		}{
			{"State space", m.showStateSpace, func() fyne.Window { return m.space.w }},
			{"Training", m.showTraining, func() fyne.Window { return m.train.w }},
			{"Ensemble", m.showEnsemble, func() fyne.Window { return m.ens.w }},
			{"Basin map", m.showBasin, func() fyne.Window { return m.basin.w }},
			{"Push", m.showPush, func() fyne.Window { return m.pushWin.w }},
			{"Dynamics", m.showDynamics, func() fyne.Window { return m.dyn.w }},
			{"Per-token energy", m.showTokenEnergy, func() fyne.Window { return m.tokens.w }},
		} {
			c.open()
			sw := c.win()
			got, least := sw.Canvas().Size(), sw.Content().MinSize()
			t.Logf("%v: %s %v, content at least %v", sz, c.name, got, least)
			if got.Width > room.Width+0.5 || got.Height > room.Height+0.5 || least.Width > got.Width+0.5 || least.Height > got.Height+0.5 {
				t.Errorf("%v: %s is %v with content of at least %v: larger than the %v the main window has", sz, c.name, got, least, room)
			}
			sw.Close()
		}
		_ = fmt.Sprint()
	}
}
