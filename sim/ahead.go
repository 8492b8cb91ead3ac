package sim

import (
	"context"
	"fmt"
	"slices"

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
	if len(job.Input.Clean) != models.Pixels || len(job.Input.Input) != models.Pixels {
		return AheadAnswer{}, fmt.Errorf("a look-ahead job's digit has %d and %d pixels, not %d", len(job.Input.Clean), len(job.Input.Input), models.Pixels)
	}
	m, err := cat.Model(job.Model, job.Settings)
	if err != nil {
		return AheadAnswer{}, err
	}
	in := job.Input
	tr, ok := m.Start(&in).(wireRewinder)
	if !ok {
		return AheadAnswer{}, fmt.Errorf("model %s: its steps are not recorded elsewhere", job.Model)
	}
	tr.Restore(tr.fromWire(job.State))
	info := m.Info()
	s := &session{src: &Source{Memories: mem}, clean: in.Clean, pixel: in.Pixel}
	l := &lane{info: info, in: &in}
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
// remote side: sent there, and the remote side has answered a job before.
// Until then (the page's first worker starts in a second or two) the lane
// is recorded here as well, and a job's frames the lane has by the time
// it answers are left out.
func (s *session) recordedElsewhere(l *lane) bool { return s.aheadWarm && s.remoteAhead(l) }

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
		job := AheadJob{Dataset: s.set.Dataset, Model: l.info.Name, Settings: s.set, Input: *l.in,
			From: from, State: r.toWire(r.Save()), Steps: n}
		job.Settings.Own = nil // the input travels as it is
		jctx, cancel := context.WithCancel(ctx)
		e.ahead[l] = aheadFlight{job: job, cancel: cancel}
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
// to the last state. After a failed job (not a cancelled one) every lane is
// recorded here, and the window says why once.
func (e *Engine) joinAhead(d aheadDone) {
	s := e.s
	if f, ok := e.ahead[d.l]; ok && f.job.From == d.job.From {
		f.cancel()
		delete(e.ahead, d.l)
	}
	l := d.l
	if !slices.Contains(s.lanes, l) {
		return
	}
	if d.err != nil {
		if !s.aheadFailed && s.err == "" {
			s.err = fmt.Sprintf("recording %s ahead in a worker: %v; the steps are recorded on the page from now on", l.info.Label, d.err)
			s.dirty = true
		}
		s.aheadFailed = true
		return
	}
	s.aheadWarm = true
	end := d.job.From + len(d.a.Frames)
	if len(d.a.Frames) != d.job.Steps || len(l.frames)-1 > end || len(l.frames)-1 < d.job.From {
		return // the lane went past it, or it does not follow the lane's last frame
	}
	r := l.traj.(wireRewinder)
	shown := s.shownT()
	var sv *saved
	for k, f := range d.a.Frames {
		if k%rewindEvery == 0 {
			if k/rewindEvery >= len(d.a.Saved) {
				return
			}
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
