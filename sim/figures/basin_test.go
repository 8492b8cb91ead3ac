package figures

import (
	"image"
	"testing"
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
