package ui

import (
	"errors"
	"image/color"
	"os"
	"path/filepath"
	"testing"
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
