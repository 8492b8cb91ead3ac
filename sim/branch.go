package sim

import (
	"slices"

	"attractorlab/models"
)

// Pushes in the engine: each lane's pushed run, recorded beside its run
// (push.go defines a push).

// samePushless reports whether a and b differ at most in their pushes.
func samePushless(a, b Settings) bool {
	return sameInput(a, b) && slices.Equal(a.Lanes, b.Lanes) && slices.Equal(a.Toggled, b.Toggled) &&
		a.Dyn == b.Dyn && a.Hop == b.Hop
}

// AddPush edits the state at step p.T (push.go): the pushed run branches
// there. The push's noise stream is the session's: its seed is set here
// from the corruption's seed and how many pushes came before, so a
// scenario replays it. Refused (Err) as Update refuses settings.
func (e *Engine) AddPush(p Push) {
	e.do(func(s *session) {
		p.Seed = s.set.Corruption.Seed<<8 + uint64(len(s.set.Pushes)) + 1
		for slices.ContainsFunc(s.set.Pushes, func(q Push) bool { return q.Seed == p.Seed }) {
			p.Seed++ // each push its own stream (and UndoPush finds it by it)
		}
		p.Patches = slices.Clone(p.Patches)
		if s.change(func(st *Settings) {
			k := len(st.Pushes)
			for k > 0 && st.Pushes[k-1].T > p.T {
				k--
			}
			st.Pushes = slices.Insert(st.Pushes, k, p)
		}, true) {
			s.pushed = append(s.pushed, p.Seed)
		}
	})
}

// UndoPush takes back the push made last (the last in step order when the
// pushes came from a scenario); ClearPushes takes back every push.
func (e *Engine) UndoPush() {
	e.do(func(s *session) {
		if len(s.set.Pushes) == 0 {
			return
		}
		k := len(s.set.Pushes) - 1
		for len(s.pushed) > 0 {
			seed := s.pushed[len(s.pushed)-1]
			s.pushed = s.pushed[:len(s.pushed)-1]
			if i := slices.IndexFunc(s.set.Pushes, func(p Push) bool { return p.Seed == seed }); i >= 0 {
				k = i
				break
			}
		}
		s.change(func(st *Settings) { st.Pushes = slices.Delete(st.Pushes, k, k+1) }, true)
	})
}

func (e *Engine) ClearPushes() {
	e.do(func(s *session) { s.change(func(st *Settings) { st.Pushes = nil }, true) })
}

// branch is a lane's pushed run: a chain of fresh runs, each started at a
// push's step from the picture of the state there, edited.
type branch struct {
	traj   Trajectory // the current segment
	seg    int        // the step the current segment started at
	frames []*Frame   // from the first push's step on
	trail  *models.Trail
	keep   *attnKeep // the frames' attention
}

// branchLimit is the last step lane l's pushed run can reach (−1 without
// pushes): a model with a fixed number of steps (the ViT's layers) takes
// them again from its last push.
func (s *session) branchLimit(l *lane) int {
	ps := s.set.Pushes
	if len(ps) == 0 {
		return -1
	}
	if l.info.MaxSteps > 0 {
		return ps[len(ps)-1].T + l.info.MaxSteps
	}
	return s.cfg.MaxT
}

// branchNext is the next step lane l's pushed run records.
func (s *session) branchNext(l *lane) int {
	if len(s.set.Pushes) == 0 {
		return 0
	}
	if l.br == nil {
		return s.set.Pushes[0].T
	}
	return s.set.Pushes[0].T + len(l.br.frames)
}

// branchShort reports whether lane l's pushed run has not recorded up to
// step upto (or its limit) yet.
func (s *session) branchShort(l *lane, upto int) bool {
	return len(s.set.Pushes) > 0 && s.branchNext(l) <= min(upto, s.branchLimit(l))
}

// extendBranch records the next step of lane l's pushed run. At a push's
// step the run starts afresh (Model.Start) from the picture of the state
// there, edited by the pushes of that step: the run's own state at the
// first push, the pushed run's after it. The first push waits for the
// run's step to be recorded.
func (s *session) extendBranch(l *lane) {
	bt := s.branchNext(l)
	var ps []Push
	for _, p := range s.set.Pushes {
		if p.T == bt {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		br := l.br
		attn := newAttn(l.info)
		if l.info.MaxSteps > 0 && bt-br.seg > l.info.MaxSteps {
			attn = nil // past the last layer the state stays
		}
		from := br.keep.step(br.traj, attn)
		f := s.frame(l, br.traj, &br.trail, bt, from)
		br.frames = append(br.frames, f)
		br.keep.add(f, attn)
		return
	}
	var base []float32
	if l.br == nil {
		for len(l.frames) <= min(bt, s.limit(l)) {
			s.extendLane(l)
		}
		base = l.frames[min(bt, len(l.frames)-1)].Image
		l.br = &branch{keep: newAttnKeep(s.keepLimit(nil))}
	} else {
		// The pushed run's state at bt, as its frame would show it.
		if l.info.MaxSteps == 0 || bt-l.br.seg <= l.info.MaxSteps {
			l.br.keep.step(l.br.traj, nil)
		}
		base = make([]float32, models.Pixels)
		l.br.traj.Decode(base)
		base = clamped(base)
	}
	in := pushedInput(s.clean, base, ps, s.gridPt, l.grid)
	l.br.traj, l.br.seg = l.model.Start(in), bt
	l.br.frames = append(l.br.frames, s.frame(l, l.br.traj, &l.br.trail, bt, nil))
}
