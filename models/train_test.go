package models

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTrainConfigCheck: every setting out of range is refused by Check,
// NewTrainer/Train and NewTransformerTrainer/Train, with the flag's name
// and the allowed range, before anything is trained (no hang, no panic,
// weights untouched).
func TestTrainConfigCheck(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name string
		set  func(e *int, b *int, lr, wd *float64, w *int, halve *int)
		want string
	}{
		{"batch 0", func(e, b *int, lr, wd *float64, w, h *int) { *b = 0 }, "--batch = 0 is out of range (allowed 1 … 65536)"},
		{"batch -5", func(e, b *int, lr, wd *float64, w, h *int) { *b = -5 }, "--batch = -5 is out of range (allowed 1 … 65536)"},
		{"batch huge", func(e, b *int, lr, wd *float64, w, h *int) { *b = 65537 }, "--batch = 65537 is out of range (allowed 1 … 65536)"},
		{"epochs 0", func(e, b *int, lr, wd *float64, w, h *int) { *e = 0 }, "--epochs = 0 is out of range (allowed 1 … 100000)"},
		{"epochs huge", func(e, b *int, lr, wd *float64, w, h *int) { *e = 100001 }, "--epochs = 100001 is out of range (allowed 1 … 100000)"},
		{"lr NaN", func(e, b *int, lr, wd *float64, w, h *int) { *lr = nan }, "--lr = NaN is out of range (allowed 1e-08 ≤ --lr ≤ 1)"},
		{"lr Inf", func(e, b *int, lr, wd *float64, w, h *int) { *lr = inf }, "--lr = +Inf is out of range (allowed 1e-08 ≤ --lr ≤ 1)"},
		{"lr 0", func(e, b *int, lr, wd *float64, w, h *int) { *lr = 0 }, "--lr = 0 is out of range (allowed 1e-08 ≤ --lr ≤ 1)"},
		{"lr 1e-320", func(e, b *int, lr, wd *float64, w, h *int) { *lr = 1e-320 }, "--lr = 1e-320 is out of range (allowed 1e-08 ≤ --lr ≤ 1)"},
		{"lr 2", func(e, b *int, lr, wd *float64, w, h *int) { *lr = 2 }, "--lr = 2 is out of range (allowed 1e-08 ≤ --lr ≤ 1)"},
		{"wd -1", func(e, b *int, lr, wd *float64, w, h *int) { *wd = -1 }, "--wd = -1 is out of range (allowed 0 ≤ --wd ≤ 1)"},
		{"wd NaN", func(e, b *int, lr, wd *float64, w, h *int) { *wd = nan }, "--wd = NaN is out of range (allowed 0 ≤ --wd ≤ 1)"},
		{"workers -1", func(e, b *int, lr, wd *float64, w, h *int) { *w = -1 }, "--workers = -1 is out of range (allowed 0 … 1024)"},
		{"workers huge", func(e, b *int, lr, wd *float64, w, h *int) { *w = 1 << 30 }, "--workers = 1073741824 is out of range (allowed 0 … 1024)"},
		{"halve-every -1", func(e, b *int, lr, wd *float64, w, h *int) { *h = -1 }, "--halve-every = -1 is out of range (allowed 0 … 100000)"},
	}
	images := randomImages(8, 5)
	for _, tc := range cases {
		t.Run("bsa/"+tc.name, func(t *testing.T) {
			m, err := NewBSA(4, 32, 1)
			if err != nil {
				t.Fatal(err)
			}
			j0 := slices.Clone(m.J)
			cfg := DefaultTrainConfig()
			cfg.Epochs, cfg.Batch = 1, 4
			tc.set(&cfg.Epochs, &cfg.Batch, &cfg.LR, &cfg.WeightDecay, &cfg.Workers, &cfg.HalveEvery)
			if err := cfg.Check(); err == nil || err.Error() != tc.want {
				t.Fatalf("Check: %v, want %q", err, tc.want)
			}
			err = withTimeout(t, 20*time.Second, func() error { return NewTrainer(m, cfg).Train(context.Background(), images) })
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Train: %v, want %q", err, tc.want)
			}
			if !slices.Equal(m.J, j0) {
				t.Fatal("the refused run changed J")
			}
		})
		if strings.HasPrefix(tc.name, "halve") {
			continue // the transformer has no halving
		}
		t.Run("transformer/"+tc.name, func(t *testing.T) {
			tr, imgs, _ := tinyTrainSetup(t, 1)
			cfg := tr.Cfg
			cfg.Epochs, cfg.Workers = 1, 2
			var h int
			tc.set(&cfg.Epochs, &cfg.Batch, &cfg.LR, &cfg.WeightDecay, &cfg.Workers, &h)
			if err := cfg.Check(); err == nil || err.Error() != tc.want {
				t.Fatalf("Check: %v, want %q", err, tc.want)
			}
			p0 := slices.Clone(tr.M.Params)
			err := withTimeout(t, 20*time.Second, func() error {
				return NewTransformerTrainer(tr.M, cfg).Train(context.Background(), imgs)
			})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Train: %v, want %q", err, tc.want)
			}
			if !slices.Equal(tr.M.Params, p0) {
				t.Fatal("the refused run changed the parameters")
			}
		})
	}
	t.Run("defaults pass", func(t *testing.T) {
		if err := DefaultTrainConfig().Check(); err != nil {
			t.Fatal(err)
		}
		tr, _, _ := tinyTrainSetup(t, 1)
		if err := tr.Cfg.Check(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("clip", func(t *testing.T) {
		for _, v := range []float64{-1, nan, inf} {
			cfg := DefaultTrainConfig()
			cfg.Clip = v
			want := fmt.Sprintf("Clip = %g is out of range (allowed a finite number ≥ 0; 0: no clipping)", v)
			if err := cfg.Check(); err == nil || err.Error() != want {
				t.Fatalf("Clip %g: %v, want %q", v, err, want)
			}
		}
	})
	t.Run("every problem listed", func(t *testing.T) {
		cfg := DefaultTrainConfig()
		cfg.Batch, cfg.LR = 0, nan
		err := cfg.Check()
		if err == nil || !strings.Contains(err.Error(), "--batch = 0") || !strings.Contains(err.Error(), "--lr = NaN") {
			t.Fatalf("error %v, want both batch and lr", err)
		}
	})
}

// TestTransformerTrainConfigCheck: the transformer's own settings.
func TestTransformerTrainConfigCheck(t *testing.T) {
	cases := []struct {
		name string
		set  func(c *TransformerTrainConfig)
		want string
	}{
		{"TauMin 0", func(c *TransformerTrainConfig) { c.TauMin = 0 }, "TauMin = 0 is out of range (allowed 1 … 100)"},
		{"TauMax < TauMin", func(c *TransformerTrainConfig) { c.TauMin, c.TauMax = 5, 4 }, "TauMax = 4 is out of range (allowed 5 … 100)"},
		{"ValTau 0", func(c *TransformerTrainConfig) { c.ValTau = 0 }, "ValTau = 0 is out of range (allowed 1 … 100)"},
		{"Micro -1", func(c *TransformerTrainConfig) { c.Micro = -1 }, "Micro = -1 is out of range (allowed 0 … 256)"},
		{"Beta2 1", func(c *TransformerTrainConfig) { c.Beta2 = 1 }, "Beta2 = 1 is out of range (allowed 0 ≤ Beta2 < 1)"},
		{"Eps 0", func(c *TransformerTrainConfig) { c.Eps = 0 }, "Eps = 0 is out of range (allowed 0 < Eps ≤ 1)"},
		{"Beta1 NaN", func(c *TransformerTrainConfig) { c.Beta1 = math.NaN() }, "Beta1 = NaN is out of range (allowed 0 ≤ Beta1 < 1)"},
		{"no corruption", func(c *TransformerTrainConfig) { c.Corrupt = nil }, "transformer training needs a corruption (Corrupt is nil)"},
		{"validation lengths", func(c *TransformerTrainConfig) { c.ValClean = c.ValClean[:3] }, "16 validation inputs but 3 clean images"},
		{"validation image", func(c *TransformerTrainConfig) { c.ValInputs = slices.Clone(c.ValInputs); c.ValInputs[2] = nil },
			"validation image 2 has 0 input and 784 clean pixels, want 784"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, imgs, _ := tinyTrainSetup(t, 1)
			cfg := tr.Cfg
			tc.set(&cfg)
			err := withTimeout(t, 20*time.Second, func() error {
				return NewTransformerTrainer(tr.M, cfg).Train(context.Background(), imgs)
			})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Train: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestTrainImagesChecked: an empty training set or an image of the wrong
// size is refused by both trainers instead of a NaN epoch or a panic.
func TestTrainImagesChecked(t *testing.T) {
	cases := []struct {
		name   string
		images [][]float32
		want   string
	}{
		{"none", nil, "no training images"},
		{"short image", append(randomImages(3, 1), make([]float32, 10)), "training image 3 has 10 pixels, want 784"},
	}
	for _, tc := range cases {
		t.Run("bsa/"+tc.name, func(t *testing.T) {
			m, _ := NewBSA(4, 32, 1)
			cfg := DefaultTrainConfig()
			cfg.Epochs = 1
			if err := NewTrainer(m, cfg).Train(context.Background(), tc.images); err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
		t.Run("transformer/"+tc.name, func(t *testing.T) {
			tr, _, _ := tinyTrainSetup(t, 1)
			if err := tr.Train(context.Background(), tc.images); err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("transformer/short corruption", func(t *testing.T) {
		tr, images, _ := tinyTrainSetup(t, 1)
		tr.Cfg.Batch = len(images)
		tr.Cfg.Corrupt = func(clean []float32, _ uint64, _ int) []float32 { return clean[:700] }
		err := tr.Train(context.Background(), images)
		if err == nil || !strings.HasPrefix(err.Error(), "epoch 1, batch 1 of 1: the corruption of image ") ||
			!strings.HasSuffix(err.Error(), " has 700 pixels, want 784") {
			t.Fatalf("error %v", err)
		}
	})
}

// TestTrainerStopsOnNonFinite: a NaN loss (a NaN training image) or a
// non-finite parameter after an update (a NaN planted in the AdamW state)
// stops both trainers with ErrDiverged, naming epoch and batch.
func TestTrainerStopsOnNonFinite(t *testing.T) {
	nanImage := func(images [][]float32, k int) [][]float32 {
		images = slices.Clone(images)
		images[k] = slices.Clone(images[k])
		for q := range images[k] {
			images[k][q] = float32(math.NaN())
		}
		return images
	}
	t.Run("bsa", func(t *testing.T) {
		cases := []struct {
			name    string
			allRows bool
			images  [][]float32
			plant   func(tr *Trainer)
			want    string
		}{
			{"NaN image, one row", false, nanImage(randomImages(8, 2), 5), nil, "epoch 1, batch 1 of 1: the loss is NaN: training diverged"},
			{"NaN image, all rows", true, nanImage(randomImages(8, 2), 5), nil, "epoch 1, batch 1 of 1: the loss is NaN: training diverged"},
			{"NaN moment", true, randomImages(8, 2), func(tr *Trainer) { tr.m[tr.M.jidx(3, 7, 1, 2)] = float32(math.NaN()) },
				"epoch 1, batch 1 of 1: the update at lr 0.0005 made coupling J[3,7,1,2] = NaN: training diverged"},
			{"Inf moment, one row", false, randomImages(8, 2), func(tr *Trainer) { tr.m[tr.M.jidx(48, 0, 31, 30)] = float32(math.Inf(-1)) },
				"epoch 1, batch 1 of 1: the update at lr 0.0005 made coupling J[48,0,31,30] = +Inf: training diverged"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				m, _ := NewBSA(4, 32, 1)
				cfg := DefaultTrainConfig()
				cfg.Epochs, cfg.Batch, cfg.AllRows, cfg.Workers = 2, len(tc.images), tc.allRows, 2
				tr := NewTrainer(m, cfg)
				if tc.plant != nil {
					tc.plant(tr)
				}
				err := tr.Train(context.Background(), tc.images)
				if err == nil || !errors.Is(err, ErrDiverged) || err.Error() != tc.want {
					t.Fatalf("error %v, want %q", err, tc.want)
				}
				if tr.Epochs() != 0 {
					t.Fatalf("%d epochs reported done", tr.Epochs())
				}
			})
		}
	})
	t.Run("transformer", func(t *testing.T) {
		cases := []struct {
			name  string
			nan   int // index of a NaN training image, or -1
			plant func(tr *TransformerTrainer)
			want  string
		}{
			{"NaN image", 17, nil, "epoch 1, batch 1 of 1: the loss is NaN: training diverged"},
			{"NaN moment", -1, func(tr *TransformerTrainer) {
				s := tr.M.specs[5]
				tr.mom[s.off+7] = float32(math.NaN())
			}, `epoch 1, batch 1 of 1: the update at lr 0.001 made parameter "blocks.0.attn.qkv.weight" element 7 = NaN: training diverged`},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				tr, images, _ := tinyTrainSetup(t, 1)
				tr.Cfg.Batch = len(images)
				if tc.nan >= 0 {
					images = nanImage(images, tc.nan)
				}
				if tc.plant != nil {
					tc.plant(tr)
				}
				err := tr.Train(context.Background(), images)
				if err == nil || !errors.Is(err, ErrDiverged) || err.Error() != tc.want {
					t.Fatalf("error %v, want %q", err, tc.want)
				}
				if tr.Epochs() != 0 {
					t.Fatalf("%d epochs reported done", tr.Epochs())
				}
			})
		}
	})
}

// updateNaive is the AdamW step and RMS rescale of §5 written as one
// sequential loop over every coupling: the twin of Trainer.update.
func updateNaive(t *Trainer, lr float64) {
	c := t.Cfg
	var gn float64
	for _, g := range t.g {
		gn += float64(g) * float64(g)
	}
	gn = math.Sqrt(gn)
	gs := 1.0
	if c.Clip > 0 && gn > c.Clip {
		gs = c.Clip / gn
	}
	t.step++
	bc1 := 1 - math.Pow(c.Beta1, float64(t.step))
	bc2 := 1 - math.Pow(c.Beta2, float64(t.step))
	J := t.M.J
	for k, g := range t.g {
		g *= float32(gs)
		t.m[k] = float32(c.Beta1)*t.m[k] + (1-float32(c.Beta1))*g
		t.v[k] = float32(c.Beta2)*t.v[k] + (1-float32(c.Beta2))*g*g
		J[k] = J[k]*float32(1-lr*c.WeightDecay) - float32(lr/bc1)*t.m[k]/(float32(math.Sqrt(float64(t.v[k])))/float32(math.Sqrt(bc2))+float32(c.Eps))
	}
	f := float32(t.rms0 / t.M.rms())
	for k := range J {
		J[k] *= f
	}
}

// The parallel, chunked update matches its sequential twin (to the
// rounding of the RMS's sum, added in another order) over steps with one
// row's gradient and with every row's, and gives the same bits whatever the
// number of workers it is shared among.
func TestUpdateMatchesNaive(t *testing.T) {
	imgs := randomImages(64, 5)
	run := func(workers int, naive bool) []float32 {
		m, _ := NewBSA(2, 8, 3)
		xs := make([][]float32, len(imgs))
		for k := range xs {
			xs[k] = make([]float32, m.N*m.D)
			m.Encode(xs[k], imgs[k], nil)
		}
		cfg := DefaultTrainConfig()
		cfg.Workers = 1 // the gradient's sum over images follows the workers
		cfg.LR = 1e-2   // large steps, so differences would grow
		tr := NewTrainer(m, cfg)
		for s := range 6 {
			if s%3 == 2 {
				tr.Gradient(xs)
			} else {
				tr.GradientRow(xs, (s*37)%m.N)
			}
			tr.Cfg.Workers = workers
			if naive {
				updateNaive(tr, cfg.LR)
			} else if !tr.update(cfg.LR) {
				t.Fatal("update diverged")
			}
			tr.Cfg.Workers = 1
		}
		return m.J
	}
	one, two, naive := run(1, false), run(2, false), run(1, true)
	for k := range one {
		if math.Float32bits(one[k]) != math.Float32bits(two[k]) {
			t.Fatalf("J[%d]: %g with one worker, %g with two", k, one[k], two[k])
		}
		if d := math.Abs(float64(one[k] - naive[k])); d > 1e-5*math.Abs(float64(naive[k]))+1e-9 {
			t.Fatalf("J[%d]: %g, naive twin %g", k, one[k], naive[k])
		}
	}
}

// TestAdamKernelMatchesGo: the AdamW step this CPU runs gives adamGo's
// bits for the couplings and both moments, and its sum of squares,
// on random chunks of every tail length (and values near 0, large
// gradients clipped, a first step's bias correction).
func TestAdamKernelMatchesGo(t *testing.T) {
	needFast(t)
	rng := rand.New(rand.NewPCG(5, 17))
	for _, n := range []int{1, 15, 16, 17, 33, 1000, 32768} {
		for trial := range 4 {
			a := adamStep{b1: 0.9, b2: 0.999, gs: float32(0.3 + rng.Float64()), decay: 1 - 5e-4*1e-6,
				stepSize: float32(5e-4 / (1 - math.Pow(0.9, float64(trial+1)))), sq2: float32(math.Sqrt(1 - math.Pow(0.999, float64(trial+1)))), eps: 1e-8}
			mk := func(scale float64) []float32 {
				x := make([]float32, n)
				for k := range x {
					x[k] = float32(rng.NormFloat64() * scale)
				}
				return x
			}
			J, g, m := mk(0.05), mk(3), mk(0.01)
			v := mk(1e-4)
			for k := range v {
				v[k] *= v[k] // second moments are ≥ 0
			}
			if n > 3 {
				g[1], m[2], v[3] = 0, 0, 0
			}
			J2, g2, m2, v2 := slices.Clone(J), slices.Clone(g), slices.Clone(m), slices.Clone(v)
			s1 := adamGo(a, J, g, m, v)
			s2 := adamChunk(a, J2, g2, m2, v2)
			if s1 != s2 || !slices.Equal(J, J2) || !slices.Equal(m, m2) || !slices.Equal(v, v2) {
				t.Fatalf("n %d trial %d: sums %v / %v; J equal %v, m %v, v %v", n, trial, s1, s2, slices.Equal(J, J2), slices.Equal(m, m2), slices.Equal(v, v2))
			}
		}
	}
}
