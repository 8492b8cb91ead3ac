package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// File → Open a folder of pictures as a data set…: the folder (one
// sub-folder of pictures per class) is converted once into the cache, with
// progress and Cancel, and the window switches to it (docs/data.md).

func (m *Main) openFolder() {
	if inBrowser() {
		m.showError(fmt.Errorf("the page cannot read a folder: convert it with `attractorlab data --dataset FOLDER` in the desktop app"))
		return
	}
	home, _ := os.UserHomeDir()
	dir := m.app.Preferences().StringWithFallback("openDir", home)
	var d dialog.Dialog
	entry := newKeyEntry(func() { d.Hide() })
	entry.SetText(dir + string(filepath.Separator))
	entry.SetPlaceHolder("a folder with one sub-folder of pictures per class")
	typed := func() {
		path, err := resolvePath(entry.Text, dir, home)
		if err != nil {
			m.showError(fmt.Errorf("folder: %w", err))
			return
		}
		d.Hide()
		m.ConvertFolder(path, nil)
	}
	browse := widget.NewButton("Browse…", func() {
		fd := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
			if err != nil {
				m.showError(err)
				return
			}
			if u == nil {
				return
			}
			entry.SetText(u.Path())
			typed()
		}, m.win)
		m.showDialog(fd)
	})
	entry.OnSubmitted = submitOnFyne(func(string) { typed() })
	body := container.NewVBox(
		widget.NewLabel("A folder of pictures as a data set: one sub-folder per class (shapes/circle/1.png, …),\neach picture prepared as your own digit is. Type its path or browse for it:"),
		container.NewBorder(nil, nil, nil, browse, entry))
	d = dialog.NewCustomWithoutButtons("Open a folder of pictures", body, m.win)
	open := widget.NewButton("Open", typed)
	open.Importance = widget.HighImportance
	d.(*dialog.CustomDialog).SetButtons([]fyne.CanvasObject{widget.NewButton("Cancel", func() { d.Hide() }), open})
	d.Resize(fyne.NewSize(680, d.MinSize().Height))
	m.showDialog(d)
	m.win.Canvas().Focus(entry)
}

// ConvertFolder caches the folder dir as a data set (sim.CacheFolder, off
// Fyne's goroutine, with a progress bar and Cancel) and switches the
// window to it; done, when not nil, is told on Fyne's goroutine with the
// outcome. Cancelled or failed, the cache and the window stay as they
// were.
func (m *Main) ConvertFolder(dir string, done func(error)) {
	ctx, cancel := context.WithCancel(m.ctx)
	name := sim.FolderNameFor(dir)
	bar := widget.NewProgressBar()
	note := widget.NewLabel("reading " + dir + "…")
	d := dialog.NewCustom("Converting "+filepath.Base(dir), "Cancel", container.NewVBox(note, bar), m.win)
	d.SetOnClosed(cancel)
	d.Resize(fyne.NewSize(520, d.MinSize().Height))
	m.showDialog(d)
	var last atomic.Int64
	progress := func(k, total int) {
		now := time.Now().UnixMilli()
		if prev := last.Load(); now-prev < 33 && k < total || !last.CompareAndSwap(prev, now) {
			return
		}
		fyne.Do(func() {
			bar.SetValue(float64(k) / float64(total))
			note.SetText(fmt.Sprintf("%s: picture %d of %d", dir, k, total))
		})
	}
	go func() {
		man, err := sim.CacheFolder(ctx, dir, name, progress)
		fyne.Do(func() {
			cancelled := ctx.Err() != nil && err != nil
			d.Hide()
			cancel()
			switch {
			case cancelled:
				m.setStatus("conversion of " + dir + " cancelled: nothing cached")
			case err != nil:
				m.showError(err)
			default:
				m.app.Preferences().SetString("openDir", filepath.Dir(dir))
				ds := mnist.FolderPrefix + name
				m.send(func(st *sim.Settings) { st.Dataset, st.Split, st.Index, st.Own = ds, sim.TestSplit, 0, nil })
				msg := fmt.Sprintf("%s: %d training and %d test pictures in %d classes", mnist.DatasetLabel(ds), man.Train, man.Test, len(man.Classes))
				if n := len(man.Skipped); n > 0 {
					msg += fmt.Sprintf("; %d files skipped (%s: %s…)", n, man.Skipped[0].Path, man.Skipped[0].Why)
				}
				m.setStatus(msg)
			}
			if done != nil {
				done(err)
			}
		})
	}()
}
