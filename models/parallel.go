package models

import (
	"context"
	"errors"
	"runtime"
	"sync"
)

// Workers is the default parallelism: every core (runtime.GOMAXPROCS(0)).
func Workers() int { return runtime.GOMAXPROCS(0) }

// errNilContext is returned by Parallel when ctx is nil.
var errNilContext = errors.New("models.Parallel: nil context (use context.Background())")

// Parallel runs f(worker, k) for every k in [0, n) on W = min(workers, n)
// goroutines (workers ≤ 0 means Workers()). The assignment is fixed: item k
// runs on worker k mod W, and each worker takes its items in increasing k,
// so a computation that keeps per-worker state (and sums it in worker
// order) gives the same result on every run with the same W.
//
// When ctx ends, no further items are started; Parallel waits for the items
// already running and returns ctx.Err(). It always waits for every
// goroutine it started before returning. With W = 1 the items run on the
// calling goroutine.
func Parallel(ctx context.Context, n, workers int, f func(worker, k int)) error {
	if ctx == nil {
		return errNilContext
	}
	if workers <= 0 {
		workers = Workers()
	}
	w := min(workers, n)
	done := ctx.Done() // nil for a context that never ends
	run := func(wk int) {
		for k := wk; k < n; k += w {
			select {
			case <-done:
				return
			default:
			}
			f(wk, k)
		}
	}
	switch {
	case w <= 0:
	case w == 1:
		run(0)
	default:
		var wg sync.WaitGroup
		for wk := range w {
			wg.Go(func() { run(wk) })
		}
		wg.Wait()
	}
	return ctx.Err()
}
