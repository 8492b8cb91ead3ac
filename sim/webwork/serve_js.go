//go:build js

package webwork

import (
	"context"
	"fmt"
	"sync"
	"syscall/js"
	"time"

	"attractorlab/sim/sweep"
)

// Serve answers the parts the page sends this worker until ctx ends. env
// gives the data and models of a data set by name (a part's
// Settings.Dataset). Each part tells the page its image-steps done about
// ten times a second; a message {cancel: id} stops part id.
func Serve(ctx context.Context, env func(dataset string) (sweep.Env, error)) error {
	self := js.Global()
	page := self.Get("attractorlab")
	if page.IsUndefined() {
		return fmt.Errorf("worker: no attractorlab object: start it from worker.js")
	}
	var mu sync.Mutex
	running := map[int]context.CancelFunc{}
	post := func(msg map[string]any, transfer ...any) {
		self.Call("postMessage", msg, transfer)
	}
	serve := js.FuncOf(func(_ js.Value, args []js.Value) any {
		msg := args[0]
		id := msg.Get("id").Int()
		if msg.Get("cancel").Truthy() {
			mu.Lock()
			if stop, ok := running[id]; ok {
				stop()
			}
			mu.Unlock()
			return nil
		}
		u := msg.Get("part")
		wire := make([]byte, u.Get("length").Int())
		js.CopyBytesToGo(wire, u)
		jctx, stop := context.WithCancel(ctx)
		mu.Lock()
		running[id] = stop
		mu.Unlock()
		go func() {
			defer func() {
				mu.Lock()
				delete(running, id)
				mu.Unlock()
				stop()
			}()
			b, err := run(jctx, env, wire, func(n int) { post(map[string]any{"id": id, "done": n}) })
			if err != nil {
				post(map[string]any{"id": id, "error": err.Error()})
				return
			}
			out := js.Global().Get("Uint8Array").New(len(b))
			js.CopyBytesToJS(out, b)
			post(map[string]any{"id": id, "answer": out}, out.Get("buffer"))
		}()
		return nil
	})
	defer serve.Release()
	page.Set("serve", serve)
	page.Call("started")
	<-ctx.Done()
	return nil
}

// run decodes and runs one part, telling done the image-steps finished
// since it last did (at most every 100 ms, and at the end).
func run(ctx context.Context, env func(string) (sweep.Env, error), wire []byte, done func(n int)) ([]byte, error) {
	part, err := sweep.DecodePart(wire)
	if err != nil {
		return nil, err
	}
	e, err := env(part.Settings.Dataset)
	if err != nil {
		return nil, err
	}
	count, last := 0, time.Now()
	pe, err := part.Run(ctx, e, func(n int) {
		count += n
		if now := time.Now(); now.Sub(last) >= 100*time.Millisecond {
			done(count)
			count, last = 0, now
		}
	})
	if err != nil {
		return nil, err
	}
	if count > 0 {
		done(count)
	}
	return sweep.EncodeErrors(pe)
}
