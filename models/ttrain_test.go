package models

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

func tinyTrainSetup(t *testing.T, seed uint64) (*TransformerTrainer, [][]float32, *[]TransformerEpoch) {
	t.Helper()
	m, err := NewTransformer[float32](TransformerConfig{Patch: 4, Dim: 16, Heads: 2, MLP: 24, Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	m.Init(seed)
	rng := rand.New(rand.NewPCG(1, 1))
	// Images: a few smooth blobs, so there is structure to learn.
	var images [][]float32
	for range 64 {
		img := make([]float32, Pixels)
		cx, cy := rng.Float64()*20+4, rng.Float64()*20+4
		for q := range img {
			dx, dy := float64(q%28)-cx, float64(q/28)-cy
			if dx*dx+dy*dy < 30 {
				img[q] = 1
			}
		}
		images = append(images, img)
	}
	cfg := DefaultTransformerTrainConfig()
	cfg.Epochs, cfg.Batch, cfg.Micro, cfg.Workers, cfg.Seed = 4, 16, 8, 2, seed
	cfg.Corrupt = func(clean []float32, s uint64, k int) []float32 {
		r := rand.New(rand.NewPCG(s, uint64(k)))
		out := slices.Clone(clean)
		for q := range out {
			out[q] += float32(r.NormFloat64() * 0.5)
		}
		return out
	}
	for k := range 16 {
		cfg.ValInputs = append(cfg.ValInputs, cfg.Corrupt(images[k], 12345, k))
		cfg.ValClean = append(cfg.ValClean, images[k])
	}
	var stats []TransformerEpoch
	cfg.Progress = func(s TransformerEpoch) { stats = append(stats, s) }
	return NewTransformerTrainer(m, cfg), images, &stats
}

// TestTransformerTrainer: the loss falls, a seeded run repeats exactly (the
// chunk-to-worker assignment is fixed), τ stays in 3..7, and a cancelled
// context stops training.
func TestTransformerTrainer(t *testing.T) {
	tr, images, stats := tinyTrainSetup(t, 4)
	before := tr.Evaluate(tr.Cfg.ValInputs, tr.Cfg.ValClean, tr.M.Cfg.Applications(5))
	if err := tr.Train(context.Background(), images); err != nil {
		t.Fatal(err)
	}
	if len(*stats) != 4 || tr.Epochs() != 4 {
		t.Fatalf("%d epochs reported", len(*stats))
	}
	last := (*stats)[3]
	if !(last.ValMSE < 0.7*before) {
		t.Fatalf("validation MSE %g after training, %g before", last.ValMSE, before)
	}
	if !((*stats)[3].TrainMSE < (*stats)[0].TrainMSE) {
		t.Fatalf("training MSE did not fall: %+v", *stats)
	}
	if lr := tr.LR(); lr > 1e-12 || (*stats)[1].LR >= (*stats)[0].LR || (*stats)[0].LR >= tr.Cfg.LR {
		t.Fatalf("cosine schedule: lr %g after the run, epochs %g then %g", lr, (*stats)[0].LR, (*stats)[1].LR)
	}
	for _, s := range *stats {
		if s.MeanTau < 3 || s.MeanTau > 7 {
			t.Fatalf("mean τ %g outside 3..7", s.MeanTau)
		}
	}
	again, _, _ := tinyTrainSetup(t, 4)
	if err := again.Train(context.Background(), images); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tr.M.Params, again.M.Params) {
		t.Fatal("two runs with the same seed gave different weights")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, _, _ := tinyTrainSetup(t, 4)
	if err := c.Train(ctx, images); err != context.Canceled {
		t.Fatalf("cancelled training returned %v", err)
	}
}

// BenchmarkTransformerTrain is one AdamW step at batch 256 on every core:
// the block with τ = 5 (the mean of U{3..7}) and the ViT.
func BenchmarkTransformerTrain(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  TransformerConfig
	}{{"block-tau5", BlockConfig}, {"vit", ViTConfig}} {
		m := randomTransformer(b, tc.cfg, 1)
		in, clean := noisyPairs(rand.New(rand.NewPCG(2, 2)), 256)
		cfg := DefaultTransformerTrainConfig()
		tr := NewTransformerTrainer(m, cfg)
		apps := tc.cfg.Applications(5)
		b.Run(tc.name+"/train", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tr.Gradient(in, clean, apps)
				tr.Update()
			}
			b.ReportMetric(float64(256*b.N)/b.Elapsed().Seconds(), "img/s")
		})
		b.Run(tc.name+"/forward", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				EvaluateTransformer(tr.work, in, clean, apps)
			}
			b.ReportMetric(float64(256*b.N)/b.Elapsed().Seconds(), "img/s")
		})
	}
}
