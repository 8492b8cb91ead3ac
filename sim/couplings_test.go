package sim

import (
	"math"
	"testing"

	"attractorlab/models"
)

// TestCouplingNorms: the norms are the coupling blocks' Frobenius norms,
// entry by entry (the naive index of docs/maths.md's J_ij[r][e]).
func TestCouplingNorms(t *testing.T) {
	m, err := models.NewBSA(4, 32, 3)
	if err != nil {
		t.Fatal(err)
	}
	got := CouplingNorms(m)
	n, d := m.N, m.D
	for i := range n {
		for j := range n {
			var ss float64
			for r := range d {
				for e := range d {
					v := float64(m.J[i*d*d*m.NP+(r*d+e)*m.NP+j])
					ss += v * v
				}
			}
			want := math.Sqrt(ss)
			if i == j {
				want = 0
			}
			if math.Abs(got[i*n+j]-want) > 1e-9*(1+want) {
				t.Fatalf("‖J_%d,%d‖ = %g, want %g", i, j, got[i*n+j], want)
			}
		}
	}
}

// TestLocality: norms that depend only on the displacement come back
// exactly at each displacement, and by distance as their mean.
func TestLocality(t *testing.T) {
	const side = 5
	n := side * side
	norms := make([]float64, n*n)
	for i := range n {
		for j := range n {
			dr, dc := j/side-i/side, j%side-i%side
			norms[i*n+j] = float64(100 + 10*dr + dc)
		}
	}
	grid := Locality(norms, side)
	w := 2*side - 1
	for dr := -(side - 1); dr < side; dr++ {
		for dc := -(side - 1); dc < side; dc++ {
			v := grid[(dr+side-1)*w+dc+side-1]
			if dr == 0 && dc == 0 {
				if !math.IsNaN(v) {
					t.Fatalf("no displacement: %g, want NaN", v)
				}
				continue
			}
			if want := float64(100 + 10*dr + dc); v != want {
				t.Fatalf("(%d, %d): %g, want %g", dr, dc, v, want)
			}
		}
	}
	for i := range n {
		for j := range n {
			dr, dc := j/side-i/side, j%side-i%side
			norms[i*n+j] = float64(max(abs(dr), abs(dc)))
		}
	}
	for k, v := range LocalityByDistance(norms, side) {
		if v != float64(k+1) {
			t.Fatalf("distance %d: %g", k+1, v)
		}
	}
}

// TestShippedCouplingsByDistance measures how the shipped bare
// self-attention's coupling strength varies with patch distance (logged:
// by this measure the couplings are not local — the farthest pairs, corner
// patches that are background in nearly every digit, couple at least as
// strongly as neighbours), and checks every mean is a positive number.
func TestShippedCouplingsByDistance(t *testing.T) {
	for _, p := range []int{2, 4} {
		m, err := LoadBSA(p, "")
		if err != nil {
			t.Fatal(err)
		}
		byDist := LocalityByDistance(CouplingNorms(m), models.Side/p)
		t.Logf("P=%d: mean ‖J_ij‖ by patch distance 1 … %d: %.4g", p, len(byDist), byDist)
		for k, v := range byDist {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Fatalf("P=%d, distance %d: mean ‖J_ij‖ = %g", p, k+1, v)
			}
		}
	}
}
