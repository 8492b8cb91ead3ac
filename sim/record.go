package sim

import (
	"math"
	"time"

	"attractorlab/models"
)

// Recording trajectories: each lane's frames stepped and measured ahead
// of the step shown (the horizon), seeking, playing.

type lane struct {
	model  Model
	info   ModelInfo
	grid   *Grid // the model's tokens (nil for pixel-level models)
	in     *Corrupted
	traj   Trajectory
	frames []*Frame
	trail  *models.Trail // the nearest-memory search of the frames, in order
	keep   *attnKeep     // the frames' attention
	br     *branch       // the pushed run (nil until its first step is recorded)
	// trainedOn is the data set the model's weights were trained on.
	trainedOn string
	// aheadSent is when the lane's look-ahead job under way was sent
	// elsewhere (zero: none is; ahead.go).
	aheadSent time.Time
}

// frame measures the current state of tr, a run of lane l (the lane's own
// or its pushed run, whose nearest-memory search is *trail) as step t. The
// errors are against the session's clean digit and mask either way, so a
// pushed run's numbers compare with the run's.
func (s *session) frame(l *lane, tr Trajectory, trail **models.Trail, t int, from *rewind) *Frame {
	f := &Frame{T: t, Image: make([]float32, models.Pixels), from: from}
	tr.Decode(f.Image)
	clampPicture(f.Image)
	energy := math.NaN()
	if l.info.HasEnergy {
		energy = tr.Energy()
		if te, ok := tr.(TokenEnergies); ok {
			f.TokenEnergy = te.TokenEnergies()
		}
	}
	mem := s.src.Memories
	f.Measures = measure(f.Image, s.clean, s.pixel, energy, mem)
	if mem != nil {
		if *trail == nil {
			*trail = mem.Search().NewTrail()
		}
		k, corr := (*trail).Nearest(f.Image)
		f.setNearest(mem, k, corr)
	}
	if pt := l.grid; pt != nil {
		masked := l.in.Masked
		if masked == nil {
			masked = make([]bool, pt.N)
			for i := range masked {
				masked[i] = true
			}
		}
		f.PatchVar = PatchVariance(nil, f.Image, pt.Index, pt.A, masked)
	}
	return f
}

// limit is the last step lane l can reach.
func (s *session) limit(l *lane) int {
	if l.info.MaxSteps > 0 {
		return l.info.MaxSteps
	}
	return s.cfg.MaxT
}

// goal is the last step recorded ahead: the horizon, grown in whole
// horizons as t passes it (so plots of the curve change rarely).
func (s *session) goal() int {
	h := s.cfg.Horizon
	return max(h, (s.t/h+1)*h)
}

// extend records up to n more steps of every lane (and pushed run) short
// of the goal, but the lanes recorded elsewhere (ahead.go).
func (s *session) extend(n int) {
	goal, shown := s.goal(), s.shownT()
	for _, l := range s.lanes {
		for k := 0; k < n && len(l.frames) <= min(goal, s.limit(l)) && !s.recordedElsewhere(l); k++ {
			s.extendLane(l)
			pause()
		}
		for k := 0; k < n && s.branchShort(l, goal); k++ {
			s.extendBranch(l)
			pause()
		}
	}
	if s.shownT() != shown {
		s.dirty = true // a seek catching up: the step shown moved
	} else {
		s.grown = true
	}
}

// pending reports whether the horizon is not recorded yet.
func (s *session) pending() bool {
	goal := s.goal()
	for _, l := range s.lanes {
		if len(l.frames) <= min(goal, s.limit(l)) || s.branchShort(l, goal) {
			return true
		}
	}
	return false
}

// pendingHere reports whether some of the horizon is to be recorded
// here: pending, but the lanes recorded elsewhere.
func (s *session) pendingHere() bool {
	goal := s.goal()
	for _, l := range s.lanes {
		if (len(l.frames) <= min(goal, s.limit(l)) && !s.recordedElsewhere(l)) || s.branchShort(l, goal) {
			return true
		}
	}
	return false
}

func (s *session) maxT() int {
	m := 0
	for _, l := range s.lanes {
		m = max(m, s.limit(l), s.branchLimit(l))
	}
	return m
}

// seekBudget bounds the work a command does before it returns: a seek far
// ahead records what fits and the run loop catches up in the background,
// so commands take effect (and are drawn) quickly even while playing.
const seekBudget = 8 * time.Millisecond

func (s *session) seek(t int) {
	hi := s.maxT()
	if len(s.waiting) > 0 {
		// Models whose weights are being fetched: the step asked for is
		// kept (a link's, a reload's) and shown once their lanes come.
		hi = s.cfg.MaxT
	}
	s.t = max(0, min(t, hi))
	deadline := time.Now().Add(seekBudget)
	for _, l := range s.lanes {
		for len(l.frames) <= min(s.t, s.limit(l)) && (s.cfg.Synchronous || time.Now().Before(deadline)) {
			s.extendLane(l)
		}
		for s.branchShort(l, s.t) && (s.cfg.Synchronous || time.Now().Before(deadline)) {
			s.extendBranch(l)
		}
	}
	s.dirty = true
}

// shownT is the step a snapshot shows: t, or the last step every lane has
// recorded while the engine is still catching up with a seek.
func (s *session) shownT() int {
	if len(s.lanes) == 0 {
		return 0 // no lane has a step yet (their models being fetched)
	}
	t := s.t
	for _, l := range s.lanes {
		if len(l.frames)-1 < min(s.t, s.limit(l)) {
			t = min(t, len(l.frames)-1)
		}
		if s.branchShort(l, s.t) {
			t = min(t, s.branchNext(l)-1)
		}
	}
	return max(t, 0)
}

func (s *session) extendLane(l *lane) {
	attn := newAttn(l.info)
	from := l.keep.step(l.traj, attn)
	f := s.frame(l, l.traj, &l.trail, len(l.frames), from)
	l.frames = append(l.frames, f)
	l.keep.add(f, attn)
}

// newAttn is room for the attention a step of a model like info records.
func newAttn(info ModelInfo) []float32 {
	if n := attnLen(info); n > 0 {
		return make([]float32, n)
	}
	return nil
}

// attnLen is how many numbers a step's attention has (newAttn's length).
func attnLen(info ModelInfo) int {
	if info.Tokens > 0 {
		return info.Tokens * info.Tokens * max(1, 1+info.Heads)
	}
	return max(0, info.Patterns)
}

func (s *session) advance(n int) {
	if s.t+n > s.maxT() {
		s.playing = false
	}
	if s.stopAt >= 0 && s.shownT()+n >= s.stopAt {
		n = max(0, s.stopAt-s.shownT())
		s.playing = false
		s.stopAt = -1
	}
	if !s.playing {
		s.cueBusy = false
	}
	// While catching up, playback waits for the recorded steps.
	s.seek(s.shownT() + n)
}

func (s *session) seekBest() {
	if len(s.lanes) == 0 || (len(s.waiting) > 0 && s.waiting[0] == s.set.Lanes[0]) {
		return // t* is the first model's: not known while it is fetched
	}
	b, _ := best(s.lanes[0].frames)
	s.seek(b)
}

// best is the recorded trajectory's best step t ≥ 1 (BestStep) and its
// MSE; before any step is recorded, 0 and the input's MSE.
func best(frames []*Frame) (int, float64) {
	bt, bm := BestStep(len(frames), func(t int) float64 { return frames[t].MSE })
	if bt == 0 && len(frames) > 0 {
		return 0, frames[0].MSE
	}
	return bt, bm
}
