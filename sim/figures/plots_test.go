package figures

import (
	"attractorlab/sim"
	"bytes"
	"flag"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenImage compares img with testdata/name pixel by pixel; -update
// rewrites the file (look at it before committing).
func goldenImage(t *testing.T, name string, img image.Image) {
	t.Helper()
	path := filepath.Join("testdata", name)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run go test -update and look at the image)", err)
	}
	defer f.Close()
	want, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if want.Bounds() != img.Bounds() {
		t.Fatalf("%s: size %v, golden %v", name, img.Bounds(), want.Bounds())
	}
	diff := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r1, g1, b1, _ := img.At(x, y).RGBA()
			r2, g2, b2, _ := want.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 {
				diff++
			}
		}
	}
	if diff > 0 {
		os.MkdirAll(filepath.Join("testdata", "failed"), 0o755)
		os.WriteFile(filepath.Join("testdata", "failed", name), buf.Bytes(), 0o644)
		t.Fatalf("%s: %d pixels differ from the golden image (got: testdata/failed/%s)", name, diff, name)
	}
}

// syntheticCurve has a transient dip at t = 12 and rises to an attractor.
func syntheticCurve(kind sim.Kind) *sim.Curve {
	c := &sim.Curve{Model: "bsa-p2", Task: kind}
	for t := 0; t <= 100; t++ {
		x := math.Log(float64(t) + 1)
		mse := 0.11 - 0.04*math.Exp(-(x-2.5)*(x-2.5)) + 0.08/(1+math.Exp(-3*(x-3.8)))
		c.Rows = append(c.Rows, sim.Row{T: t, MSE: mse, MSEMasked: mse * 2.5, MSEUnmasked: mse / 3,
			MSEQ25: mse * 0.85, MSEMedian: mse * 0.97, MSEQ75: mse * (1.1 + 0.002*float64(t))})
	}
	return c
}

func TestCurvePlotGolden(t *testing.T) {
	for _, kind := range []sim.Kind{sim.Mask, sim.Noise} {
		c := syntheticCurve(kind)
		p, err := CurvePlot(c)
		if err != nil {
			t.Fatal(err)
		}
		goldenImage(t, "mse_"+kind.String()+".png", Render(p, 640, 400, 96))
	}
}

func TestCurveBestAndCSV(t *testing.T) {
	c := syntheticCurve(sim.Noise)
	ts, m := c.Best()
	for _, r := range c.Rows[1:] {
		if r.MSE < m {
			t.Fatalf("t* = %d is not the minimum", ts)
		}
	}
	var b bytes.Buffer
	if err := c.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n"))
	if len(lines) != 102 || string(lines[0]) != "t,mse,mse_masked,mse_unmasked,energy,corr_clean,nearest_train_corr,nearest_label_match,corr_mean_digit,mse_q25,mse_median,mse_q75" {
		t.Fatalf("csv: %d lines, header %q", len(lines), lines[0])
	}
}

// TestFitTitle: a title wider than the plot is wrapped at spaces to its
// width (every line fits, no word is lost or split), one that fits is
// left alone, and a single word wider than the plot stays whole.
func TestFitTitle(t *testing.T) {
	const long = "energy vs t\n(negative pseudo-likelihood of the bare model)"
	for _, width := range []vg.Length{40, 90, 150, 1000} {
		p := plot.New()
		p.Title.Text = long
		fitTitle(p, width)
		got := p.Title.Text
		if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(long), " ") {
			t.Fatalf("width %v: the words changed: %q", width, got)
		}
		for _, line := range strings.Split(got, "\n") {
			if w := p.Title.TextStyle.Width(line); w > width && strings.Contains(line, " ") {
				t.Fatalf("width %v: line %q is %v wide", width, line, w)
			}
		}
		if width == 1000 && got != long {
			t.Fatalf("a title that fits was changed: %q", got)
		}
		if width == 90 && strings.Count(got, "\n") < 2 {
			t.Fatalf("width 90: not wrapped: %q", got)
		}
	}
}
