package models

import (
	"context"
	"sync"
	"sync/atomic"
)

// Crew is a set of workers that share out items (Run) and, once out of
// items of their own, help the busy ones with work that splits (Split).
// Items come in whole units (a chunk of images, a trajectory), so the last
// ones would otherwise run on one core while the others wait: a crew lets
// the idle cores take part of each of their steps.
type Crew struct {
	workers int
	help    chan crewPart
}

// crewPart is [i0, i1) of a Split's f, to run and then mark done.
type crewPart struct {
	i0, i1 int
	f      func(i0, i1 int)
	wg     *sync.WaitGroup
}

// NewCrew makes a crew of workers goroutines (≤ 0: every core).
func NewCrew(workers int) *Crew {
	if workers <= 0 {
		workers = Workers()
	}
	return &Crew{workers: workers, help: make(chan crewPart)}
}

// Workers is how many goroutines the crew's Run starts at most (1 for a
// nil crew).
func (c *Crew) Workers() int {
	if c == nil {
		return 1
	}
	return c.workers
}

// Run runs f(worker, k) for every k in [0, n) as Parallel does (item k on
// worker k mod W, W = min(Workers, n), each worker in increasing k); a
// worker out of items then helps the others' Splits until every worker is
// done. When ctx ends no further items start, and Run returns ctx.Err()
// after every goroutine it started has returned.
func (c *Crew) Run(ctx context.Context, n int, f func(worker, k int)) error {
	if ctx == nil {
		return errNilContext
	}
	w := min(c.Workers(), n)
	if w <= 1 {
		return Parallel(ctx, n, 1, f)
	}
	stop := make(chan struct{})
	var busy atomic.Int32
	busy.Store(int32(w))
	done := ctx.Done()
	var wg sync.WaitGroup
	for wk := range w {
		wg.Go(func() {
		items:
			for k := wk; k < n; k += w {
				select {
				case <-done:
					break items
				default:
				}
				f(wk, k)
			}
			// Every worker passes here once, cancelled or not: the last
			// one out of items sends the helpers home.
			if busy.Add(-1) == 0 {
				close(stop)
				return
			}
			for {
				select {
				case p := <-c.help:
					c.split(p.i0, p.i1, p.f, p.wg)
					p.wg.Done()
				case <-stop:
					return
				}
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// Split runs f over [0, n) in consecutive parts and returns when all are
// done: while a worker of the crew is waiting in Run, the upper half of
// what is left goes to it (and it may hand on half of that in turn); the
// rest runs here. With no idle worker (or a nil crew) f(0, n) runs here.
// f must give the same result however [0, n) is cut, and parts may run
// at the same time.
func (c *Crew) Split(n int, f func(i0, i1 int)) {
	if n <= 0 {
		return
	}
	if c == nil {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	c.split(0, n, f, &wg)
	wg.Wait()
}

func (c *Crew) split(i0, i1 int, f func(i0, i1 int), wg *sync.WaitGroup) {
	for i1-i0 >= 2 {
		h := (i0 + i1 + 1) / 2
		wg.Add(1)
		select {
		case c.help <- crewPart{i0: h, i1: i1, f: f, wg: wg}:
			i1 = h
			continue
		default:
			wg.Done()
		}
		break
	}
	f(i0, i1)
}
