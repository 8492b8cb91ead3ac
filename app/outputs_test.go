package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// writeAll plans, writes and commits files holding tag; inject (if set)
// fails the commit before the k-th rename.
func writeAll(force bool, tag string, paths []string, failAt int) error {
	o, err := planOutputs("--out", force, paths...)
	if err != nil {
		return err
	}
	defer o.Abort()
	if failAt >= 0 {
		o.beforeRename = func(k int, p string) error {
			if k == failAt {
				return fmt.Errorf("injected failure before %s", p)
			}
			return nil
		}
	}
	for _, p := range paths {
		if err := o.Write(p, func(w io.Writer) error { _, err := io.WriteString(w, tag); return err }); err != nil {
			return err
		}
	}
	return o.Commit()
}

func names(dir string, n int) []string {
	var ps []string
	for k := range n {
		ps = append(ps, filepath.Join(dir, "sub", fmt.Sprintf("f%02d.csv", k)))
	}
	return ps
}

// tags reads every path's content ("" for a missing file).
func tags(paths []string) []string {
	var ts []string
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		ts = append(ts, string(b))
	}
	return ts
}

// onlyFiles fails unless dir (recursively) holds exactly the paths: no
// temporary, backup or stray file.
func onlyFiles(t *testing.T, dir string, paths []string) {
	t.Helper()
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && !want[p] {
			t.Errorf("stray file %s", p)
		}
		return nil
	})
}

// A failure half-way through the commit puts back every file it replaced
// and removes the ones it added.
func TestCommitRollsBack(t *testing.T) {
	dir := t.TempDir()
	paths := names(dir, 12)
	if err := writeAll(false, "old", paths[:8], -1); err != nil {
		t.Fatal(err)
	}
	for _, failAt := range []int{0, 5, 8, 11} {
		err := writeAll(true, "new", paths, failAt)
		if err == nil || !strings.Contains(err.Error(), "injected") {
			t.Fatalf("failAt %d: %v", failAt, err)
		}
		got := tags(paths)
		for k, g := range got {
			want := "old"
			if k >= 8 {
				want = ""
			}
			if g != want {
				t.Fatalf("failAt %d: file %d holds %q after the failed commit, want %q", failAt, k, g, want)
			}
		}
		onlyFiles(t, dir, paths[:8])
	}
	if err := writeAll(true, "new", paths, -1); err != nil {
		t.Fatal(err)
	}
	for k, g := range tags(paths) {
		if g != "new" {
			t.Fatalf("file %d holds %q", k, g)
		}
	}
	onlyFiles(t, dir, paths)
}

// Two commands writing the same files at once never leave a mixture: the
// tree holds one writer's whole set, also when one of them fails.
func TestCommitTwoWriters(t *testing.T) {
	dir := t.TempDir()
	paths := names(dir, 12)
	for round := range 20 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				failAt := -1
				if round%2 == 1 && w == 1 {
					failAt = 6 // the second writer fails half-way
				}
				errs[w] = writeAll(true, fmt.Sprintf("writer %d round %d", w, round), paths, failAt)
			}()
		}
		wg.Wait()
		got := tags(paths)
		for k := range got {
			if got[k] != got[0] {
				t.Fatalf("round %d: a mixture: file 0 %q, file %d %q (errors %v)", round, got[0], k, got[k], errs)
			}
		}
		if round%2 == 1 {
			// Writer 1 failed: whichever committed first, writer 0's set
			// is what stays.
			if errs[0] != nil || errs[1] == nil || got[0] != fmt.Sprintf("writer 0 round %d", round) {
				t.Fatalf("round %d: %q after writer 1 failed (errors %v)", round, got[0], errs)
			}
		}
		onlyFiles(t, dir, paths)
	}
}

// Only a regular file (or nothing) is replaced, even with --force: a
// device, a FIFO, a directory or a symbolic link (dangling or not) is
// refused before any work, and a path naming a directory is refused.
func TestOutputsRefuseIrregular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	regular := filepath.Join(dir, "regular")
	os.WriteFile(regular, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(regular, link)
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "nowhere"), dangling)
	for _, c := range []struct{ path, want string }{
		{"/dev/null", "a character device: only a regular file may be replaced"},
		{fifo, "a named pipe (FIFO): only a regular file may be replaced"},
		{link, "a symbolic link: only a regular file may be replaced"},
		{dangling, "a symbolic link: only a regular file may be replaced"},
		{dir, "is a directory"},
		{filepath.Join(dir, "newdir") + "/", "names a directory: give a file name"},
		{filepath.Join(dangling, "sub", "curve.csv"), "is a symbolic link to nothing (dangling)"},
	} {
		_, err := planOutputs("--out", true, c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--out") {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
	if fi, err := os.Lstat("/dev/null"); err != nil || fi.Mode().IsRegular() {
		t.Fatal("/dev/null is no longer a device")
	}
	if b, _ := os.ReadFile(regular); string(b) != "keep" {
		t.Fatal("the link's target changed")
	}
	// A path that became a device between plan and commit is not replaced.
	p := filepath.Join(dir, "late")
	o, err := planOutputs("--out", true, p)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Abort()
	o.Write(p, func(w io.Writer) error { return nil })
	os.Symlink("/dev/null", p)
	if err := o.Commit(); err == nil || !strings.Contains(err.Error(), "only a regular file") {
		t.Fatalf("late device: %v", err)
	}
	if fi, _ := os.Lstat(p); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the late link was replaced")
	}
}

// Attack 15: a run killed by SIGKILL leaves its temporary files; the next
// run writing the same files removes them, and nothing else: not another
// output's, not those of a live command writing the same files.
func TestStaleTemporariesRemoved(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "slide-01.png")
	live, err := planOutputs("--out", true, out)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Abort()
	if err := live.Write(out, func(w io.Writer) error { _, err := w.Write([]byte("live")); return err }); err != nil {
		t.Fatal(err)
	}
	stale := []string{filepath.Join(dir, ".slide-01.png.tmp123"), filepath.Join(dir, ".slide-01.png.tmp456")}
	other := filepath.Join(dir, ".notes.txt.tmp1")
	for _, p := range append(stale, other) {
		if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o, err := planOutputs("--out", true, out)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Abort()
	for _, p := range stale {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left", p)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another output's temporary was removed: %v", err)
	}
	if _, err := os.Stat(live.tmp[out]); err != nil {
		t.Fatalf("a live writer's temporary was removed: %v", err)
	}
	if err := live.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "live" {
		t.Fatalf("%s holds %q", out, b)
	}
}
