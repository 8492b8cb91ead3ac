package models

import (
	"strings"
	"testing"
)

// Training's limit on d: four padded copies of J within MaxTrainBytes,
// the largest such d, and never above what a file may hold.
func TestMaxTrainBSADim(t *testing.T) {
	for _, c := range []struct{ p, want int }{{1, 14}, {2, 57}, {4, 206}} {
		d := MaxTrainBSADim(c.p)
		if d != c.want {
			t.Errorf("P=%d: %d, want %d", c.p, d, c.want)
		}
		pt, _ := bsaPatches(c.p)
		n, np := int64(pt.N), int64(roundUp16(pt.N))
		if b := 16 * n * np * int64(d*d); b > MaxTrainBytes {
			t.Errorf("P=%d d=%d: %d bytes of couplings in training, over %d", c.p, d, b, MaxTrainBytes)
		}
		if b := 16 * n * np * int64((d+1)*(d+1)); b <= MaxTrainBytes && d+1 <= MaxBSADim(c.p) {
			t.Errorf("P=%d: d=%d would fit too", c.p, d+1)
		}
	}
	if err := CheckTrainBSADim(2, 81); err == nil || !strings.Contains(err.Error(), "d = 81 is out of range for training at P=2 (allowed 8 … 57") {
		t.Errorf("d = 81: %v", err)
	}
	if err := CheckTrainBSADim(2, 8); err != nil {
		t.Error(err)
	}
}
