package figures

import (
	"attractorlab/sim"
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Fig1Plot draws every model's mean MSE against t on one log-t axis, as the
// paper's Fig. 1. Models with a fixed depth (the ViT: a curve of at most
// 5 layers) are drawn as a horizontal line at their final MSE. The
// corrupted input's MSE (of the first curve: masks depend on the patch
// grid) is the dotted line. Both axes are logarithmic.
func Fig1Plot(curves []*sim.Curve, fixedDepth map[string]bool) (*plot.Plot, error) {
	if len(curves) == 0 {
		return nil, fmt.Errorf("fig1: no curves")
	}
	for _, c := range curves {
		if err := drawable(c); err != nil {
			return nil, fmt.Errorf("fig1: %w", err)
		}
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Fig. 1, %s task: MSE vs iteration", curves[0].Task)
	p.X.Label.Text = "iteration t"
	p.Y.Label.Text = "MSE"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = LogTicks125{}
	// Log MSE too: the transient minima (≈0.02–0.05) and the late rise
	// (up to ≈0.4) are both readable.
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = LogTicks125{}
	p.Add(plotter.NewGrid())
	maxT := 1
	for _, c := range curves {
		maxT = max(maxT, len(c.Rows)-1)
	}
	for k, c := range curves {
		var xy plotter.XYs
		var name string
		if fixedDepth[c.Model] {
			last := c.Rows[len(c.Rows)-1].MSE
			xy = plotter.XYs{{X: 1, Y: last}, {X: float64(maxT), Y: last}}
			name = fmt.Sprintf("%s (final, %.4f)", c.Model, last)
		} else {
			for _, r := range c.Rows[1:] {
				if !math.IsNaN(r.MSE) && r.MSE > 0 {
					xy = append(xy, plotter.XY{X: float64(r.T), Y: r.MSE})
				}
			}
			name = fmt.Sprintf("%s (%s)", c.Model, c.Summary().Short())
		}
		if len(xy) == 0 || !(xy[0].Y > 0) {
			// A log MSE axis cannot show a curve of zeros.
			p.Legend.Add(name + ": MSE 0, not drawn on the log axis")
			continue
		}
		l, err := paletteLine(xy, k, 2, false, 0)
		if err != nil {
			return nil, fmt.Errorf("fig1 %s: %w", c.Model, err)
		}
		if fixedDepth[c.Model] {
			l.Dashes = []vg.Length{vg.Points(8), vg.Points(4)}
		}
		p.Add(l)
		p.Legend.Add(name, l)
	}
	in := curves[0].Rows[0].MSE
	if l, err := plotter.NewLine(plotter.XYs{{X: 1, Y: in}, {X: float64(maxT), Y: in}}); err == nil && in > 0 {
		l.Color = color.RGBA{120, 120, 120, 255}
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(l)
		label := fmt.Sprintf("input, t = 0 (%.4f)", in)
		if curves[0].Task == sim.Mask {
			label = fmt.Sprintf("input, t = 0 (%s's mask: %.4f)", curves[0].Model, in)
		}
		p.Legend.Add(label, l)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(12)
	padRange(p)
	return p, nil
}

// Fig2Set is one model's within-patch variances of masked patches at step T.
type Fig2Set struct {
	Model  string
	T      int
	Values []float64
}

// Mean is the mean within-patch variance.
func (s Fig2Set) Mean() float64 {
	var m float64
	for _, v := range s.Values {
		m += v
	}
	return m / float64(len(s.Values))
}

// Fig2Bins is the histogram of Fig. 2: variances of pixels in [0,1] lie in
// [0, 0.25]; 25 bins of 0.01.
const (
	Fig2Bins  = 25
	fig2Width = 0.01
)

func (s Fig2Set) counts() []int {
	c := make([]int, Fig2Bins)
	for _, v := range s.Values {
		c[min(max(int(v/fig2Width), 0), Fig2Bins-1)]++
	}
	return c
}

// WriteFig2CSV writes the histogram: bin_lo, bin_hi, then each model's
// count of masked patches in the bin.
func WriteFig2CSV(w io.Writer, sets []Fig2Set) error {
	cw := csv.NewWriter(w)
	head := []string{"bin_lo", "bin_hi"}
	counts := make([][]int, len(sets))
	for k, s := range sets {
		head = append(head, s.Model)
		counts[k] = s.counts()
	}
	cw.Write(head)
	for b := 0; b < Fig2Bins; b++ {
		rec := []string{strconv.FormatFloat(float64(b)*fig2Width, 'f', 2, 64), strconv.FormatFloat(float64(b+1)*fig2Width, 'f', 2, 64)}
		for k := range sets {
			rec = append(rec, strconv.Itoa(counts[k][b]))
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// WriteFig2Summary writes model, mean_variance.
func WriteFig2Summary(w io.Writer, sets []Fig2Set) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"model", "mean_variance"})
	for _, s := range sets {
		cw.Write([]string{s.Model, strconv.FormatFloat(s.Mean(), 'g', 8, 64)})
	}
	cw.Flush()
	return cw.Error()
}

// Fig2Plot overlays the models' histograms (fraction of masked patches per
// bin, log scale: most masked patches are background) as step lines, with
// each mean in the legend; ref, when it has values, is drawn dashed grey
// (the clean digits' patches).
func Fig2Plot(sets []Fig2Set, ref Fig2Set) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Fig. 2: within-patch variance of masked 4×4 patches"
	p.X.Label.Text = "variance of the 16 predicted pixels"
	p.Y.Label.Text = "fraction of masked patches (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = LogTicks125{}
	const floor = 1e-4 // empty bins
	p.Y.Min = floor
	p.Add(plotter.NewGrid())
	all := sets
	if len(ref.Values) > 0 {
		all = append(append([]Fig2Set(nil), sets...), ref)
	}
	for k, s := range all {
		c := s.counts()
		var xy plotter.XYs
		for b, n := range c {
			f := max(float64(n)/float64(max(1, len(s.Values))), floor)
			xy = append(xy, plotter.XY{X: float64(b) * fig2Width, Y: f}, plotter.XY{X: float64(b+1) * fig2Width, Y: f})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("fig2 %s: %w", s.Model, err)
		}
		l.Width = vg.Points(2)
		if k < len(sets) {
			l.Color = Palette[k%len(Palette)]
			p.Legend.Add(fmt.Sprintf("%s at t = %d: mean %.4f", s.Model, s.T, s.Mean()), l)
		} else {
			l.Color = color.RGBA{120, 120, 120, 255}
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			p.Legend.Add(fmt.Sprintf("%s: mean %.4f", s.Model, s.Mean()), l)
		}
		p.Add(l)
	}
	p.Legend.Top = true
	return p, nil
}
