package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Taking steps' attention elsewhere: in the page, a lane whose look-ahead
// a worker records (ahead.go) comes without its steps' attention, and the
// page took the attention of each step it showed again itself, from the
// state saved before it (attention.go): for bsa-p2 a step of 7 ms of the
// page's thread, a fifth of a step's work there, 30 times a second while
// playing. Where the look-ahead's remote side also takes attention (an
// AttnRemote), the engine sends it the saved state of the steps just after
// the one shown (eight steps ahead while playing) and keeps their
// attention when it comes; a step shown before its attention came takes it
// here as before. The same binary takes the same steps in the same
// arithmetic, so the attention is the bits the page would have taken
// (TestAttnRemoteSameBits).

// An AttnRemote takes steps' attention elsewhere.
type AttnRemote interface {
	// Attention takes job's steps from its state and returns each one's
	// attention, in order, blocking until they are in (or ctx ends).
	Attention(ctx context.Context, job AheadJob) ([][]float32, error)
}

// attnAhead is how many steps after the one shown have their attention
// taken elsewhere while playing (one when not: the step → shows next).
const attnAhead = 8

// RunAttnJob takes job's steps from its state here (the remote side) and
// returns each step's attention, with cat's models and mem's stored
// digits (the job's data set's).
func RunAttnJob(ctx context.Context, job AheadJob, cat *Catalogue, mem *Memories) ([][]float32, error) {
	if job.Steps < 1 || job.Steps > rewindEvery || job.From < 0 {
		return nil, fmt.Errorf("an attention job of %d steps from step %d: it takes 1 to %d steps from step 0 or later", job.Steps, job.From, rewindEvery)
	}
	m, tr, _, err := job.resume(cat, "an attention job", "its steps' attention is not taken elsewhere")
	if err != nil {
		return nil, err
	}
	info := m.Info()
	out := make([][]float32, job.Steps)
	for k := range out {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[k] = newAttn(info)
		tr.Step(out[k])
	}
	return out, nil
}

// EncodeAttention writes steps' attention (each of the same length) as it
// travels: the number of steps and each one's length, then the numbers as
// little-endian float32 (gob writes each float as a variable-length
// integer, which the page would decode number by number).
func EncodeAttention(a [][]float32) []byte {
	n := 0
	if len(a) > 0 {
		n = len(a[0])
	}
	b := make([]byte, 8, 8+4*n*len(a))
	binary.LittleEndian.PutUint32(b, uint32(len(a)))
	binary.LittleEndian.PutUint32(b[4:], uint32(n))
	for _, s := range a {
		for _, v := range s {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	return b
}

// DecodeAttention reads what EncodeAttention wrote, which must be steps
// steps of the same length (the engine checks it is the model's), every
// number finite.
func DecodeAttention(b []byte, steps int) ([][]float32, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("attention from a worker: %d bytes, cut short", len(b))
	}
	gs, gn := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:]))
	if gs != steps || gn > len(b) || len(b) != 8+4*gs*gn {
		return nil, fmt.Errorf("attention from a worker: %d steps of %d numbers in %d bytes, want %d steps", gs, gn, len(b), steps)
	}
	out := make([][]float32, steps)
	p := 8
	for k := range out {
		s := make([]float32, gn)
		for i := range s {
			v := math.Float32frombits(binary.LittleEndian.Uint32(b[p:]))
			p += 4
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("attention from a worker: step %d's number %d is %v", k+1, i, v)
			}
			s[i] = v
		}
		out[k] = s
	}
	return out, nil
}

// attnFlight is an attention job under way (Run's goroutine only).
type attnFlight struct {
	l      *lane
	cancel context.CancelFunc
	sent   time.Time
	id     uint64 // the job's, which its answer carries
}

// attnPatience is how long an attention job is waited for: then it is
// cancelled and its steps' attention is left to the page again, for good (a step
// shown meanwhile waits for it, its attention pending; a job can wait in
// the page's queue behind a long one when a worker was taken between the
// engine's asking whether one was idle and the job's start).
const attnPatience = time.Second

// attnDone is an attention job's end, for Run's goroutine.
type attnDone struct {
	id    uint64
	l     *lane
	f     *Frame // the step it was sent for
	sv    *saved
	steps int // the job's
	a     [][]float32
	err   error
}

// remoteAttn reports whether lane l's steps' attention is taken
// elsewhere: its look-ahead is (remoteAhead), the remote side takes
// attention, and no attention job has failed.
func (s *session) remoteAttn(l *lane) bool {
	if s.attnFailed || !s.remoteAhead(l) {
		return false
	}
	_, ok := s.cfg.Ahead.(AttnRemote)
	return ok
}

// sendAttn sends, for each lane whose attention is taken elsewhere, the
// steps from the one shown to the next (attnAhead of them while playing)
// whose attention is not kept nor under way: one job for a saved state,
// taking its steps up to the last of them recorded. It cancels the jobs of
// lanes the session no longer has, and those waited for attnPatience.
func (e *Engine) sendAttn(ctx context.Context) {
	s := e.s
	for sv, f := range s.attnFlights {
		gone := !slices.Contains(s.lanes, f.l)
		if gone || time.Since(f.sent) >= attnPatience {
			f.cancel()
			delete(s.attnFlights, sv)
			if !gone {
				// Its steps' attention is the page's from now on.
				if s.attnGivenUp == nil {
					s.attnGivenUp = map[*saved]*lane{}
				}
				s.attnGivenUp[sv] = f.l
			}
		}
	}
	for sv, l := range s.attnGivenUp {
		if !slices.Contains(s.lanes, l) {
			delete(s.attnGivenUp, sv)
		}
	}
	remote, _ := s.cfg.Ahead.(AttnRemote)
	if remote == nil {
		return
	}
	t := s.shownT()
	n := 1
	if s.playing {
		n = attnAhead
	}
	// Where the remote side says whether a worker is idle (AheadWarmer,
	// the page), one job at a time goes, to an idle worker: a worker
	// started for it would hold the page's memory (90 MB each), and the
	// step can still take its attention here.
	warmer, _ := remote.(AheadWarmer)
	if warmer != nil && len(s.attnFlights) > 0 {
		return
	}
	for _, l := range s.lanes {
		if !s.remoteAttn(l) {
			continue
		}
		for k := t; k <= t+n && k < len(l.frames); k++ {
			f := l.frames[k]
			if f.from == nil || l.keep.kept[f] != nil {
				continue
			}
			sv := f.from.saved
			if _, busy := s.attnFlights[sv]; busy || s.attnGivenUp[sv] != nil {
				continue
			}
			r, ok := f.from.src.(wireRewinder)
			if !ok {
				continue
			}
			if warmer != nil && !warmer.Warm() {
				return
			}
			last := f.from.steps
			for i := last + 1; i < rewindEvery; i++ {
				if sv.frames[i] != nil {
					last = i
				}
			}
			job := s.jobFor(l, f.T-f.from.steps-1, r.toWire(sv.state), last+1)
			jctx, cancel := context.WithCancel(ctx)
			if s.attnFlights == nil {
				s.attnFlights = map[*saved]attnFlight{}
			}
			s.attnJobs++
			id := s.attnJobs
			s.attnFlights[sv] = attnFlight{l: l, cancel: cancel, sent: time.Now(), id: id}
			go func() {
				a, err := remote.Attention(jctx, job)
				select {
				case e.attnDone <- attnDone{id: id, l: l, f: f, sv: sv, steps: job.Steps, a: a, err: err}:
				case <-jctx.Done():
				}
			}()
			if warmer != nil {
				return
			}
		}
	}
}

// joinAttn keeps the attention a job brought for the steps of its saved
// state that are still the lane's and not kept, and publishes a snapshot
// when the step shown is among them. After a failed job (not a cancelled
// one), or an answer of the wrong size, attention is taken here from then
// on.
func (e *Engine) joinAttn(d attnDone) {
	s := e.s
	f, ok := s.attnFlights[d.sv]
	if !ok || f.id != d.id {
		return // given up, or its lane gone: another job may be under way for its steps
	}
	f.cancel()
	delete(s.attnFlights, d.sv)
	if d.err != nil {
		if !errors.Is(d.err, context.Canceled) {
			s.attnFailed = true
		}
		return
	}
	l := d.l
	if !slices.Contains(s.lanes, l) {
		return
	}
	n := attnLen(l.info)
	if len(d.a) != d.steps {
		s.attnFailed = true
		return
	}
	shown := s.shownT()
	for i, a := range d.a {
		if len(a) != n {
			s.attnFailed = true
			return
		}
		g := d.sv.frames[i]
		if i == d.f.from.steps {
			g = d.f
		}
		if g == nil || g.from == nil || g.from.saved != d.sv || l.keep.kept[g] != nil {
			continue
		}
		if g.T >= len(l.frames) || l.frames[g.T] != g {
			continue // not the lane's step any more
		}
		l.keep.add(g, a)
		e.attnJoined.Add(1)
		if g.T == min(shown, len(l.frames)-1) {
			s.dirty = true
		}
	}
}
