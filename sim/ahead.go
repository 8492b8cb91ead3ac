package sim

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"attractorlab/models"
)

// Recording the look-ahead elsewhere: in the web build the engine sends
// the steps of a lane it records ahead of the one shown to the page's Web
// Workers (an AheadRemote), so that the page's one thread only draws. A
// job carries the lane's model (by name, bound to the settings), its
// input and the state to go on from; the answer is the frames of the
// steps after it, every rewindEvery-th state (from which the page takes a
// shown step's attention again, attention.go) and the last state, from
// which the page goes on itself when it has to. The same binary takes the
// same steps in the same arithmetic, so the frames are the bits the page
// would have recorded (TestAheadRemoteSameFrames).

// An AheadRemote records the steps of look-ahead jobs elsewhere.
type AheadRemote interface {
	// Ahead records job's steps, blocking until they are in (or ctx
	// ends).
	Ahead(ctx context.Context, job AheadJob) (AheadAnswer, error)
}

// An AheadWarmer is an AheadRemote that can tell it is ready before it
// has answered a job: the page starts a worker for the look-ahead once its
// window is built, and the opening look-ahead is left to that worker from
// the first job on instead of being recorded on the page as well until
// the job's answer (a second or two of the page's thread, in tasks of
// 100–300 ms). A job not answered within aheadWait (aheadPatienceFirst for
// the first) is still recorded here as well.
type AheadWarmer interface {
	AheadRemote
	// Warm reports whether a job sent now goes to a worker already
	// started (up, or starting), not to one started for it.
	Warm() bool
}

// warmAhead marks the remote side warm where it says it is ready.
func (s *session) warmAhead() {
	if s.aheadWarm || s.aheadFailed {
		return
	}
	if w, ok := s.cfg.Ahead.(AheadWarmer); ok && w.Warm() {
		s.aheadWarm = true
	}
}

// aheadChunk is how many steps one job records: its frames come in
// while the next job runs, and a t* shows as soon as it is recorded.
const aheadChunk = 25

// WireState is a trajectory's saved state in a form that travels.
type WireState struct {
	X []float32
	T int
}

// A wireRewinder's saved states travel.
type wireRewinder interface {
	Rewinder
	// toWire is saved (one of Save's) as it travels; fromWire the saved
	// state Restore takes.
	toWire(saved any) WireState
	fromWire(w WireState) any
}

func (t *bsaTraj) toWire(saved any) WireState {
	s := saved.(*bsaSaved)
	return WireState{X: s.x, T: s.t}
}
func (t *bsaTraj) fromWire(w WireState) any { return &bsaSaved{x: w.X, t: w.T} }

func (t *transformerTraj) toWire(saved any) WireState {
	s := saved.(*transformerSaved)
	return WireState{X: s.x, T: s.t}
}
func (t *transformerTraj) fromWire(w WireState) any { return &transformerSaved{x: w.X, t: w.T} }

func (t *hopTraj) toWire(saved any) WireState { return WireState{X: saved.([]float32)} }
func (t *hopTraj) fromWire(w WireState) any   { return w.X }

var (
	_ wireRewinder = (*bsaTraj)(nil)
	_ wireRewinder = (*transformerTraj)(nil)
	_ wireRewinder = (*hopTraj)(nil)
)

// AheadJob is a lane's next steps, recorded elsewhere.
type AheadJob struct {
	Dataset  string   // whose pictures, models and stored digits (canonical name)
	Model    string   // the catalogue's name
	Settings Settings // the model's parameters are bound from these
	Input    Corrupted
	From     int       // the step State is at: the frames recorded are From+1 … From+Steps
	State    WireState // the trajectory's state at From
	Steps    int
}

// AheadAnswer is a job's recording.
type AheadAnswer struct {
	Frames []*Frame // steps From+1 … From+Steps
	// Saved[k] is the state at step From+k·rewindEvery, from which the
	// steps after it are taken again for their attention.
	Saved []WireState
	Last  WireState // the state at step From+Steps
}

// RunAheadJob records job here (the remote side), with cat's models and
// mem's stored digits (the job's data set's).
func RunAheadJob(ctx context.Context, job AheadJob, cat *Catalogue, mem *Memories) (AheadAnswer, error) {
	if job.Steps < 1 || job.From < 0 {
		return AheadAnswer{}, fmt.Errorf("a look-ahead job of %d steps from step %d: it takes at least 1 step from step 0 or later", job.Steps, job.From)
	}
	m, tr, in, err := job.resume(cat, "a look-ahead job", "its steps are not recorded elsewhere")
	if err != nil {
		return AheadAnswer{}, err
	}
	info := m.Info()
	s := &session{src: &Source{Memories: mem}, clean: in.Clean, pixel: in.Pixel}
	l := &lane{info: info, in: in}
	if info.Patch > 0 {
		if l.grid, err = models.NewPatches(info.Patch); err != nil {
			return AheadAnswer{}, err
		}
	}
	var a AheadAnswer
	var trail *models.Trail
	for k := range job.Steps {
		if err := ctx.Err(); err != nil {
			return AheadAnswer{}, err
		}
		if k%rewindEvery == 0 {
			a.Saved = append(a.Saved, tr.toWire(tr.Save()))
		}
		// The step as the page takes it (attnKeep.step): with room for
		// its attention, which the page takes again when it shows it.
		tr.Step(newAttn(info))
		a.Frames = append(a.Frames, s.frame(l, tr, &trail, job.From+1+k, nil))
	}
	a.Last = tr.toWire(tr.Save())
	return a, nil
}

// resume builds job's model with cat and its trajectory at the job's
// state, the remote side of a look-ahead or attention job: what names the
// job in its errors, notWire what a model whose state does not travel
// cannot have done elsewhere.
func (job AheadJob) resume(cat *Catalogue, what, notWire string) (Model, wireRewinder, *Corrupted, error) {
	if len(job.Input.Clean) != models.Pixels || len(job.Input.Input) != models.Pixels {
		return nil, nil, nil, fmt.Errorf("%s's digit has %d and %d pixels, not %d", what, len(job.Input.Clean), len(job.Input.Input), models.Pixels)
	}
	m, err := cat.Model(job.Model, job.Settings)
	if err != nil {
		return nil, nil, nil, err
	}
	in := job.Input
	tr, ok := m.Start(&in).(wireRewinder)
	if !ok {
		return nil, nil, nil, fmt.Errorf("model %s: %s", job.Model, notWire)
	}
	if want := len(tr.toWire(tr.Save()).X); len(job.State.X) != want {
		return nil, nil, nil, fmt.Errorf("%s's state has %d numbers; model %s's has %d", what, len(job.State.X), job.Model, want)
	}
	tr.Restore(tr.fromWire(job.State))
	return m, tr, &in, nil
}

// jobFor is lane l's job of steps steps from step from, whose state is
// state: a look-ahead's or an attention job's.
func (s *session) jobFor(l *lane, from int, state WireState, steps int) AheadJob {
	job := AheadJob{Dataset: s.set.Dataset, Model: l.info.Name, Settings: s.set, Input: *l.in,
		From: from, State: state, Steps: steps}
	job.Settings.Own = nil // the input travels as it is
	return job
}

// check says what is wrong with a, when it is not an answer to job: the
// frames of its steps in order, a saved state for every rewindEvery-th,
// and states of the job's size.
func (job AheadJob) check(a AheadAnswer) error {
	if len(a.Frames) != job.Steps {
		return fmt.Errorf("%d frames for %d steps", len(a.Frames), job.Steps)
	}
	if want := (job.Steps + rewindEvery - 1) / rewindEvery; len(a.Saved) != want {
		return fmt.Errorf("%d saved states for %d steps, not %d", len(a.Saved), job.Steps, want)
	}
	for k, f := range a.Frames {
		if f == nil || f.T != job.From+1+k || len(f.Image) != models.Pixels {
			return fmt.Errorf("frame %d of %d is not step %d's", k+1, job.Steps, job.From+1+k)
		}
	}
	for _, w := range append(slices.Clip(a.Saved), a.Last) {
		if len(w.X) != len(job.State.X) {
			return fmt.Errorf("a state of %d numbers, not %d", len(w.X), len(job.State.X))
		}
	}
	return nil
}

// aheadPatience is the least time a job is waited for before the lane is
// recorded here as well (aheadWait; a session's aheadMin, when set, in its
// place).
const aheadPatience = 2 * time.Second

// aheadPatienceMax is the longest a job is waited for.
const aheadPatienceMax = 10 * time.Second

// aheadFlight is a job under way for a lane (Run's goroutine only).
type aheadFlight struct {
	job    AheadJob
	cancel context.CancelFunc
}

// aheadDone is a job's end, for Run's goroutine.
type aheadDone struct {
	l   *lane
	job AheadJob
	a   AheadAnswer
	err error
}

// remoteAhead reports whether lane l's look-ahead is sent elsewhere: the
// engine has an AheadRemote, none of its jobs has failed, and the lane's
// model is one a worker builds the same (the shipped weights, Catalogue.
// Portable) and whose state travels.
func (s *session) remoteAhead(l *lane) bool {
	if s.cfg.Ahead == nil || s.cfg.Synchronous || s.aheadFailed || l.traj == nil {
		return false
	}
	if _, ok := l.traj.(wireRewinder); !ok {
		return false
	}
	return s.src.Catalogue.Portable(l.info.Name)
}

// recordedElsewhere reports whether lane l's look-ahead is left to the
// remote side: sent there, the remote side has answered a job before, and
// the lane's job under way has not been waited for longer than aheadWait.
// Otherwise (the page's first worker starts in a second or two; a worker
// idle for a minute has stopped and starts again; another data set is
// loaded there) the lane is recorded here as well, and a job's frames the
// lane has by the time it answers are left out.
func (s *session) recordedElsewhere(l *lane) bool {
	return s.aheadWarm && s.remoteAhead(l) && (l.aheadSent.IsZero() || time.Since(l.aheadSent) < s.aheadWait())
}

// aheadPatienceFirst is how long the first job is waited for where the
// remote side said it was ready before answering one (AheadWarmer): the
// page's worker may still be starting (a second or two) as it is sent.
const aheadPatienceFirst = 5 * time.Second

// aheadWait is how long a job is waited for: aheadPatience, or three
// times the last answer's time when that is longer (a slow machine), up
// to aheadPatienceMax (one answer that came late, a worker starting again,
// does not hold the next lane back for long); before any answer,
// aheadPatienceFirst.
func (s *session) aheadWait() time.Duration {
	if s.aheadTook == 0 {
		return cmp.Or(s.aheadMin, aheadPatienceFirst)
	}
	return max(cmp.Or(s.aheadMin, aheadPatience), min(3*s.aheadTook, aheadPatienceMax))
}

// aheadWake is when the next lane whose job is under way stops waiting
// for it (zero: none will; one that stopped already is recorded here).
func (s *session) aheadWake() time.Time {
	var at time.Time
	now := time.Now()
	for _, l := range s.lanes {
		if l.aheadSent.IsZero() || !s.aheadWarm {
			continue
		}
		if w := l.aheadSent.Add(s.aheadWait()); w.After(now) && (at.IsZero() || w.Before(at)) {
			at = w
		}
	}
	// An attention job stops being waited for after attnPatience.
	for _, f := range s.attnFlights {
		if w := f.sent.Add(attnPatience); at.IsZero() || w.Before(at) {
			at = w
		}
	}
	return at
}

// aheadTarget is the last step lane l's look-ahead records.
func (s *session) aheadTarget(l *lane) int { return min(s.goal(), s.limit(l)) }

// sendAhead starts a job for each lane recorded elsewhere whose
// look-ahead is short and has none under way, and cancels the jobs of
// lanes the session no longer has.
func (e *Engine) sendAhead(ctx context.Context) {
	s := e.s
	for l, f := range e.ahead {
		if !slices.Contains(s.lanes, l) {
			f.cancel()
			delete(e.ahead, l)
			l.aheadSent = time.Time{}
		}
	}
	for _, l := range s.lanes {
		if _, busy := e.ahead[l]; busy || !s.remoteAhead(l) {
			continue
		}
		from := len(l.frames) - 1
		n := min(aheadChunk, s.aheadTarget(l)-from)
		if n < 1 {
			continue
		}
		r := l.traj.(wireRewinder)
		job := s.jobFor(l, from, r.toWire(r.Save()), n)
		jctx, cancel := context.WithCancel(ctx)
		e.ahead[l] = aheadFlight{job: job, cancel: cancel}
		l.aheadSent = time.Now()
		go func() {
			a, err := s.cfg.Ahead.Ahead(jctx, job)
			select {
			case e.aheadDone <- aheadDone{l: l, job: job, a: a, err: err}:
			case <-jctx.Done():
			}
		}()
	}
}

// joinAhead takes a job's frames into its lane, when the lane is still
// the session's: those past the lane's last (a seek may have recorded
// some meanwhile), with where each step started, and the trajectory set
// to the last state. After a failed job (not a cancelled one), or an
// answer that is not one to its job, every lane is recorded here, and the
// window says why until the next change.
func (e *Engine) joinAhead(d aheadDone) {
	s := e.s
	if f, ok := e.ahead[d.l]; ok && f.job.From == d.job.From {
		f.cancel()
		delete(e.ahead, d.l)
		if d.err == nil {
			s.aheadTook = time.Since(d.l.aheadSent)
		}
		d.l.aheadSent = time.Time{}
	}
	l := d.l
	if !slices.Contains(s.lanes, l) {
		return
	}
	if d.err == nil {
		if err := d.job.check(d.a); err != nil {
			d.err = fmt.Errorf("its answer to steps %d to %d: %w", d.job.From+1, d.job.From+d.job.Steps, err)
		}
	}
	if d.err != nil {
		if !s.aheadFailed {
			s.aheadWhy = fmt.Sprintf("recording %s ahead in a worker: %v; the steps are recorded on the page from now on", l.info.Label, d.err)
			s.dirty = true
		}
		s.aheadFailed = true
		for _, l := range s.lanes {
			l.keep.limit = s.keepLimit(l) // recorded here: with their attention
		}
		return
	}
	s.aheadWarm = true
	end := d.job.From + len(d.a.Frames)
	if len(l.frames)-1 > end || len(l.frames)-1 < d.job.From {
		return // the lane went past it, or it does not follow the lane's last frame
	}
	r := l.traj.(wireRewinder)
	shown := s.shownT()
	var sv *saved
	for k, f := range d.a.Frames {
		if k%rewindEvery == 0 {
			sv = &saved{state: r.fromWire(d.a.Saved[k/rewindEvery])}
		}
		if f.T != len(l.frames) {
			continue
		}
		if l.info.Tokens > 0 || l.info.Patterns > 0 {
			f.from = &rewind{src: r, saved: sv, steps: k % rewindEvery}
			sv.frames[k%rewindEvery] = f
		}
		l.frames = append(l.frames, f)
		e.joined.Add(1)
	}
	r.Restore(r.fromWire(d.a.Last))
	l.keep.saved = nil // the next step taken here saves its state afresh
	if s.shownT() != shown {
		s.dirty = true
	} else {
		s.grown = true
	}
}
