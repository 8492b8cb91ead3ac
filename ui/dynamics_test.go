package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"attractorlab/sim"
)

// TestDynamicsWindow: View → Dynamics… follows the main window's step: no
// spectrum at t = 0 (the map starts at t = 1), the spectrum at t* once
// computed off the Fyne goroutine, the escape direction over the default
// horizon, the push test's verdict at a small and a large ε, refusals of
// a bad ε and k in words, and a model without a map named with its
// reason.
func TestDynamicsWindow(t *testing.T) {
	m, w := newTestMain(t)
	m.Engine.Restore(sim.PaperDemo(), 0)
	m.Engine.Settle()
	got := make(chan string, 64)
	m.dynReady = func(kind string) { got <- kind }
	wait := func(kind string) {
		t.Helper()
		deadline := time.After(3 * time.Minute)
		for {
			select {
			case k := <-got:
				if k == kind {
					return
				}
			case <-deadline:
				t.Fatalf("no %s result within 3 minutes", kind)
			}
		}
	}
	m.showDynamics()
	d := m.dyn
	wait("run")
	if !strings.Contains(d.note.Text, "starts at t = 1") {
		t.Fatalf("at t = 0: %q", d.note.Text)
	}
	typeKey(w, fyne.KeyT)
	best := m.snap.Lanes[0].Best
	wait("spectrum")
	if d.t != best || !strings.Contains(d.note.Text, "spectral radius") || !strings.Contains(d.note.Text, "(its t*)") {
		t.Fatalf("at t* = %d: t %d, %q", best, d.t, d.note.Text)
	}
	if _, err := d.spec.Build(); err != nil {
		t.Fatal(err)
	}
	m.ShowDynamics(dynTabEscape)
	wait("escape")
	if d.esc == nil || d.esc.T != best || !strings.Contains(d.escCaps[0].Text, "grows ×") || !strings.Contains(d.escNote.Text, "grows most") {
		t.Fatalf("escape: %+v, %q", d.esc, d.escNote.Text)
	}
	d.epsEntry.SetText("1e-4")
	d.pushTest()
	wait("push")
	if !strings.Contains(d.pushNote.Text, "the linearisation holds") {
		t.Fatalf("ε = 1e-4: %q", d.pushNote.Text)
	}
	if _, err := d.pushPlot.Build(); err != nil {
		t.Fatal(err)
	}
	d.epsEntry.SetText("1")
	d.pushTest()
	wait("push")
	if !strings.Contains(d.pushNote.Text, "the linearisation fails") {
		t.Fatalf("ε = 1: %q", d.pushNote.Text)
	}
	d.epsEntry.SetText("x")
	d.pushTest()
	if !strings.Contains(d.pushNote.Text, "not a number in") {
		t.Fatalf("ε = x: %q", d.pushNote.Text)
	}
	d.kEntry.SetText("0")
	d.computeEscape()
	if !strings.Contains(d.escNote.Text, "1 … 200") {
		t.Fatalf("k = 0: %q", d.escNote.Text)
	}
	m.Engine.Update(func(s *sim.Settings) { s.Lanes = []string{"vit"} })
	m.Engine.Settle()
	if !strings.Contains(d.note.Text, "none of the models shown has a map") || !strings.Contains(d.note.Text, "vit") {
		t.Fatalf("the ViT alone: %q", d.note.Text)
	}
	d.w.Close()
	if m.dyn != nil {
		t.Fatal("closing kept the window")
	}
}
