package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"attractorlab/sim"
)

// waitJob starts a population window's job and waits until it finished.
func waitJob(t *testing.T, j *job, start func()) {
	t.Helper()
	done := make(chan struct{})
	j.after = func() { close(done) }
	start()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the job did not finish")
	}
	j.after = nil
}

// TestEnsembleWindow: the ensemble runs the main window's model and
// corruption in the background, its band holds q25 ≤ median ≤ q75, and a
// click on the histogram loads a digit with that t* at its t*; a
// cancelled run keeps the last ensemble.
func TestEnsembleWindow(t *testing.T) {
	m, _ := newTestMain(t)
	m.Engine.Update(func(s *sim.Settings) { s.Corruption = sim.DefaultNoise })
	m.showEnsemble()
	e := m.ens
	e.n.SetSelected("50")
	waitJob(t, e.job, e.start)
	if len(e.bands) != 1 || e.bands[0].N != 50 || len(e.bands[0].Median) != 101 {
		t.Fatalf("bands %d, status %q", len(e.bands), e.job.status.Text)
	}
	b := e.bands[0]
	for tt := range b.Median {
		if !(b.Q25[tt] <= b.Median[tt] && b.Median[tt] <= b.Q75[tt]) {
			t.Fatalf("t=%d: q25 %g, median %g, q75 %g", tt, b.Q25[tt], b.Median[tt], b.Q75[tt])
		}
	}
	if !strings.Contains(e.job.status.Text, "50 test digits × 1 model in ") || e.job.prog.Value != 1 {
		t.Fatalf("status %q, progress %g", e.job.status.Text, e.job.prog.Value)
	}
	d := b.Digits[7]
	e.loadDigit(d.TStar)
	m.Engine.Settle()
	sn := m.Engine.Snapshot()
	got := b.Digits[sn.Settings.Index].TStar
	if got != d.TStar || sn.Settings.Corruption.Kind != sim.Noise {
		t.Fatalf("clicked t* %d: loaded digit %d with t* %d (%s)", d.TStar, sn.Settings.Index, got, sn.Settings.Corruption.Kind)
	}
	// Cancel at once: the last ensemble stays.
	e.n.SetSelected("1000")
	done := make(chan struct{})
	e.job.after = func() { close(done) }
	e.start()
	e.job.cancel.OnTapped()
	<-done
	if !strings.Contains(e.job.status.Text, "cancelled") || e.bands[0].N != 50 {
		t.Fatalf("after cancel: status %q, %d digits shown", e.job.status.Text, e.bands[0].N)
	}
	e.w.Close()
	if m.ens != nil {
		t.Fatal("closing the window kept it")
	}
}

// TestBasinWindow: a bad field is refused by name and range without a
// run; a small map runs, and a click on a cell loads its level and λ on
// its representative digit.
func TestBasinWindow(t *testing.T) {
	m, _ := newTestMain(t)
	m.showBasin()
	b := m.basin
	b.levels.SetText("0.3, 7")
	b.start()
	if s := b.job.status.Text; !strings.Contains(s, "levels") || !strings.Contains(s, "0 … 0.9") || b.job.stop != nil {
		t.Fatalf("bad level: status %q", s)
	}
	b.levels.SetText("0.2, 0.5")
	b.values.SetText("0.5, 2")
	b.n.SetText("x")
	b.start()
	if s := b.job.status.Text; !strings.Contains(s, "test digits") {
		t.Fatalf("bad digits: status %q", s)
	}
	b.n.SetText("8")
	waitJob(t, b.job, b.start)
	if len(b.results) != 4 || !b.view.has {
		t.Fatalf("%d results, status %q", len(b.results), b.job.status.Text)
	}
	b.loadCell(1, 1) // level 0.5, λ 2
	m.Engine.Settle()
	s := m.Engine.Snapshot().Settings
	if s.Corruption.Kind != sim.Mask || s.Corruption.Fraction != 0.5 || s.Dyn.Lambda != 2 {
		t.Fatalf("loaded %+v", s.Corruption)
	}
	if !strings.Contains(b.job.status.Text, "λ 2") {
		t.Fatalf("status %q", b.job.status.Text)
	}
	if mk := b.view.basin.Mark; mk == nil || *mk != [2]int{1, 1} {
		t.Fatalf("the loaded cell is marked at %v, want (1, 1)", mk)
	}
}

// TestEnsembleOverTrainingSeeds: the ensemble bands the bare model over
// the training seeds kept in the cache (the median over seeds of each
// seed's median over the digits, from the lowest seed's to the highest);
// without kept seeds it says how to make them.
func TestEnsembleOverTrainingSeeds(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	m, _ := newTestMain(t)
	m.Engine.Update(func(s *sim.Settings) { s.Corruption = sim.DefaultNoise })
	m.showEnsemble()
	e := m.ens
	e.n.SetSelected("50")
	e.over.SetSelected(overSeeds)
	e.start()
	if !strings.Contains(e.job.status.Text, "no training seeds of bsa-p2 are kept") || !strings.Contains(e.job.status.Text, "--train-seeds") {
		t.Fatalf("without kept seeds: %q", e.job.status.Text)
	}
	// Two seeds kept (trained briefly: the band reads whatever the files hold).
	dir, _ := sim.SeedCache()
	train := m.deps.Data.Train
	for _, seed := range []uint64{0, 3} {
		s := sim.ShippedRecipe(2, seed)
		s.Images, s.Config.Epochs, s.Config.Batch = 100, 1, 50
		got, err := sim.TrainSeed(context.Background(), train, m.deps.Data.Test, s, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		path := sim.SeedPath(dir, sim.ShippedRecipe(2, seed), train)
		os.MkdirAll(filepath.Dir(path), 0o755)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := got.Model.WriteBSA(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	waitJob(t, e.job, e.start)
	if len(e.bands) != 1 || e.bands[0].Seeds != 2 || !strings.Contains(e.bands[0].Model, "2 training seeds") || len(e.bands[0].Digits) != 100 {
		t.Fatalf("bands %+v, status %q", len(e.bands), e.job.status.Text)
	}
	b := e.bands[0]
	for tt := range b.Median {
		if !(b.Q25[tt] <= b.Median[tt] && b.Median[tt] <= b.Q75[tt]) {
			t.Fatalf("t=%d: lowest %g, median %g, highest %g", tt, b.Q25[tt], b.Median[tt], b.Q75[tt])
		}
	}
	if b.Q25[50] == b.Q75[50] {
		t.Fatal("two seeds, no spread: the band is not over the seeds")
	}
}
