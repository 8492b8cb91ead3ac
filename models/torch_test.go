package models

import (
	"compress/gzip"
	"io"
	"math"
	"os"
	"testing"
)

// TestPyTorchFixture loads a network written by PyTorch with the §9 names
// (testdata/bsa_torch.py) and checks three steps of a masking run against
// PyTorch's own results: state, attention and energy.
func TestPyTorchFixture(t *testing.T) {
	f, err := os.Open("testdata/bsa_torch.safetensors.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseBSA(data, "bsa_torch.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	ts, _, err := ParseSafetensors(data, "bsa_torch.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	masked := make([]bool, m.N)
	for i, v := range ts["test.masked"].Data {
		masked[i] = v != 0
	}
	st := m.NewState(ts["test.image"].Data, masked)
	for k, v := range ts["test.x0"].Data {
		if math.Abs(float64(v-st.X[k])) > 1e-5 {
			t.Fatalf("encoding differs from PyTorch at %d: %g vs %g", k, st.X[k], v)
		}
	}
	w := m.NewWorkspace(1)
	alpha := make([]float32, m.N*m.N)
	// The chunked engine steps a copy beside it (with other images in its
	// chunk), and must agree with PyTorch as well.
	c := m.NewChunker()
	chunk := []*State{m.NewState(ts["test.image"].Data, masked)}
	for _, img := range randomImages(5, 8) {
		chunk = append(chunk, m.NewState(img, nil))
	}
	ec := make([]float64, len(chunk))
	c.Load(chunk)
	for step := 0; step < 3; step++ {
		e := make([]float64, 1)
		m.Step(w, []*State{st}, DefaultDynamics(), [][]float32{alpha}, e)
		c.Step(DefaultDynamics(), ec)
		c.Store(chunk)
		want := ts["test.energy"+itoa(step)].Data[0]
		if !closeTo(e[0], float64(want), 1e-4) || !closeTo(ec[0], float64(want), 1e-4) {
			t.Fatalf("step %d: energy %g (chunked %g), PyTorch %g", step, e[0], ec[0], want)
		}
		var cn, cd float64
		for k, v := range ts["test.x"+itoa(step+1)].Data {
			cn += (float64(chunk[0].X[k]) - float64(v)) * (float64(chunk[0].X[k]) - float64(v))
			cd += float64(v) * float64(v)
		}
		if rel := math.Sqrt(cn / cd); rel > 1e-4 {
			t.Fatalf("step %d: the chunked state differs from PyTorch by %g (relative)", step, rel)
		}
		var num, den float64
		for k, v := range ts["test.x"+itoa(step+1)].Data {
			num += (float64(st.X[k]) - float64(v)) * (float64(st.X[k]) - float64(v))
			den += float64(v) * float64(v)
		}
		if rel := math.Sqrt(num / den); rel > 1e-4 {
			t.Fatalf("step %d: state differs from PyTorch by %g (relative)", step, rel)
		}
		for k, v := range ts["test.alpha"+itoa(step+1)].Data {
			if math.Abs(float64(alpha[k]-v)) > 1e-4 {
				t.Fatalf("step %d: attention %d = %g, PyTorch %g", step, k, alpha[k], v)
			}
		}
	}
}
