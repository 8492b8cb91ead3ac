//go:build js

package fyneclock

import (
	"testing"
	"time"
)

// Fyne's cache reads the coarse clock, and the clock follows the time to
// within a tick.
func TestCoarseClockInstalled(t *testing.T) {
	if !installed || fyneCacheNow == nil {
		t.Fatal("fyne.io/fyne/v2/internal/cache.timeNow is not linked: this Fyne version has renamed it, and its caches read the time out of JavaScript again")
	}
	before := fyneCacheNow()
	if d := time.Since(before); d < 0 || d > 2*Tick {
		t.Errorf("Fyne's cache clock reads %v, %v from the time; want within %v", before, d, 2*Tick)
	}
	time.Sleep(3 * Tick)
	after := fyneCacheNow()
	if !after.After(before) {
		t.Errorf("Fyne's cache clock did not move in %v: %v then %v", 3*Tick, before, after)
	}
	if d := time.Since(after); d < 0 || d > 2*Tick {
		t.Errorf("Fyne's cache clock reads %v, %v from the time; want within %v", after, d, 2*Tick)
	}
	// It is this package's clock, not Fyne's time.Now: a stored reading
	// comes back as it is.
	old := now.Load()
	t0 := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	now.Store(&t0)
	got := fyneCacheNow()
	now.Store(old)
	if !got.Equal(t0) {
		t.Errorf("Fyne's cache clock read %v after the coarse clock was set to %v: it is not this package's", got, t0)
	}
}
