package sim

// Keeping the attention of a run's steps.
//
// A step's attention is large: 196² numbers (154 KB) for the bare
// self-attention network on 2×2 patches, so a run played to t = 1,000
// would hold 150 MB of it, and the window shows one step's at a time. The
// engine therefore keeps the attention of the steps it recorded or showed
// last (keepAttention of them a run) and, for any other step, takes the
// step again: the run keeps every rewindEvery-th state (6 KB for the same
// network), and a copy of the trajectory, set to the kept state before the
// step, takes the steps from there to it. The recording took the step
// after measuring the state's energy (the bare model's energy pass
// computes the step too) and the retaking does not; the attention is the
// same to the bit either way (TestAttentionRetaken).

// Rewinder is a trajectory whose state can be saved, and whose copies can
// be set to a saved state.
type Rewinder interface {
	Trajectory
	// Save returns a copy of the current state.
	Save() any
	// Restore sets the state to one Save returned (of this trajectory or
	// of one it was forked from).
	Restore(saved any)
	// Fork returns an independent trajectory (its own workspace) at the
	// same state.
	Fork() Rewinder
}

// rewind is where a frame's step started: steps steps after a saved state.
type rewind struct {
	src   Rewinder // the trajectory that took the step
	saved *saved   // its state some steps before, shared
	steps int
}

// saved is a state a trajectory had (Rewinder.Save) and the frames of the
// steps taken from it: frames[i] the one i steps after (nil where that
// step recorded no attention), so that retaking one step keeps the
// attention of those before it too.
type saved struct {
	state  any
	frames [rewindEvery]*Frame
}

// rewindEvery is how many steps share a saved state: a retaken step takes
// up to rewindEvery−1 steps more, and a run keeps one state in
// rewindEvery (bsa-p2's state is 6 KB, half of what a frame kept).
const rewindEvery = 4

// keepAttention is how many steps' attention a run keeps: the horizon the
// engine records ahead (100 by default) and 32 more, so that playing
// forward finds every step's attention kept and stepping back a little
// finds it too.
func keepAttention(horizon int) int { return horizon + 32 }

// aheadKeep is how many steps' attention a run keeps whose look-ahead is
// recorded elsewhere (ahead.go): those frames come without attention and
// a step shown takes its own again, one step after the one before, so
// only stepping back is helped by more (each of bsa-p2's is 154 KB, and a
// page's memory keeps its peak).
const aheadKeep = 32

// keepLimit is how many steps' attention lane l's run keeps: aheadKeep
// when its look-ahead is recorded elsewhere; a pushed run's, and a lane's
// recorded here, are recorded with their attention ahead of the step shown.
func (s *session) keepLimit(l *lane) int {
	if l != nil && s.remoteAhead(l) {
		return aheadKeep
	}
	return keepAttention(s.cfg.Horizon)
}

// attnKeep holds the attention of a run's (or a pushed run's) frames:
// the last ones recorded or asked for, the others taken again on demand.
type attnKeep struct {
	limit int
	kept  map[*Frame][]float32
	order []*Frame // oldest first
	// fork is a copy of forkOf, the trajectory a retaken step last came
	// from, kept for the next one.
	fork, forkOf Rewinder
	// forkAt and forkSteps say where fork is: forkAt's state stepped
	// forkSteps times (forkAt nil: unknown). A step after the last one
	// retaken goes on from there instead of from the saved state.
	forkAt    *saved
	forkSteps int
	// saved is savedOf's state as it was since steps ago (kept by step).
	saved   *saved
	savedOf Rewinder
	since   int
	retakes int // how many times get took steps again (its test counts)
	steps   int // how many steps it took (its test counts)
}

func newAttnKeep(limit int) *attnKeep {
	return &attnKeep{limit: limit, kept: map[*Frame][]float32{}}
}

// step takes tr's next step, writing its attention into attn (when not
// nil), and returns where it started when it has attention and tr can be
// rewound (nil otherwise). Every step of a trajectory whose frames k keeps
// is taken here, so that the steps after a saved state are counted.
func (k *attnKeep) step(tr Trajectory, attn []float32) *rewind {
	r, ok := tr.(Rewinder)
	if !ok {
		tr.Step(attn)
		return nil
	}
	if k.saved == nil || k.savedOf != r || k.since >= rewindEvery {
		k.saved, k.savedOf, k.since = &saved{state: r.Save()}, r, 0
	}
	var from *rewind
	if attn != nil {
		from = &rewind{src: r, saved: k.saved, steps: k.since}
	}
	k.since++
	r.Step(attn)
	return from
}

// add keeps f's attention, dropping the oldest kept beyond the limit (a
// frame that cannot be retaken is never dropped).
func (k *attnKeep) add(f *Frame, attn []float32) {
	if attn == nil {
		return
	}
	k.kept[f] = attn
	if f.from == nil {
		return
	}
	f.from.saved.frames[f.from.steps] = f
	k.order = append(k.order, f)
	for len(k.order) > k.limit {
		delete(k.kept, k.order[0])
		k.order[0] = nil
		k.order = k.order[1:]
	}
	if cap(k.order) > 4*k.limit {
		k.order = append([]*Frame(nil), k.order...)
	}
}

// cost is how many steps get takes for f's attention: 0 when it is kept
// (or f has none), 1 when the step before f's was the last one retaken.
func (k *attnKeep) cost(f *Frame) int {
	if f == nil || f.from == nil || k.kept[f] != nil {
		return 0
	}
	if k.forkOf == f.from.src && k.forkAt == f.from.saved && k.forkSteps <= f.from.steps {
		return f.from.steps + 1 - k.forkSteps
	}
	return f.from.steps + 1
}

// get returns the attention of f's step (nil when the step has none),
// taking the step again when it is not kept. info is the run's model's.
// The steps retaken on the way (from the saved state to f's) are kept
// too: stepping back through dropped steps retakes one in rewindEvery,
// not each with up to rewindEvery−1 more.
func (k *attnKeep) get(f *Frame, info ModelInfo) []float32 {
	if f == nil {
		return nil
	}
	if a, ok := k.kept[f]; ok {
		return a
	}
	if f.from == nil {
		return nil
	}
	sv := f.from.saved
	// The first step to take: past 0 where the fork is on the way already.
	first := f.from.steps + 1 - k.cost(f)
	if k.forkOf != f.from.src {
		k.fork, k.forkOf, k.forkAt = f.from.src.Fork(), f.from.src, nil
	}
	k.retakes++
	if first == 0 {
		k.fork.Restore(sv.state)
	}
	k.forkAt, k.forkSteps = sv, f.from.steps+1
	k.steps += f.from.steps + 1 - first
	for i := first; i < f.from.steps; i++ {
		if g := sv.frames[i]; g != nil && k.kept[g] == nil {
			attn := newAttn(info)
			k.fork.Step(attn)
			k.add(g, attn)
			continue
		}
		k.fork.Step(nil)
	}
	attn := newAttn(info)
	k.fork.Step(attn)
	k.add(f, attn)
	return attn
}

// The trajectories whose steps have attention can be rewound.
var (
	_ Rewinder = (*bsaTraj)(nil)
	_ Rewinder = (*transformerTraj)(nil)
	_ Rewinder = (*hopTraj)(nil)
)

// eachAttnToTake calls do, for each lane, with a frame whose attention get
// would take again (the lane's and its pushed run's), the keep that would,
// and the run's model, until do returns false: the step shown's when shown
// is true, else the step's after it. It allocates nothing: the engine asks
// after every command and every step it records.
func (s *session) eachAttnToTake(shown bool, do func(f *Frame, keep *attnKeep, info ModelInfo) bool) {
	t := s.shownT()
	if !shown {
		t++
	}
	for _, l := range s.lanes {
		// The step shown is At(t): the last one of a model with fewer steps.
		if n := len(l.frames); n > 0 && (shown || t < n) {
			if f := l.frames[min(t, n-1)]; f.from != nil && l.keep.kept[f] == nil && !s.attnUnderWay(f) && !do(f, l.keep, l.info) {
				return
			}
		}
		if l.br != nil && len(l.br.frames) > 0 {
			k := t - l.br.frames[0].T
			if shown {
				k = min(k, len(l.br.frames)-1) // BranchAt(t)
			}
			if k >= 0 && k < len(l.br.frames) {
				if f := l.br.frames[k]; f.from != nil && l.br.keep.kept[f] == nil && !do(f, l.br.keep, l.info) {
					return
				}
			}
		}
	}
}

// attnUnderWay reports whether f's attention is being taken elsewhere
// (attnremote.go): it is left for the answer.
func (s *session) attnUnderWay(f *Frame) bool {
	_, ok := s.attnFlights[f.from.saved]
	return ok
}

// attnWanted reports whether there is attention to take while the window
// idles: the step shown's, which a snapshot left out (deferAttn), or the
// next step's, not kept (a lane recorded elsewhere keeps few).
func (s *session) attnWanted() bool {
	wanted := false
	found := func(*Frame, *attnKeep, ModelInfo) bool { wanted = true; return false }
	if s.defersAttn() {
		s.eachAttnToTake(true, found)
	}
	if !wanted {
		s.eachAttnToTake(false, found)
	}
	return wanted
}

// attnWhileIdle takes one step's attention while the window idles: the
// step shown's where a snapshot left it out (the snapshot with all of
// them goes out once the last is taken), else the next step's, so that the
// → that shows it finds it kept instead of taking the step again on the
// page's thread between the key and the frame (a bsa-p2 step, 6.3 ms of a
// 50 ms step in the page). One at a time: each idle moment is a task of
// the page's, and four models' steps in one were a long one.
func (s *session) attnWhileIdle() {
	took := false
	take := func(f *Frame, keep *attnKeep, info ModelInfo) bool {
		keep.get(f, info)
		took = true
		return false
	}
	if s.defersAttn() {
		if s.eachAttnToTake(true, take); took {
			left := false
			s.eachAttnToTake(true, func(*Frame, *attnKeep, ModelInfo) bool { left = true; return false })
			if !left {
				s.dirty = true
			}
			return
		}
	}
	s.eachAttnToTake(false, take)
}

// defersAttn reports whether a snapshot now leaves the attention of a
// step it shows for the window's idle moments: in the page (deferAttn),
// not while playing.
func (s *session) defersAttn() bool { return s.deferAttn && !s.playing }

// shownAttn is the attention of f's step, a step the snapshot shows, and
// whether it is left for the window's next idle moment: taken now where it
// is not kept, unless the session defers it (defersAttn) and taking it
// would cost more steps than are left of the snapshot's budget, which it
// spends.
func (s *session) shownAttn(k *attnKeep, f *Frame, info ModelInfo, budget *int) ([]float32, bool) {
	if f == nil {
		return nil, false
	}
	if a, ok := k.kept[f]; ok {
		return a, false
	}
	// One step is taken now, for one model of the snapshot: a second
	// snapshot drawn for its attention would cost the page more (→ pressed
	// faster than the page idles, the step after the last one retaken).
	// The other models' wait for the idle moments: a compare link's four
	// at once took 76 ms of one of the page's tasks (a transformer
	// block's step is 40 ms of it). Every step is taken while playing: at
	// 30 steps a second the page has no idle moment between them, and the
	// map would stay empty.
	if s.defersAttn() {
		c := k.cost(f)
		if c > *budget {
			return nil, true
		}
		*budget -= c
	}
	return k.get(f, info), false
}
