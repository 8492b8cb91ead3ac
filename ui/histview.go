package ui

import (
	"attractorlab/sim/figures"
	"fmt"
	"image"
	"image/color"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Histogram draws the distribution of within-patch variances (the paper's
// Fig. 2) of the current step, one colour per compare lane, on a shared
// range [0, Max]. It is drawn directly (no plotting library) so it can
// change every step.
type Histogram struct {
	widget.BaseWidget

	Sets   [][]float64 // one sample per lane
	Names  []string
	Colors []color.Color // each lane's colour (nil: the palette's k-th)
	// Empty says why there are no Sets ("": the chosen models work on
	// pixels).
	Empty string
	Max   float64 // variance range; 0.25 is the largest possible in [0,1]
	Bins  int

	raster *canvas.Raster
	title  *canvas.Text
	xlo    *canvas.Text
	xhi    *canvas.Text
	ytop   *GlyphText   // what the top of the bars is: a share of patches
	means  *canvas.Text // "means:", or why there are none
	keys   []*GlyphText // each lane's name and mean, in its bars' colour (they change each step)
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	h := &Histogram{Max: 0.25, Bins: 25}
	h.ExtendBaseWidget(h)
	return h
}

// CreateRenderer builds the objects once.
func (h *Histogram) CreateRenderer() fyne.WidgetRenderer {
	h.raster = canvas.NewRaster(h.draw)
	h.title = canvas.NewText("within-patch variance", theme.Color(theme.ColorNameForeground))
	h.xlo = canvas.NewText("0", theme.Color(theme.ColorNameForeground))
	h.xhi = canvas.NewText("", theme.Color(theme.ColorNameForeground))
	h.means = canvas.NewText("", theme.Color(theme.ColorNameForeground))
	h.ytop = NewGlyphText("", theme.Color(theme.ColorNameForeground))
	r := &histRenderer{h: h}
	return r
}

type histRenderer struct{ h *Histogram }

func (r *histRenderer) Layout(s fyne.Size) {
	h := r.h
	th := h.title.MinSize().Height
	h.title.Move(fyne.NewPos(4, 0))
	h.means.Move(fyne.NewPos(4, th))
	x := 4 + h.means.MinSize().Width + 4
	for _, k := range h.keys {
		k.Move(fyne.NewPos(x, th))
		k.Resize(k.MinSize())
		x += k.MinSize().Width + 6
	}
	h.ytop.Move(fyne.NewPos(s.Width-h.ytop.MinSize().Width, 2*th))
	h.ytop.Resize(h.ytop.MinSize())
	h.raster.Move(fyne.NewPos(0, 3*th))
	h.raster.Resize(fyne.NewSize(s.Width, max(s.Height-4*th, 1)))
	h.xlo.Move(fyne.NewPos(0, s.Height-th))
	h.xhi.Move(fyne.NewPos(s.Width-h.xhi.MinSize().Width, s.Height-th))
}

func (r *histRenderer) MinSize() fyne.Size { return fyne.NewSize(140, 110) }

func (r *histRenderer) Refresh() {
	h := r.h
	fg := theme.Color(theme.ColorNameForeground)
	sz := theme.CaptionTextSize()
	xhi, means := fmt.Sprintf("%.3g", h.Max), "means:"
	// One key per lane, made when the lanes change; only their text
	// changes from step to step.
	if len(h.keys) != len(h.Sets) {
		h.keys = h.keys[:0]
		for k := range h.Sets {
			key := NewGlyphText("", h.colorOf(k))
			key.TextStyle.Bold = true
			h.keys = append(h.keys, key)
		}
	}
	for k, set := range h.Sets {
		var m float64
		for _, v := range set {
			m += v
		}
		if len(set) > 0 {
			m /= float64(len(set))
		}
		name := ""
		if k < len(h.Names) {
			name = h.Names[k]
		}
		setGlyphText(h.keys[k], fmt.Sprintf("%s %.3f", name, m), h.colorOf(k), sz)
	}
	ytop := ""
	if _, peak := h.shares(); peak > 0 {
		ytop = fmt.Sprintf("tallest bar: %.0f%% of the patches", 100*peak)
	}
	if len(h.Sets) == 0 {
		means = "no patches: the chosen models work on pixels"
		if h.Empty != "" {
			means = h.Empty
		}
	}
	for _, t := range []struct {
		t    *canvas.Text
		text string
	}{{h.title, h.title.Text}, {h.xlo, h.xlo.Text}, {h.xhi, xhi}, {h.means, means}} {
		setCanvasText(t.t, t.text, fg, sz)
	}
	setGlyphText(h.ytop, ytop, fg, sz)
	h.raster.Refresh()
	r.Layout(h.Size())
}

func (r *histRenderer) Objects() []fyne.CanvasObject {
	h := r.h
	objs := []fyne.CanvasObject{h.raster, h.title, h.means, h.xlo, h.xhi, h.ytop}
	for _, k := range h.keys {
		objs = append(objs, k)
	}
	return objs
}
func (r *histRenderer) Destroy() {}

// shares is, for each lane, the share of its patches in each bin, and the
// largest share (the top of the bars).
func (h *Histogram) shares() ([][]float64, float64) {
	counts := make([][]float64, len(h.Sets))
	peak := 0.0
	for k, set := range h.Sets {
		counts[k] = make([]float64, h.Bins)
		for _, v := range set {
			b := min(int(v/h.Max*float64(h.Bins)), h.Bins-1)
			counts[k][max(b, 0)]++
		}
		for b := range counts[k] {
			if len(set) > 0 {
				counts[k][b] /= float64(len(set))
			}
			peak = math.Max(peak, counts[k][b])
		}
	}
	return counts, peak
}

func (h *Histogram) draw(w, hgt int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, hgt))
	if len(h.Sets) == 0 || w < 10 || hgt < 10 {
		return img
	}
	counts, peak := h.shares()
	if peak == 0 {
		return img
	}
	axis := theme.Color(theme.ColorNameForeground)
	lanes := len(h.Sets)
	bw := float64(w) / float64(h.Bins)
	for b := 0; b < h.Bins; b++ {
		for k := range h.Sets {
			c := color.RGBAModel.Convert(h.colorOf(k)).(color.RGBA)
			x0 := int(float64(b)*bw + float64(k)*bw/float64(lanes))
			x1 := int(float64(b)*bw + float64(k+1)*bw/float64(lanes))
			top := hgt - int(counts[k][b]/peak*float64(hgt-2))
			for x := x0; x < x1-1 && x < w; x++ {
				for y := top; y < hgt; y++ {
					img.SetRGBA(x, y, color.RGBA{c.R, c.G, c.B, 255})
				}
			}
		}
	}
	r, g, b, _ := axis.RGBA()
	for x := 0; x < w; x++ {
		img.SetRGBA(x, hgt-1, color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 255})
	}
	return img
}

// colorOf is lane k's colour: its model's, or the palette's k-th.
func (h *Histogram) colorOf(k int) color.Color {
	if k < len(h.Colors) && h.Colors[k] != nil {
		return h.Colors[k]
	}
	return figures.Palette[k%len(figures.Palette)]
}

// setCanvasText gives t its text, colour and size, refreshing it only when
// one of them changed: a step changes a few of a view's texts, and in the
// page each refresh costs Fyne's check of the calling goroutine.
func setCanvasText(t *canvas.Text, text string, c color.Color, size float32) {
	if t.Text == text && t.TextSize == size && t.Color == c {
		return
	}
	t.Text, t.Color, t.TextSize = text, c, size
	t.Refresh()
}

// setGlyphText is setCanvasText for a GlyphText.
func setGlyphText(t *GlyphText, text string, c color.Color, size float32) {
	if t.Text == text && t.TextSize == size && t.Color == c {
		return
	}
	t.Text, t.Color, t.TextSize = text, c, size
	t.Refresh()
}
