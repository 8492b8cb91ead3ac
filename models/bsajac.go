package models

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Map64 is the bare model's ordinary step X(t) → X(t+1) (§4 for t ≥ 1:
// every token a key but itself, the unbiased layer norm over all tokens),
// in float64, with its Jacobian: the map whose local dynamics
// docs/maths.md §10 studies. The first step of a masking run follows other
// rules (masked keys left out, statistics over the visible tokens) and is
// not this map: the analysis starts at t = 1.
type Map64 struct {
	N, D                 int
	J                    []float64 // [i][r][j][e]: for each query i a d × N·d matrix (row r: J[i,j,r,e] over j, e)
	Lambda, Gamma, Clamp float64
	Relu                 bool // the relu/seqlen attention (α = max(λs, 0)/N)
}

// Map64 is m's ordinary step under dy in float64.
func (m *BSA) Map64(dy Dynamics) *Map64 {
	n, d := m.N, m.D
	f := &Map64{N: n, D: d, J: make([]float64, n*n*d*d), Lambda: float64(dy.Lambda), Gamma: float64(dy.Gamma),
		Clamp: float64(m.Clamp), Relu: dy.Attn == ReluSeqlen}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			for r := 0; r < d; r++ {
				for e := 0; e < d; e++ {
					f.J[((i*d+r)*n+j)*d+e] = float64(m.J[m.jidx(i, j, r, e)])
				}
			}
		}
	}
	return f
}

// Size is the state's dimension N·d.
func (f *Map64) Size() int { return f.N * f.D }

// lnEps, normEps are the layer norm's and the renormalisation's 1e-9.
const (
	lnEps   = 1e-9
	normEps = 1e-9
)

// Lin is the step linearised at a state X: F(X) in Out, and what the
// Jacobian-vector products reuse (x̂, v_ij = J_ij x̂_j, w_ij = J_ijᵀ x̂_i,
// the attention, y and its token norms).
type Lin struct {
	f       *Map64
	X       []float64 // the state, [N][d]
	Out     []float64 // F(X), [N][d]
	c, xh   []float64 // centred and layer-normed tokens, [N][d]
	sig     []float64 // σ_r, [d]
	v, w    []float64 // [i][j][d]
	a       []float64 // α_ij, [N][N]
	open    []bool    // [N][N]: s_ij is below the clamp (its derivative passes) and, for relu, λs_ij > 0
	y, ynrm []float64 // y [N][d], ‖y_i‖ [N]
	m       float64   // (1/N) Σ ‖y_i‖
}

// At computes F(x) (x is kept, not copied) and the linearisation there.
func (f *Map64) At(x []float64) *Lin {
	n, d := f.N, f.D
	l := &Lin{f: f, X: x, Out: make([]float64, n*d), c: make([]float64, n*d), xh: make([]float64, n*d),
		sig: make([]float64, d), v: make([]float64, n*n*d), w: make([]float64, n*n*d), a: make([]float64, n*n),
		open: make([]bool, n*n), y: make([]float64, n*d), ynrm: make([]float64, n)}
	// Layer norm over the tokens, per component (unbiased std).
	for r := 0; r < d; r++ {
		var mu float64
		for i := 0; i < n; i++ {
			mu += x[i*d+r]
		}
		mu /= float64(n)
		var ss float64
		for i := 0; i < n; i++ {
			c := x[i*d+r] - mu
			l.c[i*d+r] = c
			ss += c * c
		}
		l.sig[r] = math.Sqrt(ss / float64(n-1))
		for i := 0; i < n; i++ {
			l.xh[i*d+r] = l.c[i*d+r] / (l.sig[r] + lnEps)
		}
	}
	s := make([]float64, n)
	nd := n * d
	for i := 0; i < n; i++ {
		xi := l.xh[i*d : (i+1)*d]
		ji := f.J[i*d*nd : (i+1)*d*nd]
		vi, wi := l.v[i*nd:(i+1)*nd], l.w[i*nd:(i+1)*nd]
		// w_ij = J_ijᵀ x̂_i for every j at once: the d × N·d matrix's
		// transposed product.
		blas64.Gemv(blas.Trans, 1, blas64.General{Rows: d, Cols: nd, Stride: nd, Data: ji},
			blas64.Vector{N: d, Inc: 1, Data: xi}, 0, blas64.Vector{N: nd, Inc: 1, Data: wi})
		for j := 0; j < n; j++ {
			if j == i {
				clear(wi[j*d : (j+1)*d])
				continue
			}
			xj := l.xh[j*d : (j+1)*d]
			v := vi[j*d : (j+1)*d]
			var sc float64
			for r := 0; r < d; r++ {
				row := ji[r*nd+j*d : r*nd+(j+1)*d]
				var acc float64
				for e, je := range row {
					acc += je * xj[e]
				}
				v[r] = acc
				sc += xi[r] * acc
			}
			l.open[i*n+j] = sc < f.Clamp
			s[j] = min(sc, f.Clamp)
		}
		a := l.a[i*n : (i+1)*n]
		if f.Relu {
			for j := 0; j < n; j++ {
				if j != i && f.Lambda*s[j] > 0 {
					a[j] = f.Lambda * s[j] / float64(n)
				} else {
					l.open[i*n+j] = false
				}
			}
		} else {
			mx := math.Inf(-1)
			for j := 0; j < n; j++ {
				if j != i {
					mx = max(mx, s[j])
				}
			}
			var sum float64
			for j := 0; j < n; j++ {
				if j != i {
					a[j] = math.Exp(f.Lambda * (s[j] - mx))
					sum += a[j]
				}
			}
			for j := range a {
				a[j] /= sum
			}
		}
		y := l.y[i*d : (i+1)*d]
		for r := range y {
			var u float64
			for j := 0; j < n; j++ {
				u += a[j] * l.v[(i*n+j)*d+r]
			}
			y[r] = x[i*d+r] + f.Gamma*u
		}
		var ss float64
		for _, v := range y {
			ss += v * v
		}
		l.ynrm[i] = math.Sqrt(ss)
		l.m += l.ynrm[i]
	}
	l.m /= float64(n)
	for k, v := range l.y {
		l.Out[k] = v / (l.m + normEps)
	}
	return l
}

// JVP writes the Jacobian's product with the tangent dx into out
// (DF(X)·dx), following the step's operations forward.
func (l *Lin) JVP(dx, out []float64) {
	f := l.f
	n, d := f.N, f.D
	// Layer norm: ċ = ẋ − mean ẋ, σ̇ = Σ c ċ / ((N−1)σ), x̂̇ = ċ/(σ+ε) − c σ̇/(σ+ε)².
	dxh := make([]float64, n*d)
	for r := 0; r < d; r++ {
		var mu float64
		for i := 0; i < n; i++ {
			mu += dx[i*d+r]
		}
		mu /= float64(n)
		var cs float64
		for i := 0; i < n; i++ {
			cs += l.c[i*d+r] * (dx[i*d+r] - mu)
		}
		sg := l.sig[r] + lnEps
		ds := 0.0
		if l.sig[r] > 0 {
			ds = cs / (float64(n-1) * l.sig[r])
		}
		for i := 0; i < n; i++ {
			dxh[i*d+r] = (dx[i*d+r]-mu)/sg - l.c[i*d+r]*ds/(sg*sg)
		}
	}
	// The query rows in two fixed halves on two goroutines: each half's
	// share of ṁ is summed in row order and the halves in order, so the
	// bits do not depend on the cores.
	var mh [2]float64
	halves(n, func(h, i0, i1 int) { mh[h] = l.jvpRows(dx, dxh, out, i0, i1) })
	mdot := (mh[0] + mh[1]) / float64(n)
	mm := l.m + normEps
	for k := range out[:n*d] {
		out[k] = out[k]/mm - l.y[k]*mdot/(mm*mm)
	}
}

// jvpRows is the JVP's query rows [i0, i1): their ẏ_i into out, and
// their share Σ y_i·ẏ_i/‖y_i‖ of N·ṁ.
func (l *Lin) jvpRows(dx, dxh, out []float64, i0, i1 int) (mdot float64) {
	f := l.f
	n, d := f.N, f.D
	ds := make([]float64, n)
	nd := n * d
	z := make([]float64, nd)
	for i := i0; i < i1; i++ {
		a := l.a[i*n : (i+1)*n]
		dxi := dxh[i*d : (i+1)*d]
		du := out[i*d : (i+1)*d]
		// ṡ_ij = x̂̇_i·v_ij + w_ij·x̂̇_j; z_j = α_ij x̂̇_j.
		for j := 0; j < n; j++ {
			ds[j] = 0
			zj := z[j*d : (j+1)*d]
			if j == i {
				clear(zj)
				continue
			}
			v := l.v[(i*n+j)*d : (i*n+j+1)*d]
			w := l.w[(i*n+j)*d : (i*n+j+1)*d]
			dxj := dxh[j*d : (j+1)*d]
			var sdot float64
			for r := 0; r < d; r++ {
				sdot += dxi[r]*v[r] + w[r]*dxj[r]
			}
			if l.open[i*n+j] {
				ds[j] = sdot
			}
			for e := range zj {
				zj[e] = a[j] * dxj[e]
			}
		}
		// Σ_j α_ij J_ij x̂̇_j: the d × N·d matrix times z.
		blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: d, Cols: nd, Stride: nd, Data: f.J[i*d*nd : (i+1)*d*nd]},
			blas64.Vector{N: nd, Inc: 1, Data: z}, 0, blas64.Vector{N: d, Inc: 1, Data: du})
		// α̇: softmax λ α (ṡ − Σ α ṡ); relu λ ṡ/N where open.
		var mean float64
		if !f.Relu {
			for j := 0; j < n; j++ {
				mean += a[j] * ds[j]
			}
		}
		for j := 0; j < n; j++ {
			if j == i {
				continue
			}
			var da float64
			if f.Relu {
				da = f.Lambda * ds[j] / float64(n)
			} else {
				da = f.Lambda * a[j] * (ds[j] - mean)
			}
			if da != 0 {
				v := l.v[(i*n+j)*d : (i*n+j+1)*d]
				for r := range du {
					du[r] += da * v[r]
				}
			}
		}
		// ẏ = ẋ + γ u̇, and ṁ's share.
		y := l.y[i*d : (i+1)*d]
		var yd float64
		for r := range du {
			du[r] = dx[i*d+r] + f.Gamma*du[r]
			yd += y[r] * du[r]
		}
		if l.ynrm[i] > 0 {
			mdot += yd / l.ynrm[i]
		}
	}
	return mdot
}

// halves runs f on the rows [0, n) cut into two fixed halves, on two
// goroutines (h = 0, 1).
func halves(n int, f func(h, i0, i1 int)) {
	var wg sync.WaitGroup
	wg.Go(func() { f(1, n/2, n) })
	f(0, 0, n/2)
	wg.Wait()
}

// VJP writes the transposed Jacobian's product with g into out
// (DF(X)ᵀ·g), following the step's operations backward.
func (l *Lin) VJP(g, out []float64) {
	f := l.f
	n, d := f.N, f.D
	mm := l.m + normEps
	// F = y/(m+ε): ȳ = g/(m+ε) + m̄ ∂m/∂y, m̄ = −Σ g·y/(m+ε)².
	var gy float64
	for k, v := range g[:n*d] {
		gy += v * l.y[k]
	}
	mbar := -gy / (mm * mm) / float64(n)
	ybar := make([]float64, n*d)
	for i := 0; i < n; i++ {
		for r := 0; r < d; r++ {
			k := i*d + r
			ybar[k] = g[k] / mm
			if l.ynrm[i] > 0 {
				ybar[k] += mbar * l.y[k] / l.ynrm[i]
			}
		}
	}
	// y = x + γ u: x̄ = ȳ, ū = γ ȳ. The query rows in two fixed halves,
	// each adding into its own x̂̄, summed in order.
	var xb [2][]float64
	halves(n, func(h, i0, i1 int) { xb[h] = l.vjpRows(ybar, i0, i1) })
	xhbar := xb[0]
	for k, v := range xb[1] {
		xhbar[k] += v
	}
	l.lnBackward(xhbar, ybar, out)
}

// vjpRows is the transposed product's query rows [i0, i1): their
// contributions to x̂̄.
func (l *Lin) vjpRows(ybar []float64, i0, i1 int) []float64 {
	f := l.f
	n, d := f.N, f.D
	xhbar := make([]float64, n*d)
	nd := n * d
	tb := make([]float64, nd)
	abar := make([]float64, n)
	sbar := make([]float64, n)
	for i := i0; i < i1; i++ {
		a := l.a[i*n : (i+1)*n]
		ub := ybar[i*d : (i+1)*d]
		for j := 0; j < n; j++ {
			abar[j] = 0
			if j == i {
				continue
			}
			v := l.v[(i*n+j)*d : (i*n+j+1)*d]
			var s float64
			for r := range ub {
				s += ub[r] * v[r]
			}
			abar[j] = f.Gamma * s
		}
		var mean float64
		if !f.Relu {
			for j := 0; j < n; j++ {
				mean += a[j] * abar[j]
			}
		}
		for j := 0; j < n; j++ {
			sbar[j] = 0
			if j == i || !l.open[i*n+j] {
				continue
			}
			if f.Relu {
				sbar[j] = f.Lambda * abar[j] / float64(n)
			} else {
				sbar[j] = f.Lambda * a[j] * (abar[j] - mean)
			}
		}
		// s_ij = x̂_i·v_ij, v_ij = J_ij x̂_j, u_i = Σ α_ij v_ij:
		// x̂̄_i += s̄_ij v_ij; x̂̄_j += α_ij (J_ijᵀ γȳ_i) + s̄_ij w_ij, the
		// products J_ijᵀ γȳ_i for every j at once.
		blas64.Gemv(blas.Trans, f.Gamma, blas64.General{Rows: d, Cols: nd, Stride: nd, Data: f.J[i*d*nd : (i+1)*d*nd]},
			blas64.Vector{N: d, Inc: 1, Data: ub}, 0, blas64.Vector{N: nd, Inc: 1, Data: tb})
		xbi := xhbar[i*d : (i+1)*d]
		for j := 0; j < n; j++ {
			if j == i {
				continue
			}
			v := l.v[(i*n+j)*d : (i*n+j+1)*d]
			w := l.w[(i*n+j)*d : (i*n+j+1)*d]
			xbj := xhbar[j*d : (j+1)*d]
			tj := tb[j*d : (j+1)*d]
			sb, aj := sbar[j], a[j]
			for r := range xbi {
				xbi[r] += sb * v[r]
				xbj[r] += sb*w[r] + aj*tj[r]
			}
		}
	}
	return xhbar
}

// lnBackward is the layer norm's transposed product: with
// c̄ = x̂̄/(σ+ε) + σ̄ c/((N−1)σ), σ̄ = −Σ x̂̄ c/(σ+ε)², out = ȳ + c̄ − mean c̄.
func (l *Lin) lnBackward(xhbar, ybar, out []float64) {
	n, d := l.f.N, l.f.D
	for r := 0; r < d; r++ {
		sg := l.sig[r] + lnEps
		var sb float64
		for i := 0; i < n; i++ {
			sb -= xhbar[i*d+r] * l.c[i*d+r] / (sg * sg)
		}
		k := 0.0
		if l.sig[r] > 0 {
			k = sb / (float64(n-1) * l.sig[r])
		}
		var mu float64
		cb := make([]float64, n)
		for i := 0; i < n; i++ {
			cb[i] = xhbar[i*d+r]/sg + k*l.c[i*d+r]
			mu += cb[i]
		}
		mu /= float64(n)
		for i := 0; i < n; i++ {
			out[i*d+r] = ybar[i*d+r] + cb[i] - mu
		}
	}
}

// DecodeJVP writes into img (784 pixels) the decoder's derivative at the
// tokens x along dx (§3, in float64): with c = Fᵀx_i clamped to [0, 1],
// p = c₀/(c₀+c₁) moves by (ċ₀c₁ − c₀ċ₁)/(c₀+c₁)², a clamped c not at all,
// a black pixel (c₀+c₁ = 0) neither. It shows what a direction in the
// state space does to the picture.
func (e *Embedding) DecodeJVP(img []float64, x, dx []float64) {
	a := 2 * e.A
	for i := 0; i < e.N; i++ {
		xi := x[i*e.D : (i+1)*e.D]
		di := dx[i*e.D : (i+1)*e.D]
		for k := 0; k < e.A; k++ {
			var c0, c1, d0, d1 float64
			for r := 0; r < e.D; r++ {
				f0, f1 := float64(e.F[r*a+2*k]), float64(e.F[r*a+2*k+1])
				c0 += f0 * xi[r]
				c1 += f1 * xi[r]
				d0 += f0 * di[r]
				d1 += f1 * di[r]
			}
			if c0 <= 0 || c0 >= 1 {
				d0 = 0
			}
			if c1 <= 0 || c1 >= 1 {
				d1 = 0
			}
			c0, c1 = min(max(c0, 0), 1), min(max(c1, 0), 1)
			var p float64
			if s := c0 + c1; s > 0 {
				p = (d0*c1 - c0*d1) / (s * s)
			}
			img[e.Index[i*e.A+k]] = p
		}
	}
}
