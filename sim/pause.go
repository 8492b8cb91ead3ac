//go:build !js

package sim

import (
	"runtime"
	"time"
)

// growEvery is how often the engine publishes a snapshot when only the
// look-ahead grew: as often as any other (MaxFPS). The page's twin
// (pause_js.go) publishes less often.
const growEvery = time.Second / MaxFPS

// pause lets another goroutine run between steps of a long loop (the
// window's engine waiting for a command) rather than after a time slice.
// The web build's twin (pause_js.go) also lets the page answer.
func pause() { runtime.Gosched() }

// Pause is pause for loops outside sim (the window's population runs): in
// the browser it lets the page answer during long work.
func Pause() { pause() }

// Yield returns at once: a window has its own thread to draw on. In the
// browser (pause_js.go) it waits for the page's next turn.
func Yield() {}

// pageIdle is nil: a window has its own thread, and the engine keeps the
// attention of every step it records (EngineConfig.Idle).
var pageIdle func() <-chan struct{}
