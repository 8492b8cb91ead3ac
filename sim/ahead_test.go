package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"attractorlab/sim/mnist"
)

// workerAhead is an AheadRemote as the page's workers are one: its own
// catalogue and stored digits of the same data, the job and its answer
// through their wire forms.
type workerAhead struct {
	cat   *Catalogue
	mem   *Memories
	jobs  atomic.Int32
	delay time.Duration // before each answer, so that commands overtake jobs
}

func (w *workerAhead) Ahead(ctx context.Context, job AheadJob) (AheadAnswer, error) {
	w.jobs.Add(1)
	b, err := EncodeWire(job)
	if err != nil {
		return AheadAnswer{}, err
	}
	got, err := DecodeWire[AheadJob](b, "a look-ahead job")
	if err != nil {
		return AheadAnswer{}, err
	}
	a, err := RunAheadJob(ctx, got, w.cat, w.mem)
	if err != nil {
		return AheadAnswer{}, err
	}
	time.Sleep(w.delay)
	if b, err = EncodeWire(a); err != nil {
		return AheadAnswer{}, err
	}
	return DecodeWire[AheadAnswer](b, "a look-ahead")
}

// runningEngine is an engine running until the test ends, and its last
// snapshot.
type runningEngine struct {
	e    *Engine
	mu   sync.Mutex
	last *Snapshot
}

func startEngine(t *testing.T, data *mnist.Data, set Settings, ahead AheadRemote, opts ...func(*EngineConfig)) *runningEngine {
	t.Helper()
	r := &runningEngine{}
	cfg := EngineConfig{Data: data, Memories: NewMemories(data.Train), Catalogue: NewCatalogue(data.Train, WeightFiles{}),
		Horizon: 30, MaxT: 60, Settings: set, Ahead: ahead,
		OnSnap: func(sn *Snapshot) { r.mu.Lock(); r.last = sn; r.mu.Unlock() }}
	for _, o := range opts {
		o(&cfg)
	}
	r.e = NewEngine(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go r.e.Run(ctx)
	return r
}

// settled waits for a snapshot at step t whose look-ahead is recorded
// (every lane to the horizon or its end), whose digit is index and that
// carries the attention of every step it shows (in the page's build an
// engine takes some of it while idle: Lane.AttnPending).
func (r *runningEngine) settled(t *testing.T, step, index int) *Snapshot {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		sn := r.last
		r.mu.Unlock()
		if sn != nil && sn.T == step && sn.Settings.Index == index && sn.Unrecorded == 0 && len(sn.Lanes) == len(sn.Settings.Lanes) {
			done := true
			for _, l := range sn.Lanes {
				want := min(max(30, (step/30+1)*30), 60) + 1
				if l.Info.MaxSteps > 0 {
					want = l.Info.MaxSteps + 1
				}
				done = done && len(l.Frames) == want && !l.AttnPending(l.At(step)) && !l.AttnPending(l.BranchAt(step))
			}
			if done {
				return sn
			}
		}
		if time.Now().After(deadline) {
			var got []int
			for _, l := range sn.Lanes {
				got = append(got, len(l.Frames))
			}
			t.Fatalf("no snapshot at t = %d of digit %d with its look-ahead recorded within two minutes; the last at t = %d of digit %d, %d unrecorded, frames %v, error %q", step, index, sn.T, sn.Settings.Index, sn.Unrecorded, got, sn.Err)
		}
	}
}

func sameBits32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func sameBits64(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func sameFrame(a, b *Frame) bool {
	ma, mb := a.Measures, b.Measures
	return a.T == b.T && sameBits32(a.Image, b.Image) && sameBits64(a.PatchVar, b.PatchVar) && sameBits64(a.TokenEnergy, b.TokenEnergy) &&
		sameBits64([]float64{ma.Energy, ma.MSE, ma.MSEMask, ma.MSEOther, ma.CorrClean, ma.CorrMean, ma.NearCorr},
			[]float64{mb.Energy, mb.MSE, mb.MSEMask, mb.MSEOther, mb.CorrClean, mb.CorrMean, mb.NearCorr}) &&
		ma.Nearest == mb.Nearest && ma.NearIdx == mb.NearIdx && ma.NearLbl == mb.NearLbl
}

// compareSnapshots fails unless the two snapshots hold the same frames
// and the same attention of the step shown, to the bit.
func compareSnapshots(t *testing.T, what string, here, there *Snapshot) {
	t.Helper()
	for k := range here.Lanes {
		lh, lt := here.Lanes[k], there.Lanes[k]
		if len(lh.Frames) != len(lt.Frames) {
			t.Fatalf("%s, %s: %d frames recorded here, %d with a worker", what, lh.Info.Name, len(lh.Frames), len(lt.Frames))
		}
		for i := range lh.Frames {
			if !sameFrame(lh.Frames[i], lt.Frames[i]) {
				t.Fatalf("%s, %s: frame %d differs: here %+v, with a worker %+v", what, lh.Info.Name, i, lh.Frames[i].Measures, lt.Frames[i].Measures)
			}
		}
		if lh.Best != lt.Best || math.Float64bits(lh.BestMSE) != math.Float64bits(lt.BestMSE) {
			t.Fatalf("%s, %s: t* %d (%g) here, %d (%g) with a worker", what, lh.Info.Name, lh.Best, lh.BestMSE, lt.Best, lt.BestMSE)
		}
		if !sameBits32(lh.Attn, lt.Attn) {
			t.Fatalf("%s, %s: the attention of step %d differs (%d and %d numbers)", what, lh.Info.Name, here.T, len(lh.Attn), len(lt.Attn))
		}
	}
}

// The look-ahead recorded by a worker is the one the engine records
// itself, to the bit: the frames, t*, and the attention of a step shown
// (taken again from the states the worker sent), for every model whose
// state travels; also when the digit changes while jobs are under way,
// and when a seek records steps here meanwhile.
func TestAheadRemoteSameFrames(t *testing.T) {
	if underNode {
		t.Skip("the worker's side and the engine's run the same code here: checked bit for bit natively; the page's real workers, in Chromium (TestWebPage)")
	}
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	set := DefaultSettings()
	set.Lanes = []string{"bsa-p2", "block", "vit", "hopfield"}
	w := &workerAhead{cat: NewCatalogue(data.Train, WeightFiles{}), mem: NewMemories(data.Train), delay: 20 * time.Millisecond}
	here, there := startEngine(t, data, set, nil), startEngine(t, data, set, w)
	first := there.settled(t, 0, set.Index)
	if first.Err != "" || len(first.Lanes) != len(set.Lanes) {
		t.Fatalf("the settings were refused: %s", first.Err)
	}
	compareSnapshots(t, "the opening digit", here.settled(t, 0, set.Index), first)
	if w.jobs.Load() == 0 {
		t.Fatal("no job went to the worker")
	}
	for _, r := range []*runningEngine{here, there} {
		r.e.Seek(17)
	}
	compareSnapshots(t, "t = 17", here.settled(t, 17, set.Index), there.settled(t, 17, set.Index))
	// Another digit while jobs of the first are under way (the worker
	// answers late), then a step shown and a seek past the horizon, which
	// records here what it can at once.
	for _, r := range []*runningEngine{here, there} {
		r.e.Update(func(st *Settings) { st.Index = 3 })
		r.e.Update(func(st *Settings) { st.Index = 4 })
		r.e.Step()
		r.e.Seek(40)
	}
	compareSnapshots(t, "digit 4 at t = 40", here.settled(t, 40, 4), there.settled(t, 40, 4))
	if here.e.joined.Load() != 0 || there.e.joined.Load() < 30 {
		t.Fatalf("%d and %d frames came from the worker, want 0 and most of a look-ahead", here.e.joined.Load(), there.e.joined.Load())
	}
	// The attention compared above was taken again from the states the
	// worker sent (none kept for its frames), not kept by the page.
	for name, n := range there.retakes() {
		if name != "hopfield" && n == 0 {
			t.Errorf("%s: no shown step's attention was taken again from a worker's state", name)
		}
	}
	t.Logf("%d jobs; %d frames from the worker; attention retaken %v", w.jobs.Load(), there.e.joined.Load(), there.retakes())
	// Stepping through 40 steps shown one by one keeps the attention of
	// the last aheadKeep only.
	there.e.Seek(0)
	for k := range 40 {
		there.e.Step()
		there.at(t, k+1)
	}
	for name, n := range there.kept() {
		if n > aheadKeep {
			t.Errorf("%s: %d steps' attention kept beside a worker, want at most %d", name, n, aheadKeep)
		}
	}
}

// While the window idles, the engine takes the attention of the step
// after the one shown where it is not kept (a lane a worker recorded keeps
// 32 steps' attention, one recorded here its horizon's and 32 more; here
// the steps of a seek far ahead dropped it): → then shows it without
// taking the step on the page's thread, and it is the attention the engine
// records itself, to the bit. Without the idle moment → takes the step
// again.
// attnShown is lane k's attention of step in the last snapshot, and
// whether it is pending (left for an idle moment).
func (r *runningEngine) attnShown(k, step int) (attn []float32, pending bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.last.Lanes[k]
	return l.AttnOf(l.At(step)), l.AttnPending(l.At(step))
}

// attnTaken waits for a snapshot at step whose lane k carries the
// attention of that step (taken at once, or after an idle moment: in the
// page's build the reference engine of idlePair takes some while idle
// too) and returns it.
func (r *runningEngine) attnTaken(t *testing.T, k, step int) []float32 {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		sn := r.last
		r.mu.Unlock()
		if sn != nil && sn.T == step && len(sn.Lanes) > k {
			l := sn.Lanes[k]
			if f := l.At(step); !l.AttnPending(f) {
				return l.AttnOf(f)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot at t = %d with model %d's attention within a minute", step, k)
		}
	}
}

// idlePair starts two engines on the same models (MaxT 120): here is the
// reference (the build's own idle moments: none on the desktop, which
// takes every step's attention when a snapshot shows it), there leaves
// what is not kept for the idle moments it asks for, each a channel sent
// on asks that the test closes.
func idlePair(t *testing.T, lanes ...string) (here, there *runningEngine, asks chan chan struct{}) {
	t.Helper()
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	set := DefaultSettings()
	set.Lanes = lanes
	asks = make(chan chan struct{}, 1)
	far := func(c *EngineConfig) { c.MaxT = 120 }
	idle := func(c *EngineConfig) {
		c.Idle = func() <-chan struct{} {
			ch := make(chan struct{})
			asks <- ch
			return ch
		}
	}
	return startEngine(t, data, set, nil, far), startEngine(t, data, set, nil, far, idle), asks
}

func TestAttentionTakenWhileIdle(t *testing.T) {
	here, there, asks := idlePair(t, "bsa-p2")
	there.e.Seek(100)
	there.until(t, "100 steps recorded", func(s *session) bool { return len(s.lanes) == 1 && len(s.lanes[0].frames) > 100 })
	there.e.Seek(0)
	there.at(t, 0)
	nextKept := func(s *session) bool { l := s.lanes[0]; return l.keep.kept[l.frames[s.shownT()+1]] != nil }
	done := make(chan bool)
	there.e.do(func(s *session) { done <- nextKept(s) })
	if <-done {
		t.Fatal("the first step's attention is still kept after a seek 100 steps ahead: nothing to take while idle")
	}
	// The engine asks for an idle moment (at once, or while it recorded).
	var ch chan struct{}
	select {
	case ch = <-asks:
	case <-time.After(time.Minute):
		t.Fatal("the engine never asked for an idle moment with the next step's attention not kept")
	}
	before := there.retakes()["bsa-p2"]
	close(ch)
	there.until(t, "attention of the next step taken while idle", nextKept)
	if n := there.retakes()["bsa-p2"]; n != before+1 {
		t.Fatalf("the idle moment took %d steps again, want 1", n-before)
	}
	before = there.retakes()["bsa-p2"]
	here.e.Step()
	there.e.Step()
	there.at(t, 1)
	here.at(t, 1)
	if n := there.retakes()["bsa-p2"]; n != before {
		t.Errorf("→ after the idle moment took %d steps again, want 0", n-before)
	}
	a := here.attnTaken(t, 0, 1)
	there.mu.Lock()
	b := there.last.Lanes[0].Attn
	there.mu.Unlock()
	if len(a) == 0 || !sameBits32(a, b) {
		t.Errorf("the attention of step 1 taken while idle differs from the one recorded (%d and %d numbers)", len(b), len(a))
	}
	// A jump without an idle moment (to step 7, three steps from the state
	// saved at step 4) shows the step at once, its attention left for the
	// next idle moment (the page draws the step meanwhile), which takes it
	// and publishes it.
	ch = <-asks
	before = there.retakes()["bsa-p2"]
	there.e.Seek(7)
	there.at(t, 7)
	if n := there.retakes()["bsa-p2"]; n != before {
		t.Errorf("a seek to 7 without an idle moment took %d steps again before its snapshot, want 0", n-before)
	}
	if attn, pending := there.attnShown(0, 7); !pending || attn != nil {
		t.Fatalf("step 7 shown without an idle moment: attention pending %v with %d numbers, want pending and none", pending, len(attn))
	}
	here.e.Seek(7)
	here.at(t, 7)
	close(ch)
	there.until(t, "step 7's attention taken while idle", func(s *session) bool { return s.lanes[0].keep.kept[s.lanes[0].frames[7]] != nil })
	if a, b := here.attnTaken(t, 0, 7), there.attnTaken(t, 0, 7); len(a) == 0 || !sameBits32(a, b) {
		t.Errorf("step 7's attention published after the idle moment differs from the one recorded (%d and %d numbers)", len(b), len(a))
	}
	if n := there.retakes()["bsa-p2"]; n != before+1 {
		t.Errorf("the idle moment took %d steps again for step 7, want 1", n-before)
	}
	// → to 8 with no idle moment between: one step from the one retaken,
	// taken at once (a second snapshot for it would cost the page more).
	if len(asks) > 0 {
		<-asks // left unanswered
	}
	before = there.retakes()["bsa-p2"]
	there.e.Step()
	there.at(t, 8)
	if attn, pending := there.attnShown(0, 8); pending || attn == nil {
		t.Errorf("→ to 8 right after 7's attention was taken: attention pending %v with %d numbers, want it shown", pending, len(attn))
	}
	if n := there.retakes()["bsa-p2"]; n != before+1 {
		t.Errorf("→ to 8 took %d steps again, want 1", n-before)
	}
}

// A snapshot takes one step again at once for one model only: with two
// models whose next step's attention is not kept, → shows the first's
// and leaves the second's for the next idle moment, which takes it as
// the engine records it.
func TestAttentionOneModelAtOnce(t *testing.T) {
	here, there, asks := idlePair(t, "bsa-p2", "block")
	// Everything up to the engines' last step (MaxT) recorded: a snapshot
	// of the recording's growth would take one more model's attention of
	// the step shown (a snapshot's budget), between the step's snapshot
	// and the test's look at it (a machine under load recorded on).
	recorded := func(s *session) bool {
		return len(s.lanes) == 2 && len(s.lanes[0].frames) > 100 && len(s.lanes[1].frames) > 100 && !s.pendingHere()
	}
	there.e.Seek(100)
	there.until(t, "every step recorded", recorded)
	here.e.Seek(100)
	here.until(t, "every step recorded", recorded)
	// Step 7, three steps from the state saved at step 4: both models'
	// attention pending; the idle moments take it, one model each.
	there.e.Seek(7)
	there.at(t, 7)
	kept := func(k, step int) func(s *session) bool {
		return func(s *session) bool { return s.lanes[k].keep.kept[s.lanes[k].frames[step]] != nil }
	}
	for k := range 2 {
		select {
		case ch := <-asks:
			close(ch)
		case <-time.After(time.Minute):
			t.Fatalf("the engine never asked for an idle moment for model %d's attention at step 7", k)
		}
		there.until(t, fmt.Sprintf("model %d's attention at step 7 taken while idle", k), kept(k, 7))
	}
	// → to 8: one step again for each model, only the first's at once.
	// An idle moment the engine asked for meanwhile is answered after.
	var ask chan struct{}
	select {
	case ask = <-asks:
	default:
	}
	before := there.retakes()
	there.e.Step()
	there.at(t, 8)
	after := there.retakes()
	if after["bsa-p2"] != before["bsa-p2"]+1 || after["block"] != before["block"] {
		t.Errorf("→ to 8 took bsa-p2's step again %d times and the block's %d, want 1 and 0", after["bsa-p2"]-before["bsa-p2"], after["block"]-before["block"])
	}
	if attn, pending := there.attnShown(0, 8); pending || attn == nil {
		t.Errorf("→ to 8: bsa-p2's attention pending %v with %d numbers, want it shown", pending, len(attn))
	}
	if attn, pending := there.attnShown(1, 8); !pending || attn != nil {
		t.Errorf("→ to 8: the block's attention pending %v with %d numbers, want pending and none", pending, len(attn))
	}
	here.e.Seek(8)
	here.at(t, 8)
	if ask == nil {
		select {
		case ask = <-asks:
		case <-time.After(time.Minute):
			t.Fatal("the engine never asked for an idle moment for the block's attention at step 8")
		}
	}
	close(ask)
	if a, b := here.attnTaken(t, 1, 8), there.attnTaken(t, 1, 8); len(a) == 0 || !sameBits32(a, b) {
		t.Errorf("the block's attention at step 8 taken while idle differs from the one recorded (%d and %d numbers)", len(b), len(a))
	}
}

// says waits for a snapshot whose error says what.
func (r *runningEngine) says(t *testing.T, what string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		sn := r.last
		r.mu.Unlock()
		if sn != nil && strings.Contains(sn.Err, what) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the window never said %q within two minutes; it says %q", what, sn.Err)
		}
	}
}

// until waits until cond holds of the engine's session.
func (r *runningEngine) until(t *testing.T, what string, cond func(*session) bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		ch := make(chan bool)
		r.e.do(func(s *session) { ch <- cond(s) })
		if <-ch {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within two minutes", what)
		}
	}
}

// at waits for a snapshot at step t.
func (r *runningEngine) at(t *testing.T, step int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Millisecond) {
		r.mu.Lock()
		sn := r.last
		r.mu.Unlock()
		if sn != nil && sn.T == step {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot at t = %d within a minute", step)
		}
	}
}

// kept is how many steps' attention each lane keeps.
func (r *runningEngine) kept() map[string]int {
	ch := make(chan map[string]int)
	r.e.do(func(s *session) {
		m := map[string]int{}
		for _, l := range s.lanes {
			m[l.info.Name] = len(l.keep.kept)
		}
		ch <- m
	})
	return <-ch
}

// retakes is how many times each lane took steps again for their
// attention.
func (r *runningEngine) retakes() map[string]int {
	ch := make(chan map[string]int)
	r.e.do(func(s *session) {
		m := map[string]int{}
		for _, l := range s.lanes {
			m[l.info.Name] = l.keep.retakes
		}
		ch <- m
	})
	return <-ch
}

// A job that cannot run says why.
func TestAheadJobRefused(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	cat, mem := NewCatalogue(data.Train, WeightFiles{}), NewMemories(data.Train)
	clean := data.Test.Clean(0, mnist.PixelGain)
	good := AheadJob{Dataset: "mnist", Model: "bsa-p2", Settings: DefaultSettings(), Input: Corrupted{Clean: clean, Input: clean}, Steps: 3}
	for _, c := range []struct {
		edit func(*AheadJob)
		want string
	}{
		{func(j *AheadJob) { j.Steps = 0 }, "at least 1 step"},
		{func(j *AheadJob) { j.From = -1 }, "step 0 or later"},
		{func(j *AheadJob) { j.Input.Input = j.Input.Input[:10] }, "pixels"},
		{func(j *AheadJob) { j.Model = "nonsense" }, "nonsense"},
		{func(j *AheadJob) { j.Model = "hopfield-classic" }, "not recorded elsewhere"},
		{func(j *AheadJob) { j.State.X = make([]float32, 5) }, "state has 5 numbers; model bsa-p2's has"},
	} {
		j := good
		c.edit(&j)
		if _, err := RunAheadJob(context.Background(), j, cat, mem); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("job %+v: error %v, want one saying %q", j.Model, err, c.want)
		}
	}
}

// failingAhead is a remote side whose jobs fail (a worker that stopped).
type failingAhead struct{ jobs atomic.Int32 }

func (f *failingAhead) Ahead(ctx context.Context, job AheadJob) (AheadAnswer, error) {
	f.jobs.Add(1)
	return AheadAnswer{}, errors.New("the worker failed: out of memory")
}

// When a job fails, the window says so once and the page records every
// lane itself from then on: the same frames.
func TestAheadRemoteFails(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	set := DefaultSettings()
	set.Lanes = []string{"bsa-p2", "hopfield"}
	f := &failingAhead{}
	here, there := startEngine(t, data, set, nil), startEngine(t, data, set, f)
	// The failure comes whenever the job ends: the page may have
	// recorded every frame by then (a slow machine, the race detector).
	there.says(t, "in a worker: the worker failed: out of memory; the steps are recorded on the page")
	sn := there.settled(t, 0, set.Index)
	compareSnapshots(t, "after a failed job", here.settled(t, 0, set.Index), sn)
	// Recorded here from now on, the lanes keep the horizon's attention.
	there.until(t, "the lanes keeping the horizon's attention", func(s *session) bool {
		for _, l := range s.lanes {
			if l.keep.limit != keepAttention(s.cfg.Horizon) {
				return false
			}
		}
		return true
	})
	jobs := f.jobs.Load()
	for _, r := range []*runningEngine{here, there} {
		r.e.Update(func(st *Settings) { st.Index = 5 })
	}
	compareSnapshots(t, "the next digit", here.settled(t, 0, 5), there.settled(t, 0, 5))
	if f.jobs.Load() != jobs || jobs == 0 {
		t.Errorf("%d jobs before the next digit, %d after: want some, then none", jobs, f.jobs.Load())
	}
}

// stallingAhead answers its first job (a worker), then none (a worker
// that stopped, or one starting again after idling).
type stallingAhead struct {
	workerAhead
	answered atomic.Bool
}

func (w *stallingAhead) Ahead(ctx context.Context, job AheadJob) (AheadAnswer, error) {
	if w.answered.Swap(true) {
		w.jobs.Add(1)
		<-ctx.Done()
		return AheadAnswer{}, ctx.Err()
	}
	return w.workerAhead.Ahead(ctx, job)
}

// A job not answered within the patience has its lane recorded here as
// well: the look-ahead does not wait for a worker that is gone.
func TestAheadRemoteStalls(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	set := DefaultSettings()
	set.Lanes = []string{"bsa-p2"}
	w := &stallingAhead{workerAhead: workerAhead{cat: NewCatalogue(data.Train, WeightFiles{}), mem: NewMemories(data.Train)}}
	here, there := startEngine(t, data, set, nil), startEngine(t, data, set, w)
	there.e.do(func(s *session) { s.aheadMin = 50 * time.Millisecond })
	compareSnapshots(t, "a stalled worker", here.settled(t, 0, set.Index), there.settled(t, 0, set.Index))
	// Once the worker has answered (it may answer after the page has
	// recorded the horizon itself), the steps past the horizon go to it
	// and it stalls.
	there.until(t, "the worker's answer", func(s *session) bool { return s.aheadWarm })
	for _, r := range []*runningEngine{here, there} {
		r.e.Seek(45)
	}
	sn := there.settled(t, 45, set.Index)
	compareSnapshots(t, "a stalled worker, t = 45", here.settled(t, 45, set.Index), sn)
	if sn.Err != "" || w.jobs.Load() < 2 {
		t.Errorf("%d jobs, the window saying %q: want more than the one answered, and nothing said", w.jobs.Load(), sn.Err)
	}
}

// readyAhead is a worker that says it is ready before its first answer
// (AheadWarmer), as the worker the page starts with its window does.
type readyAhead struct {
	workerAhead
	warm bool
}

func (w *readyAhead) Warm() bool { return w.warm }

// A remote side that says it is ready has the opening look-ahead from its
// first job on: the page records none of it itself while the answer is on
// its way. One that has not said so has the page record as well until it
// answers (its worker may still be starting).
func TestAheadWarmRecordsNothingHere(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	set := DefaultSettings()
	set.Lanes = []string{"bsa-p2"}
	for _, warm := range []bool{true, false} {
		w := &readyAhead{workerAhead: workerAhead{cat: NewCatalogue(data.Train, WeightFiles{}), mem: NewMemories(data.Train), delay: 150 * time.Millisecond}, warm: warm}
		r := startEngine(t, data, set, w)
		sn := r.settled(t, 0, set.Index)
		here := len(sn.Lanes[0].Frames) - 1 - int(r.e.joined.Load())
		t.Logf("warm %v: %d of the %d steps recorded here, %d jobs", warm, here, len(sn.Lanes[0].Frames)-1, w.jobs.Load())
		if warm && here != 0 {
			t.Errorf("a worker that said it was up: %d steps recorded here as well, want none", here)
		}
		if !warm && here == 0 {
			t.Errorf("a worker that did not say it was up: no step recorded here while its first answer was on its way")
		}
		if sn.Err != "" {
			t.Errorf("warm %v: the window says %q", warm, sn.Err)
		}
	}
}

// wrongAhead answers with one frame too few.
type wrongAhead struct{ workerAhead }

func (w *wrongAhead) Ahead(ctx context.Context, job AheadJob) (AheadAnswer, error) {
	a, err := w.workerAhead.Ahead(ctx, job)
	if err == nil {
		a.Frames = a.Frames[:len(a.Frames)-1]
	}
	return a, err
}

// An answer that is not one to its job is refused, and said why; the
// page records every lane itself from then on.
func TestAheadAnswerChecked(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	set := DefaultSettings()
	set.Lanes = []string{"bsa-p2", "hopfield"}
	w := &wrongAhead{workerAhead{cat: NewCatalogue(data.Train, WeightFiles{}), mem: NewMemories(data.Train)}}
	here, there := startEngine(t, data, set, nil), startEngine(t, data, set, w)
	there.says(t, "frames for 25 steps; the steps are recorded on the page")
	sn := there.settled(t, 0, set.Index)
	compareSnapshots(t, "after a refused answer", here.settled(t, 0, set.Index), sn)
	for _, r := range []*runningEngine{here, there} {
		r.e.Update(func(st *Settings) { st.Index = 5 })
	}
	if sn := there.settled(t, 0, 5); sn.Err != "" {
		t.Errorf("after the next change the window still says %q", sn.Err)
	}
}

// check refuses answers that do not fit their job.
func TestAheadJobCheck(t *testing.T) {
	job := AheadJob{From: 10, Steps: 6, State: WireState{X: make([]float32, 8)}}
	good := func() AheadAnswer {
		a := AheadAnswer{Saved: []WireState{{X: make([]float32, 8)}, {X: make([]float32, 8)}}, Last: WireState{X: make([]float32, 8)}}
		for k := range job.Steps {
			a.Frames = append(a.Frames, &Frame{T: job.From + 1 + k, Image: make([]float32, 784)})
		}
		return a
	}
	if err := job.check(good()); err != nil {
		t.Fatalf("a good answer refused: %v", err)
	}
	for _, c := range []struct {
		edit func(*AheadAnswer)
		want string
	}{
		{func(a *AheadAnswer) { a.Frames = a.Frames[1:] }, "5 frames for 6 steps"},
		{func(a *AheadAnswer) { a.Saved = a.Saved[:1] }, "1 saved states for 6 steps, not 2"},
		{func(a *AheadAnswer) { a.Frames[2].T = 3 }, "frame 3 of 6 is not step 13's"},
		{func(a *AheadAnswer) { a.Frames[4] = nil }, "frame 5 of 6"},
		{func(a *AheadAnswer) { a.Frames[0].Image = nil }, "frame 1 of 6"},
		{func(a *AheadAnswer) { a.Last.X = a.Last.X[:3] }, "a state of 3 numbers, not 8"},
		{func(a *AheadAnswer) { a.Saved[1].X = nil }, "a state of 0 numbers, not 8"},
	} {
		a := good()
		c.edit(&a)
		if err := job.check(a); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one saying %q", err, c.want)
		}
	}
}

// A job is waited for aheadPatience, or three times the last answer's
// time, at most aheadPatienceMax; the first (no answer yet: the page's
// worker may be starting), aheadPatienceFirst.
func TestAheadWait(t *testing.T) {
	for _, c := range []struct {
		took, min, want time.Duration
	}{
		{0, 0, aheadPatienceFirst},
		{time.Second, 0, 3 * time.Second},
		{time.Minute, 0, aheadPatienceMax},
		{0, 50 * time.Millisecond, 50 * time.Millisecond},
		{100 * time.Millisecond, 50 * time.Millisecond, 300 * time.Millisecond},
	} {
		s := &session{aheadTook: c.took, aheadMin: c.min}
		if got := s.aheadWait(); got != c.want {
			t.Errorf("last answer in %v, least wait %v: waits %v, want %v", c.took, c.min, got, c.want)
		}
	}
}
