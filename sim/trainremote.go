package sim

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
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
}

// A TrainEvent is one thing a run sent elsewhere tells as it goes: an
// update's place, an epoch's statistics, a re-run of the watched digit, or
// (Done) its end, with the couplings of the last finished epoch.
type TrainEvent struct {
	Epoch, Batch int // an update's place (Batch ≥ 1)
	Stats        *EpochStats
	Reference    *DigitRun     // the shipped model's run of the digit (TrainJob.Reference)
	View         *TrainingView // its Err travels as ViewErr
	ViewErr      string
	Done         bool
	Net          []byte // safetensors, nil when no epoch finished
	Epochs       int
	Err          string // "" none; context.Canceled's text for a cancelled run
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
func RunTrainJob(ctx context.Context, job TrainJob, train, test *mnist.Set, mem *Memories, shipped *models.BSA, paused func() bool, emit func(TrainEvent)) {
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
	w := Watch{Input: job.Input, Dyn: job.Dyn, Mem: mem, Steps: job.Steps, Every: job.Every, Paused: paused,
		OnEpoch: func(st EpochStats) { emit(TrainEvent{Stats: &st}) },
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

// EncodeTrainJob, DecodeTrainJob, EncodeTrainEvent and DecodeTrainEvent
// are the wire forms.
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

// EncodeTrainEvent is an event's wire form.
func EncodeTrainEvent(e TrainEvent) ([]byte, error) { return EncodeWire(e) }

// DecodeTrainEvent reads what EncodeTrainEvent wrote.
func DecodeTrainEvent(b []byte) (TrainEvent, error) {
	return DecodeWire[TrainEvent](b, "a training run's event")
}
