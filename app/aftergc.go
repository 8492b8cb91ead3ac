package main

import "runtime"

// afterEachGC calls f after every collection from now on, on the runtime's
// cleanup goroutine: an object nobody holds is made with a cleanup, which
// the collector runs once it has found the object unreachable, and which
// makes the next one. The page sets its heap's soft limit from what the
// collection found live (followLive): done every two seconds, a limit set
// for a smaller heap than the one a compare link had just built made the
// collector run back to back meanwhile (49 collections in 5.6 s, 0.8 s of
// the page's thread).
func afterEachGC(f func()) {
	// 32 bytes: the tiny allocator, below 16 bytes, packs objects together,
	// and one of them is freed only with the others.
	type sentinel struct{ _ [32]byte }
	var arm func()
	arm = func() {
		runtime.AddCleanup(new(sentinel), func(struct{}) {
			f()
			arm()
		}, struct{}{})
	}
	arm()
}
