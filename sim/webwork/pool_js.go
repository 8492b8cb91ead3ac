//go:build js

package webwork

import (
	"context"
	"errors"
	"fmt"
	"syscall/js"

	"attractorlab/sim/sweep"
)

// Pool is the page's workers (attractorlab.job): a sweep.Remote.
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

// Errors runs part in a worker and waits for its answer, the goroutine
// blocked (so the page goes on drawing). A cancelled ctx stops the part
// in its worker.
func (p *Pool) Errors(ctx context.Context, part sweep.Part, step func(n int)) (sweep.PartErrors, error) {
	wire, err := sweep.EncodePart(part)
	if err != nil {
		return sweep.PartErrors{}, err
	}
	u := js.Global().Get("Uint8Array").New(len(wire))
	js.CopyBytesToJS(u, wire)
	type answer struct {
		b   []byte
		err error
	}
	ch := make(chan answer, 1)
	var progress, ok, fail js.Func
	release := func() { progress.Release(); ok.Release(); fail.Release() }
	progress = js.FuncOf(func(_ js.Value, args []js.Value) any {
		if step != nil && ctx.Err() == nil {
			step(args[0].Int())
		}
		return nil
	})
	ok = js.FuncOf(func(_ js.Value, args []js.Value) any {
		b := make([]byte, args[0].Get("length").Int())
		js.CopyBytesToGo(b, args[0])
		ch <- answer{b: b}
		release()
		return nil
	})
	fail = js.FuncOf(func(_ js.Value, args []js.Value) any {
		msg := "failed"
		if len(args) > 0 {
			msg = args[0].Call("toString").String()
		}
		ch <- answer{err: errors.New(msg)}
		release()
		return nil
	})
	job := p.page.Call("job", u, progress)
	job.Get("promise").Call("then", ok, fail)
	select {
	case a := <-ch:
		if a.err != nil {
			if ctx.Err() != nil {
				return sweep.PartErrors{}, ctx.Err()
			}
			return sweep.PartErrors{}, fmt.Errorf("digits %d to %d in a worker: %w", part.From, part.From+part.N-1, a.err)
		}
		return sweep.DecodeErrors(a.b)
	case <-ctx.Done():
		job.Call("cancel") // its promise settles, releasing the callbacks
		return sweep.PartErrors{}, ctx.Err()
	}
}
