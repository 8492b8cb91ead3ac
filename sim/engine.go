package sim

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// Grid is a tokenisation of the image into square patches, as the engine
// publishes it for drawing (patch outlines, hover, attention overlays).
type Grid = models.Patches

// NewGrid is the tokenisation into square patches of side p.
func NewGrid(p int) (*Grid, error) { return models.NewPatches(p) }

// Pixels is the number of pixels of an image.
const Pixels = models.Pixels

// Answer says what a lane's recorded curve shows about its best step, in
// words a reader needs no manual for: t* = the step t ≥ 1 with the lowest
// MSE (as reproduce defines it), or that no step improves on the input,
// or that there was nothing to repair.
func (l *Lane) Answer(nothingToRepair bool) string {
	if len(l.Frames) == 0 {
		return ""
	}
	in := l.Frames[0].MSE
	switch {
	case nothingToRepair:
		return fmt.Sprintf("nothing to repair: the input is the clean digit (MSE %.4f)", in)
	case l.Best < 1:
		return fmt.Sprintf("no step recorded yet (input MSE %.4f)", in)
	case !Improves(l.BestMSE, in):
		return fmt.Sprintf("no step improves on the input (MSE %.4f); best step %d (MSE %.4f)", in, l.Best, l.BestMSE)
	}
	return fmt.Sprintf("t* = %d (MSE %.4f; input %.4f)", l.Best, l.BestMSE, in)
}

// Improves reports whether a step's MSE repairs the input's: lower by more
// than rounding (docs/maths.md §8; with γ = 0 the state is the input
// rescaled and differs from it by about 1e-9).
func Improves(mse, input float64) bool { return mse < input*(1-1e-6) }

// Lane is one model's recorded trajectory in a snapshot.
type Lane struct {
	Info    ModelInfo
	Grid    *Grid    // the model's tokens (nil for pixel-level models)
	Frames  []*Frame // t = 0 … recorded; never modified
	Best    int      // t* over the recorded t ≥ 1
	BestMSE float64
	// Branch is the pushed run (Settings.Pushes): its frames from the
	// first push's step on (Branch[k].T = Branch[0].T + k), nil without
	// pushes. The frame at a push's step is the edited state.
	Branch []*Frame
}

// BranchAt returns the pushed run's frame at t: nil before the first
// push, the last recorded one past its end (the ViT's layers).
func (l *Lane) BranchAt(t int) *Frame {
	if len(l.Branch) == 0 || t < l.Branch[0].T {
		return nil
	}
	return l.Branch[min(t-l.Branch[0].T, len(l.Branch)-1)]
}

// At returns the frame at t, or the last one for a model that has fewer
// steps (the ViT's 5 layers).
func (l *Lane) At(t int) *Frame {
	if len(l.Frames) == 0 {
		return nil
	}
	return l.Frames[min(t, len(l.Frames)-1)]
}

// Snapshot is an immutable view of the session for drawing.
type Snapshot struct {
	Seq       int
	Settings  Settings
	Label     uint8
	MNISTIdx  int
	Clean     []float32
	Input     []float32 // corrupted pixels as shown (clamped to [0,1])
	RawInput  []float32 // the models' input (noise not clamped)
	PixelMask []bool    // masked pixels (nil for noise)
	MaskGrid  int       // patch side the mask is drawn on
	T         int
	Playing   bool
	Speed     float64 // steps per second
	Horizon   int
	Lanes     []Lane
	Err       string
	Cue       int64 // the ticket of the last cue (Engine.Cue) the engine took
	CueDone   bool  // that cue has played to its end (or was cancelled)
}

// Engine owns a session's state and steps its models in one goroutine. UI
// code sends commands through its methods (safe from any goroutine) and
// draws the snapshots it publishes, at most MaxFPS a second.
type Engine struct {
	cmds   chan func(*session)
	s      *session
	sync   bool
	cues   atomic.Int64 // tickets handed out by Cue
	OnSnap func(*Snapshot)
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
	if avail := cfg.Catalogue.Available(); len(avail) > 0 {
		s.set.Lanes = []string{avail[0].Name}
	}
	e := &Engine{cmds: make(chan func(*session), 256), s: s, sync: cfg.Synchronous, OnSnap: cfg.OnSnap}
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
	armed := false
	for {
		// Play: schedule the next step.
		if s.playing && !armed {
			tick.Reset(time.Duration(float64(time.Second) / s.speed))
			armed = true
		}
		var f func(*session)
		if s.pending() {
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
				armed = false
				if s.playing {
					s.advance(1)
				}
			case <-flush.C:
				s.dirtyTimer = false
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
				armed = false
				if s.playing {
					s.advance(1)
				}
			case <-flush.C:
				s.dirtyTimer = false
			}
		}
		if f != nil {
			s.cue = nil // any command the user gives wins over a pending cue
			s.stopAt = -1
			s.cueBusy = false
			f(s)
			s.runCue()
			if !s.playing && armed {
				tick.Stop()
				armed = false
			}
		}
		e.maybeFlush(flush)
	}
}

func (e *Engine) maybeFlush(flush *time.Timer) {
	s := e.s
	if !s.dirty {
		return
	}
	if wait := time.Second/MaxFPS - time.Since(s.lastPub); wait > 0 {
		if !s.dirtyTimer {
			flush.Reset(wait)
			s.dirtyTimer = true
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

// Snapshot builds a snapshot now (for synchronous engines and tests).
func (e *Engine) Snapshot() *Snapshot { return e.s.snapshot() }

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

// change applies f to a copy of the settings and rebuilds the session when
// the result is valid; it reports whether it did. keepToggled keeps the
// hand-toggled patches even when the input changes (a restored scenario).
func (s *session) change(f func(*Settings), keepToggled bool) bool {
	old := s.set
	next := old
	next.Lanes = slices.Clone(old.Lanes)
	next.Toggled = slices.Clone(old.Toggled)
	next.Pushes = clonePushes(old.Pushes)
	f(&next)
	next.Lanes = slices.Clone(next.Lanes)
	next.Toggled = slices.Clone(next.Toggled)
	next.Pushes = clonePushes(next.Pushes)
	if next.Own != nil && bytes.Equal(next.Own, old.Own) && (next.Split != old.Split || next.Index != old.Index) {
		// A stored digit chosen (the digit controls, a gallery, a
		// population window): the own digit gives way to it.
		next.Own = nil
	}
	if !sameInput(old, next) && !keepToggled {
		// A new digit or corruption starts its trajectory at t = 0.
		// A push belongs to the trajectory it was made on.
		next.Toggled, next.Pushes = nil, nil
		s.t = 0
	}
	if !keepToggled && s.maskGrid(old.Lanes) != s.maskGrid(next.Lanes) {
		// Hand-masked patches are numbered on the mask grid: another
		// grid has other patches (and a kick names none).
		next.Toggled = nil
		next.Pushes = slices.DeleteFunc(next.Pushes, func(p Push) bool { return p.Kind != Kick })
	}
	if err := s.check(next); err != nil {
		s.err = err.Error()
		s.dirty = true
		return false
	}
	if samePushless(old, next) && s.err == "" {
		// Only the pushes changed: the runs without them stay, the
		// pushed runs are made again.
		s.set = next
		for _, l := range s.lanes {
			l.br = nil
		}
		s.seek(s.t)
		return true
	}
	s.set = next
	s.rebuild()
	return true
}

// samePushless reports whether a and b differ at most in their pushes.
func samePushless(a, b Settings) bool {
	return sameInput(a, b) && slices.Equal(a.Lanes, b.Lanes) && slices.Equal(a.Toggled, b.Toggled) &&
		a.Dyn == b.Dyn && a.Hop == b.Hop
}

// check refuses settings the session cannot run.
func (s *session) check(set Settings) error {
	if err := set.Validate(ViaName); err != nil {
		return err
	}
	if n := s.digits(set.Split).Len(); set.Index >= n {
		return fmt.Errorf("digit %d is out of range: the %s split has digits 0 … %d", set.Index, set.Split, n-1)
	}
	for _, name := range set.Lanes {
		if _, err := s.cfg.Catalogue.Model(name, set); err != nil {
			return err
		}
	}
	if err := set.CheckMask(s.maskGrid(set.Lanes), ViaName); err != nil {
		return err
	}
	for k, p := range set.Pushes {
		if p.T > s.cfg.MaxT {
			return fmt.Errorf("push %d: t = %d is out of range (allowed 0 … %d)", k+1, p.T, s.cfg.MaxT)
		}
	}
	return nil
}

func (s *session) digits(sp Split) *mnist.Set {
	if sp == TrainSplit {
		return s.cfg.Data.Train
	}
	return s.cfg.Data.Test
}

// maskGrid is the coarsest grid among the lanes' models, so that every
// model sees the same corrupted pixels.
func (s *session) maskGrid(lanes []string) int {
	return s.cfg.Catalogue.MaskGrid(lanes)
}

// maskOf is the seeded mask of set's digit (the session's clean digit) on
// grid with the hand-toggled patches flipped.
func (s *session) maskOf(set Settings, grid *models.Patches) []bool {
	base := set.Corruption.Apply(s.clean, grid, set.NoiseImage())
	masked := slices.Clone(base.Masked)
	for _, i := range set.Toggled {
		if i >= 0 && i < len(masked) {
			masked[i] = !masked[i]
		}
	}
	return masked
}

// sameInput reports whether the digit and corruption are unchanged.
func sameInput(a, b Settings) bool {
	return sameDigit(a, b) && a.Corruption == b.Corruption
}

// sameDigit reports whether a and b name the same clean digit.
func sameDigit(a, b Settings) bool {
	return a.Split == b.Split && a.Index == b.Index && bytes.Equal(a.Own, b.Own)
}

// NoLabel is the label of a digit that has none (a person's own).
const NoLabel = 255

// ownImage numbers a person's own digit among the corruption draws (a
// digit of the data is Index + Split<<20).
const ownImage = 3 << 20

// NoiseImage is the number of the settings' digit among the corruption
// draws (Corruption.Apply's image).
func (s Settings) NoiseImage() int {
	if s.Own != nil {
		return ownImage
	}
	return s.Index + int(s.Split)<<20
}

func (e *Engine) Step()       { e.do(func(s *session) { s.playing = false; s.advance(1) }) }
func (e *Engine) Back()       { e.do(func(s *session) { s.playing = false; s.seek(s.shownT() - 1) }) }
func (e *Engine) Play()       { e.do(func(s *session) { s.playing = true; s.dirty = true }) }
func (e *Engine) TogglePlay() { e.do(func(s *session) { s.playing = !s.playing; s.dirty = true }) }
func (e *Engine) Reset()      { e.do(func(s *session) { s.playing = false; s.seek(0) }) }
func (e *Engine) Seek(t int)  { e.do(func(s *session) { s.seek(t) }) }
func (e *Engine) SeekBest()   { e.do(func(s *session) { s.playing = false; s.seekBest() }) }

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
	if c == nil || ((c.from.Best || c.to.Best) && s.pending()) {
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

type lane struct {
	model  Model
	info   ModelInfo
	grid   *Grid // the model's tokens (nil for pixel-level models)
	in     *Corrupted
	traj   Trajectory
	frames []*Frame
	trail  *models.Trail // the nearest-memory search of the frames, in order
	br     *branch       // the pushed run (nil until its first step is recorded)
}

// branch is a lane's pushed run: a chain of fresh runs, each started at a
// push's step from the picture of the state there, edited.
type branch struct {
	traj   Trajectory // the current segment
	seg    int        // the step the current segment started at
	frames []*Frame   // from the first push's step on
	trail  *models.Trail
}

type session struct {
	cfg        EngineConfig
	set        Settings
	emit       func(*Snapshot)
	t          int
	playing    bool
	speed      float64
	seq        int
	dirty      bool
	dirtyTimer bool
	cue        *cue // a lesson's steps, waiting for the horizon
	stopAt     int  // playback stops at this step (−1: at the end)
	cueTicket  int64
	cueBusy    bool // the last cue has not played to its end
	lastPub    time.Time
	err        string

	label    uint8
	mnistIdx int
	clean    []float32
	input    []float32
	pixel    []bool
	grid     int
	gridPt   *models.Patches // the mask grid's patches
	pushed   []uint64        // the seeds of the pushes AddPush made, in order (UndoPush)
	lanes    []*lane
}

// rebuild re-corrupts the digit and restarts every lane at t = 0, keeping
// t. The settings were checked (change).
func (s *session) rebuild() {
	s.err = ""
	set := s.digits(s.set.Split)
	if own := s.set.Own; own != nil {
		s.label, s.mnistIdx = NoLabel, -1
		s.clean = mnist.CleanBytes(own, mnist.PixelGain)
	} else {
		s.label = set.Labels[s.set.Index]
		s.mnistIdx = set.Index[s.set.Index]
		s.clean = set.Clean(s.set.Index, mnist.PixelGain)
	}
	var ms []Model
	for _, name := range s.set.Lanes {
		m, err := s.cfg.Catalogue.Model(name, s.set)
		if err != nil {
			s.err = err.Error()
			continue
		}
		ms = append(ms, m)
	}
	s.grid = s.maskGrid(s.set.Lanes)
	grid, err := models.NewPatches(s.grid)
	if err != nil {
		s.err = err.Error()
		return
	}
	s.gridPt = grid
	s.input, s.pixel = slices.Clone(s.clean), nil
	if s.set.Corruption.Kind == Mask {
		s.pixel = grid.PixelMask(s.maskOf(s.set, grid))
		for q, m := range s.pixel {
			if m {
				s.input[q] = 0
			}
		}
	} else {
		s.input = s.set.Corruption.Apply(s.clean, grid, s.set.NoiseImage()).Input
	}
	// A fresh slice: the frames of dropped lanes must not stay reachable.
	s.lanes = make([]*lane, 0, len(ms))
	for _, m := range ms {
		info := m.Info()
		l := &lane{model: m, info: info}
		if info.Patch > 0 {
			if l.grid, err = models.NewPatches(info.Patch); err != nil {
				s.err = err.Error()
				continue
			}
		}
		l.in = &Corrupted{Clean: s.clean, Input: s.input, Pixel: s.pixel}
		if s.pixel != nil && l.grid != nil {
			l.in.Masked = tokensFromPixels(l.grid, s.pixel)
		}
		l.traj = m.Start(l.in)
		l.frames = append(l.frames, s.frame(l, l.traj, &l.trail, 0, nil))
		s.lanes = append(s.lanes, l)
	}
	s.seek(s.t)
	s.dirty = true
}

// InputFor is the snapshot's corrupted input as a model with tokens pt
// receives it (the masked tokens among them): what another model run on
// the same digit starts from.
func (sn *Snapshot) InputFor(pt *models.Patches) *Corrupted {
	in := &Corrupted{Clean: sn.Clean, Input: sn.RawInput, Pixel: sn.PixelMask}
	if sn.PixelMask != nil && pt != nil {
		in.Masked = tokensFromPixels(pt, sn.PixelMask)
	}
	return in
}

// tokensFromPixels marks a token masked when all its pixels are.
func tokensFromPixels(pt *models.Patches, pixel []bool) []bool {
	out := make([]bool, pt.N)
	for i := range out {
		out[i] = true
		for k := 0; k < pt.A; k++ {
			if !pixel[pt.Index[i*pt.A+k]] {
				out[i] = false
				break
			}
		}
	}
	return out
}

// frame measures the current state of tr, a run of lane l (the lane's own
// or its pushed run, whose nearest-memory search is *trail) as step t. The
// errors are against the session's clean digit and mask either way, so a
// pushed run's numbers compare with the run's.
func (s *session) frame(l *lane, tr Trajectory, trail **models.Trail, t int, attn []float32) *Frame {
	f := &Frame{T: t, Image: make([]float32, models.Pixels), Attn: attn}
	tr.Decode(f.Image)
	for q, v := range f.Image {
		f.Image[q] = min(max(v, 0), 1)
	}
	f.Energy = math.NaN()
	if l.info.HasEnergy {
		f.Energy = tr.Energy()
		if te, ok := tr.(TokenEnergies); ok {
			f.TokenEnergy = te.TokenEnergies()
		}
	}
	f.MSE, f.MSEMask, f.MSEOther = MSE(f.Image, s.clean, s.pixel)
	if mem := s.cfg.Memories; mem != nil {
		if *trail == nil {
			*trail = mem.Search().NewTrail()
		}
		k, corr := (*trail).Nearest(f.Image)
		f.Nearest, f.NearCorr, f.NearLbl = k, float64(corr), mem.Set.Labels[k]
		f.NearIdx = mem.Set.Index[k]
		f.CorrMean = Pearson(f.Image, mem.Mean)
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
// of the goal.
func (s *session) extend(n int) {
	goal := s.goal()
	for _, l := range s.lanes {
		for k := 0; k < n && len(l.frames) <= min(goal, s.limit(l)); k++ {
			s.extendLane(l)
			pause()
		}
		for k := 0; k < n && s.branchShort(l, goal); k++ {
			s.extendBranch(l)
			pause()
		}
	}
	s.dirty = true
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
	s.t = max(0, min(t, s.maxT()))
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
	l.traj.Step(attn)
	l.frames = append(l.frames, s.frame(l, l.traj, &l.trail, len(l.frames), attn))
}

// newAttn is room for the attention a step of a model like info records.
func newAttn(info ModelInfo) []float32 {
	if info.Tokens > 0 {
		return make([]float32, info.Tokens*info.Tokens*max(1, 1+info.Heads))
	} else if info.Patterns > 0 {
		return make([]float32, info.Patterns)
	}
	return nil
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
		br.traj.Step(attn)
		br.frames = append(br.frames, s.frame(l, br.traj, &br.trail, bt, attn))
		return
	}
	var base []float32
	if l.br == nil {
		for len(l.frames) <= min(bt, s.limit(l)) {
			s.extendLane(l)
		}
		base = l.frames[min(bt, len(l.frames)-1)].Image
		l.br = &branch{}
	} else {
		// The pushed run's state at bt, as its frame would show it.
		if l.info.MaxSteps == 0 || bt-l.br.seg <= l.info.MaxSteps {
			l.br.traj.Step(nil)
		}
		base = make([]float32, models.Pixels)
		l.br.traj.Decode(base)
		base = clamped(base)
	}
	in := pushedInput(s.clean, base, ps, s.gridPt, l.grid)
	l.br.traj, l.br.seg = l.model.Start(in), bt
	l.br.frames = append(l.br.frames, s.frame(l, l.br.traj, &l.br.trail, bt, nil))
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
	if len(s.lanes) == 0 {
		return
	}
	b, _ := best(s.lanes[0].frames)
	s.seek(b)
}

// best is t* = argmin over recorded t ≥ 1 of the MSE.
func best(frames []*Frame) (int, float64) {
	bt, bm := 0, math.Inf(1)
	for _, f := range frames[1:] {
		if f.MSE < bm {
			bt, bm = f.T, f.MSE
		}
	}
	if bt == 0 && len(frames) > 0 {
		return 0, frames[0].MSE
	}
	return bt, bm
}

func (s *session) snapshot() *Snapshot {
	s.seq++
	sn := &Snapshot{Seq: s.seq, Settings: s.set, Label: s.label, MNISTIdx: s.mnistIdx, Clean: s.clean,
		PixelMask: s.pixel, MaskGrid: s.grid, T: s.shownT(), Playing: s.playing, Speed: s.speed,
		Horizon: s.cfg.Horizon, Err: s.err, Cue: s.cueTicket, CueDone: !s.cueBusy}
	sn.Settings.Lanes = slices.Clone(s.set.Lanes)
	sn.Settings.Toggled = slices.Clone(s.set.Toggled)
	sn.Settings.Pushes = clonePushes(s.set.Pushes)
	sn.RawInput = s.input
	sn.Input = clamped(s.input)
	for _, l := range s.lanes {
		b, bm := best(l.frames)
		ln := Lane{Info: l.info, Grid: l.grid, Frames: l.frames[:len(l.frames):len(l.frames)], Best: b, BestMSE: bm}
		if l.br != nil {
			ln.Branch = l.br.frames[:len(l.br.frames):len(l.br.frames)]
		}
		sn.Lanes = append(sn.Lanes, ln)
	}
	return sn
}

func (s *session) publish(force bool) {
	if !s.dirty && !force {
		return
	}
	s.dirty = false
	s.lastPub = time.Now()
	s.emit(s.snapshot())
}
