package figures

import (
	"math"
	"strings"
	"testing"
)

func TestIntTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{{0, 5, "0 1 2 3 4 5"}, {0, 100, "0 20 40 60 80 100"}, {0, 12, "0 2 4 6 8 10 12"}, {0, 1, "0 1"}, {3, 30, "5 10 15 20 25 30"}} {
		var got []string
		for _, tk := range (IntTicks{}).Ticks(tc.lo, tc.hi) {
			got = append(got, tk.Label)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("ticks on [%g, %g]: %q, want %q", tc.lo, tc.hi, strings.Join(got, " "), tc.want)
		}
	}
}

func TestLogTicks125(t *testing.T) {
	var got []string
	for _, tk := range (LogTicks125{}).Ticks(0.018, 0.45) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if s := strings.Join(got, " "); s != "0.02 0.03 0.05 0.1 0.2 0.3" {
		t.Fatalf("labels %q", s)
	}
	if (LogTicks125{}).Ticks(0, 1) != nil {
		t.Fatal("ticks for a range reaching 0")
	}
}

// TestPlainTicks: labels carry only the decimals the value has.
func TestPlainTicks(t *testing.T) {
	var labels []string
	for _, tk := range (PlainTicks{}).Ticks(-1075, -975) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if len(labels) == 0 {
		t.Fatal("no labelled ticks")
	}
	for _, l := range labels {
		if strings.Contains(l, ".") {
			t.Fatalf("energy ticks %v carry decimals", labels)
		}
	}
	for _, tk := range (PlainTicks{}).Ticks(0.04, 0.16) {
		if tk.Label != "" && strings.HasSuffix(tk.Label, "0") && strings.Contains(tk.Label, ".") {
			t.Fatalf("MSE tick %q ends in a needless zero", tk.Label)
		}
	}
}

// TestTrajectoryFitsEveryCurve: the y axis spans every series with a
// margin (the ViT's low line stayed outside with four models), on a linear
// and a log axis; markers and legend are drawn only when asked.
func TestTrajectoryFitsEveryCurve(t *testing.T) {
	ss := []Series{{Name: "a", Values: []float64{0.1, 0.06, 0.05, 0.2}},
		{Name: "b", Values: []float64{0.1, 0.02, 0.021, 0.021}},
		{Name: "c", Values: []float64{math.NaN(), 0.4, math.Inf(1), 0.3}}}
	for _, logY := range []bool{false, true} {
		p, err := TrajectoryPlot("x", "MSE", ss, TrajectoryOptions{LogY: logY, Legend: true, Now: 2, Best: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !(p.Y.Min < 0.02 && p.Y.Max > 0.4) {
			t.Fatalf("log %v: y from %g to %g does not hold 0.02 … 0.4 with a margin", logY, p.Y.Min, p.Y.Max)
		}
		if logY && p.Y.Min <= 0 {
			t.Fatalf("log axis from %g", p.Y.Min)
		}
		if img := Render(p, 400, 300, 96); img.Bounds().Dx() != 400 {
			t.Fatal("not drawn")
		}
	}
}
