package sim

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// A TrainJob is a live training run (TrainWatched) sent elsewhere: the web
// build's Web Workers, so that the page's thread only draws. The couplings
// it starts from travel as a safetensors file, the watched digit as it is.
type TrainJob struct {
	Training BSATraining // its Start is sent as Start below; funcs are not sent
	Start    []byte      // safetensors of Training.Start (nil: new couplings from the seed)
	Dataset  string      // whose training and test pictures: "" MNIST's sample
	Input    *Corrupted  // the watched digit
	Dyn      models.Dynamics
	Steps    int
	Every    time.Duration
	// Reference: first re-run the digit with the shipped model of the
	// run's patch side, for comparison (TrainEvent.Reference).
	Reference bool
	// Preview: train nothing; only view the shipped model of the patch
	// side (Watch.View: the re-run digit and the couplings' norms), sent
	// as one View event before Done — what the window shows before a run.
	Preview bool
	// ValHere, between 1 and the validation's digits less one, has the
	// run validate only its first ValHere digits after each epoch and send
	// the rest out with the epoch's statistics (TrainEvent.ValRest), so
	// that other workers validate them while it trains on; 0 validates
	// every digit here.
	ValHere int
	// ValOthers is how many workers validate the rest of each epoch's
	// digits. Given (with ValHere), the run sets its share for the next
	// epoch from the last one's times (ValShare), so that its training and
	// its share end about when the others' validation of the rest does.
	ValOthers int
}

// ValShare is how many of an epoch's n validation digits the training
// run validates itself, when others validate the rest at once on as many
// workers while it trains the next epoch: its training (train long) and
// its share end when their parts do, a digit taking perDigit anywhere:
// train + h·perDigit = (n − h)·perDigit/others. It is between 1 and n − 1.
// The split changes no number (ValidationRest.Finish).
func ValShare(n, others int, train, perDigit time.Duration) int {
	if n < 2 {
		return max(n, 0)
	}
	h := 1
	if others > 0 && perDigit > 0 {
		v, k := float64(perDigit), float64(others)
		h = int(math.Round((float64(n)*v - k*float64(train)) / (v * (k + 1))))
	}
	return min(max(h, 1), n-1)
}

// ValidationRest is what an epoch's validation left to do elsewhere: the
// epoch's couplings (safetensors), the errors of the digits validated
// (0 … From−1) and the digits left (From … From+N−1). The epoch's
// statistics wait for them (Finish).
type ValidationRest struct {
	Net     []byte
	Errs    []float64
	From, N int
	Seed    uint64
	Attn    models.AttnKind
}

// Parts cuts the digits left into k consecutive validation parts on
// dataset's test pictures (fewer when there are fewer digits).
func (r *ValidationRest) Parts(dataset string, k int) []ValidationPart {
	var out []ValidationPart
	k = max(1, min(k, r.N))
	for i := range k {
		lo, hi := r.From+r.N*i/k, r.From+r.N*(i+1)/k
		out = append(out, ValidationPart{Net: r.Net, Dataset: dataset, From: lo, N: hi - lo, Seed: r.Seed, Attn: r.Attn})
	}
	return out
}

// Finish is the validation's value (ValidateBSA's) from the errors of the
// parts left, given in order.
func (r *ValidationRest) Finish(parts ...[]float64) float64 {
	errs := append([]float64(nil), r.Errs...)
	for _, p := range parts {
		errs = append(errs, p...)
	}
	return MeanValidation(errs)
}

// A ValidationPart is digits From … From+N−1 of an epoch's validation,
// validated elsewhere (a worker of the page).
type ValidationPart struct {
	Net     []byte // the epoch's couplings, safetensors
	Dataset string // whose test pictures: "" MNIST's sample
	From, N int
	Seed    uint64
	Attn    models.AttnKind
}

// Run validates the part's digits of test, one by one on one goroutine.
// A part of no digits has nothing to validate: the page sends one to
// each worker it will validate in as a training run starts, so that the
// worker has started and read its pictures by the first epoch's end.
func (p ValidationPart) Run(ctx context.Context, test *mnist.Set) ([]float64, error) {
	if p.From < 0 || p.N < 0 || p.From+p.N > test.Len() {
		return nil, fmt.Errorf("validation digits %d to %d: the test pictures are 0 … %d", p.From, p.From+p.N-1, test.Len()-1)
	}
	if p.N == 0 {
		return []float64{}, nil
	}
	m, err := models.ParseBSA(p.Net, "the couplings to validate")
	if err != nil {
		return nil, err
	}
	return ValidationErrs(ctx, m, test, p.From, p.N, p.Seed, p.Attn, 1)
}

// A TrainEvent is one thing a run sent elsewhere tells as it goes: an
// update's place, an epoch's statistics, a re-run of the watched digit, or
// (Done) its end, with the couplings of the last finished epoch.
type TrainEvent struct {
	Epoch, Batch int // an update's place (Batch ≥ 1)
	Stats        *EpochStats
	// ValRest is the rest of Stats' validation (TrainJob.ValHere): Stats'
	// ValMSE is ValRest.Finish of its parts' errors, NaN until then.
	ValRest   *ValidationRest
	Reference *DigitRun     // the shipped model's run of the digit (TrainJob.Reference)
	View      *TrainingView // its Err travels as ViewErr
	ViewErr   string
	Done      bool
	Net       []byte // safetensors, nil when no epoch finished
	Epochs    int
	Err       string // "" none; context.Canceled's text for a cancelled run
}

// A TrainRemote runs training jobs elsewhere: Train calls w's callbacks as
// the run's events come, polls w.Paused, and returns what TrainWatched
// would have (after Cancel too: the finished epochs' couplings).
type TrainRemote interface {
	Train(ctx context.Context, job TrainJob, w Watch) (*models.BSA, int, error)
}

// NewTrainJob is the job of training s on dataset's pictures, watching
// w's digit.
func NewTrainJob(s BSATraining, dataset string, w Watch) (TrainJob, error) {
	j := TrainJob{Training: s, Dataset: dataset, Input: w.Input, Dyn: w.Dyn, Steps: w.Steps, Every: w.Every}
	if s.Start != nil {
		var b bytes.Buffer
		if err := s.Start.WriteBSA(&b); err != nil {
			return TrainJob{}, err
		}
		j.Start, j.Training.Start = b.Bytes(), nil
	}
	j.Training.Batched, j.Training.Config.Validate = nil, nil
	return j, nil
}

// RunTrainJob runs job here on train and test (the remote side), with mem
// for the watched digit's nearest memories, telling emit each event, the
// last one Done. paused holds the run while it is true. shipped is the
// shipped model of the run's patch side (for job.Reference; nil: none).
// emit is called once at a time (the re-runs of the digit are told from
// a goroutine of their own), so that it can write one stream in order.
func RunTrainJob(ctx context.Context, job TrainJob, train, test *mnist.Set, mem *Memories, shipped *models.BSA, paused func() bool, emit func(TrainEvent)) {
	var emitting sync.Mutex
	tell := emit
	emit = func(e TrainEvent) {
		emitting.Lock()
		defer emitting.Unlock()
		tell(e)
	}
	if job.Preview {
		if shipped == nil {
			emit(TrainEvent{Done: true, Err: fmt.Sprintf("no shipped P = %d model to preview", job.Training.Patch)})
			return
		}
		w := Watch{Input: job.Input, Dyn: job.Dyn, Mem: mem, Steps: job.Steps}
		v := w.View(ctx, shipped)
		e := TrainEvent{View: &v}
		if v.Err != nil {
			e.ViewErr, v.Err = v.Err.Error(), nil
		}
		emit(e)
		emit(TrainEvent{Done: true})
		return
	}
	if job.Reference && shipped != nil {
		if r, err := RunDigit(ctx, shipped, job.Dyn, job.Input, mem, job.Steps); err == nil {
			emit(TrainEvent{Reference: &r})
		}
	}
	s := job.Training
	if job.Start != nil {
		net, err := models.ParseBSA(job.Start, "the couplings to train further")
		if err != nil {
			emit(TrainEvent{Done: true, Err: err.Error()})
			return
		}
		s.Start = net
	}
	var rest *ValidationRest // the last epoch's, from its Validator to its OnEpoch
	if n := min(s.Val, test.Len()); !s.SkipVal && job.ValHere > 0 && job.ValHere < n {
		here, trained := job.ValHere, time.Now()
		s.Validator = func(m *models.BSA) float64 {
			began := time.Now()
			errs, _ := ValidationErrs(context.Background(), m, test, 0, here, 1, s.Attn, 1)
			var b bytes.Buffer
			if err := m.WriteBSA(&b); err != nil {
				rest = nil
				return ValidateBSA(m, test, s.Val, 1, s.Attn, 1) // all of it here, then
			}
			rest = &ValidationRest{Net: b.Bytes(), Errs: errs, From: here, N: n - here, Seed: 1, Attn: s.Attn}
			if job.ValOthers > 0 && len(errs) > 0 {
				here = ValShare(n, job.ValOthers, began.Sub(trained), time.Since(began)/time.Duration(len(errs)))
			}
			trained = time.Now()
			return math.NaN()
		}
	}
	w := Watch{Input: job.Input, Dyn: job.Dyn, Mem: mem, Steps: job.Steps, Every: job.Every, Paused: paused,
		OnEpoch: func(st EpochStats) {
			emit(TrainEvent{Stats: &st, ValRest: rest})
			rest = nil
		},
		OnBatch: func(epoch, batch int) { emit(TrainEvent{Epoch: epoch, Batch: batch}) },
		OnView: func(v TrainingView) {
			e := TrainEvent{View: &v}
			if v.Err != nil {
				e.ViewErr, v.Err = v.Err.Error(), nil
			}
			emit(e)
		},
	}
	net, epochs, err := TrainWatched(ctx, train, test, s, w)
	end := TrainEvent{Done: true, Epochs: epochs}
	if err != nil {
		end.Err = err.Error()
	}
	if net != nil {
		var b bytes.Buffer
		if werr := net.WriteBSA(&b); werr != nil {
			end.Err = werr.Error()
		} else {
			end.Net = b.Bytes()
		}
	}
	emit(end)
}

// Tell hands an event to w's callbacks. For the Done event it returns
// the run's result, as TrainWatched returns it (a cancelled run's error is
// context.Canceled), and true.
func (e TrainEvent) Tell(w Watch) (net *models.BSA, epochs int, err error, done bool) {
	switch {
	case e.Done:
		if e.Err == context.Canceled.Error() {
			err = context.Canceled
		} else if e.Err != "" {
			err = errors.New(e.Err)
		}
		if e.Net != nil {
			var perr error
			if net, perr = models.ParseBSA(e.Net, "the trained couplings"); perr != nil {
				return nil, e.Epochs, perr, true
			}
		}
		return net, e.Epochs, err, true
	case e.Reference != nil:
		if w.OnReference != nil {
			w.OnReference(*e.Reference)
		}
	case e.Stats != nil:
		if w.OnEpoch != nil {
			w.OnEpoch(*e.Stats)
		}
	case e.View != nil:
		v := *e.View
		if e.ViewErr != "" {
			v.Err = errors.New(e.ViewErr)
		}
		if w.OnView != nil {
			w.OnView(v)
		}
	case e.Batch > 0:
		if w.OnBatch != nil {
			w.OnBatch(e.Epoch, e.Batch)
		}
	}
	return nil, 0, nil, false
}

// EncodeWire is a job's or an answer's form between the page and its
// workers: gob, in which floats (NaN among them) pass bit for bit.
func EncodeWire(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// DecodeWire reads what EncodeWire wrote; what names the thing in the
// error ("a training job").
func DecodeWire[T any](b []byte, what string) (T, error) {
	var v T
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&v); err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}

// EncodeTrainJob and DecodeTrainJob are a job's wire form; a run's
// events travel as a TrainEventWriter's stream.
func EncodeTrainJob(j TrainJob) ([]byte, error) { return EncodeWire(j) }

// DecodeTrainJob reads what EncodeTrainJob wrote.
func DecodeTrainJob(b []byte) (TrainJob, error) {
	j, err := DecodeWire[TrainJob](b, "a training job")
	if err != nil {
		return TrainJob{}, err
	}
	if j.Input == nil || len(j.Input.Clean) != models.Pixels || len(j.Input.Input) != models.Pixels {
		return TrainJob{}, fmt.Errorf("a training job: its watched digit is not %d pixels", models.Pixels)
	}
	return j, nil
}

// A TrainEventWriter is the worker's side of a training run's events: one
// gob stream for the whole run, so that each type is described once, in
// the first message that has it, and the page's reader compiles its
// decoder for it once (a gob decoder made for each message compiled it
// every time: 0.16 ms for an update's place in WebAssembly, most of it).
// The epoch's couplings that a validation elsewhere needs (ValRest.Net,
// 9.8 MB at P = 2) travel beside the stream, so that the page can hand
// them on to the validating workers as they are, without decoding them and
// encoding them again.
type TrainEventWriter struct {
	buf bytes.Buffer
	enc *gob.Encoder
}

// NewTrainEventWriter starts a run's stream.
func NewTrainEventWriter() *TrainEventWriter {
	w := &TrainEventWriter{}
	w.enc = gob.NewEncoder(&w.buf)
	return w
}

// Encode is e's message: its bytes in the stream and, apart, the
// couplings of its validation's rest (nil for none). The reader must
// decode every message, in order.
func (w *TrainEventWriter) Encode(e TrainEvent) (wire, net []byte, err error) {
	if e.ValRest != nil {
		rest := *e.ValRest
		net, rest.Net = rest.Net, nil
		e.ValRest = &rest
	}
	w.buf.Reset()
	if err := w.enc.Encode(e); err != nil {
		return nil, nil, err
	}
	return bytes.Clone(w.buf.Bytes()), net, nil
}

// A TrainEventReader is the page's side of a TrainEventWriter's stream.
type TrainEventReader struct {
	msg bytes.Reader
	dec *gob.Decoder
}

// NewTrainEventReader reads a new run's stream.
func NewTrainEventReader() *TrainEventReader {
	r := &TrainEventReader{}
	r.dec = gob.NewDecoder(&r.msg) // a bytes.Reader is a ByteReader: gob reads no further than a message
	return r
}

// Decode reads the next message, all of it: one event, whose ValRest (if
// any) has its couplings, Net, still to be set from what came beside it.
func (r *TrainEventReader) Decode(b []byte) (TrainEvent, error) {
	r.msg.Reset(b)
	var e TrainEvent
	if err := r.dec.Decode(&e); err != nil {
		return TrainEvent{}, fmt.Errorf("a training run's event: %w", err)
	}
	if n := r.msg.Len(); n > 0 {
		return TrainEvent{}, fmt.Errorf("a training run's event: %d bytes left over after it", n)
	}
	return e, nil
}
