//go:build !js

package sim

import "runtime"

// pause lets another goroutine run between steps of a long loop (the
// window's engine waiting for a command) rather than after a time slice.
// The web build's twin (pause_js.go) also lets the page answer.
func pause() { runtime.Gosched() }

// Pause is pause for loops outside sim (the window's population runs): in
// the browser it lets the page answer during long work.
func Pause() { pause() }
