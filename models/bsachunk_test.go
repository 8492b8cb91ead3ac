package models

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestChunkerMatchesStep: the chunked step (whatever kernels this CPU
// runs) equals the per-image step, its naive twin, on random couplings and
// inputs: P=2 (d=8, the unrolled kernel) and P=4 (d=32), softmax and ReLU,
// a full chunk and a partial one, with first-step masks that differ per
// image, over several steps.
func TestChunkerMatchesStep(t *testing.T) {
	if raceOn {
		t.Skip("single-goroutine numerics: checked natively without the race detector (make test-portable, test-simd)")
	}
	for _, tc := range []struct {
		p, d, images int
		attn         AttnKind
		masked       bool
	}{
		{2, 8, Lanes, Softmax, true}, {2, 8, 5, Softmax, false}, {2, 8, Lanes, ReluSeqlen, true},
		{4, 32, 7, Softmax, true}, {4, 33, Lanes, Softmax, false},
	} {
		m, err := NewBSA(tc.p, tc.d, 3)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(tc.d), uint64(tc.images)))
		imgs := randomImages(tc.images, uint64(tc.p))
		var a, b []*State
		for k, img := range imgs {
			var mask []bool
			if tc.masked && k%3 != 2 {
				mask = make([]bool, m.N)
				for i := range mask {
					mask[i] = rng.IntN(3) == 0
				}
				mask[0], mask[1] = false, false
			}
			a = append(a, m.NewState(img, mask))
			b = append(b, m.NewState(img, mask))
		}
		dy := Dynamics{Lambda: 1.3, Gamma: 0.5, Attn: tc.attn}
		w := m.NewWorkspace(len(a))
		c := m.NewChunker()
		ea, eb := make([]float64, len(a)), make([]float64, len(a))
		c.Load(b)
		for step := 0; step < 4; step++ {
			m.Step(w, a, dy, nil, ea)
			c.Step(dy, eb)
			c.Store(b)
			for k := range a {
				if rel := math.Abs(ea[k]-eb[k]) / math.Abs(ea[k]); !(rel < 1e-5) {
					t.Fatalf("P=%d d=%d %v: step %d image %d: energy %g chunked, %g per image", tc.p, tc.d, tc.attn, step, k, eb[k], ea[k])
				}
				if d := maxRel(a[k].X, b[k].X); !(d < 1e-4) {
					t.Fatalf("P=%d d=%d %v: step %d image %d: states differ by %g (relative to the largest)", tc.p, tc.d, tc.attn, step, k, d)
				}
				if a[k].T != b[k].T {
					t.Fatal("step counts differ")
				}
			}
		}
		m.Energy(w, a, dy, ea)
		c.Energy(dy, eb)
		for k := range a {
			if rel := math.Abs(ea[k]-eb[k]) / math.Abs(ea[k]); !(rel < 1e-5) {
				t.Fatalf("energy only: image %d: %g chunked, %g per image", k, eb[k], ea[k])
			}
		}
	}
}

// randn is k standard normal values.
func randn(rng *rand.Rand, k int) []float32 {
	x := make([]float32, k)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// maxRel is the largest |a−b| over the largest |a|.
func maxRel(a, b []float32) float64 {
	var d, s float64
	for k := range a {
		d = math.Max(d, math.Abs(float64(a[k]-b[k])))
		s = math.Max(s, math.Abs(float64(a[k])))
	}
	return d / s
}

// TestChunkKernelsMatchGo: the chunk kernels this CPU runs equal the
// portable ones on random inputs.
func TestChunkKernelsMatchGo(t *testing.T) {
	needFast(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range []int{8, 32, 5} {
		checkChunkKernels(t, rng, chunkScores, chunkSoftmax, d, 49, true)
	}
}

// checkChunkKernels compares scores and softmax with the portable kernels
// for n keys of width d on random inputs, with an excluded key; weigh
// false checks the softmax without the weighted sum too.
func checkChunkKernels(t *testing.T, rng *rand.Rand, scores func(jb, xh, xi, v, s []float32, n, d int),
	softmax func(s, v, out []float32, m *[Lanes]float32, lambda float32, n, d int, weigh bool) [Lanes]float32, d, n int, alsoUnweighted bool) {
	t.Helper()
	r := func(k int) []float32 { return randn(rng, k) }
	jb, xh, xi := r(n*d*d), r(n*d*Lanes), r(d*Lanes)
	v1, v2 := make([]float32, n*d*Lanes), make([]float32, n*d*Lanes)
	s1, s2 := make([]float32, n*Lanes), make([]float32, n*Lanes)
	chunkScoresGo(jb, xh, xi, v1, s1, n, d)
	scores(jb, xh, xi, v2, s2, n, d)
	if e := maxRel(v1, v2); e > 1e-6 {
		t.Fatalf("d=%d n=%d: v differs by %g", d, n, e)
	}
	if e := maxRel(s1, s2); e > 1e-5 {
		t.Fatalf("d=%d n=%d: s differs by %g", d, n, e)
	}
	s1[(n-1)*Lanes+2] = invalidScore // an excluded key
	weighs := []bool{true}
	if alsoUnweighted {
		weighs = append(weighs, false)
	}
	for _, weigh := range weighs {
		copy(s2, s1)
		var m1, m2 [Lanes]float32
		o1, o2 := make([]float32, d*Lanes), make([]float32, d*Lanes)
		sum1 := chunkSoftmaxGo(s1, v1, o1, &m1, 0.7, n, d, weigh)
		sum2 := softmax(s2, v1, o2, &m2, 0.7, n, d, weigh)
		if e := maxRel(o1, o2); e > 1e-5 {
			t.Fatalf("d=%d n=%d weigh=%v: weighted sums differ by %g", d, n, weigh, e)
		}
		if e := maxRel(sum1[:], sum2[:]); e > 1e-5 || m1 != m2 {
			t.Fatalf("d=%d n=%d weigh=%v: sums %v / %v, largest scores %v / %v", d, n, weigh, sum1, sum2, m1, m2)
		}
	}
}

// BenchmarkChunkScores is one query row of a chunk (P=2: 196 keys, d=8):
// 196·64·16 multiply-adds for the couplings and 196·8·16 for the scores.
func BenchmarkChunkScores(b *testing.B) {
	n, d := 196, 8
	rng := rand.New(rand.NewPCG(1, 1))
	r := func(k int) []float32 { return randn(rng, k) }
	jb, xh, xi := r(n*d*d), r(n*d*Lanes), r(d*Lanes)
	v, s := make([]float32, n*d*Lanes), make([]float32, n*Lanes)
	b.ReportAllocs()
	for b.Loop() {
		chunkScores(jb, xh, xi, v, s, n, d)
	}
	b.ReportMetric(float64(b.N)*float64(n*(d*d+d)*Lanes)/b.Elapsed().Seconds()/1e9, "GMAC/s")
}

// BenchmarkChunkScoresStream is every query row of one step (P=2): the
// couplings (9.8 MB) stream from the last-level cache as they do while a
// chunk steps; it reports the rate per query row as BenchmarkChunkScores.
func BenchmarkChunkScoresStream(b *testing.B) {
	n, d := 196, 8
	rng := rand.New(rand.NewPCG(1, 1))
	r := func(k int) []float32 { return randn(rng, k) }
	jb, xh, xi := r(n*n*d*d), r(n*d*Lanes), r(d*Lanes)
	v, s := make([]float32, n*d*Lanes), make([]float32, n*Lanes)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		chunkScores(jb[i*n*d*d:(i+1)*n*d*d], xh, xi, v, s, n, d)
		i = (i + 1) % n
	}
	b.ReportMetric(float64(b.N)*float64(n*(d*d+d)*Lanes)/b.Elapsed().Seconds()/1e9, "GMAC/s")
}

// BenchmarkChunkScoresStreamBoth is BenchmarkChunkScoresStream on every
// core at once, each goroutine streaming the couplings as a crew worker
// does: the rate of the score products the whole machine sustains, which
// `make bench-commands` turns into the floor of a bare-model run (its
// N²(d²+d) multiply-adds per image and step at this rate).
func BenchmarkChunkScoresStreamBoth(b *testing.B) {
	n, d := 196, 8
	rng := rand.New(rand.NewPCG(1, 1))
	jb := randn(rng, n*n*d*d)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(2, 2))
		xh, xi := randn(rng, n*d*Lanes), randn(rng, d*Lanes)
		v, s := make([]float32, n*d*Lanes), make([]float32, n*Lanes)
		i := 0
		for pb.Next() {
			chunkScores(jb[i*n*d*d:(i+1)*n*d*d], xh, xi, v, s, n, d)
			i = (i + 1) % n
		}
	})
	b.ReportMetric(float64(b.N)*float64(n*(d*d+d)*Lanes)/b.Elapsed().Seconds()/1e9, "GMAC/s")
}

// TestChunkLaneKernelsMatchGo: the lane kernels of the normalisation, the
// residual update and the renormalisation this CPU runs give the portable
// ones' bits (same operations in the same order, none fused), with masked
// tokens (weight 0) and a lane whose count leaves no degrees of freedom.
func TestChunkLaneKernelsMatchGo(t *testing.T) {
	needFast(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range []int{8, 3} {
		n := 37
		x := randn(rng, n*d*Lanes)
		w := make([]float64, n*Lanes)
		var cnt, den [Lanes]float64
		for b := range Lanes {
			cnt[b] = float64(n)
			for i := 0; i < n; i++ {
				w[i*Lanes+b] = 1
				if b%3 == 0 && rng.IntN(4) == 0 {
					w[i*Lanes+b] = 0
					cnt[b]--
				}
			}
			den[b] = cnt[b] - 1
			if b%3 == 0 {
				den[b] = cnt[b]
			}
		}
		den[5] = 0
		h1, h2 := make([]float32, n*d*Lanes), make([]float32, n*d*Lanes)
		chunkNormalizeGo(x, w, &cnt, &den, h1, n, d)
		chunkNormalize(x, w, &cnt, &den, h2, n, d)
		for k := range h1 {
			if math.Float32bits(h1[k]) != math.Float32bits(h2[k]) {
				t.Fatalf("d=%d: normalised %d: %g, portable %g", d, k, h2[k], h1[k])
			}
		}
		var g [Lanes]float32
		for b := range g {
			g[b] = float32(rng.NormFloat64())
		}
		out := randn(rng, d*Lanes)
		r1, r2 := make([]float32, d*Lanes), make([]float32, d*Lanes)
		chunkResidualGo(r1, out, x[:d*Lanes], &g)
		chunkResidual(r2, out, x[:d*Lanes], &g)
		y1, y2 := make([]float32, n*d*Lanes), make([]float32, n*d*Lanes)
		chunkRenormGo(y1, x, n, d)
		chunkRenorm(y2, x, n, d)
		for k := range r1 {
			if math.Float32bits(r1[k]) != math.Float32bits(r2[k]) {
				t.Fatalf("d=%d: residual %d: %g, portable %g", d, k, r2[k], r1[k])
			}
		}
		for k := range y1 {
			if math.Float32bits(y1[k]) != math.Float32bits(y2[k]) {
				t.Fatalf("d=%d: renormalised %d: %g, portable %g", d, k, y2[k], y1[k])
			}
		}
	}
}

// TestChunkDecodeMatchesDecode: the chunk's decode gives each image's
// per-image Decode (within 1e-5: fused multiply-adds round once, and the
// ratio c₀/(c₀+c₁) magnifies that where both are small), masked
// tokens (zero vectors, so c₀ + c₁ = 0) included, on full and partial
// chunks.
func TestChunkDecodeMatchesDecode(t *testing.T) {
	for _, tc := range []struct{ p, d, images int }{{2, 8, Lanes}, {2, 8, 3}, {4, 33, 9}} {
		m, err := NewBSA(tc.p, tc.d, 4)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(tc.d), 9))
		var states []*State
		for k, img := range randomImages(tc.images, uint64(tc.p)+7) {
			mask := make([]bool, m.N)
			for i := range mask {
				mask[i] = rng.IntN(4) == 0
			}
			st := m.NewState(img, mask)
			if k%2 == 1 { // a stepped-like state: any direction
				for q := range st.X {
					st.X[q] = float32(rng.NormFloat64())
				}
			}
			states = append(states, st)
		}
		c := m.NewChunker()
		got := make([][]float32, len(states))
		for b := range got {
			got[b] = make([]float32, Pixels)
		}
		c.Load(states)
		c.Decode(got)
		want := make([]float32, Pixels)
		for b, st := range states {
			m.Decode(want, st.X)
			for q := range want {
				if math.Abs(float64(got[b][q]-want[q])) > 1e-5 {
					t.Fatalf("P=%d d=%d image %d pixel %d: chunk %g, per image %g", tc.p, tc.d, b, q, got[b][q], want[q])
				}
			}
		}
	}
}

// chunkScoresLoop is chunkScoresGo as plain loops over the lanes, its
// naive twin.
func chunkScoresLoop(jb, xh, xi, v, s []float32, n, d int) {
	for j := 0; j < n; j++ {
		sj := s[j*Lanes : (j+1)*Lanes]
		clear(sj)
		for r := 0; r < d; r++ {
			vr := v[(j*d+r)*Lanes : (j*d+r+1)*Lanes]
			clear(vr)
			for e := 0; e < d; e++ {
				c := jb[(j*d+r)*d+e]
				xe := xh[(j*d+e)*Lanes : (j*d+e+1)*Lanes]
				for b := range vr {
					vr[b] += c * xe[b]
				}
			}
			xr := xi[r*Lanes : (r+1)*Lanes]
			for b := range sj {
				sj[b] += xr[b] * vr[b]
			}
		}
	}
}

// TestChunkScoresSameOrder: the portable chunk scores, written out over
// the lanes and over e (d = 8, multiples of 8, and other widths' loops),
// give the plain loops' bits (the page's ensembles and basin maps did not
// change when they were).
func TestChunkScoresSameOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, sz := range []struct{ n, d int }{{1, 1}, {3, 5}, {49, 8}, {196, 8}, {7, 16}, {5, 24}, {49, 32}, {2, 12}} {
		n, d := sz.n, sz.d
		jb, xh, xi := randn(rng, n*d*d), randn(rng, n*d*Lanes), randn(rng, d*Lanes)
		jb[0], xh[1] = 0, float32(math.Copysign(0, -1)) // a product of −0
		v1, s1 := randn(rng, n*d*Lanes), randn(rng, n*Lanes)
		v2, s2 := make([]float32, n*d*Lanes), make([]float32, n*Lanes)
		chunkScoresGo(jb, xh, xi, v1, s1, n, d)
		chunkScoresLoop(jb, xh, xi, v2, s2, n, d)
		for k := range s2 {
			if math.Float32bits(s1[k]) != math.Float32bits(s2[k]) {
				t.Fatalf("n=%d d=%d: s[%d] = %g, the loops' %g", n, d, k, s1[k], s2[k])
			}
		}
		for k := range v2 {
			if math.Float32bits(v1[k]) != math.Float32bits(v2[k]) {
				t.Fatalf("n=%d d=%d: v[%d] = %g, the loops' %g", n, d, k, v1[k], v2[k])
			}
		}
	}
}

// chunkSoftmaxLoop is chunkSoftmaxGo as it was, lane by lane: its twin.
func chunkSoftmaxLoop(s, v, out []float32, mx *[Lanes]float32, lambda float32, n, d int, weigh bool) (sum [Lanes]float32) {
	for b := range mx {
		mx[b] = invalidScore
	}
	for j := 0; j < n; j++ {
		for b := range mx {
			mx[b] = max(mx[b], s[j*Lanes+b])
		}
	}
	clear(out[:d*Lanes])
	for j := 0; j < n; j++ {
		for b := range Lanes {
			x := s[j*Lanes+b]
			if x <= invalidBelow {
				continue
			}
			a := float32(math.Exp(float64(lambda*x - lambda*mx[b])))
			sum[b] += a
			if weigh {
				for r := 0; r < d; r++ {
					out[r*Lanes+b] += a * v[(j*d+r)*Lanes+b]
				}
			}
		}
	}
	return sum
}

// TestChunkSoftmaxSameOrder: the portable chunk softmax, which weighs a
// key's values over the lanes at once where every image's key is valid,
// gives the lane-by-lane loops' bits, with keys invalid in some lanes (a
// masked token) and in all.
func TestChunkSoftmaxSameOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, sz := range []struct{ n, d int }{{1, 1}, {49, 8}, {196, 8}, {49, 32}} {
		n, d := sz.n, sz.d
		for _, weigh := range []bool{true, false} {
			s, v := randn(rng, n*Lanes), randn(rng, n*d*Lanes)
			for k := range s {
				if rng.IntN(7) == 0 {
					s[k] = invalidScore // a key invalid in one image
				}
			}
			if n > 3 {
				for b := range Lanes {
					s[2*Lanes+b] = invalidScore // and in all
				}
			}
			o1, o2 := randn(rng, d*Lanes), randn(rng, d*Lanes)
			var m1, m2 [Lanes]float32
			s1 := chunkSoftmaxGo(s, v, o1, &m1, 5, n, d, weigh)
			s2 := chunkSoftmaxLoop(s, v, o2, &m2, 5, n, d, weigh)
			for b := range Lanes {
				if math.Float32bits(s1[b]) != math.Float32bits(s2[b]) || m1[b] != m2[b] {
					t.Fatalf("n=%d d=%d weigh=%v: lane %d sum %g max %g, the loops' %g %g", n, d, weigh, b, s1[b], m1[b], s2[b], m2[b])
				}
			}
			for k := range o2 {
				if math.Float32bits(o1[k]) != math.Float32bits(o2[k]) {
					t.Fatalf("n=%d d=%d weigh=%v: out[%d] = %g, the loops' %g", n, d, weigh, k, o1[k], o2[k])
				}
			}
		}
	}
}
