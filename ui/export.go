package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/software"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"gonum.org/v1/plot"

	"attractorlab/sim"
	"attractorlab/sim/figures"
)

// exportItem is one thing the Export dialog can write.
type exportItem struct {
	label, file string
	write       func(io.Writer) error
	// slow, when set, is write for a job that takes seconds (the run as a
	// GIF): the dialog runs it off Fyne's goroutine with progress and
	// Cancel, so the window answers meanwhile. It reads only what it
	// captured (an immutable snapshot), never the widgets.
	slow func(ctx context.Context, w io.Writer, progress func(done, total int)) error
}

// exports lists what can be exported from the current snapshot.
func (m *Main) exports() []exportItem {
	sn := m.snap
	img := func(f func() image.Image) func(io.Writer) error {
		return func(w io.Writer) error { return writePNG(w, f()) }
	}
	items := []exportItem{
		{"Window (PNG)", "attractorlab-window.png", img(m.windowImage), nil},
		{"Trajectory (CSV)", "trajectory.csv", func(w io.Writer) error { return sim.WriteTrajectoryCSV(w, sn) }, nil},
		{"Scenario (JSON, reopens exactly)", "scenario.json", func(w io.Writer) error { return sim.WriteScenario(w, sn) }, nil},
		{"Clean image (PNG)", "clean.png", img(func() image.Image { return m.clean.draw(560, 560) }), nil},
		{"Input image (PNG)", "input.png", img(func() image.Image { return m.input.draw(560, 560) }), nil},
		{"MSE plot (PNG)", "mse.png", m.plotPNG(msePlot, m.logY), nil},
		{"MSE plot (SVG)", "mse.svg", m.plotVector(msePlot, m.logY, "svg"), nil},
		{"MSE plot (PDF)", "mse.pdf", m.plotVector(msePlot, m.logY, "pdf"), nil},
		{"Energy plot (PNG)", "energy.png", m.plotPNG(energyPlot, false), nil},
		{"Energy plot (SVG)", "energy.svg", m.plotVector(energyPlot, false, "svg"), nil},
		{"Energy plot (PDF)", "energy.pdf", m.plotVector(energyPlot, false, "pdf"), nil},
		{label: fmt.Sprintf("The run as an animated GIF (t = 0 … %d, 10 steps a second)", figures.RunFrames(sn)-1), file: "run.gif",
			write: func(w io.Writer) error { return figures.WriteRunGIF(context.Background(), w, sn, 10, nil) },
			slow: func(ctx context.Context, w io.Writer, progress func(int, int)) error {
				return figures.WriteRunGIF(ctx, w, sn, 10, progress)
			}},
		{"Variance histogram (PNG)", "variance.png", img(func() image.Image { return m.hist.draw(900, 500) }), nil},
	}
	// A panel per lane: the panels of a model whose weights are still
	// being fetched (no lane yet) have nothing to export.
	for k, v := range m.states[:min(len(m.states), len(sn.Lanes))] {
		v := v
		name := sn.Lanes[k].Info.Name
		items = append(items, exportItem{fmt.Sprintf("%s state (PNG)", sn.Lanes[k].Info.Label),
			fmt.Sprintf("%s-t%d.png", name, sn.T), img(func() image.Image { return v.draw(560, 560) }), nil})
	}
	for k, h := range m.heat[:min(len(m.heat), len(sn.Lanes))] {
		h := h
		items = append(items, exportItem{fmt.Sprintf("%s attention (PNG)", sn.Lanes[k].Info.Label),
			fmt.Sprintf("%s-attention-t%d.png", sn.Lanes[k].Info.Name, sn.T), img(func() image.Image { return h.image(560) }), nil})
	}
	return items
}

// plotPNG writes a plot panel at 1200×700 as the window shows it, with
// its legend and the t and t* markers drawn in, or says why it cannot.
func (m *Main) plotPNG(build func(*sim.Snapshot, figures.TrajectoryOptions) (*plot.Plot, error), logY bool) func(io.Writer) error {
	return func(w io.Writer) error {
		pl, err := m.panelPlot(build, logY)
		if err != nil {
			return err
		}
		return writePNG(w, figures.RenderLegendRight(pl, 1200, 700, 120))
	}
}

// plotVector writes a plot panel as SVG or PDF (format), 900×525 points,
// as plotPNG draws it.
func (m *Main) plotVector(build func(*sim.Snapshot, figures.TrajectoryOptions) (*plot.Plot, error), logY bool, format string) func(io.Writer) error {
	return func(w io.Writer) error {
		pl, err := m.panelPlot(build, logY)
		if err != nil {
			return err
		}
		return figures.WriteVector(w, pl, format, 900, 525)
	}
}

// panelPlot builds a plot panel of the current snapshot for export: its
// legend, the t marker, and t* when one model runs.
func (m *Main) panelPlot(build func(*sim.Snapshot, figures.TrajectoryOptions) (*plot.Plot, error), logY bool) (*plot.Plot, error) {
	sn := m.snap
	o := figures.TrajectoryOptions{LogY: logY, Legend: true, Now: sn.T, Best: -1}
	if len(sn.Lanes) == 1 && !sn.Settings.NothingToRepair() {
		o.Best = sn.Lanes[0].Best
	}
	return build(sn, o)
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

// showExport lists what can be exported, a button each; the chosen one is
// rendered at once (a failure is reported before any file is chosen, so
// nothing partial is ever written), then saveAs asks where. By keys:
// Ctrl+E, Tab to the item, Space.
func (m *Main) showExport() {
	if m.snap == nil {
		return
	}
	m.exportFrom(m.win, m.exports())
}

// exportFrom shows the Export dialog of items in window win (the main
// window, the ensemble's, the basin map's): one path for every export.
func (m *Main) exportFrom(win fyne.Window, items []exportItem) {
	var d dialog.Dialog
	list := container.NewVBox()
	for _, it := range items {
		b := widget.NewButton(it.label, func() {
			d.Hide()
			if it.slow != nil {
				m.exportSlow(win, it)
				return
			}
			var buf bytes.Buffer
			if err := it.write(&buf); err != nil {
				m.showErrorIn(win, fmt.Errorf("%s: %w", it.label, err))
				return
			}
			m.saveAsIn(win, it.file, buf.Bytes())
		})
		b.Alignment = widget.ButtonAlignLeading
		list.Add(b)
	}
	d = dialog.NewCustom("Export", "Cancel", container.NewVScroll(list), win)
	d.Resize(fyne.NewSize(420, min(list.MinSize().Height+120, win.Canvas().Size().Height-40)))
	m.showDialog(d)
}

// exportSlow writes it off Fyne's goroutine, with a progress bar and
// Cancel; then asks where to save it, as a quick export does. Cancelled or
// failed, nothing is written.
func (m *Main) exportSlow(win fyne.Window, it exportItem) {
	ctx, cancel := context.WithCancel(m.ctx)
	bar := widget.NewProgressBar()
	note := widget.NewLabel("drawing " + it.file + "…")
	d := dialog.NewCustom("Exporting "+it.file, "Cancel", container.NewVBox(note, bar), win)
	d.SetOnClosed(func() { cancel() })
	d.Resize(fyne.NewSize(420, d.MinSize().Height))
	m.showDialog(d)
	m.setStatus("exporting " + it.file + "… (the window stays usable; Cancel in the dialog stops it)")
	var last atomic.Int64
	progress := func(done, total int) {
		// At most ~30 updates a second reach the bar.
		now := time.Now().UnixMilli()
		if prev := last.Load(); now-prev < 33 && done < total || !last.CompareAndSwap(prev, now) {
			return
		}
		fyne.Do(func() {
			bar.SetValue(float64(done) / float64(total))
			note.SetText(fmt.Sprintf("drawing %s: frame %d of %d", it.file, done, total))
		})
	}
	go func() {
		var buf bytes.Buffer
		err := it.slow(ctx, &buf, progress)
		fyne.Do(func() {
			cancelled := ctx.Err() != nil
			d.Hide()
			cancel()
			switch {
			case cancelled:
				m.setStatus("export of " + it.file + " cancelled: nothing written")
			case err != nil:
				m.showErrorIn(win, fmt.Errorf("%s: %w", it.label, err))
			default:
				m.setStatus("")
				m.saveAsIn(win, it.file, buf.Bytes())
			}
			if m.exportDone != nil {
				m.exportDone()
			}
		})
	}()
}

// showErrorIn shows a problem in win: the main window's error dialog, or
// the same in a population window.
func (m *Main) showErrorIn(win fyne.Window, err error) {
	if win == m.win {
		m.showError(err)
		return
	}
	l := widget.NewLabel(err.Error())
	l.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustom("Error", "Close", l, win)
	d.Resize(fyne.NewSize(min(560, win.Canvas().Size().Width-40), d.MinSize().Height+
		fyne.MeasureText(err.Error(), theme.TextSize(), fyne.TextStyle{}).Width/480*theme.TextSize()*1.5))
	m.showDialog(d)
}

// saveAs asks where to write data, offering the last folder used and the
// file's usual name. A typed path may be absolute, start with ~/ or be
// relative to the folder shown. An existing file is replaced only after
// asking; the file appears whole or not at all. Browse… opens Fyne's file
// chooser instead.
func (m *Main) saveAs(file string, data []byte) { m.saveAsIn(m.win, file, data) }

// saveAsIn is saveAs in window win.
func (m *Main) saveAsIn(win fyne.Window, file string, data []byte) {
	if browserSave != nil {
		if err := browserSave(file, data); err != nil {
			m.showErrorIn(win, fmt.Errorf("downloading %s: %w", file, err))
			return
		}
		m.setStatus(fmt.Sprintf("downloaded %s (%d bytes): the browser's downloads hold it", file, len(data)))
		return
	}
	home, _ := os.UserHomeDir()
	dir := m.app.Preferences().StringWithFallback("exportDir", home)
	var d dialog.Dialog
	entry := newKeyEntry(func() { d.Hide() })
	entry.SetText(filepath.Join(dir, file))
	browse := widget.NewButton("Browse…", func() {
		d.Hide()
		m.browseSave(win, file, data)
	})
	save := func(replace bool) {
		path, err := resolvePath(entry.Text, dir, home)
		if err == nil {
			err = saveFile(path, data, replace)
		}
		switch {
		case errors.Is(err, errExists):
			m.showDialog(dialog.NewConfirm("Replace?", path+" exists. Replace it?", func(ok bool) {
				if ok {
					if err := saveFile(path, data, true); err != nil {
						m.showErrorIn(win, err)
						return
					}
					m.saved(d, path)
				}
			}, win))
		case err != nil:
			m.showErrorIn(win, err)
		default:
			m.saved(d, path)
		}
	}
	entry.OnSubmitted = submitOnFyne(func(string) { save(false) })
	body := container.NewBorder(nil, nil, nil, browse, entry)
	d = dialog.NewCustomConfirm("Save as", "Save", "Cancel", body, func(ok bool) {
		if ok {
			save(false)
		}
	}, win)
	d.Resize(fyne.NewSize(640, d.MinSize().Height))
	m.showDialog(d)
	win.Canvas().Focus(entry)
}

func (m *Main) saved(d dialog.Dialog, path string) {
	d.Hide()
	m.app.Preferences().SetString("exportDir", filepath.Dir(path))
	m.setStatus("saved " + path)
}

// browseSave is Fyne's own save dialog (it asks before replacing a file).
func (m *Main) browseSave(win fyne.Window, file string, data []byte) {
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil {
			m.showErrorIn(win, err)
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
			m.showErrorIn(win, fmt.Errorf("%s: %w", w.URI().Path(), werr))
			return
		}
		m.app.Preferences().SetString("exportDir", filepath.Dir(w.URI().Path()))
		m.setStatus("saved " + w.URI().Path())
	}, win)
	d.SetFileName(file)
	m.showDialog(d)
}

var errExists = errors.New("exists")

// resolvePath turns what was typed into a path: absolute as typed, ~/ in
// the home folder, anything else in dir.
func resolvePath(typed, dir, home string) (string, error) {
	p := strings.TrimSpace(typed)
	switch {
	case p == "":
		return "", errors.New("no file name given")
	case p == "~" || strings.HasPrefix(p, "~/"):
		p = filepath.Join(home, p[1:])
	case !filepath.IsAbs(p):
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p), nil
}

// saveFile writes data to path through a temporary file in the same folder
// and a rename, so a failure leaves no partial file. An existing path is
// refused with errExists unless replace is set; a folder never is replaced.
func saveFile(path string, data []byte, replace bool) error {
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fmt.Errorf("%s is a folder: add a file name", path)
		}
		if !replace {
			return fmt.Errorf("%s: %w", path, errExists)
		}
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: the folder %s does not exist", path, dir)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	switch {
	case werr != nil:
	case replace:
		werr = os.Rename(tmp.Name(), path)
	default:
		// A hard link fails on a file that appeared since the check
		// above, where a rename would replace it unasked (as the
		// commands' outputs, app/outputs.go).
		if werr = os.Link(tmp.Name(), path); errors.Is(werr, os.ErrExist) {
			werr = errExists
		}
	}
	os.Remove(tmp.Name())
	if werr != nil {
		return fmt.Errorf("%s: %w", path, werr)
	}
	return nil
}

// windowImage draws the window's content as it is on screen, in memory
// with Fyne's software painter: reading the OpenGL front buffer (the
// canvas's Capture) gives an empty image under X servers without a
// compositor, such as Xvfb.
func (m *Main) windowImage() image.Image {
	wc := m.win.Canvas()
	content := wc.Content()
	pos, size := content.Position(), content.Size()
	pad := theme.Padding()
	c := software.NewCanvas()
	c.SetPadded(true)
	c.SetScale(wc.Scale())
	c.Resize(size.AddWidthHeight(2*pad, 2*pad))
	c.SetContent(content)
	img := c.Capture()
	// The software canvas laid the content out at its own origin: put it
	// back where the window has it.
	content.Move(pos)
	content.Resize(size)
	return img
}

// openScenario restores a saved scenario; a bad file is reported by name
// and nothing changes.
func (m *Main) openScenario() {
	m.openJSON("scenario", m.OpenScenarioFile, m.OpenScenario, sim.MaxScenarioSize)
}

// browserSave and browserOpen are the web build's download and file
// picker (browser_js.go); the desktop has neither.
var (
	browserSave func(name string, data []byte) error
	browserOpen func(what string, max int64, open func(r io.Reader, name string) error, report func(error))
)

// openJSON asks for a .json file, what (a scenario, a lesson), and hands
// it to open: a path typed in the field (absolute, ~/…, or relative to
// the folder shown) or one chosen with Browse…. open reads it through
// the one bounded reader (a FIFO, a device or a file over its cap is
// refused by name before a byte is read); a file open refuses is reported
// by name, nothing changes and the dialog stays to correct the path. The
// chooser lists regular files only: Fyne opens the chosen file before its
// callback, and opening a FIFO would block the window. In the browser the
// browser's file picker chooses, and read gets the file (of at most max
// bytes).
func (m *Main) openJSON(what string, open func(path string) error, read func(r io.Reader, name string) error, max int64) {
	m.openFile(what, []string{".json"}, open, read, max)
}

// openFile is openJSON for files whose names end in one of exts.
func (m *Main) openFile(what string, exts []string, open func(path string) error, read func(r io.Reader, name string) error, max int64) {
	if browserOpen != nil {
		browserOpen(what, max, read, m.showError)
		return
	}
	home, _ := os.UserHomeDir()
	dir := m.app.Preferences().StringWithFallback("openDir", home)
	var d dialog.Dialog
	entry := newKeyEntry(func() { d.Hide() })
	entry.SetText(dir + string(filepath.Separator))
	entry.SetPlaceHolder("path of the " + what + " (" + strings.Join(exts, ", ") + ")")
	try := func(path string) {
		if err := m.openPath(path, what, open); err != nil {
			m.showError(err)
			return
		}
		d.Hide()
	}
	typed := func() {
		path, err := resolvePath(entry.Text, dir, home)
		if err != nil {
			m.showError(fmt.Errorf("%s: %w", what, err))
			return
		}
		try(path)
	}
	browse := widget.NewButton("Browse…", func() {
		fd := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
			if err != nil {
				m.showError(err)
				return
			}
			if r == nil {
				return
			}
			path := r.URI().Path()
			r.Close()
			entry.SetText(path)
			try(path)
		}, m.win)
		fd.SetFilter(regularFiles(exts))
		m.showDialog(fd)
	})
	entry.OnSubmitted = submitOnFyne(func(string) { typed() })
	body := container.NewVBox(widget.NewLabel("Type the path of a "+what+" file, or browse for it:"),
		container.NewBorder(nil, nil, nil, browse, entry))
	d = dialog.NewCustomWithoutButtons("Open "+what, body, m.win)
	open_ := widget.NewButton("Open", typed)
	open_.Importance = widget.HighImportance
	d.(*dialog.CustomDialog).SetButtons([]fyne.CanvasObject{widget.NewButton("Cancel", func() { d.Hide() }), open_})
	d.Resize(fyne.NewSize(640, d.MinSize().Height))
	m.showDialog(d)
	m.win.Canvas().Focus(entry)
}

// openPath hands path to open (which reads it through a bounded reader)
// and remembers its folder for the next time.
func (m *Main) openPath(path, what string, open func(path string) error) error {
	if err := open(path); err != nil {
		return err
	}
	m.app.Preferences().SetString("openDir", filepath.Dir(path))
	return nil
}

// regularFiles lets the file chooser list regular files with one of exts.
type regularFiles []string

func (f regularFiles) Matches(u fyne.URI) bool {
	ok := false
	for _, e := range f {
		ok = ok || strings.EqualFold(u.Extension(), e)
	}
	if !ok {
		return false
	}
	st, err := os.Stat(u.Path())
	return err == nil && st.Mode().IsRegular()
}

// OpenScenarioFile applies the scenario file at path (a regular file of
// at most sim.MaxScenarioSize).
func (m *Main) OpenScenarioFile(path string) error {
	st, t, err := m.deps.Catalogue.ReadScenarioFile(path)
	if err != nil {
		return err
	}
	m.Engine.Restore(st, t)
	m.setStatus("opened " + path)
	return nil
}

// OpenScenario applies a scenario read from r (name is used in errors),
// checked as OpenScenarioFile checks a file.
func (m *Main) OpenScenario(r io.Reader, name string) error {
	st, t, err := m.deps.Catalogue.ReadScenario(r, name)
	if err != nil {
		return err
	}
	m.Engine.Restore(st, t)
	m.setStatus("opened " + name)
	return nil
}
