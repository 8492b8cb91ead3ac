package sim

import (
	"context"
	"testing"

	"attractorlab/models"
)

func benchData(b *testing.B) (*Data, *Memories, *models.BSA) {
	b.Helper()
	data, err := LoadData("")
	if err != nil {
		b.Fatal(err)
	}
	m, err := LoadBSA(2, "")
	if err != nil {
		b.Fatal(err)
	}
	return data, NewMemories(data.Train), m
}

// BenchmarkReproduce reports image-steps/s of `reproduce` (metrics included)
// on 32 digits × 100 steps.
func BenchmarkReproduce(b *testing.B) {
	data, mem, m := benchData(b)
	for _, task := range []Corruption{DefaultMask, DefaultNoise} {
		b.Run(task.Kind.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, err := Reproduce(context.Background(), data, mem, ReproduceConfig{Model: m, Dyn: models.DefaultDynamics(),
					Corruption: task, N: 32, Steps: 100})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*32*100)/b.Elapsed().Seconds(), "image-steps/s")
		})
	}
}

// BenchmarkBSAStep is one step of the P=2, d=8 network for 1 and 256 images.
func BenchmarkBSAStep(b *testing.B) {
	data, _, m := benchData(b)
	for _, n := range []int{1, 256} {
		b.Run(map[int]string{1: "1image", 256: "256images"}[n], func(b *testing.B) {
			var inputs []*Corrupted
			for k := 0; k < n; k++ {
				inputs = append(inputs, DefaultNoise.Apply(data.Test.Clean(k, PixelGain), m.Patches, k))
			}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				_ = inputs
				b.StartTimer()
				RunBSA(context.Background(), m, models.DefaultDynamics(), inputs, 1, 0, func(int, int, []float32, float64) {})
			}
		})
	}
}
