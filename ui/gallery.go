package ui

import (
	"attractorlab/sim"
	"attractorlab/sim/mnist"
	"fmt"
	"math/rand/v2"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Choosing a digit by label: Random and the thumbnail Gallery.

// chosenSet is the digit set of the split selector and the label filter
// (−1 for any label).
func (m *Main) chosenSet() (*mnist.Set, int) {
	data := m.source().Data
	set := data.Test
	if m.side.split.Selected == "train" {
		set = data.Train
	}
	return set, slices.Index(data.Classes(), m.side.labelSel.Selected)
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
	// A picture other than a digit is named under its thumbnail (its
	// class: "Sandal"), which a digit does not need.
	classes := m.source().Data.Classes()
	named := m.source().Data.Name() != mnist.MNISTName
	cell := fyne.NewSize(64, 64)
	if named {
		cell = fyne.NewSize(84, 84+theme.TextSize())
	}
	grid := container.NewGridWrap(cell)
	for _, k := range idx {
		img := canvas.NewImageFromImage(grayImage(set.Clean(k, mnist.PixelGain)))
		img.ScaleMode = canvas.ImageScalePixels
		k := k
		var o fyne.CanvasObject = img
		if named {
			name := canvas.NewText(classes[set.Labels[k]], theme.Color(theme.ColorNameForeground))
			name.Alignment = fyne.TextAlignCenter
			name.TextSize = theme.CaptionTextSize()
			o = container.NewBorder(nil, name, nil, nil, img)
		}
		b := newTapImage(o, func() {
			m.send(func(st *sim.Settings) { st.Index = k })
			d.Hide()
		})
		grid.Add(b)
	}
	scroll := container.NewVScroll(grid)
	scroll.SetMinSize(fyne.NewSize(700, 460))
	what := "digits"
	if data := m.source().Data; data.Name() != mnist.MNISTName {
		what = mnist.DatasetLabel(data.Name()) + " pictures"
	}
	title := fmt.Sprintf("%s %s (label %s): click one (Esc closes)", m.side.split.Selected, what, m.side.labelSel.Selected)
	d = dialog.NewCustom(title, "Close", scroll, m.win)
	m.showDialog(d)
}

type tapImage struct {
	widget.BaseWidget
	img fyne.CanvasObject
	tap func()
}

func newTapImage(img fyne.CanvasObject, tap func()) *tapImage {
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
