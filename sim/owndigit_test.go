package sim

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"slices"
	"strings"
	"testing"

	"attractorlab/sim/mnist"
)

// bar is a w×h picture of ink 1 in the rectangle [x0, x1) × [y0, y1).
func bar(w, h, x0, y0, x1, y1 int) []float64 {
	p := make([]float64, w*h)
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			p[y*w+x] = 1
		}
	}
	return p
}

// TestPrepareDigitKnownStroke: a 10×100 bar anywhere in a 200×200 picture
// becomes the 2×20 bar at columns 13–14, rows 4–23 (its centre of mass at
// 13.5, 13.5), pure white on black.
func TestPrepareDigitKnownStroke(t *testing.T) {
	for _, at := range [][2]int{{20, 30}, {150, 90}} {
		got := PrepareDigit(bar(200, 200, at[0], at[1], at[0]+10, at[1]+100), 200, 200)
		for y := range 28 {
			for x := range 28 {
				want := uint8(0)
				if x >= 13 && x <= 14 && y >= 4 && y <= 23 {
					want = 255
				}
				if got[y*28+x] != want {
					t.Fatalf("bar at %v: pixel (%d, %d) = %d, want %d", at, x, y, got[y*28+x], want)
				}
			}
		}
	}
}

// TestPrepareDigitProperties: a wide stroke fits 20 pixels wide and keeps
// its aspect ratio, an area wholly covered stays white and a fine pattern
// averages to grey (anti-aliasing), the centre of mass is
// within half a pixel of the centre; no ink gives black.
func TestPrepareDigitProperties(t *testing.T) {
	// A 30×7 bar: 20×5 after scaling (4.67 rounds to 5), its edge rows
	// partly covered.
	got := PrepareDigit(bar(64, 64, 3, 40, 33, 47), 64, 64)
	var sum, sx, sy float64
	cols, rows := map[int]bool{}, map[int]bool{}
	grey := false
	for k, v := range got {
		if v == 0 {
			continue
		}
		f := float64(v)
		sum += f
		sx += f * float64(k%28)
		sy += f * float64(k/28)
		cols[k%28], rows[k/28] = true, true
		grey = grey || v < 255
	}
	if len(cols) != 20 || len(rows) != 5 || grey {
		t.Fatalf("%d columns, %d rows of ink, grey %v", len(cols), len(rows), grey)
	}
	if cx, cy := sx/sum, sy/sum; math.Abs(cx-13.5) > 0.5 || math.Abs(cy-13.5) > 0.5 {
		t.Fatalf("centre of mass (%.2f, %.2f)", cx, cy)
	}
	for _, v := range PrepareDigit(make([]float64, 100), 10, 10) {
		if v != 0 {
			t.Fatal("a blank picture gave ink")
		}
	}
	// Anti-aliased: a 40×40 checkerboard halves to 20×20 of mean grey.
	board := make([]float64, 40*40)
	for k := range board {
		board[k] = float64((k%40 + k/40) % 2)
	}
	board[0] = 1 // the box is the whole board
	for k, v := range PrepareDigit(board, 40, 40) {
		x, y := k%28, k/28
		inside := x >= 4 && x < 24 && y >= 4 && y < 24
		if inside && v != 128 && !(x == 4 && y == 4) || !inside && v != 0 {
			t.Fatalf("checkerboard: pixel (%d, %d) = %d", x, y, v)
		}
	}
}

// TestReadDigitPicture: a PNG of dark ink on white paper, the same as
// light on black, a JPEG and a transparent PNG give the digit the ink
// makes; a file that is not a picture, or too large, is refused by name.
func TestReadDigitPicture(t *testing.T) {
	want := PrepareDigit(bar(200, 200, 20, 30, 30, 130), 200, 200)
	draw := func(ink, paper color.Color) *image.NRGBA {
		img := image.NewNRGBA(image.Rect(0, 0, 200, 200))
		for y := range 200 {
			for x := range 200 {
				c := paper
				if x >= 20 && x < 30 && y >= 30 && y < 130 {
					c = ink
				}
				img.Set(x, y, c)
			}
		}
		return img
	}
	for _, c := range []struct {
		name string
		img  image.Image
		enc  func(*bytes.Buffer, image.Image) error
	}{
		{"dark.png", draw(color.Black, color.White), func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) }},
		{"light.png", draw(color.White, color.Black), func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) }},
		{"clear.png", draw(color.NRGBA{0, 0, 0, 255}, color.NRGBA{0, 0, 0, 0}), func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) }},
		{"ink.jpg", draw(color.Black, color.White), func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, &jpeg.Options{Quality: 95}) }},
		// A photo of a sketch: grey paper, grey ink; the paper is not ink.
		{"photo.png", draw(color.Gray{Y: 60}, color.Gray{Y: 215}), func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) }},
		{"slate.png", draw(color.Gray{Y: 230}, color.Gray{Y: 50}), func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) }},
	} {
		var buf bytes.Buffer
		if err := c.enc(&buf, c.img); err != nil {
			t.Fatal(err)
		}
		got, err := ReadDigitPicture(&buf, c.name)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for k := range got {
			if d := int(got[k]) - int(want[k]); d > 8 || d < -8 {
				t.Fatalf("%s: pixel %d = %d, want %d", c.name, k, got[k], want[k])
			}
		}
	}
	if _, err := ReadDigitPicture(strings.NewReader("not a picture"), "notes.txt"); err == nil || !strings.Contains(err.Error(), "notes.txt: not a PNG or JPEG") {
		t.Fatalf("text: %v", err)
	}
	var big bytes.Buffer
	png.Encode(&big, image.NewGray(image.Rect(0, 0, MaxPictureSide+1, 1)))
	if _, err := ReadDigitPicture(&big, "wide.png"); err == nil || !strings.Contains(err.Error(), "wide.png: a 8193×1 picture (allowed 1×1 … 8192×8192)") {
		t.Fatalf("too wide: %v", err)
	}
	// Too many pixels, though each side is allowed: refused from the
	// header, before the pixels are decoded.
	big.Reset()
	png.Encode(&big, image.NewGray(image.Rect(0, 0, 4097, 4097)))
	if _, err := ReadDigitPicture(&big, "huge.png"); err == nil || !strings.Contains(err.Error(), "huge.png: a 4097×4097 picture has 16.8 million pixels (allowed up to 16.8 million") {
		t.Fatalf("too many pixels: %v", err)
	}
	// A GIF (a decoder the binary links for its exports) is not read.
	var g bytes.Buffer
	if err := gif.Encode(&g, image.NewPaletted(image.Rect(0, 0, 28, 28), color.Palette{color.Black, color.White}), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDigitPicture(&g, "seven.gif"); err == nil || !strings.Contains(err.Error(), "seven.gif: a GIF picture: a digit is read from a PNG or JPEG file") {
		t.Fatalf("GIF: %v", err)
	}
}

// TestOwnDigitSession: an own digit is the session's clean reference (no
// label), survives a scenario file and a link exactly, is corrupted by
// its own seeded draw, gives way when a stored digit is chosen; a broken
// own_digit field is refused by name.
func TestOwnDigitSession(t *testing.T) {
	data, mem, _ := benchData(t)
	cat := NewCatalogue(data.Train, WeightFiles{})
	own := PrepareDigit(bar(100, 100, 40, 10, 55, 90), 100, 100)
	set := PaperDemo()
	set.Own = own
	e := NewEngine(EngineConfig{Data: data, Memories: mem, Catalogue: cat, Settings: set, Synchronous: true})
	e.Settle()
	sn := e.Snapshot()
	if sn.Err != "" || sn.Label != NoLabel || sn.MNISTIdx != -1 || sn.Clean[14*28+14] == 0 {
		t.Fatalf("err %q, label %d, index %d", sn.Err, sn.Label, sn.MNISTIdx)
	}
	for q, v := range mnistClean(own) {
		if sn.Clean[q] != v {
			t.Fatalf("clean pixel %d = %g, want %g", q, sn.Clean[q], v)
		}
	}
	// Scenario and link round trips.
	var buf bytes.Buffer
	if err := WriteScenario(&buf, sn); err != nil {
		t.Fatal(err)
	}
	back, _, err := ReadScenario(bytes.NewReader(buf.Bytes()), "own.json")
	if err != nil || !bytes.Equal(back.Own, own) {
		t.Fatalf("scenario: %v", err)
	}
	link, err := EncodeLink(DefaultLinkBase, sn.Settings, 7)
	if err != nil {
		t.Fatal(err)
	}
	lt, err := ParseLink(link, nil)
	if err != nil || lt.T != 7 || !bytes.Equal(lt.Settings.Own, own) {
		t.Fatalf("link (%d characters): t %d, %v", len(link), lt.T, err)
	}
	// The same settings draw the same noise; another seed another.
	e2 := NewEngine(EngineConfig{Data: data, Memories: mem, Catalogue: cat, Settings: set, Synchronous: true})
	if !slices.Equal(e2.Snapshot().Input, sn.Input) {
		t.Fatal("the same own digit and seed drew other noise")
	}
	// A stored digit chosen: the own digit gives way.
	e.Update(func(s *Settings) { s.Index = 3 })
	if sn := e.Snapshot(); sn.Settings.Own != nil || sn.Label == NoLabel {
		t.Fatal("choosing digit 3 kept the own digit")
	}
	sc := ScenarioOf(sn)
	sc.Own = "AAAA"
	js, _ := json.Marshal(sc)
	if _, _, err := ReadScenario(bytes.NewReader(js), "bad.json"); err == nil || !strings.Contains(err.Error(), "bad.json: field own_digit") {
		t.Fatalf("a short own digit: %v", err)
	}
}

// mnistClean is own as the engine reads it.
func mnistClean(own []uint8) []float32 { return mnist.CleanBytes(own, mnist.PixelGain) }

// Attack 12: a blank picture is refused by name (it read "t* = 2, MSE
// 0.0000 against the input's 0.0000"); a blank own digit from a file,
// masked, has nothing to repair.
func TestBlankPictureHasNoInk(t *testing.T) {
	for _, shade := range []uint8{0, 128, 255} {
		img := image.NewGray(image.Rect(0, 0, 40, 30))
		for k := range img.Pix {
			img.Pix[k] = shade
		}
		var b bytes.Buffer
		png.Encode(&b, img)
		if _, err := ReadDigitPicture(&b, "blank.png"); err == nil || !strings.Contains(err.Error(), "blank.png: no ink: the 40×30 picture is one shade") {
			t.Errorf("shade %d: %v", shade, err)
		}
	}
	s := DefaultSettings()
	s.Own = make([]uint8, 784)
	if !s.NothingToRepair() {
		t.Error("a blank own digit masked: something to repair")
	}
	s.Own[300] = 200
	if s.NothingToRepair() {
		t.Error("an own digit with ink, masked: nothing to repair")
	}
}
