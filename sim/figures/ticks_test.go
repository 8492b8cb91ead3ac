package figures

import (
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
