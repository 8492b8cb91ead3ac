//go:build js

package sim

import (
	"runtime"
	"sync/atomic"
	"time"
)

// lastPause is when a loop last gave the page its turn (UnixNano).
var lastPause atomic.Int64

// pauseEvery is how long a loop may hold the page: about two frames.
const pauseEvery = 30 * time.Millisecond

// pause lets the page answer during long work. In the browser Go runs on
// the page's one thread and the page (drawing, keys, the mouse) only runs
// when every goroutine is blocked; runtime.Gosched switches goroutines
// without returning to it. So a loop sleeps a moment every pauseEvery:
// the sleep blocks the goroutine, and the page gets its turn.
func pause() {
	now := time.Now().UnixNano()
	if now-lastPause.Load() < int64(pauseEvery) {
		runtime.Gosched()
		return
	}
	lastPause.Store(now)
	time.Sleep(time.Millisecond)
}

// Pause is pause for loops outside sim (the window's population runs).
func Pause() { pause() }
