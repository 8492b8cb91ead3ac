package figures

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/color/palette"
	imgdraw "image/draw"
	"image/gif"
	"io"
	"strings"
	"sync/atomic"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"attractorlab/models"
	"attractorlab/sim"
)

// A run as an animated GIF (standard library image/gif): one frame a
// step, the clean digit, the input and each model's state side by side,
// named, with t and each model's MSE written under them.

// gifPanel is the side of one digit in the animation, in pixels.
const gifPanel = 168

// gifPalette is 216 web-safe colours and 40 greys: the digits' greys,
// the text and the models' colours.
var gifPalette = func() color.Palette {
	p := append(color.Palette{}, palette.WebSafe...)
	for k := range 40 {
		v := uint8(k * 255 / 39)
		p = append(p, color.Gray{Y: v})
	}
	return p
}()

// RunFrames is how many frames WriteRunGIF writes for sn: every step
// recorded, t = 0 … the longest lane's last.
func RunFrames(sn *sim.Snapshot) int {
	n := 0
	for _, l := range sn.Lanes {
		n = max(n, len(l.Frames))
	}
	return n
}

// WriteRunGIF writes sn's run, t = 0 … the last recorded step, a frame
// each (delay hundredths of a second apart; the last is held two
// seconds), looping. The frames are drawn on every core; progress, when
// set, is told each frame drawn (from the drawing goroutines); ctx ends
// the work early with its error, and nothing is written then.
func WriteRunGIF(ctx context.Context, w io.Writer, sn *sim.Snapshot, delay int, progress func(done, total int)) error {
	n := RunFrames(sn)
	if n == 0 {
		return fmt.Errorf("no step is recorded yet")
	}
	anim := &gif.GIF{Image: make([]*image.Paletted, n), Delay: make([]int, n)}
	var done atomic.Int64
	err := models.Parallel(ctx, n, 0, func(_, t int) {
		rgba := runFrame(sn, t)
		pal := image.NewPaletted(rgba.Bounds(), gifPalette)
		imgdraw.Draw(pal, pal.Rect, rgba, rgba.Bounds().Min, imgdraw.Src)
		anim.Image[t] = pal
		anim.Delay[t] = delay
		if progress != nil {
			progress(int(done.Add(1)), n)
		}
	})
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	anim.Delay[n-1] = 200
	return gif.EncodeAll(w, anim)
}

// runFrame draws step t: titles above the digits, t and the errors below.
func runFrame(sn *sim.Snapshot, t int) *image.RGBA {
	const gap, top, bottom = 12, 44, 40
	cols := 2 + len(sn.Lanes)
	wpx, hpx := cols*(gifPanel+gap)+gap, top+gifPanel+bottom
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(wpx)*vg.Inch/96, vg.Length(hpx)*vg.Inch/96), vgimg.UseDPI(96),
		vgimg.UseBackgroundColor(color.White))
	dc := draw.New(glyphCanvasOf(c))
	sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(10)), Handler: plot.DefaultTextHandler, XAlign: draw.XCenter}
	px := func(v int) vg.Length { return vg.Length(v) * vg.Inch / 96 }
	titles := []string{"clean", "input"}
	for _, l := range sn.Lanes {
		titles = append(titles, l.Info.Label)
	}
	var errs []string
	for k, title := range titles {
		x := gap + k*(gifPanel+gap) + gifPanel/2
		s := sty
		if k >= 2 {
			s.Color = ModelColor(sn.Lanes[k-2].Info.Name)
			if f := sn.Lanes[k-2].At(t); f != nil {
				mark := ""
				if f.T == sn.Lanes[k-2].Best {
					mark = " (t*)"
				}
				errs = append(errs, fmt.Sprintf("%s %.4f%s", sn.Lanes[k-2].Info.Name, f.MSE, mark))
			}
		}
		dc.FillText(s, vg.Point{X: px(x), Y: px(hpx - 24)}, title)
	}
	caption := fmt.Sprintf("t = %d   MSE: %s", t, strings.Join(errs, ", "))
	ls := sty
	ls.XAlign = draw.XLeft
	dc.FillText(ls, vg.Point{X: px(gap), Y: px(14)}, caption)
	img := c.Image().(*image.RGBA)
	digit := func(k int, pix []float32, frame color.Color) {
		x0, y0 := gap+k*(gifPanel+gap), top
		for y := range gifPanel {
			for x := range gifPanel {
				v := pix[(y*models.Side/gifPanel)*models.Side+x*models.Side/gifPanel]
				g := uint8(255 * min(max(v, 0), 1))
				img.SetRGBA(x0+x, y0+y, color.RGBA{g, g, g, 255})
			}
		}
		if frame != nil {
			r, g, b, _ := frame.RGBA()
			fc := color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 255}
			for i := -3; i < gifPanel+3; i++ {
				for _, d := range []int{-3, -2, -1, gifPanel, gifPanel + 1, gifPanel + 2} {
					img.SetRGBA(x0+i, y0+d, fc)
					img.SetRGBA(x0+d, y0+i, fc)
				}
			}
		}
	}
	digit(0, sn.Clean, nil)
	digit(1, sn.Input, nil)
	for k, l := range sn.Lanes {
		if f := l.At(t); f != nil {
			digit(2+k, f.Image, ModelColor(l.Info.Name))
		}
	}
	return img
}
