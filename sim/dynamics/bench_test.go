package dynamics

import (
	"context"
	"testing"
)

// The speed targets, on a real state (test digit 0 under the
// default noise, t = 26, near the bare P = 2 model's t*), for every system
// that iterates a map: the leading 10 eigenvalues at one step, the escape
// direction over k = 30 steps, and the spectrum along 100 steps on every
// core (what the window's "Along the run" computes).
func BenchmarkDynamics(b *testing.B) {
	env := testEnv(b)
	ctx := context.Background()
	for _, name := range []string{"bsa-p2", "bsa-p4", "block", "hopfield"} {
		sys, in := realSystem(b, env, name)
		states, err := sys.Trajectory(ctx, in, 100)
		if err != nil {
			b.Fatal(err)
		}
		f, x := sys.Stepper(), states[26]
		b.Run(name+"/spectrum", func(b *testing.B) {
			for b.Loop() {
				if _, err := SpectrumAt(ctx, f, x, 26, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/escape-k30", func(b *testing.B) {
			for b.Loop() {
				ch, err := NewChain(ctx, f, x, 30)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := EscapeFrom(ctx, ch, 26, 1, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/along-100", func(b *testing.B) {
			ts := make([]int, 100)
			for k := range ts {
				ts[k] = k + 1
			}
			for b.Loop() {
				if err := AlongRun(ctx, f, states, ts, 0, func(Spectrum) {}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
