//go:build js

package webwork

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall/js"
	"time"

	"attractorlab/sim"
	"attractorlab/sim/mnist"
	"attractorlab/sim/sweep"
)

// A Source is what a worker runs on for one data set: the population
// jobs' data and models, and the training runs' pictures and memories.
type Source struct {
	Env         sweep.Env
	Train, Test *mnist.Set
	Memories    func() *sim.Memories // made on first use
}

// Serve answers the jobs the page sends this worker until ctx ends:
// {id, kind: "part"|"train"|"validate"|"ahead"|"attn"|"space", job} runs one, {id, cancel} stops it and
// {id, pause} holds a training run or lets it go on. {warm: true, models}
// (the worker the page starts once its window is built) prepares the home data
// set and its stored digits' search, then says {up: true} and loads the
// models of the weights files named. source gives a data
// set's Source by name. A part tells its image-steps done about ten times
// a second ({id, done}), a training run each event ({id, event}); the end
// is {id, answer} or {id, error}.
func Serve(ctx context.Context, source func(dataset string) (Source, error)) error {
	self := js.Global()
	page := self.Get("attractorlab")
	if page.IsUndefined() {
		return fmt.Errorf("worker: no attractorlab object: start it from worker.js")
	}
	type running struct {
		stop   context.CancelFunc
		paused *atomic.Bool
	}
	var mu sync.Mutex
	jobs := map[int]running{}
	post := func(msg map[string]any, transfer ...any) {
		self.Call("postMessage", msg, transfer)
	}
	bytesMsg := func(id int, key string, b []byte, beside ...[]byte) {
		u := uint8Array(b)
		msg, transfer := map[string]any{"id": id, key: u}, []any{u.Get("buffer")}
		if len(beside) > 0 && beside[0] != nil {
			n := uint8Array(beside[0])
			msg["net"] = n
			transfer = append(transfer, n.Get("buffer"))
		}
		post(msg, transfer...)
	}
	serve := js.FuncOf(func(_ js.Value, args []js.Value) any {
		msg := args[0]
		if msg.Get("warm").Truthy() {
			go warm(source, namesOf(msg.Get("models")), func() { post(map[string]any{"up": true}) })
			return nil
		}
		id := msg.Get("id").Int()
		mu.Lock()
		r, known := jobs[id]
		mu.Unlock()
		switch {
		case msg.Get("cancel").Truthy():
			if known {
				r.stop()
			}
			return nil
		case msg.Get("pause").Type() == js.TypeBoolean:
			if known {
				r.paused.Store(msg.Get("pause").Bool())
			}
			return nil
		}
		kind := msg.Get("kind").String()
		wire := bytesOf(msg.Get("job"))
		var net []byte // couplings sent beside the job (a validation's)
		if n := msg.Get("net"); n.Truthy() {
			net = bytesOf(n)
		}
		jctx, stop := context.WithCancel(ctx)
		r = running{stop: stop, paused: new(atomic.Bool)}
		mu.Lock()
		jobs[id] = r
		mu.Unlock()
		go func() {
			defer func() {
				mu.Lock()
				delete(jobs, id)
				mu.Unlock()
				stop()
			}()
			var b []byte
			var err error
			switch kind {
			case "part":
				b, err = runPart(jctx, source, wire, func(n int) { post(map[string]any{"id": id, "done": n}) })
			case "train":
				b, err = runTrain(jctx, source, wire, r.paused.Load, func(e, net []byte) { bytesMsg(id, "event", e, net) })
			case "validate":
				b, err = runValidation(jctx, source, wire, net)
			case "ahead":
				b, err = runAhead(jctx, source, wire)
			case "attn":
				b, err = runAttn(jctx, source, wire)
			case "space":
				b, err = runSpace(source, string(wire))
			default:
				err = fmt.Errorf("a job of kind %q: this worker runs parts, training runs, validations, look-aheads, attention and state spaces", kind)
			}
			if err != nil {
				post(map[string]any{"id": id, "error": err.Error()})
				return
			}
			bytesMsg(id, "answer", b)
		}()
		return nil
	})
	defer serve.Release()
	page.Set("serve", serve)
	page.Call("started")
	<-ctx.Done()
	return nil
}

// warm prepares what the opening look-ahead's first job needs (the home
// data set, its stored digits' search), tells up, then loads the models
// whose weights files are named (which the page is fetching for itself
// too): a job
// sent meanwhile waits for the same load (Catalogue.Fetch loads once). A
// failure is left for the first job to report.
func warm(source func(string) (Source, error), models []string, up func()) {
	src, err := source("")
	if err != nil {
		up()
		return
	}
	src.Memories()
	up()
	for _, name := range models {
		// The page names the weights files it fetches first
		// (files.json's preload: "bsa-p2.safetensors"); a file named for
		// a model is that model's.
		name = strings.TrimSuffix(name, ".safetensors")
		if _, err := src.Env.Cat.Info(name); err == nil {
			_ = src.Env.Cat.Fetch(name)
		}
	}
}

// namesOf reads a JavaScript array of strings (none where it is not one).
func namesOf(v js.Value) []string {
	if v.Type() != js.TypeObject || !js.Global().Get("Array").Call("isArray", v).Bool() {
		return nil
	}
	out := make([]string, v.Length())
	for i := range out {
		out[i] = v.Index(i).String()
	}
	return out
}

// runSpace places the stored digits of the data set named in their plane
// (the job's bytes are its name) and answers their state space.
func runSpace(source func(string) (Source, error), dataset string) ([]byte, error) {
	src, err := source(dataset)
	if err != nil {
		return nil, err
	}
	return sim.EncodeStateSpace(src.Memories().StateSpace())
}

// runPart decodes and runs one part, telling done the image-steps
// finished since it last did (at most every 100 ms, and at the end).
func runPart(ctx context.Context, source func(string) (Source, error), wire []byte, done func(n int)) ([]byte, error) {
	part, err := sweep.DecodePart(wire)
	if err != nil {
		return nil, err
	}
	src, err := source(part.Settings.Dataset)
	if err != nil {
		return nil, err
	}
	count, last := 0, time.Now()
	pe, err := part.Run(ctx, src.Env, func(n int) {
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

// runTrain decodes and runs a training job, sending each event but the
// last, which it returns: all of them one stream (sim.TrainEventWriter),
// an epoch's couplings to validate elsewhere beside their event.
func runTrain(ctx context.Context, source func(string) (Source, error), wire []byte, paused func() bool, send func(event, net []byte)) ([]byte, error) {
	job, err := sim.DecodeTrainJob(wire)
	if err != nil {
		return nil, err
	}
	src, err := source(job.Dataset)
	if err != nil {
		return nil, err
	}
	var shipped *sim.BSA
	if job.Reference || job.Preview {
		shipped, _ = src.Env.Cat.Shipped(job.Training.Patch) // none: no reference
	}
	var end []byte
	var werr error
	stream := sim.NewTrainEventWriter()
	sim.RunTrainJob(ctx, job, src.Train, src.Test, src.Memories(), shipped, paused, func(e sim.TrainEvent) {
		if werr != nil {
			return // the stream broke: the page could not read what follows
		}
		b, net, err := stream.Encode(e)
		switch {
		case err != nil:
			werr = err
		case e.Done:
			end = b
		default:
			send(b, net)
		}
	})
	if werr != nil {
		return nil, werr
	}
	return end, nil
}

// runValidation decodes and runs a part of a training run's validation
// (sim.ValidationPart), answering its digits' errors. Its couplings come
// beside it (net), as the training run's worker sent them.
func runValidation(ctx context.Context, source func(string) (Source, error), wire, net []byte) ([]byte, error) {
	part, err := sim.DecodeWire[sim.ValidationPart](wire, "a validation part")
	if err != nil {
		return nil, err
	}
	if part.Net == nil {
		part.Net = net
	}
	src, err := source(part.Dataset)
	if err != nil {
		return nil, err
	}
	errs, err := part.Run(ctx, src.Test)
	if err != nil {
		return nil, err
	}
	return sim.EncodeWire(errs)
}

// runAhead decodes and records a lane's look-ahead steps
// (sim.RunAheadJob), answering their frames and states.
func runAhead(ctx context.Context, source func(string) (Source, error), wire []byte) ([]byte, error) {
	job, err := sim.DecodeWire[sim.AheadJob](wire, "a look-ahead job")
	if err != nil {
		return nil, err
	}
	src, err := source(job.Dataset)
	if err != nil {
		return nil, err
	}
	a, err := sim.RunAheadJob(ctx, job, src.Env.Cat, src.Memories())
	if err != nil {
		return nil, err
	}
	return sim.EncodeWire(a)
}

// runAttn decodes and takes steps' attention (sim.RunAttnJob).
func runAttn(ctx context.Context, source func(string) (Source, error), wire []byte) ([]byte, error) {
	job, err := sim.DecodeWire[sim.AheadJob](wire, "an attention job")
	if err != nil {
		return nil, err
	}
	src, err := source(job.Dataset)
	if err != nil {
		return nil, err
	}
	a, err := sim.RunAttnJob(ctx, job, src.Env.Cat, src.Memories())
	if err != nil {
		return nil, err
	}
	return sim.EncodeAttention(a), nil
}
