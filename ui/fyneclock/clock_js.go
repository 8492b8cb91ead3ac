//go:build js

package fyneclock

import (
	"sync/atomic"
	"time"
	_ "unsafe" // go:linkname

	_ "fyne.io/fyne/v2/widget" // links Fyne's internal cache
)

// fyneCacheNow is Fyne's cache's clock (fyne.io/fyne/v2/internal/cache's
// timeNow, which it keeps as a variable for its tests). If a Fyne version
// renames it, this declaration defines a variable of its own instead,
// which nothing else reads: init sees it nil and leaves Fyne's clock as
// it is, and TestCoarseClockInstalled fails.
//
//go:linkname fyneCacheNow fyne.io/fyne/v2/internal/cache.timeNow
var fyneCacheNow func() time.Time

// Tick is how often the coarse clock is set. Fyne's caches keep an
// object for a minute after it was last drawn and clean every ten
// seconds at the most: a reading up to half a second old (longer while
// one of the page's tasks runs, during which nothing else runs either)
// changes neither.
const Tick = 500 * time.Millisecond

var now atomic.Pointer[time.Time]

// installed reports whether Fyne's cache reads the coarse clock.
var installed bool

func set() {
	t := time.Now()
	now.Store(&t)
}

// Now is the coarse clock: the time at its last tick.
func Now() time.Time { return *now.Load() }

func init() {
	if fyneCacheNow == nil {
		return
	}
	set()
	fyneCacheNow = Now
	installed = true
	go func() {
		for range time.Tick(Tick) {
			set()
		}
	}()
}
