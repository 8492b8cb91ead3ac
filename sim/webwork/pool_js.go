//go:build js

package webwork

import (
	"context"
	"errors"
	"fmt"
	"syscall/js"
	"time"

	"attractorlab/models"
	"attractorlab/sim"
	"attractorlab/sim/sweep"
)

// Pool is the page's workers (attractorlab.job): a sweep.Remote, a
// sim.TrainRemote, a sim.AheadRemote and a sim.StateSpaceRemote.
type Pool struct{ page js.Value }

// NewPool returns the page's workers, or nil when the page runs none (a
// browser without Web Workers, or a page older than them): the jobs then
// run on the page's thread, pausing for it.
func NewPool() *Pool {
	page := js.Global().Get("attractorlab")
	if page.IsUndefined() || page.Get("job").Type() != js.TypeFunction || js.Global().Get("Worker").IsUndefined() {
		return nil
	}
	return &Pool{page: page}
}

// Warm reports whether a worker, up or still starting, is idle
// (sim.AheadWarmer): the page starts one once its window is built
// (attractorlab.warmUp), so that the opening look-ahead goes to it from
// its first job on.
func (p *Pool) Warm() bool {
	f := p.page.Get("warm")
	return f.Type() == js.TypeFunction && p.page.Call("warm").Bool()
}

var _ sim.AheadWarmer = (*Pool)(nil)

// Parts is how many workers the page runs at once (attractorlab.workers).
func (p *Pool) Parts() int { return max(1, p.page.Get("workers").Int()) }

// job is one job in a worker: its messages come on events, its answer
// (or its failure) on end.
type job struct {
	handle js.Value
	events chan js.Value
	end    chan answer
	funcs  []js.Func
}

type answer struct {
	b   []byte
	err error
}

func bytesOf(u js.Value) []byte {
	b := make([]byte, u.Get("length").Int())
	js.CopyBytesToGo(b, u)
	return b
}

func uint8Array(b []byte) js.Value {
	u := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(u, b)
	return u
}

// start sends kind's wire bytes to the next free worker, with extra's
// fields (JavaScript values, such as a validation's couplings as a
// training run's worker sent them) beside them in its message.
func (p *Pool) start(kind string, wire []byte, extra ...map[string]any) *job {
	j := &job{events: make(chan js.Value, 4096), end: make(chan answer, 1)}
	u := uint8Array(wire)
	release := func() {
		for _, f := range j.funcs {
			f.Release()
		}
	}
	progress := js.FuncOf(func(_ js.Value, args []js.Value) any {
		select {
		case j.events <- args[0]:
		default: // a reader that has gone: its events are dropped
		}
		return nil
	})
	ok := js.FuncOf(func(_ js.Value, args []js.Value) any {
		j.end <- answer{b: bytesOf(args[0])}
		release()
		return nil
	})
	fail := js.FuncOf(func(_ js.Value, args []js.Value) any {
		msg := "failed"
		if len(args) > 0 {
			msg = args[0].Call("toString").String()
		}
		j.end <- answer{err: errors.New(msg)}
		release()
		return nil
	})
	j.funcs = []js.Func{progress, ok, fail}
	if len(extra) > 0 {
		j.handle = p.page.Call("job", kind, u, progress, extra[0])
	} else {
		j.handle = p.page.Call("job", kind, u, progress)
	}
	j.handle.Get("promise").Call("then", ok, fail)
	return j
}

// Errors runs part in a worker and waits for its answer, the goroutine
// blocked (so the page goes on drawing). A cancelled ctx stops the part
// in its worker.
func (p *Pool) Errors(ctx context.Context, part sweep.Part, step func(n int)) (sweep.PartErrors, error) {
	wire, err := sweep.EncodePart(part)
	if err != nil {
		return sweep.PartErrors{}, err
	}
	j := p.start("part", wire)
	for {
		select {
		case m := <-j.events:
			if step != nil && ctx.Err() == nil {
				step(m.Get("done").Int())
			}
		case a := <-j.end:
			if a.err != nil {
				if ctx.Err() != nil {
					return sweep.PartErrors{}, ctx.Err()
				}
				return sweep.PartErrors{}, fmt.Errorf("digits %d to %d in a worker: %w", part.From, part.From+part.N-1, a.err)
			}
			return sweep.DecodeErrors(a.b)
		case <-ctx.Done():
			j.handle.Call("cancel") // its promise settles, releasing the callbacks
			return sweep.PartErrors{}, ctx.Err()
		}
	}
}

// Ahead records a lane's look-ahead steps in a worker (sim.AheadRemote),
// the goroutine blocked meanwhile. The page gives such a job the first
// free worker, ahead of the population jobs and validations waiting, and
// starts a worker beyond its number for it when all are busy: the steps
// shown wait for it.
func (p *Pool) Ahead(ctx context.Context, job sim.AheadJob) (sim.AheadAnswer, error) {
	wire, err := sim.EncodeWire(job)
	if err != nil {
		return sim.AheadAnswer{}, err
	}
	b, err := p.start("ahead", wire).wait(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return sim.AheadAnswer{}, err
		}
		return sim.AheadAnswer{}, fmt.Errorf("steps %d to %d: %w", job.From+1, job.From+job.Steps, err)
	}
	return sim.DecodeWire[sim.AheadAnswer](b, "a look-ahead from a worker")
}

// Attention takes steps' attention in a worker (sim.AttnRemote), the
// goroutine blocked meanwhile; such a job goes ahead of population jobs
// as a look-ahead's does.
func (p *Pool) Attention(ctx context.Context, job sim.AheadJob) ([][]float32, error) {
	wire, err := sim.EncodeWire(job)
	if err != nil {
		return nil, err
	}
	b, err := p.start("attn", wire).wait(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("the attention of steps %d to %d: %w", job.From+1, job.From+job.Steps, err)
	}
	return sim.DecodeAttention(b, job.Steps)
}

var _ sim.AttnRemote = (*Pool)(nil)

// wait is j's answer, or ctx's error once ctx ends (cancelling j in its
// worker) or if it ended as j failed.
func (j *job) wait(ctx context.Context) ([]byte, error) {
	select {
	case a := <-j.end:
		if a.err != nil {
			if err := ctx.Err(); err != nil {
				return nil, err // cancelled as it ended
			}
			return nil, a.err
		}
		return a.b, nil
	case <-ctx.Done():
		j.handle.Call("cancel") // its promise settles, releasing the callbacks
		return nil, ctx.Err()
	}
}

// StateSpace places the stored digits of dataset in their plane in a
// worker (sim.StateSpaceRemote), the goroutine blocked meanwhile. With
// every worker busy (an ensemble, a training run) it says so at once: the
// page computes the plane itself rather than wait for them.
func (p *Pool) StateSpace(ctx context.Context, dataset string) (*sim.StateSpace, error) {
	if !p.Warm() {
		return nil, fmt.Errorf("no worker is free to place the stored digits")
	}
	b, err := p.start("space", []byte(dataset)).wait(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("the state space in a worker: %w", err)
	}
	return sim.DecodeStateSpace(b)
}

// Train runs job in a worker, telling w its events as they come and the
// worker w.Paused's changes (looked at every 50 ms). A cancelled ctx
// stops the run in its worker, which still answers with the finished
// epochs' couplings. Where the page runs more than one worker, the run
// validates only its share of each epoch's digits (TrainJob.ValHere, then
// sim.ValShare of the last epoch's times: TrainJob.ValOthers) and
// the other workers validate the rest while it trains on; the epoch's
// statistics, and the events after them, are told once the rest is in,
// with the value a validation of every digit in one place gives.
func (p *Pool) Train(ctx context.Context, tj sim.TrainJob, w sim.Watch) (*models.BSA, int, error) {
	others := p.Parts() - 1
	if n := tj.Training.Val; others > 0 && !tj.Preview && !tj.Training.SkipVal && n > 1 {
		tj.ValHere, tj.ValOthers = max(1, n/(others+1)), others
	}
	wire, err := sim.EncodeTrainJob(tj)
	if err != nil {
		return nil, 0, err
	}
	j := p.start("train", wire)
	if tj.ValHere > 0 {
		// The workers that will validate start now, beside the run: a
		// worker's start (its app, its pictures) takes seconds.
		if warm, err := sim.EncodeWire(sim.ValidationPart{Dataset: tj.Dataset}); err == nil {
			for range others {
				p.start("validate", warm)
			}
		}
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	paused, cancelled := false, false
	done := ctx.Done()
	// The events in the order they came; one whose validation is still
	// out holds back those after it.
	type held struct {
		e       sim.TrainEvent
		waiting bool
	}
	// The run's events are one stream, read in the order they came; an
	// epoch's couplings to validate come beside theirs and go on to the
	// validating workers as they came, never read here.
	stream := sim.NewTrainEventReader()
	type validated struct {
		h    *held
		mean float64
		err  error
	}
	var queue []*held
	out := 0 // validations still out
	// One slot an epoch: a validation that ends after Train has returned
	// (another's failure) does not block for good.
	valDone := make(chan validated, max(1, tj.Training.Config.Epochs))
	tellReady := func() {
		for len(queue) > 0 && !queue[0].waiting {
			queue[0].e.Tell(w)
			queue = queue[1:]
		}
	}
	take := func(m js.Value) error {
		e, err := stream.Decode(bytesOf(m.Get("event")))
		if err != nil {
			return err
		}
		h := &held{e: e}
		if e.Stats != nil && e.ValRest != nil {
			net := m.Get("net")
			if !net.Truthy() {
				return fmt.Errorf("epoch %d's statistics came without the couplings to validate", e.Stats.Epoch)
			}
			h.waiting = true
			out++
			go func() {
				mean, err := p.validate(e.ValRest, net, tj.Dataset, others)
				valDone <- validated{h, mean, err}
			}()
		}
		queue = append(queue, h)
		tellReady()
		return nil
	}
	finish := func(v validated) error {
		out--
		if v.err != nil {
			return fmt.Errorf("validating epoch %d in a worker: %w", v.h.e.Stats.Epoch, v.err)
		}
		v.h.e.Stats.ValMSE, v.h.waiting = v.mean, false
		tellReady()
		return nil
	}
	for {
		select {
		case m := <-j.events:
			if err := take(m); err != nil {
				j.handle.Call("cancel")
				return nil, 0, err
			}
		case v := <-valDone:
			if err := finish(v); err != nil {
				j.handle.Call("cancel")
				return nil, 0, err
			}
		case a := <-j.end:
			if a.err != nil {
				if cancelled {
					return nil, 0, context.Canceled
				}
				return nil, 0, fmt.Errorf("training in a worker: %w", a.err)
			}
			// The events sent before the answer, and the validations
			// still out, are read and told first: the answer is the
			// stream's last message.
			for len(j.events) > 0 {
				if err := take(<-j.events); err != nil {
					return nil, 0, err
				}
			}
			e, err := stream.Decode(a.b)
			if err != nil {
				return nil, 0, err
			}
			for out > 0 {
				if err := finish(<-valDone); err != nil {
					return nil, 0, err
				}
			}
			net, epochs, err, _ := e.Tell(w)
			return net, epochs, err
		case <-tick.C:
			if w.Paused != nil && w.Paused() != paused {
				paused = !paused
				j.handle.Call("send", map[string]any{"pause": paused})
			}
		case <-done:
			cancelled, done = true, nil
			j.handle.Call("cancel")
		}
	}
}

// validate runs what rest left of an epoch's validation in k workers at
// once and returns the validation's value, joined with what the run
// validated itself. net is the epoch's couplings (rest.Net's bytes) as
// the training run's worker sent them: each part's message carries them
// as they are (the browser copies them to each worker).
func (p *Pool) validate(rest *sim.ValidationRest, net js.Value, dataset string, k int) (float64, error) {
	parts := rest.Parts(dataset, k)
	type res struct {
		k    int
		errs []float64
		err  error
	}
	got := make(chan res, len(parts))
	for k, part := range parts {
		go func() {
			wire, err := sim.EncodeWire(part)
			if err != nil {
				got <- res{k: k, err: err}
				return
			}
			a := <-p.start("validate", wire, map[string]any{"net": net}).end
			if a.err != nil {
				got <- res{k: k, err: fmt.Errorf("digits %d to %d: %w", part.From, part.From+part.N-1, a.err)}
				return
			}
			errs, err := sim.DecodeWire[[]float64](a.b, "a validation's errors")
			if err == nil && len(errs) != part.N {
				err = fmt.Errorf("digits %d to %d: %d errors came back", part.From, part.From+part.N-1, len(errs))
			}
			got <- res{k, errs, err}
		}()
	}
	errs := make([][]float64, len(parts))
	var first error
	for range parts {
		r := <-got
		errs[r.k] = r.errs
		if r.err != nil && first == nil {
			first = r.err
		}
	}
	if first != nil {
		return 0, first
	}
	return rest.Finish(errs...), nil
}
