package figures

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"attractorlab/sim"
)

// TestPlotsNeverPanic: a curve of one step, or one with no finite MSE (a
// diverged run), is drawn or refused with an error naming the model,
// never a panic (reproduce --steps 1 panicked on the log axis).
func TestPlotsNeverPanic(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name    string
		rows    []sim.Row
		wantErr string
	}{
		{"one step", []sim.Row{{T: 0, MSE: 0.1}, {T: 1, MSE: 0.05}}, ""},
		{"flat", []sim.Row{{T: 0, MSE: 0.1}, {T: 1, MSE: 0.1}, {T: 2, MSE: 0.1}}, ""},
		{"all NaN", []sim.Row{{T: 0, MSE: nan}, {T: 1, MSE: nan}}, "no finite MSE"},
		{"input only", []sim.Row{{T: 0, MSE: 0.1}}, "no step after the input"},
		{"zero MSE", []sim.Row{{T: 0, MSE: 0}, {T: 1, MSE: 0}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			curve := &sim.Curve{Model: "bsa-p2", Task: sim.Noise, Rows: c.rows}
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				p, perr := CurvePlot(curve)
				err = perr
				if perr == nil {
					var b bytes.Buffer
					err = WritePNG(&b, p, 300, 200)
				}
				if err == nil {
					p, err = Fig1Plot([]*sim.Curve{curve}, nil)
					if err == nil {
						var b bytes.Buffer
						err = WritePNG(&b, p, 300, 200)
					}
				}
			}()
			if c.wantErr == "" && err != nil {
				t.Fatalf("error %v", err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "bsa-p2")) {
				t.Fatalf("error %v, want one naming bsa-p2 and saying %q", err, c.wantErr)
			}
		})
	}
}
