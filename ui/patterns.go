package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// PatternsView is the modern Hopfield network's "attention": the stored
// patterns with the largest softmax weights at this step, with their
// weights and labels.
type PatternsView struct {
	widget.BaseWidget
	images []*canvas.Image
	labels []*canvas.Text
	box    *fyne.Container
	set    *mnist.Set
}

const topPatterns = 8

// NewPatternsView shows patterns of set.
func NewPatternsView(set *mnist.Set) *PatternsView {
	v := &PatternsView{set: set}
	v.ExtendBaseWidget(v)
	var cells []fyne.CanvasObject
	for k := 0; k < topPatterns; k++ {
		img := canvas.NewImageFromImage(grayImage(make([]float32, sim.Pixels)))
		img.ScaleMode = canvas.ImageScalePixels
		img.FillMode = canvas.ImageFillContain
		img.SetMinSize(fyne.NewSize(36, 36))
		lbl := canvas.NewText("", nil)
		lbl.Alignment = fyne.TextAlignCenter
		v.images = append(v.images, img)
		v.labels = append(v.labels, lbl)
		cells = append(cells, container.NewBorder(nil, lbl, nil, nil, img))
	}
	v.box = container.NewGridWithColumns(2, cells...)
	return v
}

// CreateRenderer shows the grid.
func (v *PatternsView) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.box) }

// SetWeights shows the top patterns of the weights p (nil: empty).
func (v *PatternsView) SetWeights(p []float32) {
	var top []int
	if len(p) > 0 {
		top = sim.TopPatterns(p, topPatterns)
	}
	for k := range v.images {
		if k < len(top) {
			j := top[k]
			v.images[k].Image = grayImage(v.set.Clean(j, mnist.PixelGain))
			v.labels[k].Text = fmt.Sprintf("%d  %.2g", v.set.Labels[j], p[j]) // weights near 1/M stay readable
		} else {
			v.images[k].Image = grayImage(make([]float32, sim.Pixels))
			v.labels[k].Text = ""
		}
		v.labels[k].TextSize = themeCaption()
		v.labels[k].Color = themeForeground()
		v.images[k].Refresh()
		v.labels[k].Refresh()
	}
}
