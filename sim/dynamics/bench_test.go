package dynamics

import (
	"context"
	"testing"

	"attractorlab/sim"
)

// The speed targets, on a real state (the shipped P = 2 model,
// digit 0 under noise near its t*): the leading 10 eigenvalues at one step,
// the escape direction over k = 30 steps, and the spectrum along 100 steps
// on every core (what the window's "Along the run" computes).
func BenchmarkDynamics(b *testing.B) {
	env := testEnv(b)
	f, x := realState(b, env, 26)
	ctx := context.Background()
	b.Run("spectrum", func(b *testing.B) {
		for b.Loop() {
			if _, err := SpectrumAt(ctx, f, x, 26, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("escape-k30", func(b *testing.B) {
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
	b.Run("along-100", func(b *testing.B) {
		sys, in := realSystem(b, env, sim.ShippedName(2))
		states, err := sys.Trajectory(ctx, in, 100)
		if err != nil {
			b.Fatal(err)
		}
		ts := make([]int, 100)
		for k := range ts {
			ts[k] = k + 1
		}
		b.ResetTimer()
		for b.Loop() {
			if err := AlongRun(ctx, f, states, ts, 0, func(Spectrum) {}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
