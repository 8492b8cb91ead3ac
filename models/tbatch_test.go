package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// randomTransformer is a float32 model with non-trivial LayerNorm affine
// parameters and larger-than-init weights, so attention is not uniform.
func randomTransformer(t testing.TB, cfg TransformerConfig, seed uint64) *Transformer[float32] {
	t.Helper()
	m, err := NewTransformer[float32](cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Init(seed)
	rng := rand.New(rand.NewPCG(seed, 77))
	for _, s := range m.specs {
		v := m.Params[s.off : s.off+s.size()]
		for k := range v {
			if strings.Contains(s.name, "ln") {
				v[k] += float32(rng.NormFloat64() * 0.3)
			} else {
				v[k] *= 2
			}
		}
	}
	return m
}

func noisyPairs(rng *rand.Rand, n int) (in, clean [][]float32) {
	for range n {
		c, x := make([]float32, Pixels), make([]float32, Pixels)
		for q := range c {
			c[q] = float32(rng.Float64() * 2)
			x[q] = c[q] + float32(rng.NormFloat64()*0.5)
		}
		in, clean = append(in, x), append(clean, c)
	}
	return in, clean
}

func relErr(a, b []float32) float64 {
	var d, n float64
	for k := range a {
		d += (float64(a[k]) - float64(b[k])) * (float64(a[k]) - float64(b[k]))
		n += float64(b[k]) * float64(b[k])
	}
	return math.Sqrt(d / math.Max(n, 1e-30))
}

// TestBatchMatchesNaive runs the batched path against its naive twin (the
// per-image generic Forward/Backward) for the block, the ViT and relu
// attention: the image after every application, and the gradient of the
// batch loss.
func TestBatchMatchesNaive(t *testing.T) {
	relu := BlockConfig
	relu.Relu = true
	for _, tc := range []struct {
		name string
		cfg  TransformerConfig
		tau  int
	}{{"block", BlockConfig, 3}, {"vit", ViTConfig, 0}, {"block relu", relu, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			m := randomTransformer(t, tc.cfg, 5)
			rng := rand.New(rand.NewPCG(6, 6))
			in, clean := noisyPairs(rng, 3)
			apps := tc.cfg.Applications(tc.tau)
			b := NewBatch(m, 4)
			b.Start(in)
			got := [][]float32{make([]float32, Pixels), make([]float32, Pixels), make([]float32, Pixels)}
			want := make([]float32, Pixels)
			runs := make([]*Run[float32], len(in))
			for n := range in {
				runs[n] = m.Forward(in[n], apps)
			}
			for k, blk := range apps {
				b.Apply(blk)
				b.Decode(got)
				for n := range in {
					runs[n].Image(k, want)
					if e := relErr(got[n], want); e > 1e-5 {
						t.Fatalf("application %d image %d: relative error %.2e", k, n, e)
					}
				}
			}
			// Gradient of the mean loss.
			g := make([]float32, len(m.Params))
			losses := make([]float64, len(in))
			b.Train(in, clean, apps, 1/float32(len(in)), g, losses)
			wantG := make([]float32, len(m.Params))
			per := make([]float32, len(m.Params))
			for n := range in {
				clear(per)
				runs[n].Backward(clean[n], per)
				for k := range per {
					wantG[k] += per[k] / float32(len(in))
				}
				if l := runs[n].Loss(clean[n]); math.Abs(l-losses[n]) > 1e-5*l {
					t.Fatalf("loss %d: %g, want %g", n, losses[n], l)
				}
			}
			for _, s := range m.specs {
				e := relErr(g[s.off:s.off+s.size()], wantG[s.off:s.off+s.size()])
				if e > 1e-4 {
					t.Errorf("gradient %s: relative error %.2e", s.name, e)
				}
			}
		})
	}
}

func BenchmarkTransformerBatch(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  TransformerConfig
		tau  int
	}{{"block-tau5", BlockConfig, 5}, {"vit", ViTConfig, 0}} {
		for _, micro := range []int{8, 16, 32} {
			m := randomTransformer(b, tc.cfg, 1)
			rng := rand.New(rand.NewPCG(1, 1))
			in, clean := noisyPairs(rng, micro)
			apps := tc.cfg.Applications(tc.tau)
			bt := NewBatch(m, micro)
			g := make([]float32, len(m.Params))
			losses := make([]float64, micro)
			b.Run(fmt.Sprintf("%s/train/micro%d", tc.name, micro), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					bt.Train(in, clean, apps, 1, g, losses)
				}
				b.ReportMetric(float64(micro*b.N)/b.Elapsed().Seconds(), "img/s")
			})
		}
	}
}

// TestTransformerPyTorchFixture loads networks written by PyTorch modules
// with the §9 names (testdata/transformer_torch.py) and checks that both
// our paths give PyTorch's image after every application.
func TestTransformerPyTorchFixture(t *testing.T) {
	for _, tc := range []struct {
		file string
		apps []int
	}{{"testdata/transformer_torch-block.safetensors", []int{0, 0, 0}}, {"testdata/transformer_torch-vit.safetensors", []int{0, 1}}} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseTransformer(data, tc.file)
		if err != nil {
			t.Fatal(err)
		}
		ts, _, err := ParseSafetensors(data, tc.file)
		if err != nil {
			t.Fatal(err)
		}
		img := ts["test.image"].Data
		b := NewBatch(m, 1)
		b.Start([][]float32{img})
		run := m.Forward(img, tc.apps)
		got, naive := make([]float32, Pixels), make([]float32, Pixels)
		for k, blk := range tc.apps {
			b.Apply(blk)
			b.Decode([][]float32{got})
			run.Image(k, naive)
			want := ts[fmt.Sprintf("test.out%d", k)].Data
			for name, g := range map[string][]float32{"batched": got, "naive": naive} {
				if e := relErr(g, want); e > 1e-5 {
					t.Errorf("%s application %d (%s): relative error %.2e against PyTorch", tc.file, k, name, e)
				}
				for q := range g {
					if !closeTo(float64(g[q]), float64(want[q]), 1e-4) {
						t.Fatalf("%s application %d (%s) pixel %d: %g, PyTorch %g", tc.file, k, name, q, g[q], want[q])
					}
				}
			}
		}
	}
}
