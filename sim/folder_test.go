package sim

import (
	"context"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"attractorlab/sim/mnist"
)

// drawShape writes a w×h PNG of dark ink on white paper: a disc (0), a
// bar (1) or a cross (2), moved by k.
func drawShape(t *testing.T, path string, shape, k, w, h int) {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			off := float64(k%5) * 0.02
			ink := false
			switch shape {
			case 0:
				dx, dy := fx-0.5-off, fy-0.5
				ink = dx*dx+dy*dy < 0.09
			case 1:
				ink = fx > 0.4+off && fx < 0.6+off && fy > 0.1 && fy < 0.9
			case 2:
				ink = (math.Abs(fx-fy-off) < 0.06 || math.Abs(fx+fy-1-off) < 0.06) && fx > 0.1 && fx < 0.9
			}
			img.SetGray(x, y, color.Gray{Y: 255})
			if ink {
				img.SetGray(x, y, color.Gray{Y: 0})
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// shapesFolder makes DIR/{bar,cross,disc}/ with ten pictures each, of
// mixed sizes, and the things a folder of pictures holds by mistake.
func shapesFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for s, name := range []string{"disc", "bar", "cross"} {
		os.MkdirAll(filepath.Join(dir, name), 0o755)
		for k := range 10 {
			drawShape(t, filepath.Join(dir, name, name+string(rune('0'+k))+".png"), s, k, 40+7*k, 50+3*k)
		}
	}
	write := func(rel, s string) {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.txt", "pictures")
	write("disc/notes.txt", "not a picture")
	write("disc/.DS_Store", "")
	// A PNG cut short, and a GIF.
	b, _ := os.ReadFile(filepath.Join(dir, "bar", "bar0.png"))
	write("bar/cut.png", string(b[:len(b)/2]))
	g, _ := os.Create(filepath.Join(dir, "cross", "anim.gif"))
	gif.Encode(g, image.NewPaletted(image.Rect(0, 0, 8, 8), []color.Color{color.White, color.Black}), nil)
	g.Close()
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	os.MkdirAll(filepath.Join(dir, "cross", "inner"), 0o755)
	// A loop: a class folder's link to the folder itself.
	if err := os.Symlink(dir, filepath.Join(dir, "bar", "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "disc"), filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestConvertFolder: the classes are the sub-folders in name order, each
// picture prepared as the own digit is, one in five of each class a test
// picture by the seeded rule, and everything else skipped by name with
// its reason.
func TestConvertFolder(t *testing.T) {
	dir := shapesFolder(t)
	var last, total int
	train, test, classes, skipped, err := ConvertFolder(context.Background(), dir, func(d, n int) { last, total = d, n })
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"bar", "cross", "disc"}; !reflect.DeepEqual(classes, want) {
		t.Fatalf("classes %v, want %v", classes, want)
	}
	if train.Len() != 24 || test.Len() != 6 {
		t.Fatalf("%d training and %d test pictures, want 24 and 6", train.Len(), test.Len())
	}
	if last != total || total != 33 {
		t.Fatalf("progress ended at %d of %d, want 33 of 33 (30 pictures, the cut PNG, the GIF, notes.txt and nothing else)", last, total)
	}
	counts := map[uint8]int{}
	for _, l := range test.Labels {
		counts[l]++
	}
	if !reflect.DeepEqual(counts, map[uint8]int{0: 2, 1: 2, 2: 2}) {
		t.Fatalf("test pictures per class %v, want 2 each", counts)
	}
	// Each picture is the own digit's preparation of its file.
	want, err := ReadDigitPictureFile(filepath.Join(dir, "disc", "disc0.png"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range []*mnist.Set{train, test} {
		for k := range s.Len() {
			found = found || reflect.DeepEqual(s.Raw(k), want)
		}
	}
	if !found {
		t.Fatal("disc0.png's prepared picture is in neither set")
	}
	why := map[string]string{}
	for _, s := range skipped {
		why[s.Path] = s.Why
	}
	for path, reason := range map[string]string{
		"README.txt":     "not in a class folder",
		"disc/notes.txt": "not a PNG or JPEG picture",
		"disc/.DS_Store": "hidden",
		"bar/cut.png":    "cannot be read",
		"cross/anim.gif": "a GIF picture",
		"cross/inner":    "a folder inside a class folder",
		"bar/loop":       "a symbolic link: not followed",
		"linked":         "a symbolic link: not followed",
		"empty":          "a class folder with no pictures",
	} {
		if !strings.Contains(why[path], reason) {
			t.Errorf("%s: skipped for %q, want %q", path, why[path], reason)
		}
	}
	if len(skipped) != 9 {
		t.Errorf("%d skipped, want 9: %v", len(skipped), skipped)
	}
	// The same folder gives the same sets.
	train2, test2, _, _, err := ConvertFolder(context.Background(), dir, nil)
	if err != nil || !reflect.DeepEqual(train, train2) || !reflect.DeepEqual(test, test2) {
		t.Fatalf("a second conversion differs (%v)", err)
	}
}

// TestFolderRefusals: a folder the bounds refuse is refused by name.
func TestFolderRefusals(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "a.png")
	os.WriteFile(file, []byte("x"), 0o644)
	many := t.TempDir()
	for k := range MaxFolderClasses + 1 {
		os.MkdirAll(filepath.Join(many, "c"+strings.Repeat("x", k%7)+string(rune('a'+k%26))+string(rune('a'+k/26))), 0o755)
	}
	none := t.TempDir()
	os.MkdirAll(filepath.Join(none, "a"), 0o755)
	os.WriteFile(filepath.Join(none, "a", "x.txt"), []byte("x"), 0o644)
	few := t.TempDir()
	os.MkdirAll(filepath.Join(few, "a"), 0o755)
	drawShape(t, filepath.Join(few, "a", "1.png"), 0, 0, 30, 30)
	for _, c := range []struct{ dir, want string }{
		{filepath.Join(t.TempDir(), "missing"), "no such file or directory"},
		{file, "not a folder"},
		{many, "101 class folders (allowed 1 … 100)"},
		{none, "no pictures"},
		{few, "no test pictures"},
	} {
		_, _, _, _, err := ConvertFolder(ctx, c.dir, nil)
		// (Node's file system says "No such file", Linux's "no such file".)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.want)) || !strings.Contains(err.Error(), c.dir) {
			t.Errorf("%s: %v, want an error naming it and saying %q", c.dir, err, c.want)
		}
	}
	defer func(n int) { maxFolderFiles = n }(maxFolderFiles)
	maxFolderFiles = 5
	if _, _, _, _, err := ConvertFolder(ctx, shapesFolder(t), nil); err == nil || !strings.Contains(err.Error(), "more than 5 files") {
		t.Errorf("more files than allowed: %v", err)
	}
}

// TestCacheFolder: a converted folder is cached whole and loads with its
// classes; a corrupt file is refused with what to do; another folder of
// the same name is refused; a cancelled conversion leaves nothing.
func TestCacheFolder(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := shapesFolder(t)
	ctx := context.Background()
	if _, err := CacheFolder(ctx, dir, "Shapes!", nil); err == nil || !strings.Contains(err.Error(), "a folder's name is 1 to 64") {
		t.Fatalf("a bad name: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := CacheFolder(cctx, dir, "shapes", nil); err == nil {
		t.Fatal("a cancelled conversion succeeded")
	}
	root, _ := FolderCache("")
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Fatalf("a cancelled conversion left %v", ents)
	}
	m, err := CacheFolder(ctx, dir, "shapes", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := Folders(); !reflect.DeepEqual(got, []string{"folder:shapes"}) {
		t.Fatalf("Folders %v", got)
	}
	d, err := LoadFolderData("shapes")
	if err != nil {
		t.Fatal(err)
	}
	if d.Name() != "folder:shapes" || !reflect.DeepEqual(d.Classes(), m.Classes) || d.Train.Len() != 24 || d.Test.Len() != 6 {
		t.Fatalf("loaded %s: classes %v, %d + %d pictures", d.Name(), d.Classes(), d.Train.Len(), d.Test.Len())
	}
	if err := checkDataset("folder:shapes", ViaField); err != nil {
		t.Fatal(err)
	}
	// Converting it again replaces it; another folder of that name is
	// refused.
	if _, err := CacheFolder(ctx, dir, "shapes", nil); err != nil {
		t.Fatalf("again: %v", err)
	}
	if _, err := CacheFolder(ctx, shapesFolder(t), "shapes", nil); err == nil || !strings.Contains(err.Error(), "give this one another name") {
		t.Fatalf("another folder named shapes: %v", err)
	}
	cache, _ := FolderCache("shapes")
	p := filepath.Join(cache, "t10k-images-idx3-ubyte")
	b, _ := os.ReadFile(p)
	b[len(b)-1] ^= 0xff
	os.WriteFile(p, b, 0o644)
	if _, err := LoadFolderData("shapes"); err == nil || !strings.Contains(err.Error(), "corrupt: run `attractorlab data --dataset "+dir) {
		t.Fatalf("a corrupt cache: %v", err)
	}
	if _, err := LoadFolderData("leaves"); err == nil || !strings.Contains(err.Error(), "no data set folder:leaves here") {
		t.Fatalf("a folder not converted: %v", err)
	}
	if err := checkDataset("folder:Bad Name", ViaField); err == nil || !strings.Contains(err.Error(), "field dataset") {
		t.Fatalf("a bad folder name: %v", err)
	}
}

func TestFolderName(t *testing.T) {
	for in, want := range map[string]string{"/a/My Leaves/": "my-leaves", "x/Ünïcode": "n-code", "/": "folder", "a.b_c-d": "a.b_c-d"} {
		if got := FolderName(in); got != want || CheckFolderName(got) != nil {
			t.Errorf("FolderName(%q) = %q, want %q", in, got, want)
		}
	}
}
