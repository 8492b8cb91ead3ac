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

// holdFile takes a shared lock on f: held as long as f is open, dropped
// by the kernel when the process dies, however it dies.
func holdFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err
		}
	}
}

// unheld reports whether no live process holds a lock on the file at
// path (it takes and drops an exclusive one, without waiting).
func unheld(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	return err == nil
}
