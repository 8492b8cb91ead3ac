package ui

import (
	"bytes"
	"context"
	"errors"
	"image/color"
	"image/gif"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"attractorlab/sim"
	"attractorlab/sim/figures"
)

// TestSaveAs: a typed absolute path is used as typed (Fyne's dialog joined
// it to the folder shown), ~/ is the home folder, a bare name goes in the
// folder shown; an existing file is replaced only when asked, a folder
// never; a failed save leaves nothing behind.
func TestSaveAs(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	abs := filepath.Join(t.TempDir(), "w.png")
	for _, c := range []struct{ typed, want string }{
		{abs, abs},
		{"  " + abs + " ", abs},
		{"~/x.png", filepath.Join(home, "x.png")},
		{"x.png", filepath.Join(dir, "x.png")},
		{"sub/../y.png", filepath.Join(dir, "y.png")},
	} {
		got, err := resolvePath(c.typed, dir, home)
		if err != nil || got != c.want {
			t.Fatalf("%q → %q, %v; want %q", c.typed, got, err, c.want)
		}
	}
	if _, err := resolvePath(" ", dir, home); err == nil {
		t.Fatal("an empty name accepted")
	}
	if err := saveFile(abs, []byte("one"), false); err != nil {
		t.Fatal(err)
	}
	if err := saveFile(abs, []byte("two"), false); !errors.Is(err, errExists) {
		t.Fatalf("an existing file: %v", err)
	}
	if b, _ := os.ReadFile(abs); string(b) != "one" {
		t.Fatalf("refused save changed the file: %q", b)
	}
	if err := saveFile(abs, []byte("two"), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(abs); string(b) != "two" {
		t.Fatalf("replaced file holds %q", b)
	}
	if err := saveFile(dir, []byte("x"), true); err == nil {
		t.Fatal("a folder replaced")
	}
	if err := saveFile(filepath.Join(dir, "no", "such.png"), []byte("x"), false); err == nil {
		t.Fatal("a missing folder accepted")
	}
	for _, d := range []string{dir, filepath.Dir(abs)} {
		es, _ := os.ReadDir(d)
		for _, e := range es {
			if e.Name() != "w.png" {
				t.Fatalf("left behind: %s", e.Name())
			}
		}
	}
}

// TestWindowImage: the window export is the window, drawn in memory (the
// OpenGL capture is blank under Xvfb): its size, not blank, and the window
// laid out as before.
func TestWindowImage(t *testing.T) {
	m, w := newTestMain(t)
	content := w.Canvas().Content()
	pos, size := content.Position(), content.Size()
	img := m.windowImage()
	if b := img.Bounds(); b.Dx() < int(size.Width) || b.Dy() < int(size.Height) {
		t.Fatalf("window image %v for content %v", b, size)
	}
	colours := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			colours[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)] = true
		}
	}
	if len(colours) < 50 {
		t.Fatalf("window image has %d colours: blank", len(colours))
	}
	if content.Position() != pos || content.Size() != size {
		t.Fatalf("window content moved to %v %v from %v %v", content.Position(), content.Size(), pos, size)
	}
}

// TestExportAnimationAndVectors: the run exports as an animated GIF of
// every recorded step (the input at t = 0, each frame as wide as its
// panels), and the MSE and energy plots as SVG and PDF documents.
func TestExportAnimationAndVectors(t *testing.T) {
	m, _ := newTestMain(t)
	m.Engine.Update(func(s *sim.Settings) { s.Lanes = []string{"bsa-p2", "hopfield"} })
	m.Engine.Settle()
	got := map[string][]byte{}
	for _, it := range m.exports() {
		if !strings.HasSuffix(it.file, ".gif") && !strings.HasSuffix(it.file, ".svg") && !strings.HasSuffix(it.file, ".pdf") {
			continue
		}
		var buf bytes.Buffer
		if err := it.write(&buf); err != nil {
			t.Fatalf("%s: %v", it.label, err)
		}
		got[it.file] = buf.Bytes()
	}
	if len(got) != 5 {
		t.Fatalf("exports %v", slices.Collect(maps.Keys(got)))
	}
	g, err := gif.DecodeAll(bytes.NewReader(got["run.gif"]))
	if err != nil {
		t.Fatal(err)
	}
	if want := figures.RunFrames(m.snap); len(g.Image) != want || want < 101 {
		t.Fatalf("%d frames, want %d", len(g.Image), want)
	}
	if b := g.Image[0].Bounds(); b.Dx() != 4*(168+12)+12 {
		t.Fatalf("frame %v", b)
	}
	for _, f := range []string{"mse.svg", "energy.svg"} {
		if !bytes.Contains(got[f], []byte("<svg")) {
			t.Fatalf("%s is not SVG", f)
		}
	}
	for _, f := range []string{"mse.pdf", "energy.pdf"} {
		if !bytes.HasPrefix(got[f], []byte("%PDF")) {
			t.Fatalf("%s is not PDF", f)
		}
	}
}

// TestSlowExportKeepsTheWindow: a slow export (the run as a GIF) runs off
// Fyne's goroutine with progress; Cancel stops it and writes nothing; done,
// it asks where to save.
func TestSlowExportKeepsTheWindow(t *testing.T) {
	m, w := newTestMain(t)
	done := make(chan struct{}, 1)
	m.exportDone = func() { done <- struct{}{} }
	started := make(chan struct{})
	job := exportItem{label: "slow", file: "slow.bin", slow: func(ctx context.Context, out io.Writer, progress func(int, int)) error {
		progress(1, 10)
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}}
	m.exportSlow(w, job)
	<-started
	// The window answers while the job runs: a key steps.
	was := m.snap.T
	typeKey(w, fyne.KeyRight)
	if m.snap.T != was+1 {
		t.Fatalf("→ during the export: t = %d, want %d", m.snap.T, was+1)
	}
	if len(m.dialogs) != 1 {
		t.Fatalf("%d dialogs, want the export's progress", len(m.dialogs))
	}
	m.dialogs[0].Hide() // Cancel
	<-done
	if !strings.Contains(m.status.Text, "cancelled: nothing written") || len(m.dialogs) != 0 {
		t.Fatalf("after Cancel: status %q, %d dialogs", m.status.Text, len(m.dialogs))
	}

	// A job that finishes: the save dialog follows.
	ok := exportItem{label: "quick", file: "done.bin", slow: func(ctx context.Context, out io.Writer, progress func(int, int)) error {
		progress(1, 1)
		_, err := out.Write([]byte("data"))
		return err
	}}
	m.exportSlow(w, ok)
	<-done
	if len(m.dialogs) != 1 || strings.Contains(m.status.Text, "exporting") {
		t.Fatalf("after the export: status %q, %d dialogs (want the save dialog)", m.status.Text, len(m.dialogs))
	}
	// The real GIF export is a slow one.
	found := false
	for _, it := range m.exports() {
		found = found || (it.file == "run.gif" && it.slow != nil)
	}
	if !found {
		t.Error("the GIF export runs on Fyne's goroutine")
	}
}
