package models

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func gemmImpls(tb testing.TB) map[string]func(m, n, k int, a []float32, lda int, aT bool, b []float32, ldb int, c []float32, ldc int) {
	out := map[string]func(m, n, k int, a []float32, lda int, aT bool, b []float32, ldb int, c []float32, ldc int){"go": gemmGo}
	if hasAVX512() {
		out["avx512"] = gemmAVX512
	} else if t, ok := tb.(*testing.T); ok {
		t.Run("avx512", needFast)
	}
	if f, ok := plainGemm(); ok {
		out["asm"] = f
	}
	return out
}

// TestGemmMatchesNaive runs every gemm on random shapes (the model's and
// odd ones, with strides wider than the matrices) and compares it with the
// definition, checking that nothing past the last element is written.
func TestGemmMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	shapes := [][3]int{{49, 192, 64}, {392, 64, 64}, {49, 64, 16}, {49, 16, 49}, {64, 16, 392}, {16, 64, 392},
		{1, 1, 1}, {3, 17, 5}, {9, 80, 7}, {5, 33, 2}, {13, 128, 31}, {0, 16, 4}}
	for name, f := range gemmImpls(t) {
		for _, sh := range shapes {
			for _, aT := range []bool{false, true} {
				m, n, k := sh[0], sh[1], sh[2]
				lda := k + rng.IntN(3)
				if aT {
					lda = m + rng.IntN(3)
				}
				ldb, ldc := n+rng.IntN(20), n+rng.IntN(20)
				var alen int
				if aT {
					alen = max(0, (k-1)*lda+m)
				} else {
					alen = max(0, (m-1)*lda+k)
				}
				a := guarded(rng, alen)
				b := guarded(rng, max(0, (k-1)*ldb+n))
				c := guarded(rng, max(0, (m-1)*ldc+n))
				want := append([]float32(nil), c...)
				gemmNaive(m, n, k, a, lda, aT, b, ldb, want, ldc)
				f(m, n, k, a, lda, aT, b, ldb, c, ldc)
				label := fmt.Sprintf("%s %dx%dx%d aT=%v", name, m, n, k, aT)
				for q := range c {
					if !closeTo(float64(c[q]), float64(want[q]), 1e-5*float64(k+1)) {
						t.Fatalf("%s: c[%d] = %g, want %g", label, q, c[q], want[q])
					}
				}
				checkGuard(t, label, c)
			}
		}
	}
}

func BenchmarkGemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sh := range [][3]int{{784, 192, 64}, {784, 128, 64}, {64, 128, 784}, {49, 64, 16}, {49, 16, 49}} {
		m, n, k := sh[0], sh[1], sh[2]
		a, bb, c := guarded(rng, m*k), guarded(rng, k*n), guarded(rng, m*n)
		for name, f := range gemmImpls(b) {
			b.Run(fmt.Sprintf("%s/%dx%dx%d", name, m, n, k), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					f(m, n, k, a, k, false, bb, n, c, n)
				}
				b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func TestGELUMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	h := guarded(rng, 1000)
	for k := range h {
		h[k] *= 4
	}
	h[0], h[1], h[2], h[3] = 0, -12, 12, -100
	want, wantD := make([]float32, len(h)), make([]float32, len(h))
	geluNaive(want, wantD, h)
	impls := map[string]func(g, dg, h []float32){"naive": geluNaive}
	if hasAVX512() {
		impls["avx512"] = geluAVX512
	} else {
		t.Run("avx512", needFast)
	}
	for name, f := range impls {
		g, dg := guarded(rng, len(h)), guarded(rng, len(h))
		f(g, dg, h)
		for k := range h {
			if !closeTo(float64(g[k]), float64(want[k]), 1e-6) || !closeTo(float64(dg[k]), float64(wantD[k]), 1e-6) {
				t.Fatalf("%s: gelu(%g) = %g, %g; want %g, %g", name, h[k], g[k], dg[k], want[k], wantD[k])
			}
		}
		checkGuard(t, name, g)
		checkGuard(t, name, dg)
	}
}

// TestGemmRowsIndependent: a row of gemm's product is the same bits
// whatever rows it is computed with, so a batch of states (the Hopfield
// network's, a transformer's images) cut anywhere — into a worker's part,
// a crew member's rows — steps each state to the same bits.
func TestGemmRowsIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sh := range [][3]int{{13, 784, 300}, {9, 1008, 784}, {11, 80, 33}, {7, 16, 5}, {17, 70, 64}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, aT := range []bool{false, true} {
			a := make([]float32, m*k)
			b := make([]float32, k*n)
			for i := range a {
				a[i] = r.Float32()
			}
			for i := range b {
				b[i] = r.Float32() - 0.5
			}
			lda, row := k, func(i int) []float32 { return a[i*k:] }
			if aT { // A stored transposed: column i is row i
				lda, row = m, nil
			}
			c := make([]float32, m*n)
			gemm(m, n, k, a, lda, aT, b, n, c, n)
			for i := range m {
				one := make([]float32, k)
				if aT {
					for p := range k {
						one[p] = a[p*m+i]
					}
				} else {
					copy(one, row(i))
				}
				c1 := make([]float32, n)
				gemm(1, n, k, one, k, false, b, n, c1, n)
				for j := range c1 {
					if c1[j] != c[i*n+j] {
						t.Fatalf("m n k %v, A transposed %v: row %d column %d alone %v, in the batch %v", sh, aT, i, j, c1[j], c[i*n+j])
					}
				}
			}
		}
	}
}
