//go:build unix

// Package fifotest makes named pipes (FIFOs) for the tests that check a
// reader refuses one before reading a byte. The browser's file system
// (GOOS=js, the web build's tests under Node) has none: there the tests
// that need one skip, saying so.
package fifotest

import (
	"syscall"
	"testing"
)

// Make creates a named pipe at path, or ends the test.
func Make(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}
