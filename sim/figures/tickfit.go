package figures

import (
	"math"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// withFittedTicks runs f (which draws p on c) with the axes' tickers
// leaving unlabelled the ticks whose labels would overlap on c: a tick
// picks its labels from the axis' range alone, and a plot a few hundred
// pixels wide (the window at 800×600) wrote "0.02 0.03 0.05" into one
// another. The ticks stay; only labels go, the rounder values kept first
// (thinnedTicks). The lengths are those of the data area with every label
// in place: leaving labels out only shortens the other axis' labels, so
// the data area drawn is at least as large and the labels kept at least as
// far apart. A canvas too small for the plot's axes is drawn as it was.
func withFittedTicks(p *plot.Plot, c draw.Canvas, f func()) {
	x, y := p.X.Tick.Marker, p.Y.Tick.Marker
	defer func() { p.X.Tick.Marker, p.Y.Tick.Marker = x, y }()
	if da, ok := dataCanvas(p, c); ok {
		// An axis with no length left (a legend as wide as the canvas) is
		// left as it is; the other is still fitted.
		if x != nil && da.Max.X > da.Min.X {
			p.X.Tick.Marker = thinnedTicks{inner: x, scale: p.X.Scale, style: p.X.Tick.Label, length: da.Max.X - da.Min.X}
		}
		if y != nil && da.Max.Y > da.Min.Y {
			p.Y.Tick.Marker = thinnedTicks{inner: y, scale: p.Y.Scale, style: p.Y.Tick.Label, length: da.Max.Y - da.Min.Y, vertical: true}
		}
	}
	f()
}

// dataCanvas is p's data area on c, or false where gonum cannot lay the
// plot out there (it panics on some canvases smaller than the axes).
func dataCanvas(p *plot.Plot, c draw.Canvas) (da draw.Canvas, ok bool) {
	ok = onCanvas(c, func() { da = p.DataCanvas(c) })
	return da, ok
}

// onCanvas runs f, which lays a plot out on c or draws it there, and
// reports false where c is empty or gonum panicked doing so (on some
// canvases smaller than the axes).
func onCanvas(c draw.Canvas, f func()) (ok bool) {
	if !(c.Max.X > c.Min.X && c.Max.Y > c.Min.Y) {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	f()
	return true
}

// thinnedTicks are inner's ticks with the labels that would overlap on an
// axis of the given length left out.
type thinnedTicks struct {
	inner    plot.Ticker
	scale    plot.Normalizer
	style    text.Style
	length   vg.Length
	vertical bool // labels one above another: their heights must fit
}

// Ticks implements plot.Ticker.
func (t thinnedTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := append([]plot.Tick(nil), t.inner.Ticks(lo, hi)...)
	type label struct {
		k        int
		at, half vg.Length // the label's middle along the axis, half its extent
		round    bool
	}
	var ls []label
	for k, tk := range ts {
		if tk.Label == "" {
			continue
		}
		ext := t.style.Width(tk.Label)
		if t.vertical {
			ext = t.style.Height(tk.Label)
		}
		at := vg.Length(t.scale.Normalize(lo, hi, tk.Value)) * t.length
		ls = append(ls, label{k: k, at: at, half: ext / 2, round: roundValue(tk.Value)})
	}
	// The round values first (0, 1, 10, 0.1), then from the axis' start.
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].round && !ls[j].round })
	gap := t.style.Font.Size / 3
	var kept []label
	for _, l := range ls {
		meets := func(o label) bool { return vg.Length(math.Abs(float64(l.at-o.at))) < l.half+o.half+gap }
		if !math.IsNaN(float64(l.at)) && !slices.ContainsFunc(kept, meets) {
			kept = append(kept, l)
		} else {
			ts[l.k].Label = ""
		}
	}
	return ts
}

// roundValue: 0 or a power of ten, the values an axis' reader looks for.
func roundValue(v float64) bool {
	if v == 0 {
		return true
	}
	s := strconv.FormatFloat(math.Abs(v), 'e', -1, 64)
	return len(s) > 2 && s[0] == '1' && s[1] == 'e'
}
