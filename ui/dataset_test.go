package ui

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// TestDatasetPicker: the data set picker beside the split runs the window
// on another data set: its pictures, its classes in the label filter and
// the titles, the Hopfield network's stored pictures, MNIST's weights
// named as such; a scenario saved there names the data set; a data set
// that cannot open is refused with its reason and the window stays.
func TestDatasetPicker(t *testing.T) {
	os.Setenv("LANG", "en_US.UTF-8")
	deps, fash := invertedDeps(t)
	m := newMainWith(t, deps)

	m.side.dataset.SetSelected("Fashion-MNIST")
	m.Engine.Settle()
	sn := m.snap
	if sn.Err != "" || sn.Source.Data != fash {
		t.Fatalf("after choosing Fashion-MNIST: error %q, data %s", sn.Err, sn.Source.Data.Name())
	}
	if want := append([]string{"any"}, mnist.FashionClasses[:]...); !slices.Equal(m.side.labelSel.Options, want) {
		t.Fatalf("label filter offers %v, want %v", m.side.labelSel.Options, want)
	}
	if want := "clean\na " + mnist.FashionClasses[sn.Label]; m.cleanTitle.Text != want {
		t.Fatalf("clean title %q, want %q", m.cleanTitle.Text, want)
	}
	if !strings.Contains(m.stateTitles[0].Text, "(trained on MNIST)") {
		t.Fatalf("the model's title %q does not say its weights are MNIST's", m.stateTitles[0].Text)
	}
	// The label filter picks a class by name.
	m.side.labelSel.SetSelected("Sneaker")
	m.Engine.Settle()
	if got := m.snap.Label; mnist.FashionClasses[got] != "Sneaker" {
		t.Fatalf("label filter Sneaker: the picture is a %s", mnist.FashionClasses[got])
	}
	if !strings.Contains(m.nearestLbl.Text, "mean picture") {
		t.Fatalf("nearest memory text %q", m.nearestLbl.Text)
	}
	// The scenario names the data set.
	var b strings.Builder
	if err := sim.WriteScenario(&b, m.snap); err != nil || !strings.Contains(b.String(), `"dataset": "fashion-mnist"`) {
		t.Fatalf("scenario (%v):\n%s", err, b.String())
	}
	// Back to MNIST: digits again, the filter's digits.
	m.side.dataset.SetSelected("MNIST")
	m.Engine.Settle()
	if m.snap.Source.Data != deps.Data || m.snap.Settings.Dataset != "" || m.side.labelSel.Options[1] != "0" {
		t.Fatalf("back to MNIST: data %s, settings %q, filter %v", m.snap.Source.Data.Name(), m.snap.Settings.Dataset, m.side.labelSel.Options)
	}
	if strings.Contains(m.stateTitles[0].Text, "trained on") {
		t.Fatalf("on MNIST the title %q names the training set", m.stateTitles[0].Text)
	}
}

// newMainWith is a synchronous main window on deps, 1280×800.
func newMainWith(t *testing.T, deps Deps) *Main {
	os.Setenv("LANG", "en_US.UTF-8")
	a := test.NewTempApp(t)
	w := test.NewTempWindow(t, nil)
	m := NewMainSync(a, w, deps, sim.DefaultSettings())
	w.SetContent(m.Content())
	w.Resize(fyne.NewSize(1280, 800))
	return m
}

// invertedDeps are testDeps with a second data set named Fashion-MNIST:
// the sample's pictures inverted.
func invertedDeps(t *testing.T) (Deps, *mnist.Data) {
	deps := testDeps(t)
	inv := func(s *mnist.Set) *mnist.Set {
		out := &mnist.Set{Images: make([]byte, len(s.Images)), Labels: s.Labels, Index: s.Index}
		for k, b := range s.Images {
			out.Images[k] = 255 - b
		}
		return out
	}
	fash := &mnist.Data{Train: inv(deps.Data.Train), Test: inv(deps.Data.Test), Source: "inverted sample", Dataset: mnist.FashionName}
	src := &sim.Source{Data: fash, Memories: sim.NewMemories(fash.Train), Catalogue: sim.NewCatalogue(fash.Train, sim.WeightFiles{})}
	deps.Sources = func(name string) (*sim.Source, error) {
		if name != mnist.FashionName {
			return nil, errors.New("not in this test")
		}
		return src, nil
	}
	return deps, fash
}

// TestTrainOnAnotherDataset: Training… trains on the main window's data
// set; the weights say so, and the model joins that data set's models,
// not MNIST's.
func TestTrainOnAnotherDataset(t *testing.T) {
	os.Setenv("LANG", "en_US.UTF-8")
	deps, fash := invertedDeps(t)
	m := newMainWith(t, deps)
	m.side.dataset.SetSelected("Fashion-MNIST")
	m.Engine.Settle()
	m.showTraining()
	tw := m.train
	tw.ui.wait(func() {
		tw.images.SetSelected("200")
		tw.epochs.SetText("1")
	})
	runTraining(t, tw, nil)
	if tw.trained == nil || tw.trained.Meta["dataset"] != mnist.FashionName || !strings.Contains(tw.status.Text, "bsa-p2-trained") {
		t.Fatalf("trained %v (data set %q); status %q", tw.trained != nil, tw.trained.Meta["dataset"], tw.status.Text)
	}
	// The same couplings as sim.TrainBSA on the data set's pictures.
	s := tw.set
	s.Batched = nil
	plain, _, err := sim.TrainBSA(t.Context(), fash.Train, fash.Test, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plain.J, tw.trained.J) {
		t.Fatal("the window's couplings differ from sim.TrainBSA's on the data set's pictures")
	}
	if last := m.infos[len(m.infos)-1]; last.Name != "bsa-p2-trained" {
		t.Fatalf("on Fashion-MNIST the last model is %q", last.Name)
	}
	if !strings.Contains(tw.ran.Command(), "--dataset fashion-mnist") {
		t.Fatalf("the command %q does not name the data set", tw.ran.Command())
	}
	m.side.dataset.SetSelected("MNIST")
	m.Engine.Settle()
	for _, in := range m.infos {
		if in.Name == "bsa-p2-trained" {
			t.Fatal("the model trained on Fashion-MNIST is among MNIST's models")
		}
	}
}

// TestDatasetThatCannotOpen: a data set Sources cannot open is refused with
// its reason, and the window stays on its data set.
func TestDatasetThatCannotOpen(t *testing.T) {
	os.Setenv("LANG", "en_US.UTF-8")
	deps := testDeps(t)
	deps.Sources = func(name string) (*sim.Source, error) {
		return nil, errors.New("Fashion-MNIST cannot open here: no Fashion-MNIST in /nowhere: run `attractorlab data --dataset fashion-mnist` first")
	}
	m := newMainWith(t, deps)
	m.side.dataset.SetSelected("Fashion-MNIST")
	m.Engine.Settle()
	if !strings.Contains(m.snap.Err, "attractorlab data --dataset fashion-mnist") || m.snap.Source.Data != deps.Data {
		t.Fatalf("error %q, data %s", m.snap.Err, m.snap.Source.Data.Name())
	}
	if m.side.dataset.Selected != "MNIST" {
		t.Fatalf("the picker shows %q, the window runs MNIST", m.side.dataset.Selected)
	}
}

// TestOpenFolder: File → Open a folder of pictures converts the folder
// into the cache and switches the window to it, its classes named; a
// folder that is refused leaves the window as it was.
func TestOpenFolder(t *testing.T) {
	os.Setenv("LANG", "en_US.UTF-8")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := filepath.Join(t.TempDir(), "Digits")
	_, sample, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	for k := range 30 {
		l := sample.Labels[k]
		os.MkdirAll(filepath.Join(dir, "class "+fmt.Sprint(l)), 0o755)
		img := image.NewGray(image.Rect(0, 0, 28, 28))
		for q, b := range sample.Raw(k) {
			img.SetGray(q%28, q/28, color.Gray{Y: b})
		}
		f, err := os.Create(filepath.Join(dir, "class "+fmt.Sprint(l), fmt.Sprintf("%d.png", k)))
		if err != nil {
			t.Fatal(err)
		}
		png.Encode(f, img)
		f.Close()
	}
	deps := testDeps(t)
	deps.Sources = func(name string) (*sim.Source, error) {
		f, ok := strings.CutPrefix(name, mnist.FolderPrefix)
		if !ok {
			return nil, errors.New("not in this test")
		}
		d, err := sim.LoadFolderData(f)
		if err != nil {
			return nil, err
		}
		return &sim.Source{Data: d, Memories: sim.NewMemories(d.Train), Catalogue: sim.NewCatalogue(d.Train, sim.WeightFiles{})}, nil
	}
	m := newMainWith(t, deps)
	convert := func(dir string) error {
		got := make(chan error, 1)
		m.ConvertFolder(dir, func(err error) { got <- err })
		select {
		case err := <-got:
			m.Engine.Settle()
			return err
		case <-time.After(time.Minute):
			t.Fatal("the conversion did not end")
		}
		return nil
	}
	if err := convert(filepath.Join(dir, "class 7")); err == nil || !strings.Contains(err.Error(), "no pictures") {
		t.Fatalf("a class folder as the data set: %v", err)
	}
	if m.snap.Settings.Dataset != "" {
		t.Fatalf("after a refused folder the window runs %q", m.snap.Settings.Dataset)
	}
	if err := convert(dir); err != nil {
		t.Fatal(err)
	}
	sn := m.snap
	if sn.Err != "" || sn.Settings.Dataset != "folder:digits" || m.side.dataset.Selected != "digits (folder)" {
		t.Fatalf("after the folder: error %q, data set %q, picker %q", sn.Err, sn.Settings.Dataset, m.side.dataset.Selected)
	}
	if !strings.HasPrefix(m.cleanTitle.Text, "clean\na class ") || !slices.Contains(m.side.labelSel.Options, "class 7") {
		t.Fatalf("clean title %q, label filter %v", m.cleanTitle.Text, m.side.labelSel.Options)
	}
	if !strings.Contains(m.status.Text, "digits (folder):") {
		t.Fatalf("status %q", m.status.Text)
	}
}
