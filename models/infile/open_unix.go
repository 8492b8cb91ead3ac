//go:build unix

package infile

import (
	"os"
	"syscall"
)

// openNoBlock opens path without waiting for a FIFO's writer (a FIFO
// opened for reading blocks until one appears); the caller refuses it by
// its mode before reading.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
