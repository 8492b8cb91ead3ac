package sim

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func FuzzReadCurveCSV(f *testing.F) {
	c := &Curve{Model: "x", Task: Mask, Rows: []Row{{T: 0, MSE: 0.1}, {T: 1, MSE: 0.05, MSEMasked: math.NaN()}}}
	var b bytes.Buffer
	c.WriteCSV(&b)
	f.Add(b.Bytes())
	f.Add([]byte(""))
	f.Add([]byte("t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReadCurveCSV(bytes.NewReader(data), "fuzz.csv", "x", Mask)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(got.Rows) == 0 {
			t.Fatal("accepted a curve without rows")
		}
	})
}
