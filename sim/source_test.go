package sim

import (
	"errors"
	"strings"
	"testing"

	"attractorlab/sim/mnist"
)

// invertedData is the embedded sample with every picture inverted, named
// Fashion-MNIST: a second data set whose pictures differ from MNIST's.
func invertedData(t *testing.T, data *mnist.Data) *mnist.Data {
	t.Helper()
	inv := func(s *mnist.Set) *mnist.Set {
		out := &mnist.Set{Images: make([]byte, len(s.Images)), Labels: s.Labels, Index: s.Index}
		for k, b := range s.Images {
			out.Images[k] = 255 - b
		}
		return out
	}
	return &mnist.Data{Train: inv(data.Train), Test: inv(data.Test), Source: "inverted sample", Dataset: mnist.FashionName}
}

// TestEngineSwitchesDataset: settings that name another data set run on
// its pictures and its memories (the Hopfield network stores them); a data
// set the engine cannot open is refused with the opener's reason and the
// settings stay; without Sources the engine names the data set it runs.
func TestEngineSwitchesDataset(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	fash := invertedData(t, data)
	var src *Source
	sources := func(name string) (*Source, error) {
		if name != mnist.FashionName {
			return nil, errors.New("no such data set in this test")
		}
		if src == nil {
			src = &Source{Data: fash, Memories: NewMemories(fash.Train), Catalogue: NewCatalogue(fash.Train, WeightFiles{})}
		}
		return src, nil
	}
	e := NewEngine(EngineConfig{Data: data, Memories: NewMemories(data.Train), Catalogue: NewCatalogue(data.Train, WeightFiles{}),
		Horizon: 5, MaxT: 10, Settings: DefaultSettings(), Synchronous: true, Sources: sources})
	e.Settle()
	mn := e.Snapshot()
	if mn.Source.Data != data || mn.Settings.DatasetName() != mnist.MNISTName {
		t.Fatalf("starts on %s", mn.Settings.DatasetName())
	}
	e.Update(func(s *Settings) {
		s.Dataset = mnist.FashionName
		s.Index = 3
		s.Lanes = []string{"bsa-p2", "hopfield"}
	})
	e.Settle()
	sn := e.Snapshot()
	if sn.Err != "" || sn.Source.Data != fash {
		t.Fatalf("after choosing Fashion-MNIST: error %q, data %s", sn.Err, sn.Source.Data.Name())
	}
	want := fash.Test.Clean(3, mnist.PixelGain)
	for q := range want {
		if sn.Clean[q] != want[q] {
			t.Fatalf("clean pixel %d is %g, the data set's picture has %g", q, sn.Clean[q], want[q])
		}
	}
	// The Hopfield network stores this data set's training pictures: the
	// nearest stored picture of its late state is one of them, with a
	// correlation only an inverted picture reaches.
	hf := sn.Lanes[1].Frames[len(sn.Lanes[1].Frames)-1]
	if hf.NearIdx < 0 || hf.NearCorr < 0.5 {
		t.Fatalf("Hopfield's late state: nearest #%d, r %.2f", hf.NearIdx, hf.NearCorr)
	}
	if got := sn.ClassName(sn.Label); got != mnist.FashionClasses[sn.Label] {
		t.Fatalf("class name %q, want %q", got, mnist.FashionClasses[sn.Label])
	}
	// Back to MNIST and to Fashion again.
	e.Update(func(s *Settings) { s.Dataset = "" })
	e.Settle()
	if sn := e.Snapshot(); sn.Source.Data != data {
		t.Fatalf("back to MNIST: %s", sn.Source.Data.Name())
	}
	e.Update(func(s *Settings) { s.Dataset = mnist.FashionName })
	e.Settle()
	if sn := e.Snapshot(); sn.Source != src {
		t.Fatal("Fashion-MNIST again: another source")
	}
	// A scenario from elsewhere on a data set the engine cannot open.
	e2 := NewEngine(EngineConfig{Data: data, Memories: NewMemories(data.Train), Catalogue: NewCatalogue(data.Train, WeightFiles{}),
		Horizon: 5, MaxT: 10, Settings: DefaultSettings(), Synchronous: true})
	e2.Update(func(s *Settings) { s.Dataset = mnist.FashionName })
	e2.Settle()
	sn = e2.Snapshot()
	if !strings.Contains(sn.Err, "Fashion-MNIST is not open here") || sn.Settings.Dataset != "" {
		t.Fatalf("without Sources: error %q, data set %q", sn.Err, sn.Settings.Dataset)
	}
}
