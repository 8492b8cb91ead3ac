package ui

import (
	"attractorlab/sim"
	"attractorlab/sim/mnist"
	"fmt"
	"math/rand/v2"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// Choosing a digit by label: Random and the thumbnail Gallery.

// chosenSet is the digit set of the split selector and the label filter
// (−1 for any label).
func (m *Main) chosenSet() (*mnist.Set, int) {
	set := m.deps.Data.Test
	if m.side.split.Selected == "train" {
		set = m.deps.Data.Train
	}
	want := -1
	if m.side.labelSel.Selected != "any" {
		want, _ = strconv.Atoi(m.side.labelSel.Selected)
	}
	return set, want
}

func (m *Main) randomDigit() {
	set, want := m.chosenSet()
	for range 100000 {
		k := rand.IntN(set.Len())
		if want < 0 || int(set.Labels[k]) == want {
			m.send(func(st *sim.Settings) { st.Index = k })
			return
		}
	}
}

// showGallery opens a grid of thumbnails (filtered by label) to click.
func (m *Main) showGallery() {
	set, want := m.chosenSet()
	var idx []int
	for k := 0; k < set.Len() && len(idx) < 120; k++ {
		if want < 0 || int(set.Labels[k]) == want {
			idx = append(idx, k)
		}
	}
	var d dialog.Dialog
	grid := container.NewGridWrap(fyne.NewSize(64, 64))
	for _, k := range idx {
		img := canvas.NewImageFromImage(grayImage(set.Clean(k, mnist.PixelGain)))
		img.ScaleMode = canvas.ImageScalePixels
		k := k
		b := newTapImage(img, func() {
			m.send(func(st *sim.Settings) { st.Index = k })
			d.Hide()
		})
		grid.Add(b)
	}
	scroll := container.NewVScroll(grid)
	scroll.SetMinSize(fyne.NewSize(700, 460))
	d = dialog.NewCustom(fmt.Sprintf("%s digits (label %s): click one (Esc closes)", m.side.split.Selected, m.side.labelSel.Selected), "Close", scroll, m.win)
	m.showDialog(d)
}

type tapImage struct {
	widget.BaseWidget
	img *canvas.Image
	tap func()
}

func newTapImage(img *canvas.Image, tap func()) *tapImage {
	t := &tapImage{img: img, tap: tap}
	t.ExtendBaseWidget(t)
	return t
}

func (t *tapImage) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(t.img) }
func (t *tapImage) Tapped(*fyne.PointEvent)             { t.tap() }
func (t *tapImage) Cursor() desktop.Cursor              { return desktop.PointerCursor }

// nextOfLabel moves to the next digit (from the current one, wrapping)
// with the label the filter asks for, so choosing a label shows one.
func (m *Main) nextOfLabel() {
	set, want := m.chosenSet()
	if want < 0 || m.snap == nil || m.updating {
		return
	}
	cur := m.snap.Settings.Index
	if int(set.Labels[cur]) == want {
		return
	}
	for d := 1; d < set.Len(); d++ {
		if k := (cur + d) % set.Len(); int(set.Labels[k]) == want {
			m.send(func(st *sim.Settings) { st.Index = k })
			return
		}
	}
}
