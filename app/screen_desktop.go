//go:build !js

package main

import (
	"fyne.io/fyne/v2"
	"github.com/go-gl/glfw/v3.3/glfw"
)

// workArea is the primary monitor's work area in w's units, when GLFW
// (Fyne's desktop driver) can tell it. It must be called on Fyne's
// goroutine once the loop runs: GLFW is initialised then, and it answers
// only on that thread. Fyne has no screen API of its own.
func workArea(w fyne.Window) (s fyne.Size, ok bool) {
	defer func() {
		// go-gl/glfw panics on a call it thinks out of order (e.g. no
		// GLFW yet, under a test driver): then the size is not known.
		if recover() != nil {
			s, ok = fyne.Size{}, false
		}
	}()
	mon := glfw.GetPrimaryMonitor()
	if mon == nil {
		return fyne.Size{}, false
	}
	_, _, pw, ph := mon.GetWorkarea()
	sc := w.Canvas().Scale()
	if pw <= 0 || ph <= 0 || sc <= 0 {
		return fyne.Size{}, false
	}
	return fyne.NewSize(float32(pw)/sc, float32(ph)/sc), true
}
