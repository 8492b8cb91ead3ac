package ui

import (
	"context"
	"errors"
	"os"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// fakeSpace is the page's workers as the State space window sees them:
// it answers s (or err) and notes the data sets asked for.
type fakeSpace struct {
	s     *sim.StateSpace
	err   error
	asked []string
}

func (f *fakeSpace) StateSpace(_ context.Context, dataset string) (*sim.StateSpace, error) {
	f.asked = append(f.asked, dataset)
	return f.s, f.err
}

// TestStateSpaceFromWorkers: with workers (Deps.Space), the window asks
// them for the plane of the data set it shows and draws their answer;
// when they cannot (every one busy) it places the digits itself, and
// draws the same plane.
func TestStateSpaceFromWorkers(t *testing.T) {
	os.Setenv("LANG", "en_US.UTF-8")
	// A copy of the training set each time: the state spaces kept are by
	// set, and another test's would answer without asking.
	fresh := func(deps Deps) Deps {
		train := *deps.Data.Train
		deps.Data = &mnist.Data{Train: &train, Test: deps.Data.Test, Dataset: deps.Data.Dataset}
		deps.Memories = sim.NewMemories(&train)
		return deps
	}
	base := testDeps(t)
	want := fresh(base).Memories.StateSpace()
	worker := *want
	worker.Source = "a worker"
	for _, c := range []struct {
		name   string
		remote *fakeSpace
		source string
	}{
		{"a worker free", &fakeSpace{s: &worker}, "a worker"},
		{"every worker busy", &fakeSpace{err: errors.New("no worker is free to place the stored digits")}, want.Source},
	} {
		deps := fresh(base)
		deps.Space = c.remote
		a := test.NewTempApp(t)
		w := test.NewTempWindow(t, nil)
		m := NewMainSync(a, w, deps, sim.DefaultSettings())
		w.SetContent(m.Content())
		w.Resize(fyne.NewSize(1280, 800))
		done := make(chan struct{})
		m.spaceReady = func() { close(done) }
		m.showStateSpace()
		<-done
		sw := m.space
		if len(c.remote.asked) != 1 || c.remote.asked[0] != deps.Data.Name() {
			t.Fatalf("%s: the workers were asked for %q, want once for %q", c.name, c.remote.asked, deps.Data.Name())
		}
		if sw.space.Source != c.source || len(sw.space.Points) != deps.Data.Train.Len() || sw.space.Points[17] != want.Points[17] ||
			len(sw.space.Labels) != deps.Data.Train.Len() {
			t.Fatalf("%s: the window shows the plane from %q with %d points and %d labels", c.name, sw.space.Source, len(sw.space.Points), len(sw.space.Labels))
		}
		if sw.plot.Build == nil {
			t.Fatalf("%s: the map was not drawn", c.name)
		}
		if _, err := sw.plot.Build(); err != nil {
			t.Fatal(err)
		}
		sw.w.Close()
	}
}
