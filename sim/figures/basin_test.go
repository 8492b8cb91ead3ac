package figures

import (
	"image"
	"io"
	"math"
	"testing"
	"time"
)

// TestBasinMark: a marked cell is outlined in every panel and nothing
// else changes: the pixels that differ from the unmarked map lie on the
// cell's border, one region per panel.
func TestBasinMark(t *testing.T) {
	b := Basin{XLabel: "level", YLabel: "λ", X: []float64{0.1, 0.5, 1}, Y: []float64{0.5, 1, 2, 4},
		Panels: []Heat{{Title: "a", Z: [][]float64{{1, 2, 3}, {2, 3, 4}, {3, 4, 5}, {4, 5, 6}}}, {Title: "b", Z: [][]float64{{6, 5, 4}, {5, 4, 3}, {4, 3, 2}, {3, 2, 1}}}}}
	render := func(b Basin) (image.Image, Cell) {
		plots, err := b.Plots()
		if err != nil {
			t.Fatal(err)
		}
		return b.Render(plots, 900, 400, 96)
	}
	plain, cell := render(b)
	b.Mark = &[2]int{2, 1}
	marked, _ := render(b)
	// Every differing pixel is within a few pixels of the cell (2, 1) of a
	// panel, and both panels have some.
	seen := map[int]int{}
	r := plain.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if plain.At(x, y) == marked.At(x, y) {
				continue
			}
			near := false
			for dy := -4; dy <= 4 && !near; dy++ {
				for dx := -4; dx <= 4 && !near; dx++ {
					if p, col, row, ok := cell(float64(x+dx), float64(y+dy)); ok && col == 2 && row == 1 {
						near = true
						seen[p]++
					}
				}
			}
			if !near {
				t.Fatalf("pixel (%d, %d) changed away from the marked cell", x, y)
			}
		}
	}
	if seen[0] == 0 || seen[1] == 0 {
		t.Fatalf("outline pixels per panel: %v, want both panels", seen)
	}
}

// TestBasinExtremeValues: a basin map of extreme values (the largest
// escape step, one value many orders above the rest, infinities, a span
// wider than a float64 holds, every cell equal at a huge magnitude) is
// drawn, never a panic or an endless tick loop (sweep merge panicked on
// escape_step 2⁶³−1 and on -Inf).
func TestBasinExtremeValues(t *testing.T) {
	big := float64(math.MaxInt64)
	for _, c := range []struct {
		name string
		z    [][]float64
	}{
		{"max int64", [][]float64{{big, big}}},
		{"max int64 and one", [][]float64{{big, 1}}},
		{"near equal huge", [][]float64{{1e18, 1e18 + 256}}},
		{"-Inf", [][]float64{{math.Inf(-1), 0.1}}},
		{"+Inf", [][]float64{{math.Inf(1), math.Inf(1)}}},
		{"±max float", [][]float64{{-math.MaxFloat64, math.MaxFloat64}}},
		{"max float equal", [][]float64{{math.MaxFloat64, math.MaxFloat64}}},
		{"subnormal", [][]float64{{5e-324, 0}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := Basin{XLabel: "level", YLabel: "λ", X: []float64{0.1, 0.5}, Y: []float64{1},
				Panels: []Heat{{Title: "a", Z: c.z}, {Title: "b", Z: c.z, Integer: true}}}
			done := make(chan any, 1)
			go func() {
				defer func() { done <- recover() }()
				if err := b.WritePNG(io.Discard, 600, 300); err != nil {
					t.Errorf("error %v", err)
				}
			}()
			select {
			case r := <-done:
				if r != nil {
					t.Fatalf("panic: %v", r)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("drawing did not finish in 20 s")
			}
		})
	}
}

// TestBasinTinySize: a basin map drawn smaller than its axes need (a
// small window) is drawn without the panels that do not fit, never a
// panic (gonum's colour bar panicked on a negative width).
func TestBasinTinySize(t *testing.T) {
	b := Basin{Title: "title", XLabel: "level", YLabel: "λ", X: []float64{0.1, 0.5}, Y: []float64{1, 2},
		Panels: []Heat{{Title: "a", Z: [][]float64{{1, 2}, {3, 4}}}, {Title: "b", Z: [][]float64{{1, 2}, {3, 4}}, Integer: true}, {Title: "escape step", Z: [][]float64{{1, math.NaN()}, {3, 4}}, Integer: true, NaN: "never escapes"}}}
	for _, sz := range [][2]int{{300, 120}, {120, 60}, {40, 400}, {400, 30}, {1, 1}} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%d×%d: panic: %v", sz[0], sz[1], r)
				}
			}()
			if err := b.WritePNG(io.Discard, sz[0], sz[1]); err != nil {
				t.Fatalf("%d×%d: %v", sz[0], sz[1], err)
			}
		}()
	}
}
