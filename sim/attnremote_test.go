package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// workerAttn is a workerAhead that also takes steps' attention (an
// AttnRemote), its jobs and answers through their wire forms; fail makes
// every attention job fail.
type workerAttn struct {
	*workerAhead
	attnJobs atomic.Int32
	fail     bool
	stall    bool // every attention job waits until it is cancelled
}

func (w *workerAttn) Attention(ctx context.Context, job AheadJob) ([][]float32, error) {
	w.attnJobs.Add(1)
	if w.fail {
		return nil, errors.New("the worker stopped")
	}
	if w.stall {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	b, err := EncodeWire(job)
	if err != nil {
		return nil, err
	}
	got, err := DecodeWire[AheadJob](b, "an attention job")
	if err != nil {
		return nil, err
	}
	a, err := RunAttnJob(ctx, got, w.cat, w.mem)
	if err != nil {
		return nil, err
	}
	return DecodeAttention(EncodeAttention(a), len(a))
}

// With a remote side that takes attention, each step → shows has its
// attention from there, taken while the step before it was shown: the
// engine takes no step again itself, and the attention is the one it
// takes itself, to the bit, for every model whose state travels.
func TestAttnRemoteSameBits(t *testing.T) {
	if underNode {
		t.Skip("the worker's side and the engine's run the same code here: checked bit for bit natively; the page's real workers, in Chromium (TestWebPage)")
	}
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	set := DefaultSettings()
	set.Lanes = []string{"bsa-p2", "block", "hopfield"}
	w := &workerAttn{workerAhead: &workerAhead{cat: NewCatalogue(data.Train, WeightFiles{}), mem: NewMemories(data.Train)}}
	here, there := startEngine(t, data, set, nil), startEngine(t, data, set, w)
	compareSnapshots(t, "the opening digit", here.settled(t, 0, set.Index), there.settled(t, 0, set.Index))
	// Past the opening look-ahead (which the engine may have recorded
	// itself, with its attention, before the worker answered).
	for _, r := range []*runningEngine{here, there} {
		r.e.Seek(30)
	}
	compareSnapshots(t, "t = 30", here.settled(t, 30, set.Index), there.settled(t, 30, set.Index))
	dropKept(there, 30)
	before := there.retakes()
	for k := 31; k <= 42; k++ {
		there.until(t, fmt.Sprintf("step %d's attention from the worker", k), func(s *session) bool {
			for _, l := range s.lanes {
				if f := l.frames[k]; f.from != nil && l.keep.kept[f] == nil {
					return false
				}
			}
			return true
		})
		here.e.Step()
		there.e.Step()
		compareSnapshots(t, fmt.Sprintf("t = %d", k), here.settled(t, k, set.Index), there.settled(t, k, set.Index))
	}
	for name, n := range there.retakes() {
		if n != before[name] {
			t.Errorf("%s: the engine took %d steps again itself for their attention, want 0 (a worker took them)", name, n-before[name])
		}
	}
	if w.attnJobs.Load() == 0 || there.e.attnJoined.Load() < 12 {
		t.Fatalf("%d attention jobs, %d steps' attention from them", w.attnJobs.Load(), there.e.attnJoined.Load())
	}
	t.Logf("%d attention jobs; %d steps' attention from them", w.attnJobs.Load(), there.e.attnJoined.Load())
}

// An attention job that fails leaves attention to the engine from then
// on: every step shown still has it, the same to the bit.
func TestAttnRemoteFails(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	set := DefaultSettings()
	w := &workerAttn{workerAhead: &workerAhead{cat: NewCatalogue(data.Train, WeightFiles{}), mem: NewMemories(data.Train)}, fail: true}
	here, there := startEngine(t, data, set, nil), startEngine(t, data, set, w)
	compareSnapshots(t, "the opening digit", here.settled(t, 0, set.Index), there.settled(t, 0, set.Index))
	seekThenStep(t, here, there, set.Index, 36, "")
	there.until(t, "attention taken here after the failure", func(s *session) bool { return s.attnFailed })
	if w.attnJobs.Load() == 0 || there.e.attnJoined.Load() != 0 {
		t.Fatalf("%d attention jobs, %d steps' attention from them; want some jobs, none answered", w.attnJobs.Load(), there.e.attnJoined.Load())
	}
}

// RunAttnJob refuses a job it cannot take, and the wire form of the
// attention refuses an answer of another size or with a number that is
// not finite.
func TestAttnJobRefused(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	cat, mem := NewCatalogue(data.Train, WeightFiles{}), NewMemories(data.Train)
	clean := make([]float32, models.Pixels)
	good := AheadJob{Dataset: "mnist", Model: "bsa-p2", Settings: DefaultSettings(), Input: Corrupted{Clean: clean, Input: clean}, State: WireState{X: make([]float32, 196*8)}, Steps: 2}
	if _, err := RunAttnJob(context.Background(), good, cat, mem); err != nil {
		t.Fatalf("a good job: %v", err)
	}
	for name, mut := range map[string]func(j *AheadJob){
		"no steps":      func(j *AheadJob) { j.Steps = 0 },
		"too many":      func(j *AheadJob) { j.Steps = rewindEvery + 1 },
		"short state":   func(j *AheadJob) { j.State.X = j.State.X[:10] },
		"no such model": func(j *AheadJob) { j.Model = "bsa-p9" },
		"no digit":      func(j *AheadJob) { j.Input.Input = nil },
	} {
		j := good
		j.State.X = append([]float32(nil), good.State.X...)
		mut(&j)
		if _, err := RunAttnJob(context.Background(), j, cat, mem); err == nil {
			t.Errorf("%s: taken", name)
		}
	}
	a := [][]float32{{0.25, 0.75, 0}, {1, 0, 0}}
	b := EncodeAttention(a)
	if got, err := DecodeAttention(b, 2); err != nil || !sameBits32(got[0], a[0]) || !sameBits32(got[1], a[1]) {
		t.Fatalf("round trip: %v %v", got, err)
	}
	for name, c := range map[string]struct {
		b     []byte
		steps int
	}{
		"cut short":   {b[:len(b)-1], 2},
		"other steps": {b, 3},
		"longer":      {append(append([]byte(nil), b...), 0, 0, 0, 0), 2},
		"header only": {b[:4], 2},
		"NaN":         {EncodeAttention([][]float32{{float32(math.NaN())}}), 1},
		"Inf":         {EncodeAttention([][]float32{{float32(math.Inf(1))}}), 1},
	} {
		if _, err := DecodeAttention(c.b, c.steps); err == nil {
			t.Errorf("%s: read", name)
		}
	}
}

// busyWorkers is a workerAttn whose workers may all be busy (an
// AheadWarmer that says none is idle).
type busyWorkers struct {
	*workerAttn
	idle atomic.Bool
}

func (b *busyWorkers) Warm() bool { return b.idle.Load() }

// With every worker busy, no attention job is sent (a worker started for
// one would hold the page's memory): the engine takes the attention
// itself, the same to the bit; once a worker is idle, jobs go again, one
// at a time.
func TestAttnRemoteWaitsForAnIdleWorker(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	set := DefaultSettings()
	w := &busyWorkers{workerAttn: &workerAttn{workerAhead: &workerAhead{cat: NewCatalogue(data.Train, WeightFiles{}), mem: NewMemories(data.Train)}}}
	w.idle.Store(true) // the look-ahead's first job is waited for
	here, there := startEngine(t, data, set, nil), startEngine(t, data, set, w)
	compareSnapshots(t, "the opening digit", here.settled(t, 0, set.Index), there.settled(t, 0, set.Index))
	w.idle.Store(false)
	jobs := w.attnJobs.Load()
	seekThenStep(t, here, there, set.Index, 34, ", every worker busy")
	if n := w.attnJobs.Load() - jobs; n != 0 {
		t.Fatalf("%d attention jobs sent with every worker busy", n)
	}
	dropKept(there, 34)
	w.idle.Store(true)
	there.e.Seek(40)
	there.until(t, "an attention job once a worker is idle", func(s *session) bool { return w.attnJobs.Load() > jobs })
	there.until(t, "its answer", func(s *session) bool { return len(s.attnFlights) == 0 })
}

// seekThenStep seeks both engines to t = 30, past the opening look-ahead,
// then steps them one step at a time to last, comparing each snapshot.
func seekThenStep(t *testing.T, here, there *runningEngine, index, last int, what string) {
	t.Helper()
	for _, r := range []*runningEngine{here, there} {
		r.e.Seek(30)
	}
	compareSnapshots(t, "t = 30"+what, here.settled(t, 30, index), there.settled(t, 30, index))
	dropKept(there, 30)
	for k := 31; k <= last; k++ {
		here.e.Step()
		there.e.Step()
		compareSnapshots(t, fmt.Sprintf("t = %d%s", k, what), here.settled(t, k, index), there.settled(t, k, index))
	}
}

// dropKept lets r's engine forget the attention it keeps of the steps
// after step from: the steps a worker recorded come without it, but on a
// slow machine (the race detector) the engine records the look-ahead
// itself, with its attention, before the worker's first answer.
func dropKept(r *runningEngine, from int) {
	done := make(chan struct{})
	r.e.do(func(s *session) {
		for _, l := range s.lanes {
			for k := from + 1; k < len(l.frames); k++ {
				delete(l.keep.kept, l.frames[k])
			}
		}
		close(done)
	})
	<-done
}

// An attention job not answered within attnPatience is given up and its
// steps' attention left to the engine for good (a job that waits in the
// page's queue behind a long one must not hold the attention of a step
// shown): the engine wakes for it by itself, with no command meanwhile,
// and does not send it again.
func TestAttnRemoteStalls(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	set := DefaultSettings()
	w := &busyWorkers{workerAttn: &workerAttn{workerAhead: &workerAhead{cat: NewCatalogue(data.Train, WeightFiles{}), mem: NewMemories(data.Train)}, stall: true}}
	w.idle.Store(true)
	here, there := startEngine(t, data, set, nil), startEngine(t, data, set, w)
	compareSnapshots(t, "the opening digit", here.settled(t, 0, set.Index), there.settled(t, 0, set.Index))
	seekThenStep(t, here, there, set.Index, 31, ", the worker stalled")
	for deadline := time.Now().Add(time.Minute); w.attnJobs.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no attention job within a minute")
		}
	}
	// No command for longer than attnPatience: the engine's own timer.
	time.Sleep(attnPatience + 500*time.Millisecond)
	type state struct {
		givenUp, again int
		oldest         time.Duration
	}
	ch := make(chan state)
	there.e.do(func(s *session) {
		st := state{givenUp: len(s.attnGivenUp)}
		for sv := range s.attnGivenUp {
			if _, ok := s.attnFlights[sv]; ok {
				st.again++
			}
		}
		for _, f := range s.attnFlights {
			st.oldest = max(st.oldest, time.Since(f.sent))
		}
		ch <- st
	})
	st := <-ch
	if st.givenUp == 0 || st.again != 0 || st.oldest > attnPatience+250*time.Millisecond {
		t.Fatalf("%v after the first job: %d jobs given up, %d of them sent again, the oldest under way sent %v ago; want some, none, and none older than %v",
			attnPatience+500*time.Millisecond, st.givenUp, st.again, st.oldest, attnPatience)
	}
}
