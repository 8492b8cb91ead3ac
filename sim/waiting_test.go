package sim

import (
	"context"
	"slices"
	"testing"
	"time"

	"attractorlab/sim/mnist"
)

// TestEngineWaitsForWeights: a model whose weights are still being
// fetched (the web build) does not hold the engine up. Its first snapshot
// shows the digit and its input with the model waiting and no lane; the
// engine answers commands meanwhile; once the weights are in, the lane
// joins and a cue to t* given while waiting ends at the same t* as a
// synchronous engine's.
func TestEngineWaitsForWeights(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	cat := NewCatalogue(data.Train, WeightFiles{})
	cat.deferred = func(name string) bool { return name == "bsa-p2" }
	// A fetch under way: load waits for this gate as for another
	// caller's load of the same model.
	gate := make(chan struct{})
	cat.loading["bsa-p2"] = gate
	snaps := make(chan *Snapshot, 4096)
	e := NewEngine(EngineConfig{Data: data, Memories: NewMemories(data.Train), Catalogue: cat, Horizon: 30, MaxT: 60,
		Settings: DefaultSettings(), OnSnap: func(sn *Snapshot) { snaps <- sn }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.Run(ctx)
	next := func(what string, ok func(*Snapshot) bool) *Snapshot {
		t.Helper()
		deadline := time.After(time.Minute)
		for {
			select {
			case sn := <-snaps:
				if ok(sn) {
					return sn
				}
			case <-deadline:
				t.Fatalf("no snapshot with %s within a minute", what)
			}
		}
	}
	sn := next("the first", func(*Snapshot) bool { return true })
	if !slices.Equal(sn.Waiting, []string{"bsa-p2"}) || len(sn.Lanes) != 0 || sn.Err != "" || len(sn.Input) != 784 {
		t.Fatalf("first snapshot: waiting %v, %d lanes, error %q, %d input pixels; want bsa-p2 waiting, no lane, the input",
			sn.Waiting, len(sn.Lanes), sn.Err, len(sn.Input))
	}
	e.SetSpeed(20)
	next("the speed set while waiting", func(sn *Snapshot) bool { return sn.Speed == 20 })
	e.ShowBest()
	select {
	case <-time.After(200 * time.Millisecond):
	case sn := <-snaps:
		if sn.CueDone && sn.T == 0 && len(sn.Lanes) == 0 && sn.Cue > 0 {
			t.Fatalf("the cue to t* ended at t = 0 before the model came")
		}
	}
	cat.mu.Lock()
	delete(cat.loading, "bsa-p2")
	cat.mu.Unlock()
	close(gate)
	sn = next("the lane at t*", func(sn *Snapshot) bool { return len(sn.Lanes) == 1 && sn.CueDone && sn.Unrecorded == 0 && sn.T > 0 })
	if len(sn.Waiting) != 0 || sn.Err != "" {
		t.Fatalf("after the weights came: waiting %v, error %q", sn.Waiting, sn.Err)
	}
	want := testEngine(t, true, nil)
	want.Settle()
	if w := want.Snapshot().Lanes[0].Best; sn.T != w || sn.Lanes[0].Best != w {
		t.Fatalf("t* %d shown at t = %d; a synchronous engine's t* is %d", sn.Lanes[0].Best, sn.T, w)
	}
}
