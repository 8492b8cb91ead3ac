//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// lockDirs takes an exclusive lock on each directory (in the order given),
// waiting for another command committing there, and returns the unlock.
// The lock is flock(2) on the directory itself: no lock file is left.
func lockDirs(dirs []string) (func(), error) {
	var held []*os.File
	unlock := func() {
		for k := len(held) - 1; k >= 0; k-- {
			syscall.Flock(int(held[k].Fd()), syscall.LOCK_UN)
			held[k].Close()
		}
	}
	for _, d := range dirs {
		f, err := os.Open(d)
		if err != nil {
			unlock()
			return nil, fmt.Errorf("locking %s: %w", d, err)
		}
		for {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
			if err != syscall.EINTR {
				break
			}
		}
		if err != nil {
			f.Close()
			unlock()
			return nil, fmt.Errorf("locking %s: %w", d, err)
		}
		held = append(held, f)
	}
	return unlock, nil
}
