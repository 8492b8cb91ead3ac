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
	// "Along the run" fills in on every core: stopped here, so the jobs
	// this test waits for do not share the cores with it (its own test
	// is TestDynamicsAlong).
	d.cancel["along"]()
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
	if d.esc == nil || d.esc.T != best || !strings.Contains(d.escCaps[0].Text, "×") || !strings.Contains(d.escNote.Text, "changes ×") {
		t.Fatalf("escape: %q, %q", d.escCaps[0].Text, d.escNote.Text)
	}
	// The default horizon: the steps until the MSE is back above the
	// input's.
	if esc := d.kFor(best) + best; !(esc < len(d.mse) && d.mse[esc] > d.mse[0] && d.mse[esc-1] <= d.mse[0]) || d.esc.K != esc-best {
		t.Fatalf("default k %d from t* = %d", d.esc.K, best)
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

// TestDynamicsAlong: "Along the run" fills in the four curves over the
// run's steps (its first 40 here, past t* = 30) and says where the run
// moves most against t*.
func TestDynamicsAlong(t *testing.T) {
	alongMax = 40
	defer func() { alongMax = 0 }()
	m, _ := newTestMain(t)
	set := sim.PaperDemo()
	m.Engine.Restore(set, 0)
	m.Engine.Settle()
	got := make(chan string, 64)
	m.dynReady = func(kind string) { got <- kind }
	m.ShowDynamics(dynTabAlong)
	d := m.dyn
	deadline := time.After(5 * time.Minute)
	for done := false; !done; {
		select {
		case k := <-got:
			done = k == "along"
		case <-deadline:
			t.Fatal("along the run: no result within 5 minutes")
		}
	}
	T := len(d.states) - 1
	if len(d.along) != 40 || len(d.along) != len(alongSteps(T)) || !strings.Contains(d.alongNote.Text, "steps computed") || !strings.Contains(d.alongNote.Text, "The largest step is at t =") {
		t.Fatalf("%d of %d steps; %q", len(d.along), len(alongSteps(T)), d.alongNote.Text)
	}
	for _, p := range []*PlotView{d.alongM, d.alongR, d.alongU, d.alongS} {
		if _, err := p.Build(); err != nil {
			t.Fatal(err)
		}
	}
}
