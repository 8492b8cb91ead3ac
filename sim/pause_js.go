//go:build js

package sim

import (
	"runtime"
	"sync"
	"syscall/js"
	"time"
)

// pauseEvery is how long a loop may hold the page: about two frames.
const pauseEvery = 30 * time.Millisecond

// growEvery is how often the engine publishes a snapshot when only the
// look-ahead grew (the step shown is the same). Each snapshot redraws the
// plots, and in the page a redraw takes longer than the 30 ms of steps
// recorded between two of the page's turns: publishing these at 60 a
// second, the demo's t* came 6.0–7.4 s after its weights; at this rate
// 3.0–3.5 s (three page loads each, 2026-11-27).
const growEvery = 250 * time.Millisecond

// turn is the page's last turn and the wait for its next one.
var turn struct {
	sync.Mutex
	last time.Time     // when the page last had its turn
	next chan struct{} // closed at the next turn; nil when none is asked for
	cb   js.Func       // the page's setTimeout callback that closes next
	// stuck is a turn that did not come within turnWait: until it comes,
	// loops sleep a moment instead (the page's callback cannot run while
	// a loop runs on the goroutine of another of the page's callbacks).
	stuck chan struct{}
}

// turnWait is how long a loop waits for the page's turn before it takes
// it as stuck. A turn comes once every goroutine is blocked: after the
// window's redraw, which can take a few hundred milliseconds.
const turnWait = 500 * time.Millisecond

// pause lets the page answer during long work. In the browser Go runs on
// the page's one thread and the page (drawing, keys, the mouse) only runs
// when every goroutine is blocked; runtime.Gosched switches goroutines
// without returning to it. So once the page has waited pauseEvery, a loop
// blocks until the page has had its turn: a callback the page runs
// (setTimeout) says so, and it can only run once every goroutine is
// blocked. Every loop that pauses meanwhile waits for the same turn. A
// loop that slept a moment instead (as this did before) let a second loop
// run on: two loops pausing in turn (the engine recording while a model's
// weights were unpacked) held the page for seconds. A turn that does not
// come within turnWait (a loop on the goroutine of one of the page's
// callbacks, which holds the page until it returns) is taken as stuck:
// loops sleep a moment instead, as they did before, until it comes.
func pause() {
	turn.Lock()
	if time.Since(turn.last) < pauseEvery {
		turn.Unlock()
		runtime.Gosched()
		return
	}
	waitTurn()
}

// waitTurn blocks until the page's next turn (turn held on entry, let go
// on return).
func waitTurn() {
	if turn.next == nil {
		if turn.cb.IsUndefined() {
			turn.cb = js.FuncOf(func(js.Value, []js.Value) any {
				turn.Lock()
				turn.last = time.Now()
				if turn.next != nil {
					close(turn.next)
					turn.next = nil
				}
				turn.Unlock()
				return nil
			})
		}
		turn.next = make(chan struct{})
		js.Global().Call("setTimeout", turn.cb, 0)
	}
	next := turn.next
	stuck := turn.stuck == next
	turn.Unlock()
	if stuck {
		time.Sleep(time.Millisecond)
		return
	}
	t := time.NewTimer(turnWait)
	defer t.Stop()
	select {
	case <-next:
	case <-t.C:
		turn.Lock()
		if turn.next == next {
			turn.stuck = next
		}
		turn.Unlock()
	}
}

// Pause is pause for loops outside sim (the window's population runs).
func Pause() { pause() }

// Yield waits for the page's next turn, however recent the last: work
// handed to the window piece by piece (a training run's updates) gives the
// page a turn between pieces, instead of the window doing them all in one
// of its tasks.
func Yield() {
	turn.Lock()
	waitTurn()
}

// pageIdle returns a channel closed when the page next idles, its frame
// painted (requestIdleCallback; where the browser has none, or in Node,
// a moment after the page's next turn).
func pageIdle() <-chan struct{} {
	c := make(chan struct{})
	var f js.Func
	f = js.FuncOf(func(js.Value, []js.Value) any {
		close(c)
		f.Release()
		return nil
	})
	if ric := js.Global().Get("requestIdleCallback"); ric.Type() == js.TypeFunction {
		ric.Invoke(f)
	} else {
		js.Global().Call("setTimeout", f, 50)
	}
	return c
}
