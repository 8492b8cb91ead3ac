package infile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"attractorlab/models/infile/fifotest"
)

func TestReadAllRegular(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.txt")
	want := strings.Repeat("x", 1000)
	if err := os.WriteFile(p, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := ReadAll(p, "--in", 1000)
	if err != nil || string(b) != want {
		t.Fatalf("ReadAll = %d bytes, %v", len(b), err)
	}
	_, err = ReadAll(p, "--in", 999)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "--in "+p) || !strings.Contains(err.Error(), "999 bytes") {
		t.Fatalf("over the cap: %v", err)
	}
}

func TestReadAllEmpty(t *testing.T) {
	p := filepath.Join(t.TempDir(), "e")
	os.WriteFile(p, nil, 0o644)
	b, err := ReadAll(p, "x", 10)
	if err != nil || len(b) != 0 {
		t.Fatalf("%q %v", b, err)
	}
}

// done fails the test if f does not return within 5 s (a hang).
func done(t *testing.T, f func() error) error {
	t.Helper()
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	select {
	case err := <-ch:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("hung")
		return nil
	}
}

func TestRefusesIrregular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	fifotest.Make(t, fifo)
	for _, c := range []struct{ path, kind string }{
		{fifo, "named pipe"},
		{"/dev/zero", "character device"},
		{dir, "directory"},
	} {
		err := done(t, func() error { _, err := ReadAll(c.path, "--weights", GB); return err })
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), c.kind) || !strings.Contains(err.Error(), "--weights "+c.path) {
			t.Errorf("%s: %v", c.path, err)
		}
		err = done(t, func() error { _, err := Stat(c.path, "--weights", GB); return err })
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("Stat %s: %v", c.path, err)
		}
	}
	// A symlink to a FIFO is a FIFO.
	link := filepath.Join(dir, "link")
	os.Symlink(fifo, link)
	if err := done(t, func() error { _, err := ReadAll(link, "x", GB); return err }); !errors.Is(err, ErrNotRegular) {
		t.Errorf("link to FIFO: %v", err)
	}
	if _, err := ReadAll(filepath.Join(dir, "missing"), "--lesson", GB); err == nil || !strings.Contains(err.Error(), "--lesson") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// A file that grows past the cap after Open is cut off with an error.
func TestGrowsPastCap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "g")
	os.WriteFile(p, []byte("abc"), 0o644)
	f, err := Open(p, "x", 5)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	os.WriteFile(p, []byte("abcdefghij"), 0o644)
	buf := make([]byte, 100)
	total := 0
	for {
		n, err := f.Read(buf)
		total += n
		if err != nil {
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err %v", err)
			}
			break
		}
	}
	if total > 5 {
		t.Fatalf("read %d bytes past a cap of 5", total)
	}
}

// A file one byte over a limit of 1 MB says so in bytes: "1.0 MB, the
// limit is 1.0 MB" told nothing.
func TestTooLargeNeverReadsEqual(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(p, make([]byte, MB+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadAll(p, "scenario", MB)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "1048577 bytes, the limit is 1048576 bytes") {
		t.Fatalf("one byte over: %v", err)
	}
	if err := os.WriteFile(p, make([]byte, 3*MB), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAll(p, "scenario", MB); err == nil || !strings.Contains(err.Error(), "3.0 MB, the limit is 1.0 MB") {
		t.Fatalf("three times over: %v", err)
	}
}
