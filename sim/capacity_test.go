package sim

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"attractorlab/sim/mnist"
)

// TestCapacity: each size trains the same number of updates (epochs
// follow the batches per epoch), the mean curve is the digits' mean and
// t* its best step; settings out of range are refused by flag.
func TestCapacity(t *testing.T) {
	train, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultCapacity()
	c.Images, c.Updates, c.HalveEvery, c.N, c.Steps = []int{100, 600}, 6, 3, 12, 15
	rows, err := Capacity(context.Background(), train, test, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 100 images: 1 batch an epoch, 6 epochs; 600: 3 batches, 2 epochs.
	if len(rows) != 2 || rows[0].Epochs != 6 || rows[0].Updates != 6 || rows[1].Epochs != 2 || rows[1].Updates != 6 {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows {
		if len(r.Curve) != 16 || r.TStar < 1 || r.TStar > 15 || r.Curve[r.TStar] != r.MSEStar || r.Transient < 0 || r.Transient > 1 {
			t.Fatalf("row %d images: %d points, t* %d, MSE(t*) %g, transient %g", r.Images, len(r.Curve), r.TStar, r.MSEStar, r.Transient)
		}
		for tt := 1; tt < len(r.Curve); tt++ {
			if r.Curve[tt] < r.MSEStar {
				t.Fatalf("t %d: %g below MSE(t*) %g", tt, r.Curve[tt], r.MSEStar)
			}
		}
	}
	var buf bytes.Buffer
	if err := WriteCapacityCSV(&buf, c, rows); err != nil || strings.Count(buf.String(), "\n") != 3 {
		t.Fatalf("csv %q, %v", buf.String(), err)
	}
	for _, bad := range []struct {
		edit func(*CapacityConfig)
		want string
	}{
		{func(c *CapacityConfig) { c.Images = []int{50} }, "--images = 50"},
		{func(c *CapacityConfig) { c.Images = nil }, "--images"},
		{func(c *CapacityConfig) { c.Updates = 0 }, "--updates = 0"},
		{func(c *CapacityConfig) { c.N = 0 }, "--n = 0"},
	} {
		c := DefaultCapacity()
		bad.edit(&c)
		if _, err := Capacity(context.Background(), train, test, c, nil); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v", bad.want, err)
		}
	}
}
