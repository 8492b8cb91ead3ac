// Package fyneclock gives Fyne's caches a coarse clock in the page.
//
// Fyne marks each cached renderer, canvas and text measure alive by
// reading the time (its internal cache's timeNow) every time it is looked
// up: several hundred reads a frame for the main window. In WebAssembly a
// read of the time is two calls out to JavaScript (the wall clock and the
// monotonic one), and a profile of the page gave them about 5 ms of a
// step's 57 ms and 150 ms of the 2.5 s the page worked while a four-model
// link recorded. The caches only need the time to a fraction of their
// minute of validity, so in the page they read a clock that a ticker sets
// twice a second (clock_js.go). Elsewhere this package does nothing.
package fyneclock
