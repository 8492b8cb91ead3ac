package models

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Memory finds, for predictions, the stored image with the highest Pearson
// correlation (§8 "nearest memory"). Stored rows are centred and scaled to
// unit norm, so the correlation of a standardised prediction z with row m
// is the dot product z·m.
//
// The search is exact but prunes (docs/maths.md §8): with U an orthonormal
// basis of the R leading directions of the stored rows, α = Uᵀz, β = Uᵀm and
// the residuals z⊥ = z − Uα, m⊥ = m − Uβ,
//
//	z·m = α·β + z⊥·m⊥ ≤ α·β + ‖z⊥‖·‖m⊥‖   (Cauchy–Schwarz).
//
// One matrix product gives that bound for every row; the exact dot product
// is then taken only for rows whose bound reaches the best exact value
// found, less a margin that covers float32 rounding. The result equals the
// brute-force search (NearestBrute) that takes every exact dot product.
type Memory struct {
	M, Q int
	R    int       // rank of the projection (0: brute force)
	rows []float32 // [M][Q] standardised rows
	// basisT is Uᵀ augmented, [Q][R+1]: column R is zero so that a
	// prediction's projection leaves room for its residual norm.
	basisT []float32
	basis  []float32 // U as [R][Q]
	// bound is [R+1][M]: column k is (β_k, ‖m⊥_k‖), so that
	// (α, ‖z⊥‖)·(β_k, ‖m⊥_k‖) is row k's upper bound.
	bound []float32
	// quant is the rows in 8 bits, for the predictions the rank-R bound
	// leaves too many candidates (nil: those are searched densely).
	quant *quantRows
}

// memRank is the projection's rank; boundSlack covers the rounding of the
// bound and of the exact products (both are sums of unit-norm float32
// vectors' products, whose error is below 1e-5 for Q = 784).
const (
	memRank    = 64
	boundSlack = 1e-3
)

// NewMemory stores rows (each of length q).
func NewMemory(rows [][]float32) *Memory {
	mem := &Memory{M: len(rows)}
	if len(rows) > 0 {
		mem.Q = len(rows[0])
	}
	mem.rows = make([]float32, mem.M*mem.Q)
	inParts(mem.M, func(k0, k1 int) {
		for k := k0; k < k1; k++ {
			standardizeTo(mem.row(k), rows[k])
		}
	})
	// Pruning pays when a row's exact product costs much more than its
	// bound: many rows, long rows. The 8-bit rows are made meanwhile.
	if mem.M >= 4*memRank && mem.Q >= 4*memRank {
		var quant *quantRows
		var wg sync.WaitGroup
		if mem.Q <= quantMaxQ {
			wg.Go(func() { quant = newQuantRows(mem.rows, mem.M, mem.Q) })
		}
		mem.project(memRank)
		wg.Wait()
		if mem.R > 0 {
			mem.quant = quant
		}
	}
	return mem
}

// projSample: the subspace iteration runs on every projSample-th stored
// row. The leading directions of thousands of digits are those of a
// quarter of them, nearly, and the bound stays exact for any basis.
const projSample = 4

// project computes an orthonormal basis of the stored rows' leading R
// directions by subspace iteration from a random start, on every
// projSample-th row (any orthonormal basis keeps the search exact; a good
// one prunes more), then every row's projection and residual norm.
func (mem *Memory) project(R int) {
	M, Q := mem.M, mem.Q
	k := min(R+16, Q) // oversampled
	rng := rand.New(rand.NewPCG(7, 7))
	w := make([]float32, Q*k)
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	orthonormalize(w, Q, k)
	// Z is the sampled rows: every projSample-th, projSample·Q apart.
	ms, lds := (M+projSample-1)/projSample, projSample*Q
	y := make([]float32, ms*k)
	// Y = Z·W by parts of Z's rows, W = Zᵀ·Y by parts of W's rows.
	zw := func() {
		clear(y)
		inParts(ms, func(i0, i1 int) {
			gemm(i1-i0, k, Q, mem.rows[i0*lds:], lds, false, w, k, y[i0*k:], k)
		})
	}
	for it := 0; it < 3; it++ {
		zw()
		clear(w)
		inParts(Q, func(q0, q1 int) {
			gemm(q1-q0, k, ms, mem.rows[q0:], lds, true, y, k, w[q0*k:], k)
		})
		orthonormalize(w, Q, k)
	}
	// Rotate W's span to its principal directions: the eigenvectors of
	// (ZW)ᵀ(ZW), largest first.
	zw()
	gram := make([]float32, k*k)
	gemm(k, k, ms, y, k, true, y, k, gram, k)
	g := mat.NewSymDense(k, nil)
	for a := 0; a < k; a++ {
		for b := a; b < k; b++ {
			g.SetSym(a, b, float64(gram[a*k+b]))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(g, true) {
		return // stays brute force
	}
	var ev mat.Dense
	eig.VectorsTo(&ev)            // ascending eigenvalues
	basis := make([]float64, Q*R) // [Q][R], orthonormal columns
	for q := 0; q < Q; q++ {
		for c := 0; c < R; c++ {
			col := k - 1 - c
			var s float64
			for a := 0; a < k; a++ {
				s += float64(w[q*k+a]) * ev.At(a, col)
			}
			basis[q*R+c] = s
		}
	}
	orthonormalize64(basis, Q, R)
	mem.R = R
	mem.basisT = make([]float32, Q*(R+1))
	mem.basis = make([]float32, R*Q)
	for q := 0; q < Q; q++ {
		for c := 0; c < R; c++ {
			mem.basisT[q*(R+1)+c] = float32(basis[q*R+c])
			mem.basis[c*Q+q] = float32(basis[q*R+c])
		}
	}
	a := make([]float32, M*(R+1))
	const block = 256 // rows projected at once: their residuals stay in cache
	inParts(M, func(i0, i1 int) {
		e := make([]float32, block*Q)
		for b0 := i0; b0 < i1; b0 += block {
			mem.projectRows(a[b0*(R+1):], mem.rows[b0*Q:], min(block, i1-b0), e)
		}
	})
	mem.bound = make([]float32, (R+1)*M)
	for i := 0; i < M; i++ {
		for c := 0; c <= R; c++ {
			mem.bound[c*M+i] = a[i*(R+1)+c]
		}
	}
}

// inParts runs f on consecutive parts [i0, i1) of [0, n), one per core,
// and waits for them.
func inParts(n int, f func(i0, i1 int)) {
	w := min(Workers(), n)
	Parallel(context.Background(), w, w, func(_, p int) { f(p*n/w, (p+1)*n/w) })
}

// projectRows writes, for the n rows of z ([n][Q]), (Uᵀz, ‖z − UUᵀz‖)
// into a ([n][R+1]); e is scratch of n·Q.
func (mem *Memory) projectRows(a, z []float32, n int, e []float32) {
	R, Q := mem.R, mem.Q
	clear(a[:n*(R+1)])
	gemm(n, R+1, Q, z, Q, false, mem.basisT, R+1, a, R+1)
	for i, v := range z[:n*Q] {
		e[i] = -v
	}
	gemm(n, Q, R, a, R+1, false, mem.basis, Q, e, Q) // e = UUᵀz − z
	for i := 0; i < n; i++ {
		var rr float64
		for _, v := range e[i*Q : (i+1)*Q] {
			rr += float64(v) * float64(v)
		}
		a[i*(R+1)+R] = float32(math.Sqrt(rr))
	}
}

// orthonormalize makes the k columns of the n×k row-major a orthonormal
// (modified Gram–Schmidt in float64).
func orthonormalize(a []float32, n, k int) {
	b := make([]float64, len(a))
	for i, v := range a {
		b[i] = float64(v)
	}
	orthonormalize64(b, n, k)
	for i, v := range b {
		a[i] = float32(v)
	}
}

// orthonormalize64 is orthonormalize in float64, in place. It works on a
// column-major copy, so every sum runs over contiguous memory.
func orthonormalize64(a []float64, n, k int) {
	col := make([]float64, n*k) // [k][n]
	for i := 0; i < n; i++ {
		for c := 0; c < k; c++ {
			col[c*n+i] = a[i*k+c]
		}
	}
	for pass := 0; pass < 2; pass++ { // twice is enough (Giraud et al.)
		for c := 0; c < k; c++ {
			x := col[c*n : (c+1)*n]
			for p := 0; p < c; p++ {
				u := col[p*n : (p+1)*n]
				s := dot64(x, u)
				for i, v := range u {
					x[i] -= s * v
				}
			}
			s := dot64(x, x)
			inv := 0.0
			if s > 0 {
				inv = 1 / math.Sqrt(s)
			}
			for i := range x {
				x[i] *= inv
			}
		}
	}
	for i := 0; i < n; i++ {
		for c := 0; c < k; c++ {
			a[i*k+c] = col[c*n+i]
		}
	}
}

// dot64 is Σ x_i·y_i over len(x) ≤ len(y), in four interleaved partial
// sums (their additions overlap).
func dot64(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// standardize returns (x − mean)/‖x − mean‖, or zeros for a constant x.
func standardize(x []float32) []float32 {
	return standardizeTo(make([]float32, len(x)), x)
}

// standardizeTo writes standardize(x) into out and returns it (float64
// sums; the AVX-512 version sums in 8 lanes).
var standardizeTo = standardizeGo

func standardizeGo(out, x []float32) []float32 {
	var m float64
	for _, v := range x {
		m += float64(v)
	}
	m /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (float64(v) - m) * (float64(v) - m)
	}
	if ss == 0 {
		clear(out)
		return out
	}
	inv := 1 / math.Sqrt(ss)
	for k, v := range x {
		out[k] = float32((float64(v) - m) * inv)
	}
	return out
}

// searchBuf is one search's scratch: standardised predictions, their
// projections, the bounds and the candidates.
type searchBuf struct {
	z, a, e, ub []float32
	ag          []float32 // a group's projections, for the bounds
	cand        []int32
	dense       []int
	near        []int // the predictions for the rank-R bound
	// the quantised bounds of the dense predictions
	p     []int8
	dots  []int32
	ubq   []float32
	zs    [][]float32
	ubs   [][]float32
	still []int
}

var searchPool sync.Pool

// denseShare: a prediction whose candidates exceed this share of the rows
// (a noisy state, far from every memory) is searched densely, by blocks
// of rows that stay in cache, which costs less than gathering them.
const denseShare = 8

// boundGroup predictions' rank-R bounds are computed together: 12 rows of
// 10,000 bounds (480 KB) stay in a core's cache until they are scanned.
const boundGroup = 12

// farResidual: a prediction whose residual norm ‖z⊥‖ (of 1) passes it
// skips the rank-R bound. Measured on noise trajectories of the digits,
// the states that bound prunes have ‖z⊥‖ up to 0.66 and those it cannot
// from 0.51 (median 0.79); either way the answer is exact.
const farResidual = 0.7

// Nearest writes, for every prediction, the index of the most correlated
// stored row and that correlation; of equal correlations, the lowest
// index. A constant prediction correlates 0 with everything and gets
// index 0; one with a NaN gets NaN. It is safe for concurrent use.
func (mem *Memory) Nearest(preds [][]float32, idx []int, corr []float32) {
	if mem.R == 0 {
		mem.NearestBrute(preds, idx, corr)
		return
	}
	P, Q, R, M := len(preds), mem.Q, mem.R, mem.M
	buf, _ := searchPool.Get().(*searchBuf)
	if buf == nil {
		buf = &searchBuf{}
	}
	defer searchPool.Put(buf)
	buf.z = grow(buf.z, P*Q)
	buf.a = grow(buf.a, P*(R+1))
	buf.e = grow(buf.e, P*Q)
	buf.ub = grow(buf.ub, min(P, boundGroup)*M)
	for p := range preds {
		standardizeTo(buf.z[p*Q:(p+1)*Q], preds[p])
	}
	mem.projectRows(buf.a, buf.z, P, buf.e)
	// A prediction far from the stored rows' span (most of its length in
	// z⊥: a noisy state) would keep most rows under the rank-R bound: it
	// goes straight to the quantised bound.
	buf.dense, buf.near = buf.dense[:0], buf.near[:0]
	for p := range preds {
		if c, ok := degenerate(buf.z[p*Q : (p+1)*Q]); ok {
			idx[p], corr[p] = 0, c
		} else if mem.quant != nil && buf.a[p*(R+1)+R] > farResidual {
			buf.dense = append(buf.dense, p)
		} else {
			buf.near = append(buf.near, p)
		}
	}
	buf.ag = grow(buf.ag, min(len(buf.near), boundGroup)*(R+1))
	prev := -1 // the previous prediction's nearest row, when it was pruned
	for q, p := range buf.near {
		// The bounds of boundGroup predictions at a time, so that they are
		// still in the core's cache when they are scanned.
		g := q % boundGroup
		if g == 0 {
			ng := min(boundGroup, len(buf.near)-q)
			for j, pj := range buf.near[q : q+ng] {
				copy(buf.ag[j*(R+1):(j+1)*(R+1)], buf.a[pj*(R+1):(pj+1)*(R+1)])
			}
			gemmSet(ng, M, R+1, buf.ag, R+1, false, mem.bound, M, buf.ub, M)
		}
		z := buf.z[p*Q : (p+1)*Q]
		ub := buf.ub[g*M : (g+1)*M]
		// A row's exact value is a first threshold; only rows whose bound
		// reaches it can beat it. Consecutive predictions (a trajectory)
		// mostly share their nearest row, so the previous one's comes
		// first; if that leaves too many rows, the row with the highest
		// bound is tried.
		k0 := prev
		if k0 < 0 {
			k0 = argmax(ub)
		}
		best, bi := dotQ(z, mem.row(k0)), k0
		var ok bool
		buf.cand, ok = mem.candidates(buf.cand, ub, best)
		if !ok && prev >= 0 {
			if k := argmax(ub); k != prev {
				if v := dotQ(z, mem.row(k)); v > best || (v == best && k < bi) {
					best, bi = v, k
				}
				buf.cand, ok = mem.candidates(buf.cand, ub, best)
			}
		}
		if !ok {
			prev = -1
			buf.dense = append(buf.dense, p)
			continue
		}
		idx[p], corr[p] = mem.exact(z, buf.cand, best, bi)
		prev = idx[p]
	}
	if len(buf.dense) > 0 && mem.quant != nil {
		buf.dense = mem.quantSearch(buf, idx, corr)
	}
	if len(buf.dense) > 0 {
		mem.denseSearch(buf.z, buf.dense, idx, corr)
	}
}

// exact takes the exact products of z with the candidate rows and returns
// the best of them and of (best, bi): the highest value, of equal values
// the lowest index.
func (mem *Memory) exact(z []float32, cand []int32, best float32, bi int) (int, float32) {
	var m [4][]float32
	var out [4]float32
	for i := 0; i < len(cand); i += 4 {
		for r := range m {
			m[r] = mem.row(bi)
			if i+r < len(cand) {
				m[r] = mem.row(int(cand[i+r]))
			}
		}
		dots1x4(z, &m, &out)
		for r := 0; r < 4 && i+r < len(cand); r++ {
			if k := int(cand[i+r]); out[r] > best || (out[r] == best && k < bi) {
				best, bi = out[r], k
			}
		}
	}
	return bi, best
}

// row is stored row k (standardised).
func (mem *Memory) row(k int) []float32 { return mem.rows[k*mem.Q : (k+1)*mem.Q] }

// candidates puts into dst (emptied first) the rows whose bound in ub
// reaches best − boundSlack: the only rows that can beat an exact value
// best. It reports false once they pass a denseShare-th of the rows.
func (mem *Memory) candidates(dst []int32, ub []float32, best float32) ([]int32, bool) {
	return above(dst[:0], ub, best-boundSlack, mem.M/denseShare)
}

// quantMaxQ is the longest row the quantised bound takes: its integer
// products stay exact in float32 (127²·1040 < 2²⁴).
const quantMaxQ = 1040

// quantSearch searches the dense predictions of buf with the quantised
// bound (quant.go) and returns those it still cannot prune.
func (mem *Memory) quantSearch(buf *searchBuf, idx []int, corr []float32) []int {
	Q, M := mem.Q, mem.M
	n := len(buf.dense)
	buf.ubq = grow(buf.ubq, n*M)
	buf.zs, buf.ubs = buf.zs[:0], buf.ubs[:0]
	for c, p := range buf.dense {
		buf.zs = append(buf.zs, buf.z[p*Q:(p+1)*Q])
		buf.ubs = append(buf.ubs, buf.ubq[c*M:(c+1)*M])
	}
	buf.p, buf.dots = mem.quant.bounds(buf.zs, buf.ubs, buf.p, buf.dots)
	buf.still = buf.still[:0]
	for c, p := range buf.dense {
		z, ub := buf.zs[c], buf.ubs[c]
		k0 := argmax(ub)
		best := dotQ(z, mem.row(k0))
		var ok bool
		buf.cand, ok = mem.candidates(buf.cand, ub, best)
		if !ok {
			buf.still = append(buf.still, p)
			continue
		}
		idx[p], corr[p] = mem.exact(z, buf.cand, best, k0)
	}
	return append(buf.dense[:0], buf.still...)
}

// denseBlock rows (196 KiB at Q = 784) stay in the core's cache while
// every dense prediction is multiplied with them.
const denseBlock = 60

// denseSearch takes every row's exact product with the predictions ps
// (indices into the standardised z), block by block of rows.
func (mem *Memory) denseSearch(z []float32, ps []int, idx []int, corr []float32) {
	Q, M := mem.Q, mem.M
	for _, p := range ps {
		idx[p], corr[p] = 0, float32(math.Inf(-1))
	}
	var zs [4][]float32
	var m [6][]float32
	var out [24]float32
	for b0 := 0; b0 < M; b0 += denseBlock {
		b1 := min(b0+denseBlock, M)
		for i := 0; i < len(ps); i += len(zs) {
			for c := range zs {
				p := ps[min(i+c, len(ps)-1)]
				zs[c] = z[p*Q : (p+1)*Q]
			}
			for k := b0; k < b1; k += len(m) {
				for r := range m {
					kr := min(k+r, b1-1)
					m[r] = mem.row(kr)
				}
				dots4x6(&zs, &m, &out)
				for c := 0; c < len(zs) && i+c < len(ps); c++ {
					p := ps[i+c]
					for r := 0; r < len(m) && k+r < b1; r++ {
						if v := out[c*len(m)+r]; v > corr[p] {
							corr[p], idx[p] = v, k+r
						}
					}
				}
			}
		}
	}
}

// NearestBrute is Nearest without pruning: every stored row's exact dot
// product (the naive twin of the pruned search).
func (mem *Memory) NearestBrute(preds [][]float32, idx []int, corr []float32) {
	z := make([]float32, mem.Q)
	for p := range preds {
		standardizeTo(z, preds[p])
		if c, ok := degenerate(z); ok || mem.M == 0 {
			idx[p], corr[p] = 0, c
			continue
		}
		best, bi := float32(math.Inf(-1)), 0
		for k := 0; k < mem.M; k++ {
			if s := dotQ(z, mem.row(k)); s > best {
				best, bi = s, k
			}
		}
		idx[p], corr[p] = bi, best
	}
}

// degenerate reports a standardised prediction that correlates with
// nothing: a constant one (all zeros: correlation 0) or one with a NaN
// (correlation NaN).
func degenerate(z []float32) (float32, bool) {
	zero := true
	for _, v := range z {
		if v != v {
			return float32(math.NaN()), true
		}
		zero = zero && v == 0
	}
	return 0, zero
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// The search's kernels. dotQ is Σ a[i]·b[i] in float32, the exact product
// of the search; dots1x4 and dots4x6 take four and twenty-four of them with the
// same arithmetic (so the same bits), out[c*4+r] = dotQ(z[c], m[r]) (dots4x6: out[c*6+r]).
// Their loops check no bounds: every slice holds at least len(z) values.
// argmax is the index of ub's first maximum; above appends to dst the k
// with ub[k] ≥ thr in increasing order and reports false once more than
// limit would be appended.
var (
	dotQ    = dotQGo
	dots1x4 = dots1x4Go
	dots4x6 = dots4x6Go
	argmax  = argmaxGo
	above   = aboveGo
)

func dots1x4Go(z []float32, m *[4][]float32, out *[4]float32) {
	for r := range out {
		out[r] = dotQGo(z, m[r])
	}
}

func dots4x6Go(z *[4][]float32, m *[6][]float32, out *[24]float32) {
	for c := range z {
		for r := range m {
			out[c*6+r] = dotQGo(z[c], m[r])
		}
	}
}

func argmaxGo(ub []float32) int {
	k0 := 0
	for k, v := range ub {
		if v > ub[k0] {
			k0 = k
		}
	}
	return k0
}

func aboveGo(dst []int32, ub []float32, thr float32, limit int) ([]int32, bool) {
	for k, v := range ub {
		if v >= thr {
			if len(dst) == limit {
				return dst, false
			}
			dst = append(dst, int32(k))
		}
	}
	return dst, true
}

// dotQNaive is the definition.
func dotQNaive(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// dotQGo sums in 16 lanes (the AVX-512 kernel's order), then adds the
// lanes pairwise, so both give the same bits.
func dotQGo(a, b []float32) float32 {
	var acc [16]float32
	n := len(a) &^ 15
	b = b[:len(a)]
	for i := 0; i < n; i += 16 {
		for l := range acc {
			acc[l] += a[i+l] * b[i+l]
		}
	}
	for i := n; i < len(a); i++ {
		acc[i-n] += a[i] * b[i]
	}
	return sumLanes(&acc)
}

func sumLanes(acc *[16]float32) float32 {
	for w := 8; w >= 1; w /= 2 {
		for l := 0; l < w; l++ {
			acc[l] += acc[l+w]
		}
	}
	return acc[0]
}
