package sim

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
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
	e, _, snaps, come := waitingEngine(t)
	next := func(what string, ok func(*Snapshot) bool) *Snapshot {
		t.Helper()
		return nextSnap(t, snaps, what, ok)
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
	come()
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

// waitingEngine is an asynchronous engine whose opening model bsa-p2 is
// waiting for its weights: they come when the returned function is
// called (a fetch under way holds load on the gate).
func waitingEngine(t *testing.T) (*Engine, *Catalogue, chan *Snapshot, func()) {
	t.Helper()
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	cat := NewCatalogue(data.Train, WeightFiles{})
	cat.deferred = func(name string) bool { return name == "bsa-p2" }
	gate := make(chan struct{})
	cat.loading["bsa-p2"] = gate
	snaps := make(chan *Snapshot, 4096)
	e := NewEngine(EngineConfig{Data: data, Memories: NewMemories(data.Train), Catalogue: cat, Horizon: 30, MaxT: 60,
		Settings: DefaultSettings(), OnSnap: func(sn *Snapshot) { snaps <- sn }})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go e.Run(ctx)
	come := func() {
		cat.mu.Lock()
		delete(cat.loading, "bsa-p2")
		cat.mu.Unlock()
		close(gate)
	}
	return e, cat, snaps, come
}

// nextSnap waits (a minute at most) for a snapshot ok accepts.
func nextSnap(t *testing.T, snaps chan *Snapshot, what string, ok func(*Snapshot) bool) *Snapshot {
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

// TestWaitingKeepsTheStep: a link's step (Restore) and a lesson's run
// (Cue from t = 0 to 20) given while the model's weights come are
// carried out once they are in, not lost at t = 0.
func TestWaitingKeepsTheStep(t *testing.T) {
	e, _, snaps, come := waitingEngine(t)
	e.Restore(DefaultSettings(), 25)
	sn := nextSnap(t, snaps, "the link restored", func(sn *Snapshot) bool { return sn.Seq > 1 })
	if sn.T != 0 || len(sn.Lanes) != 0 {
		t.Fatalf("while waiting: t = %d, %d lanes; want t = 0 (the input), no lane", sn.T, len(sn.Lanes))
	}
	come()
	nextSnap(t, snaps, "the lane at t = 25", func(sn *Snapshot) bool { return len(sn.Lanes) == 1 && sn.T == 25 })

	e2, _, snaps2, come2 := waitingEngine(t)
	ticket := e2.Cue(nil, Mark{T: 0}, Mark{T: 20}, 200)
	come2()
	// The cue played (a cue run at t = 0 before the lane came would have
	// ended there); its last step is shown once recorded.
	nextSnap(t, snaps2, "the cue played past t = 0", func(sn *Snapshot) bool { return sn.Cue == ticket && sn.T > 0 && len(sn.Lanes) == 1 })
	nextSnap(t, snaps2, "the cue's end at t = 20", func(sn *Snapshot) bool { return sn.Cue == ticket && sn.CueDone && sn.T == 20 })
}

// TestFailedFetchRetried: a fetch that fails is reported (the snapshot's
// error names the model and says what tries again), leaves the settings
// changeable, and the next change fetches again.
func TestFailedFetchRetried(t *testing.T) {
	k := slices.IndexFunc(Registry, func(s ModelSpec) bool { return s.Name == "bsa-p2" })
	saved := Registry[k].load
	t.Cleanup(func() { Registry[k].load = saved })
	fail := true
	var mu sync.Mutex
	Registry[k].load = func(c *Catalogue, file string) (Model, []string, error) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return nil, nil, errors.New("fetching weights/bsa-p2.safetensors.web: TypeError: Failed to fetch")
		}
		return saved(c, file)
	}
	e, _, snaps, come := waitingEngine(t)
	come()
	sn := nextSnap(t, snaps, "the failure", func(sn *Snapshot) bool { return sn.Err != "" })
	if !strings.Contains(sn.Err, "bsa-p2") || !strings.Contains(sn.Err, "tries again") || len(sn.Waiting) != 0 || len(sn.Lanes) != 0 {
		t.Fatalf("after the failed fetch: error %q, waiting %v, %d lanes", sn.Err, sn.Waiting, len(sn.Lanes))
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	e.Update(func(st *Settings) { st.Index = 5 })
	sn = nextSnap(t, snaps, "digit 5 with the model", func(sn *Snapshot) bool { return len(sn.Lanes) == 1 })
	if sn.Settings.Index != 5 || sn.Err != "" {
		t.Fatalf("the change after the failure: digit %d, error %q", sn.Settings.Index, sn.Err)
	}
}

// TestGrowthPublishedEvery: snapshots that would only show a longer
// look-ahead wait for GrowEvery (the page publishes them four times a
// second, its redraws being slow), while a command's snapshot goes out at
// once even with such a wait armed, and Settle's too.
func TestGrowthPublishedEvery(t *testing.T) {
	e, snaps := slowGrowthEngine(t, 0)
	nextSnap(t, snaps, "the first", func(*Snapshot) bool { return true })
	// The look-ahead records in the background, its snapshots waiting an
	// hour: a seek is shown at once all the same.
	e.Seek(3)
	nextSnap(t, snaps, "t = 3", func(sn *Snapshot) bool { return sn.T == 3 })
	time.Sleep(200 * time.Millisecond) // the look-ahead grows meanwhile
	// Only the look-ahead grew since: nothing was published for it.
	if n := len(snaps); n > 0 {
		t.Fatalf("%d snapshots while only the look-ahead grew; want none before GrowEvery", n)
	}
	e.Settle()
	sn := nextSnap(t, snaps, "the look-ahead settled", func(sn *Snapshot) bool { return sn.Unrecorded == 0 })
	if sn.T != 3 {
		t.Fatalf("settled at t = %d, want 3", sn.T)
	}
}

// TestCueTicketPublishedAtOnce: a cue to t* waits for the horizon, but
// the snapshot carrying its ticket (a lesson's bar waits for it) goes out
// at once, not when the look-ahead's snapshots are next due.
func TestCueTicketPublishedAtOnce(t *testing.T) {
	e, snaps := slowGrowthEngine(t, 1000)
	nextSnap(t, snaps, "the first", func(*Snapshot) bool { return true })
	ticket := e.Cue(nil, Mark{Best: true}, Mark{Best: true}, 0)
	sn := nextSnap(t, snaps, "the cue's ticket", func(sn *Snapshot) bool { return sn.Cue == ticket })
	if sn.CueDone || sn.Unrecorded == 0 {
		t.Fatalf("the ticket's first snapshot: done %v, %d steps unrecorded; want it while the horizon of 1,000 steps records", sn.CueDone, sn.Unrecorded)
	}
}

// TestFlushRearmedForACommand: a snapshot waiting for GrowEvery (an
// hour here) is brought forward when a command's change comes, to a
// frame after the last one published.
func TestFlushRearmedForACommand(t *testing.T) {
	e := testEngine(t, true, nil)
	s := e.s
	s.cfg.GrowEvery = time.Hour
	flush := time.NewTimer(time.Hour)
	flush.Stop()
	defer flush.Stop()
	s.lastPub, s.dirty, s.grown = time.Now(), false, true
	e.maybeFlush(flush)
	if !s.dirtyTimer || time.Until(s.flushAt) < 59*time.Minute {
		t.Fatalf("the look-ahead grown: flush armed %v, in %v; want in an hour", s.dirtyTimer, time.Until(s.flushAt))
	}
	s.dirty = true
	e.maybeFlush(flush)
	if !s.dirtyTimer || time.Until(s.flushAt) > time.Second/MaxFPS {
		t.Fatalf("a command's change: flush in %v; want within a frame (1/%d s)", time.Until(s.flushAt), MaxFPS)
	}
}

// slowGrowthEngine is an asynchronous engine on the default settings
// (horizon 0: the default) whose snapshots of a longer look-ahead alone
// wait an hour.
func slowGrowthEngine(t *testing.T, horizon int) (*Engine, chan *Snapshot) {
	t.Helper()
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	snaps := make(chan *Snapshot, 4096)
	e := NewEngine(EngineConfig{Data: data, Memories: NewMemories(data.Train), Catalogue: NewCatalogue(data.Train, WeightFiles{}),
		Settings: DefaultSettings(), Horizon: horizon, GrowEvery: time.Hour, OnSnap: func(sn *Snapshot) { snaps <- sn }})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go e.Run(ctx)
	return e, snaps
}
