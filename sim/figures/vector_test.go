package figures

import (
	"bytes"
	"image/color"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// The SVG and PDF exports lay the plot's background under the whole page,
// the legend's column too (it was on transparent ground, and vanished on
// a dark slide).
func TestVectorBackgroundCoversThePage(t *testing.T) {
	p := plot.New()
	p.BackgroundColor = color.RGBA{10, 20, 30, 255}
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: 2}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(l)
	p.Legend.Add("a line", l)
	var b bytes.Buffer
	if err := WriteVector(&b, p, "svg", 400, 300); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	// The first thing drawn: the page filled in the background colour.
	first := strings.Index(svg, "<path")
	if first < 0 {
		t.Fatal("no path in the SVG")
	}
	end := strings.Index(svg[first:], "/>")
	el := svg[first : first+end]
	if !strings.Contains(el, "fill:#0A141E") && !strings.Contains(el, "fill:#0a141e") {
		t.Fatalf("the first element is not the background: %s", el)
	}
	if !strings.Contains(el, `d="M0,0L400,0L400,300L0,300Z"`) {
		t.Errorf("the background is not the whole 400×300 page: %s", el)
	}
}

// The ensemble's plot (the window's and its export) carries each model's
// baseline: its inputs' median MSE at t = 0, dotted, in the legend.
func TestBandPlotShowsTheInput(t *testing.T) {
	bands := []Band{
		{Name: "bsa-p2", Q25: []float64{0.09, 0.05, 0.07}, Median: []float64{0.1, 0.06, 0.08}, Q75: []float64{0.11, 0.07, 0.09}},
		{Name: "block", Q25: []float64{0.09, 0.03, 0.03}, Median: []float64{0.1, 0.04, 0.04}, Q75: []float64{0.11, 0.05, 0.05}},
	}
	p, err := BandPlot("MSE over 3 test digits", bands)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteVector(&b, p, "svg", 600, 400); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "input, t = 0 (median 0.1000)"); n != 1 {
		t.Errorf("the shared input's line named %d times in the legend, want once", n)
	}
}

// A lesson's plot before the steps are played: the y axis spans what is
// drawn (and the input's line), not the run to come; a short run fills
// the t axis.
func TestUnplayedStepsDoNotScaleTheAxis(t *testing.T) {
	mse := []float64{0.10, 0.02, 0.01, 0.3, 0.5}
	input := []float64{0.10, 0.10, 0.10, 0.10, 0.10}
	series := []Series{{Name: "bsa-p2", Values: mse}, {Name: "input", Values: input, Reference: true}}
	p, err := TrajectoryPlot("MSE", "MSE", series, TrajectoryOptions{Now: -1, Best: -1, Upto: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min <= 0.02 || p.Y.Max >= 0.3 {
		t.Errorf("before any step the y axis spans %.3f … %.3f: it shows where the curve will go (0.01 … 0.5)", p.Y.Min, p.Y.Max)
	}
	// Played to t = 2: the axis has grown to the values shown.
	p, err = TrajectoryPlot("MSE", "MSE", series, TrajectoryOptions{Now: -1, Best: -1, Upto: 3})
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min > 0.01 || p.Y.Max >= 0.3 {
		t.Errorf("played to t = 2 the y axis spans %.3f … %.3f, want 0.01 … 0.1 with a margin", p.Y.Min, p.Y.Max)
	}
	// Outside a lesson the whole run is there.
	p, err = TrajectoryPlot("MSE", "MSE", series, TrajectoryOptions{Now: -1, Best: -1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Max < 0.5 || p.X.Max != 4 {
		t.Errorf("the whole run: y up to %.3f, t up to %v", p.Y.Max, p.X.Max)
	}
	// A one-step slide: the t axis is 0 … 1.
	p, err = TrajectoryPlot("MSE", "MSE", series, TrajectoryOptions{Now: -1, Best: -1, Upto: 2, XMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Max != 1 {
		t.Errorf("a run to t = 1 drawn on a t axis to %v", p.X.Max)
	}
}
