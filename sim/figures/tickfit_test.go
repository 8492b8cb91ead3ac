package figures

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// tickPlots are the window's kinds of plot with typical data.
func tickPlots(t *testing.T) map[string]*plot.Plot {
	t.Helper()
	mse := make([]float64, 101)
	for k := range mse {
		mse[k] = 0.02 + 0.4*math.Exp(-float64(k)/8) + 0.05*math.Exp(-math.Pow(float64(k-40)/15, 2))
	}
	must := func(p *plot.Plot, err error) *plot.Plot {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	q := func(f float64) []float64 {
		out := make([]float64, len(mse))
		for k := range out {
			out[k] = mse[k] * f
		}
		return out
	}
	return map[string]*plot.Plot{
		"MSE, log t":      must(MSEPlot("bsa-p2", []Series{{Name: "bsa-p2", Values: mse}}, 0.45, 30)),
		"trajectory":      must(TrajectoryPlot("MSE", "MSE", []Series{{Name: "bsa-p2", Values: mse}}, TrajectoryOptions{Now: -1, Best: -1})),
		"trajectory, log": must(TrajectoryPlot("MSE", "MSE", []Series{{Name: "bsa-p2", Values: mse}}, TrajectoryOptions{LogY: true, Now: -1, Best: -1})),
		"band":            must(BandPlot("MSE over 50 digits", []Band{{Name: "bsa-p2", Q25: q(0.8), Median: mse, Q75: q(1.3)}})),
		"t* histogram":    must(TStarHistogram("t*", []string{"bsa-p2"}, [][]int{{3, 12, 30, 30, 31, 64, 99}}, 100)),
		"line, log x":     must(LinePlot("loss", "batch", "MSE", []float64{1, 10, 100, 1000, 10000}, true, []Series{{Name: "train", Values: []float64{0.5, 0.3, 0.1, 0.05, 0.03}}})),
		"scatter, log x":  must(ScatterPlot("g", "growth", "escape", []float64{0.0013, 0.9, 1.1, 6.8, 2500}, []float64{30, 20, 12, 4, 1}, true)),
		"push":            must(PushPlot("push", []PushSeries{{Name: "escape", Real: []float64{1e-3, 9e-4, 8e-4, 3e-2}, Predicted: []float64{1e-3, 9e-4, 8.1e-4, 1e-1}}})),
		"along":           must(AlongPlot("radius", "|λ|", []float64{1, 2, 3, 50, 100}, []float64{1.1, 1.0, 0.99, 0.93, 0.9}, 1, "unit circle", 100)),
	}
}

// overlaps lists the pairs of tick labels of p, drawn on dc, whose boxes
// meet, placed as gonum places them (its transforms, each label's
// rectangle with its alignment).
func overlaps(p *plot.Plot, dc draw.Canvas) []string {
	da := p.DataCanvas(dc)
	tx, ty := p.Transforms(&da)
	var out []string
	for _, ax := range []struct {
		name string
		a    *plot.Axis
		pos  func(float64) vg.Length
		span func(r vg.Rectangle) (lo, hi vg.Length)
	}{
		{"x", &p.X, tx, func(r vg.Rectangle) (vg.Length, vg.Length) { return r.Min.X, r.Max.X }},
		{"y", &p.Y, ty, func(r vg.Rectangle) (vg.Length, vg.Length) { return r.Min.Y, r.Max.Y }},
	} {
		type box struct {
			label  string
			lo, hi vg.Length
		}
		var bs []box
		for _, tk := range ax.a.Tick.Marker.Ticks(ax.a.Min, ax.a.Max) {
			if tk.Label == "" {
				continue
			}
			lo, hi := ax.span(ax.a.Tick.Label.Rectangle(tk.Label))
			at := ax.pos(tk.Value)
			bs = append(bs, box{tk.Label, at + lo, at + hi})
		}
		for i := range bs {
			for j := i + 1; j < len(bs); j++ {
				if bs[i].lo < bs[j].hi && bs[j].lo < bs[i].hi {
					out = append(out, fmt.Sprintf("%s: %q and %q", ax.name, bs[i].label, bs[j].label))
				}
			}
		}
	}
	return out
}

// TestTickLabelsDoNotOverlap: drawn as the window draws them, from a
// small panel (a window of 800×600 or a page on a laptop) to a large one
// and with the larger type of presentation mode, no two tick labels of an
// axis meet, while the same plots without the fit did at the smaller
// sizes; each axis keeps at least one label where it had one.
func TestTickLabelsDoNotOverlap(t *testing.T) {
	unfitted := 0
	for _, size := range [][2]int{{150, 110}, {220, 150}, {300, 200}, {480, 300}, {900, 500}} {
		for _, pt := range []float64{8, 10, 14} {
			for name, p := range tickPlots(t) {
				for _, ax := range []*plot.Axis{&p.X, &p.Y} {
					ax.Tick.Label.Font.Size = vg.Points(pt)
				}
				c := vgimg.NewWith(vgimg.UseWH(vg.Length(size[0])*vg.Inch/96, vg.Length(size[1])*vg.Inch/96), vgimg.UseDPI(96))
				dc := draw.New(c)
				if da, ok := dataCanvas(p, dc); !ok || !(da.Max.X > da.Min.X && da.Max.Y > da.Min.Y) {
					continue // gonum cannot lay it out this small
				}
				p.Draw(dc)
				unfitted += len(overlaps(p, dc))
				withFittedTicks(p, dc, func() {
					p.Draw(dc)
					if o := overlaps(p, dc); len(o) > 0 {
						t.Errorf("%s at %d×%d px, %g pt: labels overlap: %v", name, size[0], size[1], pt, o)
					}
					for _, ax := range []*plot.Axis{&p.X, &p.Y} {
						before, after := 0, 0
						for _, tk := range ax.Tick.Marker.(thinnedTicks).inner.Ticks(ax.Min, ax.Max) {
							if tk.Label != "" {
								before++
							}
						}
						for _, tk := range ax.Tick.Marker.Ticks(ax.Min, ax.Max) {
							if tk.Label != "" {
								after++
							}
						}
						if before > 0 && after == 0 {
							t.Errorf("%s at %d×%d px, %g pt: an axis lost all %d labels", name, size[0], size[1], pt, before)
						}
					}
				})
			}
		}
	}
	if unfitted == 0 {
		t.Fatal("no plot's labels overlapped without the fit: the test shows nothing")
	}
	t.Logf("%d overlapping pairs without the fit", unfitted)
}

// TestThinnedTicksKeepRoundValues: on a log axis too short for all its
// labels the powers of ten stay; ticks stay where labels go.
func TestThinnedTicksKeepRoundValues(t *testing.T) {
	p := plot.New()
	th := thinnedTicks{inner: LogTicks125{}, scale: plot.LogScale{}, style: p.Y.Tick.Label, length: vg.Points(60), vertical: true}
	all, got := LogTicks125{}.Ticks(0.018, 0.45), th.Ticks(0.018, 0.45)
	if len(got) != len(all) {
		t.Fatalf("%d ticks, want %d", len(got), len(all))
	}
	var labels []string
	for _, tk := range got {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	hasTenth := false
	for _, l := range labels {
		hasTenth = hasTenth || l == "0.1"
	}
	if !hasTenth || len(labels) >= 6 {
		t.Fatalf("labels %q on 60 pt: want 0.1 kept and fewer than all 6", labels)
	}
	for _, v := range []float64{0, 1, 10, 0.1, 1e-3, -100} {
		if !roundValue(v) {
			t.Errorf("%g not round", v)
		}
	}
	for _, v := range []float64{2, 0.05, 15, 0.3} {
		if roundValue(v) {
			t.Errorf("%g round", v)
		}
	}
}
