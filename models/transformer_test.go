package models

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func tinyTransformer(t *testing.T, depth int) *Transformer[float64] {
	t.Helper()
	m, err := NewTransformer[float64](TransformerConfig{Patch: 4, Dim: 8, Heads: 2, MLP: 12, Depth: depth})
	if err != nil {
		t.Fatal(err)
	}
	m.Init(3)
	// Non-trivial LayerNorm affine parameters, so their gradients are tested too.
	rng := rand.New(rand.NewPCG(9, 9))
	for _, s := range m.specs {
		if strings.Contains(s.name, "ln") {
			for k := range m.Params[s.off : s.off+s.size()] {
				m.Params[s.off+k] += rng.NormFloat64() * 0.3
			}
		}
	}
	return m
}

// TestTransformerGradient checks the whole model's backward pass against
// float64 central differences on every parameter: the recycled block
// (one block applied 3 times) and a 2-block ViT.
func TestTransformerGradient(t *testing.T) {
	if raceOn {
		t.Skip("single-goroutine numerics: checked without the race detector (make test-portable, test-simd)")
	}
	for _, tc := range []struct {
		name  string
		depth int
		tau   int
	}{{"recycled block τ=3", 1, 3}, {"vit depth 2", 2, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			m := tinyTransformer(t, tc.depth)
			rng := rand.New(rand.NewPCG(4, 2))
			img, clean := make([]float64, Pixels), make([]float64, Pixels)
			for q := range img {
				clean[q] = rng.Float64()
				img[q] = clean[q] + rng.NormFloat64()*0.5
			}
			apps := m.Cfg.Applications(tc.tau)
			loss := func() float64 { return m.Forward(img, apps).Loss(clean) }
			grad := make([]float64, len(m.Params))
			m.Forward(img, apps).Backward(clean, grad)
			fdCheck(t, tc.name, m.Params, loss, grad)
		})
	}
}

func TestTransformerApplicationsAndImages(t *testing.T) {
	if got := BlockConfig.Applications(5); len(got) != 5 || got[4] != 0 {
		t.Fatalf("recycled block applications %v", got)
	}
	if got := ViTConfig.Applications(99); len(got) != 5 || got[4] != 4 {
		t.Fatalf("ViT applications %v", got)
	}
	m, err := NewTransformer[float32](BlockConfig)
	if err != nil {
		t.Fatal(err)
	}
	m.Init(1)
	img := make([]float32, Pixels)
	r := m.Forward(img, BlockConfig.Applications(4))
	if len(r.outs) != 4 {
		t.Fatalf("%d output images for τ = 4", len(r.outs))
	}
	a, b := make([]float32, Pixels), make([]float32, Pixels)
	r.Image(0, a)
	r.Image(3, b)
	same := true
	for q := range a {
		if math.IsNaN(float64(a[q])) {
			t.Fatal("NaN in the output")
		}
		same = same && a[q] == b[q]
	}
	if same {
		t.Fatal("recycling does not change the image")
	}
}

func TestTransformerSafetensors(t *testing.T) {
	m, err := NewTransformer[float32](ViTConfig)
	if err != nil {
		t.Fatal(err)
	}
	m.Init(2)
	m.Meta["command"] = "test"
	var buf bytes.Buffer
	if err := m.WriteTransformer(&buf, "vit", "mask"); err != nil {
		t.Fatal(err)
	}
	m2, err := ParseTransformer(buf.Bytes(), "vit.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if m2.Cfg != ViTConfig || m2.Meta["task"] != "mask" {
		t.Fatalf("config %+v meta %v", m2.Cfg, m2.Meta)
	}
	for k := range m.Params {
		if m.Params[k] != m2.Params[k] {
			t.Fatal("parameters differ after a round trip")
		}
	}
	// §9 names and shapes are what is written.
	ts, _, _ := ParseSafetensors(buf.Bytes(), "x")
	for name, shape := range map[string][]int{"embed.weight": {64, 16}, "pos": {49, 64}, "blocks.4.attn.qkv.weight": {192, 64},
		"blocks.0.mlp.fc1.weight": {128, 64}, "blocks.2.mlp.fc2.weight": {64, 128}, "out.weight": {16, 64}, "out.bias": {16}} {
		if got := ts[name].Shape; len(got) != len(shape) || got[0] != shape[0] {
			t.Fatalf("%s has shape %v, want %v", name, got, shape)
		}
	}
	// A missing tensor is refused by name.
	delete(ts, "blocks.3.ln2.bias")
	var bad bytes.Buffer
	WriteSafetensors(&bad, ts, map[string]string{"model": "vit", "patch": "4", "dim": "64", "heads": "4", "mlp": "128", "depth": "5"})
	if _, err := ParseTransformer(bad.Bytes(), "bad.safetensors"); err == nil || !strings.Contains(err.Error(), `"blocks.3.ln2.bias" is missing`) {
		t.Fatalf("missing tensor: err = %v", err)
	}
}

// BenchmarkTransformerImage is forward+backward of one image on one
// goroutine with the generic (naive-twin) layers: the baseline the batched
// kernels of the trainer must beat.
func BenchmarkTransformerImage(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  TransformerConfig
		tau  int
	}{{"block-tau5", BlockConfig, 5}, {"vit", ViTConfig, 0}} {
		b.Run(c.name, func(b *testing.B) {
			m, _ := NewTransformer[float32](c.cfg)
			m.Init(1)
			img := make([]float32, Pixels)
			clean := make([]float32, Pixels)
			grad := make([]float32, len(m.Params))
			apps := c.cfg.Applications(c.tau)
			b.ReportAllocs()
			for b.Loop() {
				m.Forward(img, apps).Backward(clean, grad)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "images/s")
		})
	}
}
