package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"attractorlab/models/infile"
)

// outputs are the files one command writes. They are checked before any
// work (each may be created; none exists unless --force, and only a
// regular file is ever replaced), written under temporary names beside
// their final ones, and put in place together by Commit, which either
// puts every one in place or none: a failure half-way puts back what was
// there before. Abort (deferred) removes whatever was written, so a failed
// or cancelled command leaves no partial file and replaces nothing.
type outputs struct {
	flag  string
	force bool
	paths []string
	tmp   map[string]string // final path → temporary file
	made  []string          // directories Write created, deepest last
	// held are the temporary files' open descriptors, each holding a
	// shared lock until Commit or Abort: a later command sees that they
	// belong to a live writer and leaves them (see removeStale).
	held []io.Closer

	// beforeRename, when set (by tests), runs before the k-th file is put
	// in place; an error it returns stops the commit there.
	beforeRename func(k int, path string) error
}

// planOutputs checks every path: an existing file is refused without
// force (naming the flag that chose it), anything but a regular file is
// refused even with force (a device, a FIFO, a directory, a symbolic
// link, dangling or not), and each directory is created and probed for
// writing.
func planOutputs(flag string, force bool, paths ...string) (*outputs, error) {
	o := &outputs{flag: flag, force: force, paths: paths, tmp: map[string]string{}}
	for _, p := range paths {
		if strings.HasSuffix(p, string(filepath.Separator)) || strings.HasSuffix(p, "/.") || p == "." || p == ".." {
			return nil, fmt.Errorf("%s %s names a directory: give a file name (e.g. %s)", flag, p, filepath.Join(p, "out.file"))
		}
		if fi, err := os.Lstat(p); err == nil {
			switch {
			case fi.IsDir():
				return nil, fmt.Errorf("%s %s is a directory: choose another %s", flag, p, flag)
			case !fi.Mode().IsRegular():
				return nil, fmt.Errorf("%s %s exists and is %s: only a regular file may be replaced; choose another %s", flag, p, infile.Kind(fi.Mode()), flag)
			case !force:
				return nil, fmt.Errorf("%s %s exists: choose another %s or pass --force to replace it", flag, p, flag)
			}
		}
		// The directory is made when the file is written; now the
		// nearest one that exists must take a new file.
		dir := filepath.Dir(p)
		for {
			fi, err := os.Stat(dir)
			if err == nil && !fi.IsDir() {
				return nil, fmt.Errorf("%s %s: %s is not a directory", flag, p, dir)
			}
			if _, lerr := os.Lstat(dir); err != nil && lerr == nil {
				return nil, fmt.Errorf("%s %s: %s is a symbolic link to nothing (dangling): make its target or choose another %s", flag, p, dir, flag)
			}
			if err == nil || filepath.Dir(dir) == dir {
				break
			}
			dir = filepath.Dir(dir)
		}
		probe, err := os.CreateTemp(dir, ".attractorlab-probe-*")
		if err != nil {
			return nil, fmt.Errorf("%s %s: cannot write in %s: %w", flag, p, dir, err)
		}
		probe.Close()
		os.Remove(probe.Name())
	}
	o.removeStale()
	return o, nil
}

// removeStale removes the temporary files that a killed run of a command
// writing the same files left (SIGKILL gives no chance to clean up: a
// killed lesson export left 127 of them, 22 MB): each output's
// ".NAME.tmp*" beside it that no live command holds. A live writer holds
// a lock on each of its temporary files from their creation (made under
// the directory's lock, which this takes too) until it commits or
// aborts; the kernel drops a killed process's locks, so a file whose lock
// can be taken is stale. Where there is no flock(2), nothing is removed.
func (o *outputs) removeStale() {
	n := 0
	for _, p := range o.paths {
		dir := filepath.Dir(p)
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		unlock, err := lockDirs([]string{dir})
		if err != nil {
			continue
		}
		stale, _ := filepath.Glob(filepath.Join(dir, "."+filepath.Base(p)+".tmp*"))
		for _, f := range stale {
			if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() && unheld(f) && os.Remove(f) == nil {
				n++
			}
		}
		unlock()
	}
	if n > 0 {
		what := "files"
		if n == 1 {
			what = "file"
		}
		fmt.Fprintf(os.Stderr, "removed %d temporary %s left by an interrupted run\n", n, what)
	}
}

// Write writes path (one of the planned ones) under a temporary name.
func (o *outputs) Write(path string, write func(io.Writer) error) error {
	if err := o.mkdirs(filepath.Dir(path)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := o.createHeld(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	o.tmp[path] = f.Name()
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// createHeld creates a temporary file and locks it (shared) before any
// other command can see it unlocked: both under the directory's lock,
// which removeStale takes while it looks. The descriptor stays open (and
// the lock held) until Commit or Abort.
func (o *outputs) createHeld(dir, pattern string) (*os.File, error) {
	unlock, err := lockDirs([]string{dir})
	if err != nil {
		return nil, err
	}
	defer unlock()
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	if err := holdFile(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	o.held = append(o.held, f)
	return f, nil
}

// release closes the temporary files' descriptors (dropping their locks).
func (o *outputs) release() {
	for _, f := range o.held {
		f.Close()
	}
	o.held = nil
}

// placed is one file Commit put in place: the backup holds what was
// there before (empty when nothing was).
type placed struct{ path, backup string }

// Commit puts every written file in place, all or none. Another command
// committing into the same directories waits (each directory is locked),
// so two writers never leave a mixture of their files. Without force a
// path that appeared meanwhile is not replaced. On any failure the files
// already placed are removed and what they replaced is put back.
func (o *outputs) Commit() (err error) {
	for _, p := range o.paths {
		if _, ok := o.tmp[p]; !ok {
			return fmt.Errorf("internal: %s was planned but not written", p)
		}
	}
	unlock, err := lockDirs(o.dirs())
	if err != nil {
		return err
	}
	defer unlock()
	defer o.release()
	var done []placed
	defer func() {
		if err != nil {
			rollBack(done)
			return
		}
		for _, d := range done {
			if d.backup != "" {
				os.Remove(d.backup)
			}
		}
	}()
	for k, p := range o.paths {
		tmp := o.tmp[p]
		if o.beforeRename != nil {
			if err := o.beforeRename(k, p); err != nil {
				return err
			}
		}
		if !o.force {
			// A hard link fails on a file that appeared meanwhile.
			if err := os.Link(tmp, p); err != nil {
				if errors.Is(err, os.ErrExist) {
					return fmt.Errorf("%s appeared while this command ran: not replaced (pass --force to replace it)", p)
				}
				return err
			}
			os.Remove(tmp)
			delete(o.tmp, p)
			done = append(done, placed{path: p})
			continue
		}
		pl := placed{path: p}
		if fi, err := os.Lstat(p); err == nil {
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("%s %s became %s while this command ran: only a regular file may be replaced", o.flag, p, infile.Kind(fi.Mode()))
			}
			// Keep what is there: a hard link under a hidden name.
			b, err := backupName(p)
			if err != nil {
				return err
			}
			if err := os.Link(p, b); err != nil {
				return fmt.Errorf("keeping %s while it is replaced: %w", p, err)
			}
			pl.backup = b
		}
		if err := os.Rename(tmp, p); err != nil {
			if pl.backup != "" {
				os.Remove(pl.backup)
			}
			return err
		}
		delete(o.tmp, p)
		done = append(done, pl)
	}
	return nil
}

// rollBack undoes the placed files, last first.
func rollBack(done []placed) {
	for k := len(done) - 1; k >= 0; k-- {
		d := done[k]
		if d.backup != "" {
			os.Rename(d.backup, d.path)
		} else {
			os.Remove(d.path)
		}
	}
}

// backupName is a free hidden name beside p.
func backupName(p string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".old*")
	if err != nil {
		return "", fmt.Errorf("keeping %s while it is replaced: %w", p, err)
	}
	f.Close()
	os.Remove(f.Name())
	return f.Name(), nil
}

// dirs are the distinct directories of the paths, sorted (so every writer
// locks them in the same order).
func (o *outputs) dirs() []string {
	var ds []string
	for _, p := range o.paths {
		d, err := filepath.Abs(filepath.Dir(p))
		if err != nil {
			d = filepath.Dir(p)
		}
		ds = append(ds, d)
	}
	slices.Sort(ds)
	return slices.Compact(ds)
}

// mkdirs creates dir and its missing parents, remembering them.
func (o *outputs) mkdirs(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := o.mkdirs(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	o.made = append(o.made, dir)
	return nil
}

// Abort removes the temporary files not yet committed, and the directories
// made for them when nothing else is in them.
func (o *outputs) Abort() {
	o.release()
	for _, tmp := range o.tmp {
		os.Remove(tmp)
	}
	for k := len(o.made) - 1; k >= 0; k-- {
		os.Remove(o.made[k]) // fails, harmlessly, when not empty
	}
}
