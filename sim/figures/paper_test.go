package figures

import (
	"attractorlab/sim"
	"attractorlab/sim/mnist"
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"strconv"
	"testing"
)

// TestReproduceAnyModelAndFigures runs sim.Reproduce through the shared model
// interface with patch variances, then draws Fig. 1 and Fig. 2.
func TestReproduceAnyModelAndFigures(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	mem := sim.NewMemories(data.Train)
	cat := sim.NewCatalogue(data.Train, sim.WeightFiles{})
	var curves []*sim.Curve
	var sets []Fig2Set
	for _, name := range []string{"block", "vit", "hopfield-classic"} {
		m, err := cat.Model(name, sim.DefaultSettings())
		if err != nil {
			t.Fatal(err)
		}
		c, err := sim.Reproduce(context.Background(), data, mem, sim.ReproduceConfig{Model: m,
			Corruption: sim.DefaultMask, N: 5, Steps: 8, PatchVar: true})
		if err != nil {
			t.Fatal(err)
		}
		wantRows := 9
		if m.Info().MaxSteps == 5 {
			wantRows = 6
		}
		if len(c.Rows) != wantRows || len(c.PatchVar) != wantRows {
			t.Fatalf("%s: %d rows, %d variance sets, want %d", c.Model, len(c.Rows), len(c.PatchVar), wantRows)
		}
		if len(c.RawVar[1]) != len(c.PatchVar[1]) || c.Outside[1] < 0 || c.Outside[1] > 1 {
			t.Fatalf("%s: %d unclamped variances, %g outside", c.Model, len(c.RawVar[1]), c.Outside[1])
		}
		for k, v := range c.PatchVar[1] {
			if c.Outside[1] == 0 && v != c.RawVar[1][k] {
				t.Fatalf("%s: nothing outside [0,1] but clamped %g ≠ raw %g", c.Model, v, c.RawVar[1][k])
			}
		}
		if n := len(c.PatchVar[1]); n != 5*14 {
			t.Fatalf("%s: %d masked patches at t=1, want 5×14", c.Model, n)
		}
		for _, r := range c.Rows {
			if math.IsNaN(r.MSE) || r.MSE < 0 {
				t.Fatalf("%s: MSE %g at t=%d", c.Model, r.MSE, r.T)
			}
		}
		curves = append(curves, c)
		sets = append(sets, Fig2Set{Model: c.Model, T: 1, Values: c.PatchVar[1]})
	}
	p, err := Fig1Plot(curves, map[string]bool{"vit": true})
	if err != nil {
		t.Fatal(err)
	}
	var png bytes.Buffer
	if err := WritePNG(&png, p, 600, 400); err != nil || png.Len() < 1000 {
		t.Fatalf("fig1: %v (%d bytes)", err, png.Len())
	}
	if len(curves[0].CleanVar) != 5*14 {
		t.Fatalf("%d clean reference patches, want 5×14", len(curves[0].CleanVar))
	}
	if p, err = Fig2Plot(sets, Fig2Set{Model: "clean", Values: curves[0].CleanVar}); err != nil {
		t.Fatal(err)
	}
	if err := WritePNG(&png, p, 600, 400); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteFig2CSV(&buf, sets); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) != Fig2Bins+1 || len(recs[0]) != 2+len(sets) {
		t.Fatalf("fig2.csv: %v, %d rows", err, len(recs))
	}
	for k, s := range sets {
		total := 0
		for _, r := range recs[1:] {
			n, _ := strconv.Atoi(r[2+k])
			total += n
		}
		if total != len(s.Values) {
			t.Fatalf("%s: histogram holds %d of %d patches", s.Model, total, len(s.Values))
		}
	}
	buf.Reset()
	if err := WriteFig2Summary(&buf, sets); err != nil {
		t.Fatal(err)
	}
	recs, _ = csv.NewReader(&buf).ReadAll()
	if recs[0][0] != "model" || recs[0][1] != "mean_variance" || len(recs) != 1+len(sets) {
		t.Fatalf("fig2_summary.csv: %v", recs)
	}
}
