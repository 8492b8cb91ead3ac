package models

import (
	"math"
	"math/rand/v2"
	"testing"
)

// blockCase is the shipped block's shape with random weights (the
// LayerNorm affine parameters moved off 1 and 0, the others doubled so
// attention is peaked), softmax or relu/seqlen.
func blockCase(t testing.TB, relu bool, seed uint64) (*Transformer[float32], *BlockMap64) {
	t.Helper()
	m := randomTransformer(t, TransformerConfig{Patch: 4, Dim: 64, Heads: 4, MLP: 128, Depth: 1, Relu: relu}, seed)
	f, err := BlockMap(m)
	if err != nil {
		t.Fatal(err)
	}
	return m, f
}

// blockState is a state of the block on a random image after a few
// applications (a state the dynamics visits, not just any vector).
func blockState(m *Transformer[float32], rng *rand.Rand, apps int) []float64 {
	img := make([]float32, Pixels)
	for q := range img {
		img[q] = float32(rng.Float64() * 1.2)
	}
	b := NewBatch(m, 1)
	b.Start([][]float32{img})
	for range apps {
		b.Apply(0)
	}
	return Widen64(b.State(0, nil))
}

// TestBlockMapMatchesBatch: the float64 block is the engine's application
// (the batched float32 path the window runs), to float32's rounding.
func TestBlockMapMatchesBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	for _, relu := range []bool{false, true} {
		m, f := blockCase(t, relu, 5)
		img := make([]float32, Pixels)
		for q := range img {
			img[q] = float32(rng.Float64())
		}
		b := NewBatch(m, 1)
		b.Start([][]float32{img})
		x := Widen64(b.State(0, nil))
		for app := 0; app < 3; app++ {
			l := f.At(x)
			b.Apply(0)
			want := b.State(0, nil)
			var worst, scale float64
			for k, v := range l.Out {
				worst = max(worst, math.Abs(v-float64(want[k])))
				scale = max(scale, math.Abs(v))
			}
			if worst > 1e-4*scale {
				t.Fatalf("relu %v application %d: float64 block differs from the batch by %g (largest component %g)", relu, app, worst, scale)
			}
			x = l.Out
			// The decoder is the batch's too.
			img64 := make([]float64, Pixels)
			f.Decode(img64, x)
			got := make([]float32, Pixels)
			b.Decode([][]float32{got})
			for q := range got {
				if math.Abs(img64[q]-float64(got[q])) > 1e-4*(1+math.Abs(img64[q])) {
					t.Fatalf("relu %v pixel %d: float64 decoder %v, batch %v", relu, q, img64[q], got[q])
				}
			}
		}
	}
	vit := randomTransformer(t, TransformerConfig{Patch: 4, Dim: 64, Heads: 4, MLP: 128, Depth: 5}, 1)
	if _, err := BlockMap(vit); err == nil {
		t.Error("BlockMap accepted a five-layer ViT")
	}
}

// TestLinear64: the Dgemm products are the generic layer's, without and
// with the bias.
func TestLinear64(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 26))
	for _, sz := range [][3]int{{49, 64, 192}, {49, 128, 64}, {3, 5, 7}} {
		T, I, O := sz[0], sz[1], sz[2]
		in, w := unit(rng, T*I), unit(rng, O*I)
		bias := unit(rng, O)
		a, b := make([]float64, T*O), make([]float64, T*O)
		c, d := make([]float64, T*O), make([]float64, T*O)
		linear64(a, in, w, T, I, O)
		LinearForward(b, in, w, nil, T, I, O)
		affine64(c, in, w, bias, T, I, O)
		LinearForward(d, in, w, bias, T, I, O)
		for k := range a {
			if math.Abs(a[k]-b[k]) > 1e-14 || math.Abs(c[k]-d[k]) > 1e-14 {
				t.Fatalf("%v: element %d: %v and %v, naive %v and %v", sz, k, a[k], c[k], b[k], d[k])
			}
		}
	}
}

// TestBlockJVPFiniteDifferences: DF·v against float64 central differences
// of the block on random directions at states the dynamics visits. With
// h = 1e-5 (directions of norm 1, states of norm ≈ 50) the truncation
// error is O(h²·F‴) ≈ 1e-10 and the rounding O(ε·‖F‖/h) ≈ 1e-9: both far
// below the 1e-6 asked. relu/seqlen has kinks at zero scores: a pair
// crossing one within h is reported, not averaged away.
func TestBlockJVPFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 22))
	const h = 1e-5
	for _, relu := range []bool{false, true} {
		m, f := blockCase(t, relu, 6)
		for trial := 0; trial < 2; trial++ {
			x := blockState(m, rng, 1+2*trial)
			l := f.At(x)
			for k := 0; k < 2; k++ {
				v := unit(rng, f.Size())
				jv := make([]float64, f.Size())
				l.JVP(v, jv)
				xp, xm := make([]float64, len(x)), make([]float64, len(x))
				for q := range x {
					xp[q], xm[q] = x[q]+h*v[q], x[q]-h*v[q]
				}
				fp, fm := f.At(xp), f.At(xm)
				if relu {
					for q := range fp.a.att {
						if (fp.a.att[q] > 0) != (fm.a.att[q] > 0) {
							t.Fatalf("a score crosses relu's 0 within h: pick another state")
						}
					}
				}
				diff := make([]float64, len(jv))
				for q := range jv {
					diff[q] = (fp.Out[q]-fm.Out[q])/(2*h) - jv[q]
				}
				if rel := norm64(diff) / norm64(jv); !(rel <= 1e-6) {
					t.Errorf("relu %v trial %d: JVP against central differences: relative error %g", relu, trial, rel)
				}
			}
		}
	}
}

// TestBlockVJPIsTranspose: the backward pass gives DFᵀ: ⟨g, DF·v⟩ =
// ⟨DFᵀ·g, v⟩ on random vectors, and DFᵀg·v agrees with central differences
// of ⟨g, F⟩.
func TestBlockVJPIsTranspose(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 23))
	const h = 1e-5
	for _, relu := range []bool{false, true} {
		m, f := blockCase(t, relu, 7)
		x := blockState(m, rng, 2)
		l := f.At(x)
		v, g := unit(rng, f.Size()), unit(rng, f.Size())
		jv, jg := make([]float64, f.Size()), make([]float64, f.Size())
		l.JVP(v, jv)
		l.VJP(g, jg)
		a, b := dot64(g, jv), dot64(jg, v)
		if math.Abs(a-b) > 1e-10*(norm64(jv)+norm64(jg)) {
			t.Errorf("relu %v: ⟨g, DF v⟩ = %.15g, ⟨DFᵀ g, v⟩ = %.15g", relu, a, b)
		}
		xp, xm := make([]float64, len(x)), make([]float64, len(x))
		for q := range x {
			xp[q], xm[q] = x[q]+h*v[q], x[q]-h*v[q]
		}
		fd := (dot64(g, f.At(xp).Out) - dot64(g, f.At(xm).Out)) / (2 * h)
		if rel := math.Abs(fd-b) / math.Abs(b); !(rel <= 1e-6) {
			t.Errorf("relu %v: DFᵀg·v = %.12g, central differences %.12g (relative %g)", relu, b, fd, rel)
		}
	}
}

// TestBlockDecodeJVP: the decoder is affine, so its derivative along v is
// exactly Decode(x + v) − Decode(x).
func TestBlockDecodeJVP(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 24))
	m, f := blockCase(t, false, 8)
	x := blockState(m, rng, 1)
	v := unit(rng, f.Size())
	a, b, d := make([]float64, Pixels), make([]float64, Pixels), make([]float64, Pixels)
	xv := make([]float64, len(x))
	for q := range x {
		xv[q] = x[q] + v[q]
	}
	f.Decode(a, x)
	f.Decode(b, xv)
	f.DecodeJVP(d, v)
	for q := range d {
		if math.Abs(b[q]-a[q]-d[q]) > 1e-12*(1+math.Abs(d[q])) {
			t.Fatalf("pixel %d: Decode(x+v) − Decode(x) = %v, DecodeJVP %v", q, b[q]-a[q], d[q])
		}
	}
}

func BenchmarkBlockJVP(b *testing.B) {
	m, f := blockCase(b, false, 9)
	rng := rand.New(rand.NewPCG(25, 25))
	x := blockState(m, rng, 2)
	l := f.At(x)
	v, out := unit(rng, f.Size()), make([]float64, f.Size())
	b.Run("jvp", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l.JVP(v, out)
		}
	})
	b.Run("vjp", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l.VJP(v, out)
		}
	})
	b.Run("at", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f.At(x)
		}
	})
}
