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

// NewPatternsView shows the n patterns of set with the largest weights, in
// cols columns (8 in 4 for one model; 4 in 2 when four models share the
// row).
func NewPatternsView(set *mnist.Set, n, cols int) *PatternsView {
	v := &PatternsView{set: set}
	v.ExtendBaseWidget(v)
	var cells []fyne.CanvasObject
	for k := 0; k < n; k++ {
		img := canvas.NewImageFromImage(grayImage(make([]float32, sim.Pixels)))
		img.ScaleMode = canvas.ImageScalePixels
		img.FillMode = canvas.ImageFillContain
		img.SetMinSize(fyne.NewSize(24, 24))
		lbl := canvas.NewText("", nil)
		lbl.Alignment = fyne.TextAlignCenter
		v.images = append(v.images, img)
		v.labels = append(v.labels, lbl)
		cells = append(cells, container.NewBorder(nil, lbl, nil, nil, img))
	}
	v.box = container.NewGridWithColumns(cols, cells...)
	return v
}

// CreateRenderer shows the grid.
func (v *PatternsView) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.box) }

// SetWeights shows the top patterns of the weights p (nil: empty).
func (v *PatternsView) SetWeights(p []float32) {
	var top []int
	if len(p) > 0 {
		top = sim.TopPatterns(p, len(v.images))
	}
	for k := range v.images {
		if k < len(top) {
			j := top[k]
			v.images[k].Image = grayImage(v.set.Clean(j, mnist.PixelGain))
			// label and weight; %.1g keeps weights near 1/M readable
			// ("8 4e-05", not "0.00") in a cell as narrow as the image
			v.labels[k].Text = fmt.Sprintf("%d %.1g", v.set.Labels[j], p[j])
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
