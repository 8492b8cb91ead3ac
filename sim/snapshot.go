package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"attractorlab/models"
)

// What the engine publishes for drawing: snapshots, each model's lane of
// recorded frames (and its pushed run), and the answers read from them.

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
	// Attn is the attention of the step that produced At(T) (N×N; for a
	// multi-head model the head average then each head, ModelInfo.Heads;
	// the stored patterns' weights for the modern Hopfield network), and
	// BranchAttn that of BranchAt(T); nil where that step has none (t = 0,
	// a push's step, a model without attention).
	Attn, BranchAttn []float32
	// attnOf and branchAttnOf are the frames Attn and BranchAttn belong to.
	attnOf, branchAttnOf *Frame
	// attnPending and branchAttnPending: that step has attention, not
	// kept, which the engine takes when the window next idles (the page).
	attnPending, branchAttnPending bool
	// TrainedOn is the data set the model's weights were trained on ("",
	// a model that stores the run's data set: the Hopfield networks).
	TrainedOn string
}

// BranchAt returns the pushed run's frame at t: nil before the first
// push, the last recorded one past its end (the ViT's layers).
func (l *Lane) BranchAt(t int) *Frame {
	if len(l.Branch) == 0 || t < l.Branch[0].T {
		return nil
	}
	return l.Branch[min(t-l.Branch[0].T, len(l.Branch)-1)]
}

// AttnOf returns the attention of the step that produced f, one of the
// frames At(T) and BranchAt(T) of the snapshot (nil for any other frame,
// and where that step has none).
func (l *Lane) AttnOf(f *Frame) []float32 {
	switch {
	case f == nil:
		return nil
	case f == l.attnOf:
		return l.Attn
	case f == l.branchAttnOf:
		return l.BranchAttn
	}
	return nil
}

// AttnPending reports whether the step that produced f (At(T) or
// BranchAt(T)) has attention that the snapshot does not carry yet: in the
// page a step shown whose attention is not kept is drawn at once, and its
// attention comes in the next snapshot, taken while the page idles.
func (l *Lane) AttnPending(f *Frame) bool {
	return f != nil && (f == l.attnOf && l.attnPending || f == l.branchAttnOf && l.branchAttnPending)
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
	// Unrecorded is how many steps of the first look-ahead (t = 1 …
	// Horizon, or a lane's last step) some lane has not recorded yet:
	// while it is more than 0, a lane's Best is over the steps so far and
	// may still change.
	Unrecorded int
	End        int // the last step a run goes to (every lane's limit: the window's MaxT, a ViT's layers)
	Lanes      []Lane
	// Waiting are the models of Settings.Lanes still being fetched (the
	// web build fetches a model's weights when it first runs): they are
	// not in Lanes yet.
	Waiting []string
	Err     string
	Cue     int64 // the ticket of the last cue (Engine.Cue) the engine took
	CueDone bool  // that cue has played to its end (or was cancelled)
	// Source is the data set the digit comes from (Settings.Dataset's),
	// with its nearest-memory search and models. Read only.
	Source *Source
}

// ClassName is the name of class k of the snapshot's data set ("7",
// "Coat"), "" for NoLabel.
func (sn *Snapshot) ClassName(k uint8) string {
	if k == NoLabel || sn.Source == nil {
		return ""
	}
	if cs := sn.Source.Data.Classes(); int(k) < len(cs) {
		return cs[k]
	}
	return fmt.Sprint(k)
}

// Snapshot builds a snapshot now (for synchronous engines and tests).
func (e *Engine) Snapshot() *Snapshot { return e.s.snapshot() }

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

func (s *session) snapshot() *Snapshot {
	s.seq++
	sn := &Snapshot{Seq: s.seq, Settings: s.set, Label: s.label, MNISTIdx: s.mnistIdx, Clean: s.clean,
		PixelMask: s.pixel, MaskGrid: s.grid, T: s.shownT(), Playing: s.playing, Speed: s.speed,
		Horizon: s.cfg.Horizon, End: s.maxT(), Err: joinNonEmpty("; ", s.err, s.aheadWhy), Cue: s.cueTicket, CueDone: !s.cueBusy, Source: s.src}
	sn.Settings.Lanes = slices.Clone(s.set.Lanes)
	sn.Waiting = slices.Clone(s.waiting)
	sn.Settings.Toggled = slices.Clone(s.set.Toggled)
	sn.Settings.Pushes = clonePushes(s.set.Pushes)
	sn.RawInput = s.input
	sn.Input = clamped(s.input)
	budget := 1 // steps the snapshot may take again at once for attention (shownAttn)
	for _, l := range s.lanes {
		b, bm := best(l.frames)
		ln := Lane{Info: l.info, Grid: l.grid, Frames: l.frames[:len(l.frames):len(l.frames)], Best: b, BestMSE: bm, TrainedOn: l.trainedOn}
		ln.attnOf = ln.At(sn.T)
		ln.Attn, ln.attnPending = s.shownAttn(l.keep, ln.attnOf, l.info, &budget)
		if l.br != nil {
			ln.Branch = l.br.frames[:len(l.br.frames):len(l.br.frames)]
			ln.branchAttnOf = ln.BranchAt(sn.T)
			ln.BranchAttn, ln.branchAttnPending = s.shownAttn(l.br.keep, ln.branchAttnOf, l.info, &budget)
		}
		sn.Lanes = append(sn.Lanes, ln)
		sn.Unrecorded = max(sn.Unrecorded, min(s.cfg.Horizon, s.limit(l))-(len(l.frames)-1))
	}
	return sn
}

func (s *session) publish(force bool) {
	if !s.dirty && !s.grown && !force {
		return
	}
	s.dirty, s.grown = false, false
	s.lastPub = time.Now()
	s.emit(s.snapshot())
}

// joinNonEmpty joins the strings of ss that are not empty with sep.
func joinNonEmpty(sep string, ss ...string) string {
	return strings.Join(slices.DeleteFunc(ss, func(x string) bool { return x == "" }), sep)
}
