package models

import (
	"math"
	"math/rand/v2"
	"testing"
)

// jacModel is a bare model with couplings strong enough for a peaked
// attention (scores of several units, some at the clamp with scale big).
func jacModel(t testing.TB, p, d int, scale float32) *BSA {
	t.Helper()
	m, err := NewBSA(p, d, 3)
	if err != nil {
		t.Fatal(err)
	}
	for k := range m.J {
		m.J[k] *= scale
	}
	return m
}

// jacState is a state after the first step: random tokens of mean norm 1.
func jacState(rng *rand.Rand, n, d int) []float64 {
	x := make([]float64, n*d)
	var mean float64
	for i := 0; i < n; i++ {
		var ss float64
		for r := 0; r < d; r++ {
			v := rng.NormFloat64() + 0.3*float64(r%3)
			x[i*d+r] = v
			ss += v * v
		}
		mean += math.Sqrt(ss)
	}
	mean /= float64(n)
	for k := range x {
		x[k] /= mean
	}
	return x
}

func unit(rng *rand.Rand, k int) []float64 {
	v := make([]float64, k)
	var ss float64
	for i := range v {
		v[i] = rng.NormFloat64()
		ss += v[i] * v[i]
	}
	for i := range v {
		v[i] /= math.Sqrt(ss)
	}
	return v
}

func norm64(a []float64) float64 { return math.Sqrt(dot64(a, a)) }

// TestMap64MatchesStep: the float64 map is the engine's ordinary step (a
// state at t ≥ 1, softmax and relu/seqlen), to float32's rounding.
func TestMap64MatchesStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, c := range []struct {
		p, d  int
		scale float32
		attn  AttnKind
	}{{2, 8, 40, Softmax}, {4, 32, 400, Softmax}, {2, 8, 40, ReluSeqlen}} {
		m := jacModel(t, c.p, c.d, c.scale)
		dy := DefaultDynamics()
		dy.Attn = c.attn
		x := jacState(rng, m.N, m.D)
		st := &State{X: make([]float32, len(x)), T: 1}
		x32 := make([]float64, len(x))
		for k, v := range x {
			st.X[k] = float32(v)
			x32[k] = float64(st.X[k])
		}
		f := m.Map64(dy).At(x32)
		m.Step(m.NewWorkspace(1), []*State{st}, dy, nil, nil)
		var worst float64
		for k, v := range f.Out {
			worst = max(worst, math.Abs(v-float64(st.X[k])))
		}
		if worst > 2e-5 {
			t.Errorf("P=%d %v: float64 map and the engine's step differ by %g", c.p, c.attn, worst)
		}
	}
}

// TestJVPFiniteDifferences: the Jacobian-vector product agrees with float64
// central differences (F(X+hv) − F(X−hv))/2h on random directions at random
// states, relative error ≤ 1e-6. h = 1e-5 (‖v‖ = 1, tokens of norm ≈ 1):
// the truncation error is h²/6 times F's third derivative (≈ 1e-10 here)
// and the rounding error ε·‖F‖/h ≈ 1e-11, both far below the bound. The
// states are checked to keep every score away from the clamp's kink.
func TestJVPFiniteDifferences(t *testing.T) {
	if raceOn {
		t.Skip("single-goroutine numerics: checked natively without the race detector (make test-portable, test-simd)")
	}
	rng := rand.New(rand.NewPCG(6, 6))
	const h = 1e-5
	for _, c := range []struct {
		p, d  int
		scale float32
		attn  AttnKind
	}{{2, 8, 40, Softmax}, {4, 32, 400, Softmax}, {2, 8, 40, ReluSeqlen}, {2, 8, 300, Softmax}} {
		m := jacModel(t, c.p, c.d, c.scale)
		dy := DefaultDynamics()
		dy.Attn = c.attn
		f := m.Map64(dy)
		for trial := 0; trial < 3; trial++ {
			x := jacState(rng, m.N, m.D)
			l := f.At(x)
			clamped := 0
			for _, o := range l.open {
				if !o {
					clamped++
				}
			}
			for k := 0; k < 2; k++ {
				v := unit(rng, f.Size())
				jv := make([]float64, f.Size())
				l.JVP(v, jv)
				xp, xm := make([]float64, len(x)), make([]float64, len(x))
				for q := range x {
					xp[q], xm[q] = x[q]+h*v[q], x[q]-h*v[q]
				}
				fp, fm := f.At(xp), f.At(xm)
				for q := range fp.open {
					if fp.open[q] != fm.open[q] {
						t.Fatalf("a score crosses the clamp (or relu's 0) within h: pick another state")
					}
				}
				diff := make([]float64, len(jv))
				for q := range jv {
					diff[q] = (fp.Out[q]-fm.Out[q])/(2*h) - jv[q]
				}
				if rel := norm64(diff) / norm64(jv); !(rel <= 1e-6) {
					t.Errorf("P=%d %v scale %v: JVP against central differences: relative error %g", c.p, c.attn, c.scale, rel)
				}
			}
			if c.scale == 300 && clamped == 0 {
				t.Errorf("P=%d scale 300: no score at the clamp: the clamp's derivative goes untested", c.p)
			}
		}
	}
}

// TestVJPIsTranspose: ⟨g, DF·v⟩ = ⟨DFᵀ·g, v⟩ on random vectors, and the
// transposed product agrees with central differences of ⟨g, F⟩.
func TestVJPIsTranspose(t *testing.T) {
	if raceOn {
		t.Skip("single-goroutine numerics: checked natively without the race detector (make test-portable, test-simd)")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	const h = 1e-5
	for _, c := range []struct {
		p, d  int
		scale float32
		attn  AttnKind
	}{{2, 8, 40, Softmax}, {4, 32, 400, Softmax}, {2, 8, 40, ReluSeqlen}, {2, 8, 300, Softmax}} {
		m := jacModel(t, c.p, c.d, c.scale)
		dy := DefaultDynamics()
		dy.Attn = c.attn
		f := m.Map64(dy)
		x := jacState(rng, m.N, m.D)
		l := f.At(x)
		v, g := unit(rng, f.Size()), unit(rng, f.Size())
		jv, jg := make([]float64, f.Size()), make([]float64, f.Size())
		l.JVP(v, jv)
		l.VJP(g, jg)
		a, b := dot64(g, jv), dot64(jg, v)
		if math.Abs(a-b) > 1e-10*(norm64(jv)+norm64(jg)) {
			t.Errorf("P=%d %v: ⟨g, DF v⟩ = %.15g, ⟨DFᵀ g, v⟩ = %.15g", c.p, c.attn, a, b)
		}
		// Central differences of φ(X) = ⟨g, F(X)⟩ along v are ⟨DFᵀg, v⟩.
		xp, xm := make([]float64, len(x)), make([]float64, len(x))
		for q := range x {
			xp[q], xm[q] = x[q]+h*v[q], x[q]-h*v[q]
		}
		fd := (dot64(g, f.At(xp).Out) - dot64(g, f.At(xm).Out)) / (2 * h)
		if rel := math.Abs(fd-b) / math.Abs(b); !(rel <= 1e-6) {
			t.Errorf("P=%d %v: DFᵀg·v = %.12g, central differences %.12g (relative %g)", c.p, c.attn, b, fd, rel)
		}
	}
}

// TestJacobianScaleDirection: every F(X) has mean token norm 1, so the
// Jacobian maps every direction into that surface's tangent: the normal
// n_i = y_i/‖y_i‖ at F(X) (the mean norm's gradient) is a left null vector,
// which gives the spectrum one eigenvalue 0 and no spurious 1.
func TestJacobianScaleDirection(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	m := jacModel(t, 2, 8, 40)
	f := m.Map64(DefaultDynamics())
	l := f.At(jacState(rng, m.N, m.D))
	nrm := make([]float64, f.Size())
	d := f.D
	for i := 0; i < f.N; i++ {
		o := l.Out[i*d : (i+1)*d]
		s := norm64(o)
		for r := range o {
			nrm[i*d+r] = o[r] / s
		}
	}
	out := make([]float64, f.Size())
	l.VJP(nrm, out)
	if r := norm64(out) / norm64(nrm); r > 1e-9 {
		t.Fatalf("‖DFᵀ n‖/‖n‖ = %g, want 0", r)
	}
}

// TestDecodeJVP: the decoder's derivative agrees with central differences
// of the float64 decoder away from the clamps' kinks (pixels in [0.1, 0.9]
// scaled by 1.7 put every c = Fᵀx inside (0, 0.25)), and decode64 is
// Decode.
func TestDecodeJVP(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	m := jacModel(t, 2, 8, 1)
	img := make([]float32, Pixels)
	for k := range img {
		img[k] = 0.1 + 0.8*rng.Float32()
	}
	x32 := make([]float32, m.N*m.D)
	m.Encode(x32, img, nil)
	x := make([]float64, len(x32))
	for k, v := range x32 {
		x[k] = float64(v) * 1.7 // a rescaled state: the picture ignores it
	}
	dec32 := make([]float32, Pixels)
	m.Decode(dec32, x32)
	dec := make([]float64, Pixels)
	decode64(m.Embedding, dec, x)
	for k := range dec {
		if math.Abs(dec[k]-float64(dec32[k])) > 1e-6 {
			t.Fatalf("pixel %d: decode64 %v, Decode %v", k, dec[k], dec32[k])
		}
	}
	const h = 1e-6
	v := unit(rng, len(x))
	jv := make([]float64, Pixels)
	m.DecodeJVP(jv, x, v)
	xp, xm := make([]float64, len(x)), make([]float64, len(x))
	for q := range x {
		xp[q], xm[q] = x[q]+h*v[q], x[q]-h*v[q]
	}
	dp, dm := make([]float64, Pixels), make([]float64, Pixels)
	decode64(m.Embedding, dp, xp)
	decode64(m.Embedding, dm, xm)
	diff := make([]float64, Pixels)
	for k := range diff {
		diff[k] = (dp[k]-dm[k])/(2*h) - jv[k]
	}
	if rel := norm64(diff) / norm64(jv); !(rel <= 1e-6) {
		t.Fatalf("decoder JVP against central differences: relative error %g", rel)
	}
}

// BenchmarkJVP is one Jacobian-vector product and one transposed product
// of the P = 2 step (N²d² = 2.46 M multiply-adds each for the couplings),
// and the linearisation at a state.
func BenchmarkJVP(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	m := jacModel(b, 2, 8, 40)
	f := m.Map64(DefaultDynamics())
	x := jacState(rng, m.N, m.D)
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

// TestHopfieldJVP: the modern Hopfield step's Jacobian-vector product
// agrees with float64 central differences (relative error ≤ 1e-6) at β
// where the weights are spread and where a few patterns dominate. h = 1e-4
// on states of norm ≈ 5: at β = 0.02 the Jacobian is small (‖DF v‖ ≈ 1e-4)
// so rounding, ε‖F‖/h ≈ 1e-11, must stay far below it, while the
// truncation error h²/6 times the third derivative stays near 1e-8, its transpose satisfies the adjoint identity, and
// the float64 step is the float32 one.
func TestHopfieldJVP(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	pats := make([][]float32, 300)
	for k := range pats {
		pats[k] = make([]float32, Pixels)
		for q := range pats[k] {
			pats[k][q] = rng.Float32() * float32(q%7) / 6
		}
	}
	h := NewHopfield(pats)
	for _, beta := range []float32{0.02, 0.2} {
		f := h.Map64(beta)
		xi := make([]float64, Pixels)
		xi32 := make([]float32, Pixels)
		for q := range xi {
			xi32[q] = 0.3 * rng.Float32()
			xi[q] = float64(xi32[q])
		}
		l := f.At(xi)
		p := make([]float32, roundUp16(h.M))
		h.Step(xi32, p, beta)
		for q, v := range l.Out {
			if math.Abs(v-float64(xi32[q])) > 1e-4*(1+math.Abs(v)) {
				t.Fatalf("β %v pixel %d: float64 step %v, float32 %v", beta, q, v, xi32[q])
			}
		}
		const hh = 1e-4
		v := unit(rng, Pixels)
		jv := make([]float64, Pixels)
		l.JVP(v, jv)
		xp, xm := make([]float64, Pixels), make([]float64, Pixels)
		for q := range xi {
			xp[q], xm[q] = xi[q]+hh*v[q], xi[q]-hh*v[q]
		}
		fp, fm := f.At(xp), f.At(xm)
		diff := make([]float64, Pixels)
		for q := range diff {
			diff[q] = (fp.Out[q]-fm.Out[q])/(2*hh) - jv[q]
		}
		if rel := norm64(diff) / norm64(jv); !(rel <= 1e-6) {
			t.Errorf("β %v: JVP against central differences: relative error %g", beta, rel)
		}
		g := unit(rng, Pixels)
		jg := make([]float64, Pixels)
		l.VJP(g, jg)
		if a, b := dot64(g, jv), dot64(jg, v); math.Abs(a-b) > 1e-12*(norm64(jv)+norm64(jg)) {
			t.Errorf("β %v: ⟨g, DF v⟩ = %v, ⟨DFᵀ g, v⟩ = %v", beta, a, b)
		}
	}
}

// decode64 is Decode in float64: the twin the decoder's derivative is
// checked against.
func decode64(e *Embedding, img []float64, x []float64) {
	a := 2 * e.A
	for i := 0; i < e.N; i++ {
		xi := x[i*e.D : (i+1)*e.D]
		for k := 0; k < e.A; k++ {
			var c0, c1 float64
			for r := 0; r < e.D; r++ {
				c0 += float64(e.F[r*a+2*k]) * xi[r]
				c1 += float64(e.F[r*a+2*k+1]) * xi[r]
			}
			c0, c1 = min(max(c0, 0), 1), min(max(c1, 0), 1)
			var p float64
			if c0+c1 > 0 {
				p = c0 / (c0 + c1)
			}
			img[e.Index[i*e.A+k]] = p
		}
	}
}

// TestHopfieldJVPSupport: where most weights are below dropBelow of the
// largest (a large β), the JVP over the support's rows is the product over
// all patterns (JVPDense) to 1e-14 of its largest term's scale β·max‖X_k‖²
// (the terms, not the result, which cancels to 0 where one pattern holds
// all the weight); where every weight counts (β small), to rounding.
func TestHopfieldJVPSupport(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	pats := make([][]float32, 400)
	var big float64
	for k := range pats {
		pats[k] = make([]float32, Pixels)
		var ss float64
		for q := range pats[k] {
			pats[k][q] = rng.Float32() * float32(q%7) / 6
			ss += float64(pats[k][q]) * float64(pats[k][q])
		}
		big = max(big, ss)
	}
	h := NewHopfield(pats)
	xi := make([]float64, Pixels)
	for q := range xi {
		xi[q] = 0.3 * rng.Float64()
	}
	for _, c := range []struct {
		beta     float32
		min, max int
	}{{0.02, 400, 400}, {16, 2, 399}, {400, 1, 1}} {
		l := h.Map64(c.beta).At(xi)
		if n := len(l.support); n < c.min || n > c.max {
			t.Fatalf("β %v: %d patterns in the support, want %d … %d", c.beta, n, c.min, c.max)
		}
		scale := float64(c.beta) * big
		for range 3 {
			v := unit(rng, Pixels)
			a, b := make([]float64, Pixels), make([]float64, Pixels)
			l.JVP(v, a)
			l.JVPDense(v, b)
			d := make([]float64, Pixels)
			for q := range d {
				d[q] = a[q] - b[q]
			}
			if e := norm64(d); !(e <= 1e-14*scale) {
				t.Fatalf("β %v: over the support against over all patterns: difference %g, scale %g", c.beta, e, scale)
			}
		}
	}
}
