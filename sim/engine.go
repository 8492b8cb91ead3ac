package sim

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"attractorlab/models"
)

// Split selects the training subset or the test digits.
type Split int

const (
	TestSplit Split = iota
	TrainSplit
)

func (s Split) String() string {
	if s == TrainSplit {
		return "train"
	}
	return "test"
}

// Settings are what a user chooses; a scenario file stores them.
type Settings struct {
	Split      Split
	Index      int
	Corruption Corruption
	// Toggled lists patches (on the mask grid) the user flipped by hand
	// after the seeded mask was drawn.
	Toggled []int
	Lanes   []string // model names, 1–4
	Dyn     models.Dynamics
	Hop     HopfieldParams
}

// Lane is one model's recorded trajectory in a snapshot.
type Lane struct {
	Info    ModelInfo
	Frames  []*Frame // t = 0 … recorded; never modified
	Best    int      // t* over the recorded t ≥ 1
	BestMSE float64
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
	PixelMask []bool    // masked pixels (nil for noise)
	MaskGrid  int       // patch side the mask is drawn on
	T         int
	Playing   bool
	Speed     float64 // steps per second
	Horizon   int
	Lanes     []Lane
	Err       string
}

// Engine owns a session's state and steps its models in one goroutine. UI
// code sends commands through its methods (safe from any goroutine) and
// draws the snapshots it publishes, at most MaxFPS a second.
type Engine struct {
	cmds   chan func(*session)
	s      *session
	sync   bool
	OnSnap func(*Snapshot)
}

// MaxFPS caps how often snapshots are published.
const MaxFPS = 60

// EngineConfig wires an engine to its data and models.
type EngineConfig struct {
	Data     *Data
	Memories *Memories
	Models   []Model // the catalogue, in menu order
	Settings Settings
	Horizon  int // steps recorded ahead so t* is known (default 100)
	MaxT     int // last step a user may reach (default 1000)
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
	s := &session{cfg: cfg, speed: 10, set: cfg.Settings}
	if len(s.set.Lanes) == 0 && len(cfg.Models) > 0 {
		s.set.Lanes = []string{cfg.Models[0].Info().Name}
	}
	if s.set.Dyn == (models.Dynamics{}) {
		s.set.Dyn = models.DefaultDynamics()
	}
	if s.set.Hop == (HopfieldParams{}) {
		s.set.Hop = DefaultHopfield()
	}
	e := &Engine{cmds: make(chan func(*session), 256), s: s, sync: cfg.Synchronous, OnSnap: cfg.OnSnap}
	s.emit = func(sn *Snapshot) {
		if e.OnSnap != nil {
			e.OnSnap(sn)
		}
	}
	s.rebuild()
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
			f(s)
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

func (e *Engine) Update(f func(*Settings)) {
	e.do(func(s *session) {
		old := s.set
		f(&s.set)
		s.set.Lanes = slices.Clone(s.set.Lanes)
		if !sameInput(old, s.set) {
			// A new digit or corruption starts its trajectory at t = 0.
			s.set.Toggled = nil
			s.t = 0
		}
		s.rebuild()
	})
}

// Restore sets every setting and t exactly (opening a scenario).
func (e *Engine) Restore(set Settings, t int) {
	e.do(func(s *session) {
		s.set = set
		s.set.Lanes = slices.Clone(set.Lanes)
		s.set.Toggled = slices.Clone(set.Toggled)
		s.playing = false
		s.rebuild()
		s.seek(t)
	})
}

// sameInput reports whether the digit and corruption are unchanged.
func sameInput(a, b Settings) bool {
	return a.Split == b.Split && a.Index == b.Index && a.Corruption == b.Corruption
}

func (e *Engine) Step()       { e.do(func(s *session) { s.playing = false; s.advance(1) }) }
func (e *Engine) Back()       { e.do(func(s *session) { s.playing = false; s.seek(s.shownT() - 1) }) }
func (e *Engine) Play()       { e.do(func(s *session) { s.playing = true; s.dirty = true }) }
func (e *Engine) Pause()      { e.do(func(s *session) { s.playing = false; s.dirty = true }) }
func (e *Engine) TogglePlay() { e.do(func(s *session) { s.playing = !s.playing; s.dirty = true }) }
func (e *Engine) Reset()      { e.do(func(s *session) { s.playing = false; s.seek(0) }) }
func (e *Engine) Seek(t int)  { e.do(func(s *session) { s.seek(t) }) }
func (e *Engine) SeekBest()   { e.do(func(s *session) { s.playing = false; s.seekBest() }) }
func (e *Engine) SetSpeed(v float64) {
	e.do(func(s *session) { s.speed = max(0.5, min(v, 240)); s.dirty = true })
}

// TogglePatch masks or unmasks patch i of the mask grid.
func (e *Engine) TogglePatch(i int) {
	e.do(func(s *session) {
		if k := slices.Index(s.set.Toggled, i); k >= 0 {
			s.set.Toggled = slices.Delete(slices.Clone(s.set.Toggled), k, k+1)
		} else {
			s.set.Toggled = append(slices.Clone(s.set.Toggled), i)
		}
		s.rebuild()
	})
}

type lane struct {
	model  Model
	info   ModelInfo
	pt     *models.Patches // the model's tokens (nil for pixel models)
	in     *Corrupted
	traj   Trajectory
	frames []*Frame
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
	lastPub    time.Time
	err        string

	label    uint8
	mnistIdx int
	clean    []float32
	input    []float32
	pixel    []bool
	grid     int
	lanes    []*lane
}

func (s *session) find(name string) Model {
	for _, m := range s.cfg.Models {
		if m.Info().Name == name {
			return m
		}
	}
	return nil
}

// rebuild re-corrupts the digit and restarts every lane at t = 0, keeping t.
func (s *session) rebuild() {
	s.err = ""
	set := s.cfg.Data.Test
	if s.set.Split == TrainSplit {
		set = s.cfg.Data.Train
	}
	if s.set.Index < 0 || s.set.Index >= set.Len() {
		s.err = fmt.Sprintf("digit %d is out of range 0..%d", s.set.Index, set.Len()-1)
		s.set.Index = max(0, min(s.set.Index, set.Len()-1))
	}
	if err := s.set.Dyn.Validate(); err != nil {
		s.err = err.Error()
		s.set.Dyn = models.DefaultDynamics()
	}
	s.label = set.Labels[s.set.Index]
	s.mnistIdx = set.Index[s.set.Index]
	s.clean = set.Clean(s.set.Index, PixelGain)
	var ms []Model
	for _, name := range s.set.Lanes {
		if m := s.find(name); m != nil && len(ms) < 4 {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 && len(s.cfg.Models) > 0 {
		ms = []Model{s.cfg.Models[0]}
	}
	s.set.Lanes = s.set.Lanes[:0:0]
	// Masks are drawn on the coarsest grid of the lanes, so every model
	// sees the same corrupted pixels.
	s.grid = 0
	for _, m := range ms {
		s.grid = max(s.grid, m.Info().Patch)
		s.set.Lanes = append(s.set.Lanes, m.Info().Name)
	}
	if s.grid == 0 {
		s.grid = 2
	}
	pt, _ := models.NewPatches(s.grid)
	base := s.set.Corruption.Apply(s.clean, pt, s.set.Index+int(s.set.Split)<<20)
	s.input, s.pixel = base.Input, nil
	if s.set.Corruption.Kind == Mask {
		masked := slices.Clone(base.Masked)
		for _, i := range s.set.Toggled {
			if i >= 0 && i < len(masked) {
				masked[i] = !masked[i]
			}
		}
		s.pixel = pt.PixelMask(masked)
		s.input = slices.Clone(s.clean)
		for q, m := range s.pixel {
			if m {
				s.input[q] = 0
			}
		}
	}
	s.lanes = s.lanes[:0]
	for _, m := range ms {
		info := m.Info()
		in := &Corrupted{Clean: s.clean, Input: s.input, Pixel: s.pixel}
		if s.pixel != nil && info.Patch > 0 {
			lp, _ := models.NewPatches(info.Patch)
			in.Masked = tokensFromPixels(lp, s.pixel)
		}
		l := &lane{model: m, info: info, in: in, traj: m.Start(in, s.set)}
		if info.Patch > 0 {
			l.pt, _ = models.NewPatches(info.Patch)
		}
		l.frames = append(l.frames, s.frame(l, 0, nil))
		s.lanes = append(s.lanes, l)
	}
	s.seek(s.t)
	s.dirty = true
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

// frame measures the lane's current state as step t.
func (s *session) frame(l *lane, t int, attn []float32) *Frame {
	f := &Frame{T: t, Image: make([]float32, models.Pixels), Attn: attn}
	l.traj.Decode(f.Image)
	for q, v := range f.Image {
		f.Image[q] = min(max(v, 0), 1)
	}
	f.Energy = math.NaN()
	if l.info.HasEnergy {
		f.Energy = l.traj.Energy()
	}
	f.MSE, f.MSEMask, f.MSEOther = MSE(f.Image, s.clean, s.pixel)
	if mem := s.cfg.Memories; mem != nil {
		idx, corr := []int{0}, []float32{0}
		mem.Mem.Nearest([][]float32{f.Image}, idx, corr)
		f.Nearest, f.NearCorr, f.NearLbl = idx[0], float64(corr[0]), mem.Set.Labels[idx[0]]
		f.CorrMean = Pearson(f.Image, mem.Mean)
	}
	if pt := l.pt; pt != nil {
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

// extend records up to n more steps of every lane short of the goal.
func (s *session) extend(n int) {
	goal := s.goal()
	for _, l := range s.lanes {
		for k := 0; k < n && len(l.frames) <= min(goal, s.limit(l)); k++ {
			s.extendLane(l)
		}
	}
	s.dirty = true
}

// pending reports whether the horizon is not recorded yet.
func (s *session) pending() bool {
	goal := s.goal()
	for _, l := range s.lanes {
		if len(l.frames) <= min(goal, s.limit(l)) {
			return true
		}
	}
	return false
}

func (s *session) maxT() int {
	m := 0
	for _, l := range s.lanes {
		m = max(m, s.limit(l))
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
	}
	return t
}

func (s *session) extendLane(l *lane) {
	var attn []float32
	if l.info.Tokens > 0 {
		attn = make([]float32, l.info.Tokens*l.info.Tokens*max(1, 1+l.info.Heads))
	} else if l.info.Patterns > 0 {
		attn = make([]float32, l.info.Patterns)
	}
	l.traj.Step(attn)
	l.frames = append(l.frames, s.frame(l, len(l.frames), attn))
}

func (s *session) advance(n int) {
	if s.t+n > s.maxT() {
		s.playing = false
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
		Horizon: s.cfg.Horizon, Err: s.err}
	sn.Settings.Lanes = slices.Clone(s.set.Lanes)
	sn.Settings.Toggled = slices.Clone(s.set.Toggled)
	sn.Input = make([]float32, len(s.input))
	for q, v := range s.input {
		sn.Input[q] = min(max(v, 0), 1)
	}
	for _, l := range s.lanes {
		b, bm := best(l.frames)
		sn.Lanes = append(sn.Lanes, Lane{Info: l.info, Frames: l.frames[:len(l.frames):len(l.frames)], Best: b, BestMSE: bm})
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
