//go:build !unix

// Package fifotest makes named pipes (FIFOs) for the tests that check a
// reader refuses one before reading a byte. See fifo_unix.go.
package fifotest

import (
	"runtime"
	"testing"
)

// Make skips the test: this system's file system has no named pipes.
func Make(t testing.TB, path string) {
	t.Helper()
	t.Skipf("no named pipes on %s: the refusal of one is checked on Linux", runtime.GOOS)
}
