package sim

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// The session the engine owns: its settings, how a change is checked and
// applied, and the digit and input a rebuild makes from them.

// change applies f to a copy of the settings and rebuilds the session when
// the result is valid; it reports whether it did. keepToggled keeps the
// hand-toggled patches even when the input changes (a restored scenario).
func (s *session) change(f func(*Settings), keepToggled bool) bool {
	// Why the look-ahead is recorded here was said until now (a rebuild
	// when fetched weights come does not end it).
	s.aheadWhy = ""
	// A model whose weights could not be fetched is fetched again.
	s.home.Catalogue.Retry()
	s.src.Catalogue.Retry()
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

// check refuses settings the session cannot run.
func (s *session) check(set Settings) error {
	if err := set.Validate(ViaName); err != nil {
		return err
	}
	src, err := s.source(set.Dataset)
	if err != nil {
		return err
	}
	if n := digitsOf(src, set.Split).Len(); set.Index >= n {
		return fmt.Errorf("digit %d is out of range: the %s split has digits 0 … %d", set.Index, set.Split, n-1)
	}
	for _, name := range set.Lanes {
		if err := src.Catalogue.Usable(name, set); err != nil {
			return err
		}
	}
	if err := set.CheckMask(src.Catalogue.MaskGrid(set.Lanes), ViaName); err != nil {
		return err
	}
	for k, p := range set.Pushes {
		if p.T > s.cfg.MaxT {
			return fmt.Errorf("push %d: t = %d is out of range (allowed 0 … %d)", k+1, p.T, s.cfg.MaxT)
		}
	}
	return nil
}

func (s *session) digits(sp Split) *mnist.Set { return digitsOf(s.src, sp) }

// digitsOf is a split of a source's data set.
func digitsOf(src *Source, sp Split) *mnist.Set {
	if sp == TrainSplit {
		return src.Data.Train
	}
	return src.Data.Test
}

// maskGrid is the coarsest grid among the lanes' models, so that every
// model sees the same corrupted pixels.
func (s *session) maskGrid(lanes []string) int {
	return s.src.Catalogue.MaskGrid(lanes)
}

// source is the Source of a data set: the engine's own when its data is
// that set, else the one EngineConfig.Sources gives (which keeps what it
// opened, and opens a folder converted again anew).
func (s *session) source(dataset string) (*Source, error) {
	name := canonicalDataset(dataset)
	if name == canonicalDataset(s.cfg.Data.Name()) {
		return s.home, nil
	}
	if s.cfg.Sources == nil {
		return nil, fmt.Errorf("%s is not open here: this window runs %s", mnist.DatasetLabel(dataset), mnist.DatasetLabel(s.cfg.Data.Name()))
	}
	return s.cfg.Sources(mnist.DatasetOrMNIST(name))
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
	return a.Split == b.Split && a.Index == b.Index && bytes.Equal(a.Own, b.Own) &&
		canonicalDataset(a.Dataset) == canonicalDataset(b.Dataset)
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

type session struct {
	cfg EngineConfig
	// deferAttn: a snapshot leaves the attention of a step it shows that
	// is not kept for the window's next idle moment (the page; attention.go).
	deferAttn bool
	// home is the engine's own data set (cfg's), src the one the
	// settings name.
	home, src  *Source
	set        Settings
	emit       func(*Snapshot)
	t          int
	playing    bool
	speed      float64
	seq        int
	dirty      bool
	grown      bool // only the look-ahead grew since the last snapshot: published every growEvery
	dirtyTimer bool
	flushAt    time.Time // when the armed flush timer fires
	cue        *cue      // a lesson's steps, waiting for the horizon
	stopAt     int       // playback stops at this step (−1: at the end)
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
	// waiting are the settings' models whose weights the web build is
	// still fetching (Catalogue.Waiting), in lane order: they join the
	// lanes when the fetch ends (Engine.Run fetches them).
	waiting []string
	// aheadWarm: the engine's AheadRemote has answered a job (or said it
	// is ready, AheadWarmer); aheadFailed:
	// one of its jobs failed, and every lane is recorded here from then
	// on, aheadWhy saying why until the next change; aheadTook: how long
	// the last answer took; aheadMin: its tests' aheadPatience (ahead.go).
	aheadWarm, aheadFailed bool
	aheadWhy               string
	aheadTook, aheadMin    time.Duration
	// attnFlights are the attention jobs under way elsewhere, by the saved
	// state whose steps they take; attnFailed: one failed, and attention
	// is taken here from then on (attnremote.go).
	attnFlights map[*saved]attnFlight
	attnFailed  bool
	// attnGivenUp are the saved states whose job was given up
	// (attnPatience), by lane: their steps' attention is taken here;
	// attnJobs counts the jobs sent (their ids).
	attnGivenUp map[*saved]*lane
	attnJobs    uint64
}

// rebuild re-corrupts the digit and restarts every lane at t = 0, keeping
// t. The settings were checked (change).
func (s *session) rebuild() {
	s.err = ""
	if src, err := s.source(s.set.Dataset); err == nil {
		s.src = src
	}
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
	s.waiting = nil
	for _, name := range s.set.Lanes {
		if !s.cfg.Synchronous && s.src.Catalogue.Waiting(name) {
			// The window is drawn meanwhile: the digit, its input and
			// the lanes whose models are at hand.
			s.waiting = append(s.waiting, name)
			continue
		}
		m, err := s.src.Catalogue.Model(name, s.set)
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
		l := &lane{model: m, info: info, trainedOn: TrainedOn(m, s.set.Corruption.Kind), keep: newAttnKeep(s.keepLimit(nil))}
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
		l.keep.limit = s.keepLimit(l)
		l.frames = append(l.frames, s.frame(l, l.traj, &l.trail, 0, nil))
		s.lanes = append(s.lanes, l)
	}
	s.seek(s.t)
	s.dirty = true
}
