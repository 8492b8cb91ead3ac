package ui

import (
	"image"
	"image/color"
	"math/rand/v2"
	"slices"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// drawNaive is PixelView.draw placing every pixel by itself (its cell,
// grid line, mask outline and selection border): its twin. The cells'
// colours and the frame are the same code (cellColor, paintFrame).
func (v *PixelView) drawNaive(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	side, ox, oy := square(w, h)
	if side < 28 || len(v.Pixels) != 784 {
		return img
	}
	cell := float64(side) / 28
	outline := color.RGBA{230, 90, 40, 255}
	gridC := color.RGBA{90, 90, 110, 255}
	for y := 0; y < side; y++ {
		py := min(int(float64(y)/cell), 27)
		for x := 0; x < side; x++ {
			px := min(int(float64(x)/cell), 27)
			q := py*28 + px
			c := v.cellColor(q)
			fx, fy := float64(x)/cell-float64(px), float64(y)/cell-float64(py)
			edge := 1.5 / cell
			if v.Grid > 0 && (px%v.Grid == 0 && fx < edge/1.5 || py%v.Grid == 0 && fy < edge/1.5) {
				c = gridC
			}
			if v.Mask != nil && v.Mask[q] {
				// outline the boundary of the masked region
				if (fx < edge && (px == 0 || !v.Mask[q-1])) || (fx > 1-edge && (px == 27 || !v.Mask[q+1])) ||
					(fy < edge && (py == 0 || !v.Mask[q-28])) || (fy > 1-edge && (py == 27 || !v.Mask[q+28])) {
					c = outline
				}
			}
			if v.Selected >= 0 && v.Grid > 0 {
				g := 28 / v.Grid
				sr, sc := v.Selected/g, v.Selected%g
				inR, inC := py/v.Grid == sr, px/v.Grid == sc
				if inR && inC {
					lx := float64(px%v.Grid) + fx
					ly := float64(py%v.Grid) + fy
					e2 := 2.5 / cell
					if lx < e2 || lx > float64(v.Grid)-e2 || ly < e2 || ly > float64(v.Grid)-e2 {
						c = color.RGBA{255, 40, 40, 255}
					}
				}
			}
			img.SetRGBA(ox+x, oy+y, c)
		}
	}
	v.paintFrame(img, side, ox, oy)
	return img
}

// TestPixelViewDrawMatchesNaive: the fast draw paints the naive twin's
// image on random pictures, overlays, masks, grids, selections and frames,
// at sizes that are and are not multiples of 28 and not square.
func TestPixelViewDrawMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for trial := range 40 {
		v := &PixelView{Selected: -1, Pixels: make([]float32, 784)}
		for q := range v.Pixels {
			v.Pixels[q] = rng.Float32()*1.4 - 0.2
		}
		if trial%2 == 0 {
			v.Overlay = make([]float32, 784)
			for q := range v.Overlay {
				v.Overlay[q] = rng.Float32()
			}
		}
		if trial%3 != 0 {
			v.Mask = make([]bool, 784)
			for q := range v.Mask {
				v.Mask[q] = rng.IntN(3) == 0
			}
		}
		v.Grid = []int{0, 1, 2, 4, 7}[trial%5]
		if v.Grid > 0 && trial%4 != 0 {
			g := 28 / v.Grid
			v.Selected = rng.IntN(g * g)
		}
		if trial%7 == 0 {
			v.Frame = color.NRGBA{200, 30, 90, 255}
		}
		w, h := 20+rng.IntN(400), 20+rng.IntN(400)
		if trial == 0 {
			w, h = 280, 280
		}
		a, b := v.draw(w, h).(*image.RGBA), v.drawNaive(w, h).(*image.RGBA)
		for k := range a.Pix {
			if a.Pix[k] != b.Pix[k] {
				t.Fatalf("trial %d (%d×%d, grid %d, selected %d): byte %d is %d, the naive draw's %d", trial, w, h, v.Grid, v.Selected, k, a.Pix[k], b.Pix[k])
			}
		}
		// The window draws two layers, the pixels' colours and the marks
		// over them: the marks are draw's image wherever they are not
		// transparent, and where they are, draw shows the pixel's colour.
		marks := v.drawMarks(w, h).(*image.RGBA)
		side, ox, oy := square(w, h)
		for y := range h {
			for x := range w {
				k := y*a.Stride + x*4
				if marks.Pix[k+3] != 0 {
					if !slices.Equal(marks.Pix[k:k+4], a.Pix[k:k+4]) {
						t.Fatalf("trial %d: the mark at (%d, %d) is %v, draw's %v", trial, x, y, marks.Pix[k:k+4], a.Pix[k:k+4])
					}
					continue
				}
				if x < ox || y < oy || x >= ox+side || y >= oy+side || side < 28 {
					continue // outside the picture: draw leaves it transparent too
				}
				cell := float64(side) / 28
				q := min(int(float64(y-oy)/cell), 27)*28 + min(int(float64(x-ox)/cell), 27)
				c := v.cellColor(q)
				if want := []uint8{c.R, c.G, c.B, c.A}; !slices.Equal(a.Pix[k:k+4], want) {
					t.Fatalf("trial %d: no mark at (%d, %d) but draw shows %v, not pixel %d's colour %v", trial, x, y, a.Pix[k:k+4], q, want)
				}
			}
		}
	}
}

// TestPixelViewMarksDrawnOnce: a step changes the pixels, and the view
// refreshes its 28×28 picture but not the marks layer, which is refreshed
// (drawn and uploaded again) when the mask, grid, selection or frame
// change.
func TestPixelViewMarksDrawnOnce(t *testing.T) {
	test.NewTempApp(t)
	v := NewPixelView()
	v.Pixels, v.Grid, v.Mask = make([]float32, 784), 4, make([]bool, 784)
	v.Mask[100] = true
	w := test.NewTempWindow(t, v)
	w.Resize(fyne.NewSize(200, 200))
	w.Canvas().Capture()
	before := v.marksDrawn
	for step := range 3 {
		for q := range v.Pixels {
			v.Pixels[q] = float32((q+step)%7) / 7
		}
		v.Refresh()
		w.Canvas().Capture()
		if v.cellImg.Pix[0] != uint8(float32(step%7)/7*255+0.5) {
			t.Fatalf("step %d: the picture's first pixel is %d", step, v.cellImg.Pix[0])
		}
	}
	if v.marksDrawn != before {
		t.Fatalf("the marks were drawn %d times for three steps; want none", v.marksDrawn-before)
	}
	if v.cellsDrawn != 3 {
		t.Fatalf("the picture was uploaded %d times for three steps that changed it; want 3", v.cellsDrawn)
	}
	// The same pixels again (the clean digit and the input at each step):
	// nothing is uploaded.
	v.Pixels = slices.Clone(v.Pixels)
	v.Refresh()
	if v.cellsDrawn != 3 {
		t.Fatal("the same picture again was uploaded again")
	}
	v.Selected = 3
	v.Refresh()
	w.Canvas().Capture()
	if v.marksDrawn == before {
		t.Fatal("a patch selected: the marks were not drawn again")
	}
}

func BenchmarkPixelViewDraw(b *testing.B) {
	v := &PixelView{Selected: 5, Grid: 4, Pixels: make([]float32, 784), Mask: make([]bool, 784)}
	for q := range v.Pixels {
		v.Pixels[q] = float32(q%29) / 28
		v.Mask[q] = q%5 == 0
	}
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			v.draw(300, 300)
		}
	})
	b.Run("naive", func(b *testing.B) {
		for b.Loop() {
			v.drawNaive(300, 300)
		}
	})
}
