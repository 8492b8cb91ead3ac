// Package ui holds Attractor Lab's Fyne views. It reads models through sim
// and never holds the app in a package variable.
package ui

import (
	"context"
	"fmt"
	"image"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"attractorlab/models"
	"attractorlab/sim"
)

// Explorer is the first window: pick a test digit and a corruption, and
// scrub the bare self-attention trajectory with a slider.
type Explorer struct {
	Data  *sim.Data
	Model *models.BSA
	Steps int

	index  int
	task   sim.Kind
	seed   uint64
	traj   [][]float32 // decoded state per t
	mse    []float64
	input  *sim.Corrupted
	clean  *canvas.Image
	corr   *canvas.Image
	state  *canvas.Image
	info   *widget.Label
	slider *widget.Slider
	tLabel *widget.Label
}

// NewExplorer prepares the view for a data set and a model.
func NewExplorer(data *sim.Data, m *models.BSA) *Explorer {
	return &Explorer{Data: data, Model: m, Steps: 100}
}

func pixelImage(img image.Image) *canvas.Image {
	c := canvas.NewImageFromImage(img)
	c.ScaleMode = canvas.ImageScalePixels
	c.FillMode = canvas.ImageFillContain
	c.SetMinSize(fyne.NewSize(224, 224))
	return c
}

func titled(title string, o fyne.CanvasObject) fyne.CanvasObject {
	l := widget.NewLabelWithStyle(title, fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	return container.NewBorder(l, nil, nil, nil, o)
}

// View builds the window content.
func (e *Explorer) View(w fyne.Window) fyne.CanvasObject {
	blank := make([]float32, models.Pixels)
	e.clean = pixelImage(grayImage(blank))
	e.corr = pixelImage(grayImage(blank))
	e.state = pixelImage(grayImage(blank))
	e.info = widget.NewLabel("")
	e.tLabel = widget.NewLabel("t = 0")
	e.slider = widget.NewSlider(0, float64(e.Steps))
	e.slider.Step = 1
	e.slider.OnChanged = func(v float64) { e.show(int(v)) }

	idx := widget.NewEntry()
	idx.SetText("0")
	idx.OnSubmitted = func(s string) {
		k, err := strconv.Atoi(s)
		if err != nil || k < 0 || k >= e.Data.Test.Len() {
			e.info.SetText(fmt.Sprintf("digit index must be 0..%d", e.Data.Test.Len()-1))
			return
		}
		e.index = k
		e.recompute()
	}
	task := widget.NewRadioGroup([]string{"mask 30%", "noise σ²=0.7"}, func(s string) {
		e.task = sim.Mask
		if s == "noise σ²=0.7" {
			e.task = sim.Noise
		}
		e.recompute()
	})
	task.Horizontal = true
	task.SetSelected("mask 30%")
	next := widget.NewButton("Next digit", func() {
		e.index = (e.index + 1) % e.Data.Test.Len()
		idx.SetText(strconv.Itoa(e.index))
		e.recompute()
	})
	reroll := widget.NewButton("Re-roll corruption", func() { e.seed++; e.recompute() })
	controls := container.NewHBox(widget.NewLabel("Test digit"), container.NewGridWrap(fyne.NewSize(80, idx.MinSize().Height), idx),
		next, task, reroll)
	images := container.NewGridWithColumns(3, titled("clean", e.clean), titled("corrupted (t = 0)", e.corr), titled("bare self-attention state", e.state))
	bottom := container.NewVBox(container.NewBorder(nil, nil, e.tLabel, nil, e.slider), e.info)
	e.recompute()
	w.Canvas().SetOnTypedKey(func(k *fyne.KeyEvent) {
		switch k.Name {
		case fyne.KeyRight:
			e.slider.SetValue(min(e.slider.Value+1, e.slider.Max))
		case fyne.KeyLeft:
			e.slider.SetValue(max(e.slider.Value-1, 0))
		case fyne.KeyHome:
			e.slider.SetValue(0)
		}
	})
	return container.NewBorder(controls, bottom, nil, nil, images)
}

// recompute corrupts the digit and runs the trajectory (≈ 100 steps of
// well under a millisecond each).
func (e *Explorer) recompute() {
	if e.clean == nil {
		return
	}
	clean := e.Data.Test.Clean(e.index, sim.PixelGain)
	c := sim.DefaultMask
	if e.task == sim.Noise {
		c = sim.DefaultNoise
	}
	c.Seed = e.seed
	e.input = c.Apply(clean, e.Model.Patches, e.index)
	e.traj = make([][]float32, e.Steps+1)
	e.mse = make([]float64, e.Steps+1)
	sim.RunBSA(context.Background(), e.Model, models.DefaultDynamics(), []*sim.Corrupted{e.input}, e.Steps, 1,
		func(t, _ int, pred []float32, _ float64) {
			e.traj[t] = append([]float32(nil), pred...)
			e.mse[t], _, _ = sim.MSE(pred, clean, e.input.Pixel)
		})
	e.clean.Image = grayImage(clean)
	e.clean.Refresh()
	show := e.input.Clamped()
	e.corr.Image = maskedOverlay(show, e.input.Pixel)
	e.corr.Refresh()
	e.show(int(e.slider.Value))
}

func (e *Explorer) show(t int) {
	if e.traj == nil || t < 0 || t >= len(e.traj) {
		return
	}
	e.state.Image = grayImage(e.traj[t])
	e.state.Refresh()
	best := 1
	for k := 1; k < len(e.mse); k++ {
		if e.mse[k] < e.mse[best] {
			best = k
		}
	}
	e.tLabel.SetText(fmt.Sprintf("t = %3d", t))
	e.info.SetText(fmt.Sprintf("digit %d (label %d): MSE(t=%d) = %.4f   t* = %d, MSE(t*) = %.4f   MSE(0) = %.4f",
		e.index, e.Data.Test.Labels[e.index], t, e.mse[t], best, e.mse[best], e.mse[0]))
}
