package ui

import (
	"fmt"
	"image"
	"image/color"
	"io"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// padSide is the drawing pad's resolution: strokes are drawn at 192×192
// and then made into a 28×28 digit as MNIST's were (sim.PrepareDigit).
const padSide = 192

// drawPad is a square to draw a digit on with the mouse, a pen or a
// finger: drags paint (or erase) a round brush along the stroke, a tap a
// dot. OnChange is told after each change.
type drawPad struct {
	widget.BaseWidget
	Ink      []float64 // padSide×padSide, 0 … 1
	Erase    bool
	Radius   float64 // the brush's radius in pad pixels
	OnChange func()

	raster *canvas.Raster
	last   fyne.Position
	down   bool
}

func newDrawPad() *drawPad {
	p := &drawPad{Ink: make([]float64, padSide*padSide), Radius: 9}
	p.ExtendBaseWidget(p)
	return p
}

func (p *drawPad) CreateRenderer() fyne.WidgetRenderer {
	p.raster = canvas.NewRaster(func(w, h int) image.Image {
		img := image.NewGray(image.Rect(0, 0, padSide, padSide))
		for k, v := range p.Ink {
			img.Pix[k] = uint8(math.Round(255 * v))
		}
		return img
	})
	p.raster.ScaleMode = canvas.ImageScaleSmooth
	border := canvas.NewRectangle(color.Transparent)
	border.StrokeColor = theme.Color(theme.ColorNameForeground)
	border.StrokeWidth = 1
	return &padRenderer{p: p, border: border}
}

type padRenderer struct {
	p      *drawPad
	border *canvas.Rectangle
}

func (r *padRenderer) Layout(s fyne.Size) {
	r.p.raster.Resize(s)
	r.border.Resize(s)
}
func (r *padRenderer) MinSize() fyne.Size { return fyne.NewSize(288, 288) }
func (r *padRenderer) Refresh() {
	r.p.raster.Refresh()
	r.border.Refresh()
}
func (r *padRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.p.raster, r.border}
}
func (r *padRenderer) Destroy() {}

// toPad maps a position on the widget to pad pixels.
func (p *drawPad) toPad(pos fyne.Position) (float64, float64) {
	s := p.Size()
	return float64(pos.X / max(s.Width, 1) * padSide), float64(pos.Y / max(s.Height, 1) * padSide)
}

// Stroke paints (or erases) the brush along the segment from a to b, in
// pad pixels: a pixel within the radius of the segment takes the ink
// (full inside, fading over the last pixel: the edge is smooth).
func (p *drawPad) Stroke(ax, ay, bx, by float64) {
	r := p.Radius
	x0, x1 := int(math.Floor(min(ax, bx)-r-1)), int(math.Ceil(max(ax, bx)+r+1))
	y0, y1 := int(math.Floor(min(ay, by)-r-1)), int(math.Ceil(max(ay, by)+r+1))
	dx, dy := bx-ax, by-ay
	l2 := dx*dx + dy*dy
	for y := max(y0, 0); y <= min(y1, padSide-1); y++ {
		for x := max(x0, 0); x <= min(x1, padSide-1); x++ {
			px, py := float64(x)+0.5, float64(y)+0.5
			t := 0.0
			if l2 > 0 {
				t = min(max(((px-ax)*dx+(py-ay)*dy)/l2, 0), 1)
			}
			ex, ey := px-(ax+t*dx), py-(ay+t*dy)
			cover := min(max(r+0.5-math.Hypot(ex, ey), 0), 1)
			k := y*padSide + x
			if p.Erase {
				p.Ink[k] = min(p.Ink[k], 1-cover)
			} else {
				p.Ink[k] = max(p.Ink[k], cover)
			}
		}
	}
	p.Refresh()
	if p.OnChange != nil {
		p.OnChange()
	}
}

// Dragged paints from the last position to this one.
func (p *drawPad) Dragged(e *fyne.DragEvent) {
	if !p.down {
		p.last, p.down = e.Position.Subtract(e.Dragged), true
	}
	ax, ay := p.toPad(p.last)
	bx, by := p.toPad(e.Position)
	p.Stroke(ax, ay, bx, by)
	p.last = e.Position
}

// DragEnd ends the stroke.
func (p *drawPad) DragEnd() { p.down = false }

// Tapped paints a dot.
func (p *drawPad) Tapped(e *fyne.PointEvent) {
	x, y := p.toPad(e.Position)
	p.Stroke(x, y, x, y)
}

// Clear wipes the pad.
func (p *drawPad) Clear() {
	clear(p.Ink)
	p.Refresh()
	if p.OnChange != nil {
		p.OnChange()
	}
}

// showDraw opens the drawing dialog: the pad, the digit it makes as MNIST
// digits were made, and the stored digit the window shows, to compare;
// "Use this digit" makes it the window's clean digit.
func (m *Main) showDraw() {
	pad := newDrawPad()
	made := NewPixelView()
	stored := NewPixelView()
	if m.snap != nil && m.snap.Settings.Own == nil {
		stored.Pixels = m.snap.Clean
	}
	update := func() {
		own := sim.PrepareDigit(pad.Ink, padSide, padSide)
		made.Pixels = make([]float32, len(own))
		for k, b := range own {
			made.Pixels[k] = float32(b) / 255
		}
		made.Refresh()
	}
	pad.OnChange = update
	update()
	mode := widget.NewRadioGroup([]string{"Brush", "Erase"}, func(s string) { pad.Erase = s == "Erase" })
	mode.Horizontal = true
	mode.SetSelected("Brush")
	size := widget.NewSlider(3, 20)
	size.SetValue(pad.Radius)
	size.OnChanged = func(v float64) { pad.Radius = v }
	clearBtn := widget.NewButtonWithIcon("Clear", theme.ContentClearIcon(), pad.Clear)
	caption := func(s string) *widget.Label {
		l := widget.NewLabel(s)
		l.Alignment = fyne.TextAlignCenter
		l.Wrapping = fyne.TextWrapWord
		return l
	}
	storedName := "(a stored digit shows here when the window shows one)"
	if m.snap != nil && m.snap.Settings.Own == nil {
		storedName = fmt.Sprintf("%s %s picture %d, a %s: to compare", mnist.DatasetLabel(m.snap.Settings.DatasetName()), m.snap.Settings.Split, m.snap.Settings.Index, m.snap.ClassName(m.snap.Label))
		if m.snap.Settings.DatasetName() == mnist.MNISTName {
			storedName = fmt.Sprintf("MNIST %s digit %d, a %d: to compare", m.snap.Settings.Split, m.snap.Settings.Index, m.snap.Label)
		}
	}
	right := container.NewGridWithRows(2,
		container.NewBorder(nil, caption("your digit as MNIST's were made: fit in 20×20, centred by its centre of mass in 28×28"), nil, nil, made),
		container.NewBorder(nil, caption(storedName), nil, nil, stored))
	tools := container.NewHBox(mode, widget.NewLabel("brush"), container.NewGridWrap(fyne.NewSize(140, size.MinSize().Height), size), clearBtn)
	body := container.NewBorder(widget.NewLabel("Draw a digit (or anything: every start should end at the average digit)."), tools, nil, nil,
		container.NewGridWithColumns(2, pad, right))
	d := dialog.NewCustomConfirm("Draw a digit", "Use this digit", "Cancel", body, func(ok bool) {
		if ok {
			m.UseOwnDigit(sim.PrepareDigit(pad.Ink, padSide, padSide), "drawn")
		}
	}, m.win)
	room := m.win.Canvas().Size()
	d.Resize(fyne.NewSize(min(720, room.Width-20), min(520, room.Height-20)))
	m.showDialog(d)
}

// UseOwnDigit makes own (28×28 bytes) the window's clean digit; how says
// where it came from.
func (m *Main) UseOwnDigit(own []uint8, how string) {
	m.Engine.Update(func(st *sim.Settings) { st.Own = own })
	m.setStatus("your own digit (" + how + ") is the clean digit; choose a stored digit to go back")
}

// openPicture asks for a PNG or JPEG file to make the digit of.
func (m *Main) openPicture() {
	m.openFile("picture", []string{".png", ".jpg", ".jpeg"}, m.OpenPictureFile, m.OpenPicture, sim.MaxPictureFile)
}

// OpenPictureFile makes the digit of the picture at path.
func (m *Main) OpenPictureFile(path string) error {
	own, err := sim.ReadDigitPictureFile(path)
	if err != nil {
		return err
	}
	m.UseOwnDigit(own, "from "+path)
	return nil
}

// OpenPicture makes the digit of a picture read from r (name in errors).
func (m *Main) OpenPicture(r io.Reader, name string) error {
	own, err := sim.ReadDigitPicture(r, name)
	if err != nil {
		return err
	}
	m.UseOwnDigit(own, "from "+name)
	return nil
}
