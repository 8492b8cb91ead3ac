package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// outputs are the files one command writes. They are checked before any
// work (each may be created, and none exists unless --force), written
// under temporary names beside their final ones, and renamed into place
// together by Commit; Abort (deferred) removes whatever was written, so a
// failed or cancelled command leaves no partial file and replaces nothing.
type outputs struct {
	force bool
	paths []string
	tmp   map[string]string // final path → temporary file
	made  []string          // directories Write created, deepest last
}

// planOutputs checks every path: an existing file is refused without
// force (naming the flag that chose it), and each directory is created and
// probed for writing.
func planOutputs(flag string, force bool, paths ...string) (*outputs, error) {
	o := &outputs{force: force, paths: paths, tmp: map[string]string{}}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			if fi.IsDir() {
				return nil, fmt.Errorf("%s is a directory: choose another %s", p, flag)
			}
			if !force {
				return nil, fmt.Errorf("%s exists: choose another %s or pass --force to replace it", p, flag)
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
	return o, nil
}

// Write writes path (one of the planned ones) under a temporary name.
func (o *outputs) Write(path string, write func(io.Writer) error) error {
	if err := o.mkdirs(filepath.Dir(path)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
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
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Commit renames every written file into place. Without force a path that
// appeared meanwhile is not replaced (a hard link fails on it).
func (o *outputs) Commit() error {
	for _, p := range o.paths {
		tmp, ok := o.tmp[p]
		if !ok {
			return fmt.Errorf("internal: %s was planned but not written", p)
		}
		var err error
		if o.force {
			err = os.Rename(tmp, p)
		} else if err = os.Link(tmp, p); err == nil {
			os.Remove(tmp)
		} else if errors.Is(err, os.ErrExist) {
			err = fmt.Errorf("%s appeared while this command ran: not replaced (pass --force to replace it)", p)
		}
		if err != nil {
			return err
		}
		delete(o.tmp, p)
	}
	return nil
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
	for _, tmp := range o.tmp {
		os.Remove(tmp)
	}
	for k := len(o.made) - 1; k >= 0; k-- {
		os.Remove(o.made[k]) // fails, harmlessly, when not empty
	}
}
