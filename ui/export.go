package ui

import (
	"bytes"
	"fmt"
	"image"
	"io"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"
	"gonum.org/v1/plot"

	"attractorlab/sim"
	"attractorlab/sim/figures"
)

// exportItem is one thing the Export dialog can write.
type exportItem struct {
	label, file string
	write       func(io.Writer) error
}

// exports lists what can be exported from the current snapshot.
func (m *Main) exports() []exportItem {
	sn := m.snap
	img := func(f func() image.Image) func(io.Writer) error {
		return func(w io.Writer) error { return writePNG(w, f()) }
	}
	items := []exportItem{
		{"Window (PNG)", "attractorlab-window.png", img(func() image.Image { return m.win.Canvas().Capture() })},
		{"Trajectory (CSV)", "trajectory.csv", func(w io.Writer) error { return sim.WriteTrajectoryCSV(w, sn) }},
		{"Scenario (JSON, reopens exactly)", "scenario.json", func(w io.Writer) error { return sim.WriteScenario(w, sn) }},
		{"Clean image (PNG)", "clean.png", img(func() image.Image { return m.clean.draw(560, 560) })},
		{"Input image (PNG)", "input.png", img(func() image.Image { return m.input.draw(560, 560) })},
		{"MSE plot (PNG)", "mse.png", m.plotPNG(msePlot, m.logY)},
		{"Energy plot (PNG)", "energy.png", m.plotPNG(energyPlot, false)},
		{"Variance histogram (PNG)", "variance.png", img(func() image.Image { return m.hist.draw(900, 500) })},
	}
	for k, v := range m.states {
		v := v
		name := sn.Lanes[k].Info.Name
		items = append(items, exportItem{fmt.Sprintf("%s state (PNG)", sn.Lanes[k].Info.Label),
			fmt.Sprintf("%s-t%d.png", name, sn.T), img(func() image.Image { return v.draw(560, 560) })})
	}
	for k, h := range m.heat {
		h := h
		items = append(items, exportItem{fmt.Sprintf("%s attention (PNG)", sn.Lanes[k].Info.Label),
			fmt.Sprintf("%s-attention-t%d.png", sn.Lanes[k].Info.Name, sn.T), img(func() image.Image { return h.image(560) })})
	}
	return items
}

// plotPNG writes a plot panel at 1200×700 as the window shows it, with
// its legend and the t and t* markers drawn in, or says why it cannot.
func (m *Main) plotPNG(build func(*sim.Snapshot, figures.TrajectoryOptions) (*plot.Plot, error), logY bool) func(io.Writer) error {
	return func(w io.Writer) error {
		sn := m.snap
		o := figures.TrajectoryOptions{LogY: logY, Legend: true, Now: sn.T, Best: -1}
		if len(sn.Lanes) == 1 && !sn.Settings.NothingToRepair() {
			o.Best = sn.Lanes[0].Best
		}
		pl, err := build(sn, o)
		if err != nil {
			return err
		}
		return writePNG(w, figures.Render(pl, 1200, 700, 120))
	}
}

// image renders the heatmap alone at side×side pixels, every entry on the
// window's colour scale (side ≥ 2 entries per pixel needs no aggregation).
func (h *Heatmap) image(side int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	if h.Rows == 0 || len(h.shown) != h.Rows*h.Cols {
		return img
	}
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			img.SetRGBA(x, y, viridis(float64(h.shown[(y*h.Rows/side)*h.Cols+x*h.Cols/side])))
		}
	}
	return img
}

// showExport asks what to export, then where. Fyne's save dialog asks
// before replacing an existing file.
func (m *Main) showExport() {
	if m.snap == nil {
		return
	}
	items := m.exports()
	var labels []string
	for _, it := range items {
		labels = append(labels, it.label)
	}
	choice := widget.NewRadioGroup(labels, nil)
	choice.SetSelected(labels[0])
	dialog.ShowCustomConfirm("Export", "Choose a file…", "Cancel", choice, func(ok bool) {
		if !ok {
			return
		}
		for _, it := range items {
			if it.label != choice.Selected {
				continue
			}
			// Render first: a failure is reported before any file is
			// chosen, so nothing partial is ever written.
			var buf bytes.Buffer
			if err := it.write(&buf); err != nil {
				dialog.ShowError(fmt.Errorf("%s: %w", it.label, err), m.win)
				return
			}
			m.saveAs(it.file, buf.Bytes())
		}
	}, m.win)
}

func (m *Main) saveAs(file string, data []byte) {
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil {
			dialog.ShowError(err, m.win)
			return
		}
		if w == nil {
			return
		}
		_, werr := w.Write(data)
		cerr := w.Close()
		if werr == nil {
			werr = cerr
		}
		if werr != nil {
			dialog.ShowError(fmt.Errorf("%s: %w", w.URI().Path(), werr), m.win)
			return
		}
		m.setStatus("saved " + w.URI().Path())
	}, m.win)
	d.SetFileName(file)
	d.Show()
}

// openScenario restores a saved scenario; a bad file is reported by name
// and nothing changes.
func (m *Main) openScenario() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			dialog.ShowError(err, m.win)
			return
		}
		if r == nil {
			return
		}
		defer r.Close()
		if err := m.OpenScenario(r, r.URI().Path()); err != nil {
			dialog.ShowError(err, m.win)
		}
	}, m.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".json"}))
	d.Show()
}

// OpenScenario applies a scenario read from r (name is used in errors).
func (m *Main) OpenScenario(r io.Reader, name string) error {
	st, t, err := sim.ReadScenario(r, name)
	if err != nil {
		return err
	}
	for _, l := range st.Lanes {
		if _, err := m.deps.Catalogue.Model(l, st); err != nil {
			return fmt.Errorf("%s: model %s is not available here: %w", name, l, err)
		}
	}
	m.Engine.Restore(st, t)
	m.setStatus("opened " + name)
	return nil
}
