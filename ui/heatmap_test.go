package ui

import (
	"math/rand/v2"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// TestAttentionReadable: a 196-token map in a panel with fewer than two
// pixels per token is drawn as 14×14 blocks (rows of patches); a 49-token
// map keeps its entries; an empty map (t = 0) is drawn blank, not left as
// the last map shown.
func TestAttentionReadable(t *testing.T) {
	test.NewTempApp(t)
	for _, c := range []struct{ n, want int }{{196, 14}, {49, 49}} {
		h := NewHeatmap()
		w := test.NewTempWindow(t, h)
		w.Resize(fyne.NewSize(260, 200))
		h.Values, h.Rows, h.Cols, h.Block = randomAttention(c.n), c.n, c.n, gridSide(c.n)
		h.Refresh()
		if b := h.img.Image.Bounds(); b.Dx() != c.want || b.Dy() != c.want {
			t.Fatalf("%d tokens in %v: drawn %v, want %d×%d", c.n, h.img.Size(), b, c.want, c.want)
		}
		h.Values, h.Rows, h.Cols = nil, 0, 0
		h.Refresh()
		if b := h.img.Image.Bounds(); b.Dx() != 1 || h.hi.Text != "" {
			t.Fatalf("%d tokens, then none: still drawn %v with colour bar %q", c.n, b, h.hi.Text)
		}
	}
}

// TestAttentionLens: over an aggregated map the pointer shows a lens of
// single entries with the one under it marked; leaving hides it.
func TestAttentionLens(t *testing.T) {
	test.NewTempApp(t)
	h := NewHeatmap()
	w := test.NewTempWindow(t, h)
	w.Resize(fyne.NewSize(260, 200))
	h.Values, h.Rows, h.Cols, h.Block = randomAttention(196), 196, 196, 14
	h.Refresh()
	pos, sz := (&heatRenderer{h: h}).mapRect(h.Size())
	h.hoverAt(fyne.NewPos(pos.X+sz.Width*0.2, pos.Y+sz.Height*0.3))
	if !h.lens.Visible() || h.lens.Image.Bounds().Dx() != lensTokens {
		t.Fatalf("no lens of %d entries under the pointer", lensTokens)
	}
	if h.lens.Position().X <= pos.X+sz.Width*0.2 || h.lens.Position().Y <= pos.Y+sz.Height*0.3 {
		t.Fatal("the lens covers the pointer")
	}
	h.MouseOut()
	if h.lens.Visible() {
		t.Fatal("the lens stays after the pointer left")
	}
}

// TestAttentionScales: each scale maps to 0…1; per row puts every row's
// largest weight at 1; log puts weights 1000 times below the largest at 0.
func TestAttentionScales(t *testing.T) {
	n := 49
	v := randomAttention(n)
	v[3] = 1e-9
	for s := range attnScaleNames {
		out, _, _ := scaleAttention(v, n, n, attnScale(s), 0.5)
		for k, x := range out {
			if !(x >= 0 && x <= 1) {
				t.Fatalf("scale %s: entry %d → %g", attnScaleNames[s], k, x)
			}
		}
	}
	out, _, _ := scaleAttention(v, n, n, scaleRowNorm, 0)
	for q := 0; q < n; q++ {
		var m float32
		for _, x := range out[q*n : (q+1)*n] {
			m = max(m, x)
		}
		if m != 1 {
			t.Fatalf("per row: row %d peaks at %g", q, m)
		}
	}
	if out, _, _ := scaleAttention(v, n, n, scaleLog, 0); out[3] != 0 {
		t.Fatalf("log: a weight of 1e-9 drawn at %g", out[3])
	}
}

// randomAttention is an n×n matrix whose rows sum to 1.
func randomAttention(n int) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, n*n)
	for q := 0; q < n; q++ {
		var s float32
		for k := range n {
			v[q*n+k] = r.Float32()
			s += v[q*n+k]
		}
		for k := range n {
			v[q*n+k] /= s
		}
	}
	return v
}
