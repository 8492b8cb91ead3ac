package sim

import (
	"cmp"
	"context"
	"slices"
	"sync/atomic"
	"time"

	"attractorlab/sim/mnist"
)

// The engine: a session stepped in one goroutine, the commands the window
// sends it, and the cues of a lesson.

// Engine owns a session's state and steps its models in one goroutine. UI
// code sends commands through its methods (safe from any goroutine) and
// draws the snapshots it publishes, at most MaxFPS a second.
type Engine struct {
	cmds chan func(*session)
	// fetched takes the end of a model's fetch (Catalogue.Fetch, started
	// by Run for the session's waiting models); fetching are those under
	// way (Run's goroutine only).
	fetched  chan *Catalogue
	fetching map[fetchKey]bool
	s        *session
	sync     bool
	cues     atomic.Int64 // tickets handed out by Cue
	OnSnap   func(*Snapshot)
	// ahead are the look-ahead jobs under way elsewhere (cfg.Ahead), by
	// lane, and aheadDone takes their ends (Run's goroutine only).
	ahead     map[*lane]aheadFlight
	aheadDone chan aheadDone
	joined    atomic.Int64 // frames taken from the remote side's answers (its tests count)
	// attnDone takes the ends of attention jobs (attnremote.go);
	// attnJoined counts the steps whose attention came from them.
	attnDone   chan attnDone
	attnJoined atomic.Int64
}

// fetchKey names a fetch: a model of a source's catalogue.
type fetchKey struct {
	cat  *Catalogue
	name string
}

// MaxFPS caps how often snapshots are published.
const MaxFPS = 60

// EngineConfig wires an engine to its data and models.
type EngineConfig struct {
	Data      *mnist.Data
	Memories  *Memories
	Catalogue *Catalogue
	Settings  Settings
	Horizon   int // steps recorded ahead so t* is known (default 100)
	MaxT      int // last step a user may reach (default 1000)
	// Synchronous engines apply commands on the caller's goroutine and
	// never play by themselves (tests drive them with Tick).
	Synchronous bool
	OnSnap      func(*Snapshot)
	// Sources opens the data sets other than Data's that settings name
	// (nil: only Data's).
	Sources Sources
	// Hold, when not nil, keeps the background recording of the horizon
	// waiting until it is closed; commands, playback and the steps a seek
	// records at once do not wait. The page holds it until its first
	// frame is painted, which the recording (and the redraws it causes)
	// would otherwise delay on the page's one thread.
	Hold <-chan struct{}
	// Ahead, when not nil, records the look-ahead of the lanes whose
	// models it can build elsewhere (the page's Web Workers; ahead.go).
	Ahead AheadRemote
	// Idle, when not nil, returns a channel that is closed when the
	// window has nothing to do (nil: the build's own; in the page once
	// the frame is painted and the browser idles, on the desktop never).
	// The engine then takes the attention of the step shown, which a
	// snapshot leaves out where it is not kept (Lane.AttnPending), and of
	// the step after it, before → asks for it (attention.go).
	Idle func() <-chan struct{}
	// GrowEvery is how often a snapshot is published when only the
	// look-ahead grew, the step shown being the same (0: the build's own:
	// MaxFPS a second on the desktop, 4 in the page).
	GrowEvery time.Duration
}

// NewEngine prepares a session; call Run (unless Synchronous).
func NewEngine(cfg EngineConfig) *Engine {
	if cfg.Horizon <= 0 {
		cfg.Horizon = 100
	}
	if cfg.MaxT <= 0 {
		cfg.MaxT = 1000
	}
	s := &session{cfg: cfg, speed: 10, stopAt: -1, set: DefaultSettings()}
	s.home = &Source{Data: cfg.Data, Memories: cfg.Memories, Catalogue: cfg.Catalogue}
	s.src = s.home
	s.set.Dataset = canonicalDataset(cfg.Data.Name())
	if avail := cfg.Catalogue.Available(); len(avail) > 0 {
		s.set.Lanes = []string{avail[0].Name}
	}
	e := &Engine{cmds: make(chan func(*session), 256), fetched: make(chan *Catalogue), fetching: map[fetchKey]bool{}, ahead: map[*lane]aheadFlight{}, aheadDone: make(chan aheadDone), attnDone: make(chan attnDone), s: s, sync: cfg.Synchronous, OnSnap: cfg.OnSnap}
	s.emit = func(sn *Snapshot) {
		if e.OnSnap != nil {
			e.OnSnap(sn)
		}
	}
	s.rebuild()
	// The initial settings are tried like any change: when they are not
	// valid (a scenario saved by another version), the defaults stay and
	// the snapshot says why.
	s.change(func(st *Settings) { *st = cfg.Settings }, true)
	return e
}

// Run processes commands until ctx ends. Playback and the background
// computation of the horizon happen here.
func (e *Engine) Run(ctx context.Context) {
	s := e.s
	s.publish(true)
	tick := time.NewTimer(time.Hour)
	tick.Stop()
	flush := time.NewTimer(time.Hour)
	flush.Stop()
	// wake ends the wait for a look-ahead job taking long (aheadWait):
	// its lane is recorded here from then on as well.
	wake := time.NewTimer(time.Hour)
	wake.Stop()
	armed := false
	// next is when the next step is due. Steps are due on a fixed
	// schedule (one every 1/speed), not 1/speed after the last one was
	// handled: the time a step and its redraw take, or a step of the
	// horizon computed meanwhile, no longer slows the rate asked for (30
	// steps/s gave 15–20). A tick that comes late takes the steps due
	// since (the frames between are skipped; the t shown keeps the rate).
	var next time.Time
	hold := s.cfg.Hold
	// idle is closed when the window idles after a snapshot whose next
	// step's attention is not kept (nil: none is asked for).
	var idle <-chan struct{}
	whenIdle := s.cfg.Idle
	if whenIdle == nil {
		whenIdle = pageIdle
	}
	// Where the window idles (the page), a snapshot leaves a step's
	// attention that is not kept for then: the step is drawn at once.
	s.deferAttn = whenIdle != nil
	period := func() time.Duration { return time.Duration(float64(time.Second) / s.speed) }
	onTick := func() {
		armed = false
		if !s.playing {
			return
		}
		p := period()
		n := 1 + int(max(0, time.Since(next))/p)
		s.advance(n)
		next = next.Add(time.Duration(n) * p)
	}
	for {
		e.fetchWaiting(ctx)
		if hold == nil && s.cfg.Ahead != nil {
			s.warmAhead()
			e.sendAhead(ctx)
			e.sendAttn(ctx) // before the wake: a job it sends is given up in time
			if at := s.aheadWake(); at.IsZero() {
				wake.Stop()
			} else {
				wake.Reset(max(0, time.Until(at)))
			}
		}
		// Play: schedule the next step.
		if s.playing && !armed {
			// Starting (or after a pause): one period from now.
			if now := time.Now(); next.IsZero() || now.Sub(next) > period() || next.Sub(now) > period() {
				next = now.Add(period())
			}
			tick.Reset(time.Until(next))
			armed = true
		}
		var f func(*session)
		if s.pendingHere() && hold == nil {
			// Record the horizon in the background, one step at a time.
			// The default case makes commands and ticks win over this work
			// whenever they are waiting (a select over a ready channel
			// instead picks at random, and measured 24 ms mean / 49 ms worst
			// command latency against 19 / 22 ms with this form).
			select {
			case <-ctx.Done():
				return
			case f = <-e.cmds:
			case <-tick.C:
				onTick()
			case <-flush.C:
				s.dirtyTimer = false
			case cat := <-e.fetched:
				e.joinFetched(cat)
			case d := <-e.aheadDone:
				e.joinAhead(d)
				s.runCue()
			case d := <-e.attnDone:
				e.joinAttn(d)
			case <-wake.C:
			case <-idle:
				idle = nil
				s.attnWhileIdle()
			default:
				s.extend(1)
				s.runCue()
			}
		} else {
			select {
			case <-ctx.Done():
				return
			case f = <-e.cmds:
			case <-tick.C:
				onTick()
			case <-flush.C:
				s.dirtyTimer = false
			case <-hold:
				hold = nil
			case cat := <-e.fetched:
				e.joinFetched(cat)
			case d := <-e.aheadDone:
				e.joinAhead(d)
				s.runCue()
			case d := <-e.attnDone:
				e.joinAttn(d)
			case <-wake.C:
			case <-idle:
				idle = nil
				s.attnWhileIdle()
			}
		}
		if f != nil {
			s.cue = nil // any command the user gives wins over a pending cue
			s.stopAt = -1
			s.cueBusy = false
			f(s)
			// A command's snapshot goes out within a frame, also when it
			// changed nothing but what a snapshot says (a cue's ticket).
			s.dirty = true
			s.runCue()
			if !s.playing && armed {
				tick.Stop()
				armed = false
			}
		}
		e.maybeFlush(flush)
		if idle == nil && whenIdle != nil && s.attnWanted() {
			idle = whenIdle()
		}
	}
}

// fetchWaiting starts fetching the weights of the session's waiting
// models (once each), on goroutines of their own: the engine answers
// commands and the window is drawn meanwhile.
func (e *Engine) fetchWaiting(ctx context.Context) {
	s := e.s
	for _, name := range s.waiting {
		k := fetchKey{s.src.Catalogue, name}
		if e.fetching[k] {
			continue
		}
		e.fetching[k] = true
		go func() {
			k.cat.Fetch(name) // an error stays in the catalogue: the rebuild reports it
			pause()           // the page's turn before the lanes are rebuilt
			select {
			case e.fetched <- k.cat:
			case <-ctx.Done():
			}
		}()
	}
}

// joinFetched rebuilds the session when a model it waits for has come (or
// failed to): the lanes start again at t = 0 and are recorded to the step
// shown, and a cue waiting for t* goes on.
func (e *Engine) joinFetched(cat *Catalogue) {
	s := e.s
	for k := range e.fetching {
		if k.cat == cat && !cat.Waiting(k.name) {
			delete(e.fetching, k)
		}
	}
	if s.src.Catalogue != cat {
		return
	}
	for _, name := range s.waiting {
		if !cat.Waiting(name) {
			s.rebuild()
			s.runCue()
			s.dirty = true
			return
		}
	}
}

func (e *Engine) maybeFlush(flush *time.Timer) {
	s := e.s
	if !s.dirty && !s.grown {
		return
	}
	every := time.Second / MaxFPS
	if !s.dirty {
		every = cmp.Or(s.cfg.GrowEvery, growEvery)
	}
	due := s.lastPub.Add(every)
	if wait := time.Until(due); wait > 0 {
		if !s.dirtyTimer || due.Before(s.flushAt) {
			flush.Reset(wait)
			s.dirtyTimer, s.flushAt = true, due
		}
		return
	}
	s.publish(false)
}

func (e *Engine) do(f func(*session)) {
	if e.sync {
		f(e.s)
		e.s.publish(true)
		return
	}
	e.cmds <- f
}

// Tick advances a playing synchronous engine by one step.
func (e *Engine) Tick() { e.do(func(s *session) { s.advance(1) }) }

// Settle computes the whole horizon (synchronous engines).
func (e *Engine) Settle() {
	e.do(func(s *session) {
		for s.pending() {
			s.extend(100)
		}
	})
}

// Commands.

// Update changes settings. A change that is not valid (Settings.Validate,
// a digit index beyond its set, a model that did not load) is refused: the
// session stays as it was and the snapshot's Err says why.
func (e *Engine) Update(f func(*Settings)) {
	e.do(func(s *session) { s.change(f, false) })
}

// Restore sets every setting and t exactly (opening a scenario), or
// refuses them as Update does.
func (e *Engine) Restore(set Settings, t int) {
	e.do(func(s *session) {
		if s.change(func(st *Settings) { *st = set }, true) {
			s.playing = false
			s.seek(t)
		}
	})
}

func (e *Engine) Step() { e.do(func(s *session) { s.playing = false; s.advance(1) }) }

func (e *Engine) Back() { e.do(func(s *session) { s.playing = false; s.seek(s.shownT() - 1) }) }

func (e *Engine) Play() { e.do(func(s *session) { s.playing = true; s.dirty = true }) }

func (e *Engine) TogglePlay() { e.do(func(s *session) { s.playing = !s.playing; s.dirty = true }) }

func (e *Engine) Reset() { e.do(func(s *session) { s.playing = false; s.seek(0) }) }

func (e *Engine) Seek(t int) { e.do(func(s *session) { s.seek(t) }) }

func (e *Engine) SeekBest() { e.do(func(s *session) { s.playing = false; s.seekBest() }) }

// ShowBest seeks t* as soon as the horizon is recorded (the first window
// opens on the transient memory).
func (e *Engine) ShowBest() {
	best := Mark{Best: true}
	e.Cue(nil, best, best, 0)
}

// Mark is a step: T, or t* of the first model when Best (known once the
// horizon is recorded).
type Mark struct {
	T    int
	Best bool
}

// Cue is what a lesson's slide asks for: the settings set (unless nil;
// refused as Restore refuses them), then step from shown and played to
// at speed steps a second (a jump when speed is 0 or to ≤ from). A mark at
// t* waits for the horizon; the engine answers commands meanwhile, and any
// command cancels the cue.
//
// It returns the cue's ticket: the snapshots that show its result carry it
// in Cue, with CueDone once it has played to its end (or was cancelled).
func (e *Engine) Cue(set *Settings, from, to Mark, speed float64) int64 {
	ticket := e.cues.Add(1)
	e.do(func(s *session) {
		s.cueTicket, s.cueBusy = ticket, false
		if set != nil && !s.change(func(st *Settings) { *st = *set }, true) {
			return
		}
		s.playing = false
		s.cue = &cue{from: from, to: to, speed: speed}
		s.cueBusy = true
		if s.cfg.Synchronous {
			for s.pending() {
				s.extend(100)
			}
		}
		s.runCue()
	})
	return ticket
}

// cue is a Cue waiting for the horizon.
type cue struct {
	from, to Mark
	speed    float64
}

// runCue carries out the pending cue once the steps it names are known.
func (s *session) runCue() {
	c := s.cue
	if c == nil || len(s.waiting) > 0 || ((c.from.Best || c.to.Best) && s.pending()) {
		return
	}
	s.cue = nil
	s.cueBusy = false
	at := func(m Mark) int {
		if m.Best && len(s.lanes) > 0 {
			b, _ := best(s.lanes[0].frames)
			return b
		}
		return m.T
	}
	from, to := at(c.from), at(c.to)
	s.seek(from)
	if to <= from || c.speed <= 0 {
		s.seek(to)
		return
	}
	s.speed = c.speed
	s.playing = true
	s.stopAt = to
	s.cueBusy = true
	if s.cfg.Synchronous {
		for s.playing {
			s.advance(1)
		}
	}
}

func (e *Engine) SetSpeed(v float64) {
	e.do(func(s *session) { s.speed = max(0.5, min(v, 240)); s.dirty = true })
}

// TogglePatch masks or unmasks patch i of the mask grid (refused when it
// would leave fewer than MinVisible patches).
func (e *Engine) TogglePatch(i int) {
	e.do(func(s *session) {
		s.change(func(st *Settings) {
			if k := slices.Index(st.Toggled, i); k >= 0 {
				st.Toggled = slices.Delete(st.Toggled, k, k+1)
			} else {
				st.Toggled = append(st.Toggled, i)
			}
		}, true)
	})
}
