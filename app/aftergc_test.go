package main

import (
	"runtime"
	"testing"
	"time"
)

// TestAfterEachGC: f runs after each of several collections, not once.
func TestAfterEachGC(t *testing.T) {
	ran := make(chan struct{}, 100)
	afterEachGC(func() { ran <- struct{}{} })
	for k := 1; k <= 3; k++ {
		runtime.GC()
		select {
		case <-ran:
		case <-time.After(20 * time.Second):
			t.Fatalf("collection %d: f did not run", k)
		}
	}
}
