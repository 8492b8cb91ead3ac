package figures

import (
	"testing"
)

// TestDistinctTicks: distinct labels where gonum's default repeats one.
func TestDistinctTicks(t *testing.T) {
	ts := DistinctTicks{}.Ticks(-1.1027, -1.0589)
	seen := map[string]bool{}
	for _, tk := range ts {
		if tk.Label == "" {
			continue
		}
		if seen[tk.Label] {
			t.Fatalf("label %q twice in %v", tk.Label, ts)
		}
		seen[tk.Label] = true
	}
	if len(seen) < 2 {
		t.Fatalf("labels %v", ts)
	}
}
