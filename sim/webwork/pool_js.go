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

// Pool is the page's workers (attractorlab.job): a sweep.Remote and a
// sim.TrainRemote.
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

// start sends kind's wire bytes to the next free worker.
func (p *Pool) start(kind string, wire []byte) *job {
	j := &job{events: make(chan js.Value, 4096), end: make(chan answer, 1)}
	u := js.Global().Get("Uint8Array").New(len(wire))
	js.CopyBytesToJS(u, wire)
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
	j.handle = p.page.Call("job", kind, u, progress)
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

// Train runs job in a worker, telling w its events as they come and the
// worker w.Paused's changes (looked at every 50 ms). A cancelled ctx
// stops the run in its worker, which still answers with the finished
// epochs' couplings.
func (p *Pool) Train(ctx context.Context, tj sim.TrainJob, w sim.Watch) (*models.BSA, int, error) {
	wire, err := sim.EncodeTrainJob(tj)
	if err != nil {
		return nil, 0, err
	}
	j := p.start("train", wire)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	paused, cancelled := false, false
	done := ctx.Done()
	tell := func(m js.Value) error {
		e, err := sim.DecodeTrainEvent(bytesOf(m.Get("event")))
		if err == nil {
			e.Tell(w)
		}
		return err
	}
	for {
		select {
		case m := <-j.events:
			if err := tell(m); err != nil {
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
			e, err := sim.DecodeTrainEvent(a.b)
			if err != nil {
				return nil, 0, err
			}
			// The events sent before the answer are told first.
			for len(j.events) > 0 {
				tell(<-j.events)
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
