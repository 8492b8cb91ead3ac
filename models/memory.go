package models

import (
	"context"
	"math"
	"sync"
)

// Memory finds, for predictions, the stored image with the highest Pearson
// correlation (§8 "nearest memory"). Stored rows are centred and scaled to
// unit norm, so the correlation of a standardised prediction z with row m
// is the dot product z·m.
//
// The search is exact but prunes (docs/maths.md §8). Bounds on z·m for
// every row come from 8-bit copies of the rows (quant.go), and a
// prediction near an earlier one (a trajectory's next state, in the same
// call to Nearest or along a Trail) reuses that one's bounds, raised by
// the distance between them: for unit-norm m, z·m ≤ z_a·m + ‖z − z_a‖. The exact dot product is then
// taken only for rows whose bound reaches the best exact value found, less
// a margin that covers float32 rounding. The result equals the brute-force
// search (NearestBrute) that takes every exact dot product.
type Memory struct {
	M, Q int
	rows []float32 // [M][Q] standardised rows (nil when coded)
	// coded rows (NewMemoryOfCodes where compactRows): row k is pal at
	// codes[k·Q:(k+1)·Q], standardised with mean[k] and inv[k] (zero[k]:
	// a constant row, all zeros) each time it is used, to the bit the
	// stored row it stands for.
	codes     []uint8
	pal       *[256]float32
	mean, inv []float64
	zero      []bool
	// quant is the rows in 8 bits (nil: every search is brute force).
	quant *quantRows
	// trace, when set (by a test, searching on one goroutine), counts the
	// searches' paths.
	trace *searchPaths
}

// boundSlack covers the rounding of the bounds and of the exact products
// (sums of products of unit-norm float32 vectors, whose error is below
// 1e-5 for Q = 784).
const boundSlack = 1e-3

// quantMinRows: with fewer rows the brute force costs little.
const quantMinRows = 256

// NewMemory stores rows (each of length q, finite).
func NewMemory(rows [][]float32) *Memory {
	q := 0
	if len(rows) > 0 {
		q = len(rows[0])
	}
	return NewMemoryOf(len(rows), q, func(k int, dst []float32) { copy(dst, rows[k]) })
}

// NewMemoryOf stores m rows of length q, row(k, dst) writing row k (finite
// values) into dst; it may be called from several goroutines at once. The
// rows are standardised as they come, so nobody holds a copy of them all
// meanwhile (31 MB for 10,000 digits, which the page's memory, only ever
// growing, would keep).
func NewMemoryOf(m, q int, row func(k int, dst []float32)) *Memory {
	mem := &Memory{M: m, Q: q}
	mem.rows = make([]float32, mem.M*mem.Q)
	inParts(mem.M, func(k0, k1 int) {
		x := make([]float32, q)
		for k := k0; k < k1; k++ {
			row(k, x)
			standardizeTo(mem.rows[k*q:(k+1)*q], x)
		}
	})
	mem.quantise()
	return mem
}

// compactRows: a memory made of codes keeps them and standardises a row
// each time it is used, instead of keeping the standardised rows (31 MB
// for 10,000 digits, 4 bytes a value against the codes' 1, which are the
// data set's own bytes). The web build does: its memory never shrinks,
// and a page and each of its workers keep a memory of the digits. Its
// searches measured as fast there (sim's BenchmarkNearestTrajectory): the
// bounds leave few rows whose exact product is taken.
const compactRows = compactRowsHere

// NewMemoryOfCodes stores m rows of length q whose values are pal at
// codes (m·q bytes, row-major; not changed afterwards: the memory may
// keep them). It is NewMemoryOf of those rows, the same searches to the
// bit.
func NewMemoryOfCodes(m, q int, codes []uint8, pal *[256]float32) *Memory {
	return newMemoryOfCodes(m, q, codes, pal, compactRows)
}

// newMemoryOfCodes is NewMemoryOfCodes keeping the codes (compact) or
// the standardised rows.
func newMemoryOfCodes(m, q int, codes []uint8, pal *[256]float32, compact bool) *Memory {
	codes = codes[:m*q]
	if !compact {
		return NewMemoryOf(m, q, func(k int, dst []float32) {
			for i, c := range codes[k*q : (k+1)*q] {
				dst[i] = pal[c]
			}
		})
	}
	mem := &Memory{M: m, Q: q, codes: codes, pal: pal, mean: make([]float64, m), inv: make([]float64, m), zero: make([]bool, m)}
	x := make([]float32, q)
	for k := range m {
		for i, c := range codes[k*q : (k+1)*q] {
			x[i] = pal[c]
		}
		mem.mean[k], mem.inv[k], mem.zero[k] = standardStats(x)
	}
	mem.quantise()
	return mem
}

// quantise makes the rows' 8-bit copies, when the search prunes.
func (mem *Memory) quantise() {
	if mem.M >= quantMinRows && mem.Q <= quantMaxQ {
		mem.quant = newQuantRows(mem, mem.M, mem.Q)
	}
}

// Pruned reports whether the search prunes (else it is brute force).
func (mem *Memory) Pruned() bool { return mem.quant != nil }

// inParts runs f on consecutive parts [i0, i1) of [0, n), one per core,
// and waits for them.
func inParts(n int, f func(i0, i1 int)) {
	w := min(Workers(), n)
	Parallel(context.Background(), w, w, func(_, p int) { f(p*n/w, (p+1)*n/w) })
}

// standardize returns (x − mean)/‖x − mean‖, or zeros for a constant x.
func standardize(x []float32) []float32 {
	return standardizeTo(make([]float32, len(x)), x)
}

func standardizeGo(out, x []float32) []float32 {
	m, inv, zero := standardStats(x)
	if zero {
		clear(out)
		return out
	}
	for k, v := range x {
		out[k] = float32((float64(v) - m) * inv)
	}
	return out
}

// standardStats is x's mean and 1/‖x − mean‖ as standardize takes them;
// zero: x is constant (standardised, all zeros).
func standardStats(x []float32) (m, inv float64, zero bool) {
	for _, v := range x {
		m += float64(v)
	}
	m /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (float64(v) - m) * (float64(v) - m)
	}
	if ss == 0 {
		return m, 0, true
	}
	return m, 1 / math.Sqrt(ss), false
}

// searchBuf is one search's scratch: the standardised predictions, their
// anchors, the bounds and the candidates.
type searchBuf struct {
	rowBuf codedRows // coded rows, standardised
	z      []float32 // [P][Q]
	of     []int     // each prediction's anchor (an index into anchors), −1 for none
	shift  []float32 // each prediction's distance from its anchor
	cand   []int32
	anchor []int // the predictions whose bounds are computed
	retry  []int // the predictions whose anchor's bounds leave too many rows
	dense  []int // the predictions searched densely
	// the quantised bounds (quantRows.bounds' arguments and scratch)
	p    []int8
	dots []int32
	ubq  []float32
	zs   [][]float32
	ubs  [][]float32
}

var searchPool sync.Pool

// denseShare: a prediction whose candidates under its anchor's raised
// bounds exceed this share of the rows gets bounds of its own; one whose
// candidates under its own bounds do (rows nearly tied with each other)
// is searched densely, by blocks of rows that stay in cache, which costs
// less than gathering them.
const denseShare = 8

// chainReach: a prediction within this distance (of 2, between unit
// vectors) of the last anchor is searched with the anchor's bounds; a
// farther one becomes the next anchor. Consecutive states of a trajectory
// are mostly 0.003–0.05 apart; on noise trajectories of the digits 0.1
// searched fastest of 0.05, 0.1, 0.2 and 0.35.
const chainReach = 0.1

// Nearest writes, for every prediction, the index of the most correlated
// stored row and that correlation; of equal correlations, the lowest
// index. A constant prediction correlates 0 with everything and gets
// index 0; one with a NaN gets NaN. It is safe for concurrent use.
//
// The predictions are taken in order: the first is an anchor, and each
// later one within chainReach of the last anchor z_a uses the anchor's
// quantised bounds raised by the distance (for every unit-norm row m,
// z·m = z_a·m + (z − z_a)·m ≤ ub_a(m) + ‖z − z_a‖); a farther one is the
// next anchor. The anchors' bounds are computed together. A prediction
// whose anchor's bounds leave too many rows gets bounds of its own, and
// one whose own bounds do is searched densely.
func (mem *Memory) Nearest(preds [][]float32, idx []int, corr []float32) {
	if mem.quant == nil {
		mem.NearestBrute(preds, idx, corr)
		return
	}
	P, Q := len(preds), mem.Q
	buf, _ := searchPool.Get().(*searchBuf)
	if buf == nil {
		buf = &searchBuf{}
	}
	defer searchPool.Put(buf)
	buf.z = grow(buf.z, P*Q)
	buf.shift = grow(buf.shift, P)
	buf.of = grow(buf.of, P)
	buf.anchor = buf.anchor[:0]
	a := -1
	for p := range preds {
		z := standardizeTo(buf.z[p*Q:(p+1)*Q], preds[p])
		if c, ok := degenerate(z); ok {
			idx[p], corr[p] = 0, c
			buf.of[p] = -1
			continue
		}
		var d float32
		if a >= 0 {
			d = dist(z, buf.z[a*Q:(a+1)*Q])
		}
		if a < 0 || d > chainReach {
			a, d = p, 0
			buf.anchor = append(buf.anchor, p)
		}
		buf.of[p], buf.shift[p] = len(buf.anchor)-1, d
	}
	mem.bounds(buf, buf.anchor)
	buf.retry, buf.dense = buf.retry[:0], buf.dense[:0]
	prev := -1 // the previous prediction's nearest row, when it was pruned
	for p := range preds {
		if buf.of[p] < 0 {
			continue
		}
		if mem.prune(buf, p, buf.ubs[buf.of[p]], buf.shift[p], prev, idx, corr) {
			prev = idx[p]
			if mem.trace != nil && buf.shift[p] > 0 {
				mem.trace.chained++
			}
			continue
		}
		prev = -1
		if buf.shift[p] > 0 {
			buf.retry = append(buf.retry, p)
		} else {
			buf.dense = append(buf.dense, p)
		}
	}
	if len(buf.retry) > 0 {
		mem.bounds(buf, buf.retry)
		for c, p := range buf.retry {
			if !mem.prune(buf, p, buf.ubs[c], 0, -1, idx, corr) {
				buf.dense = append(buf.dense, p)
			} else if mem.trace != nil {
				mem.trace.rescued++
			}
		}
	}
	if len(buf.dense) > 0 {
		mem.denseSearch(buf.z, buf.dense, idx, corr, &buf.rowBuf)
	}
	if tr := mem.trace; tr != nil {
		tr.anchors += len(buf.anchor)
		tr.dense += len(buf.dense)
	}
}

// searchPaths counts the paths of searches: predictions whose bounds were
// computed as anchors, pruned with an anchor's bounds raised by their
// distance (chained), pruned with bounds of their own after their
// anchor's left too many rows (rescued), and searched densely.
type searchPaths struct{ anchors, chained, rescued, dense int }

// A Trail searches the states of one trajectory one call at a time, in
// step order, with anchors as Nearest's: it keeps the last anchor and its
// bounds, and a state farther than chainReach from it becomes the next
// anchor. Unlike Nearest, which decides its anchors before computing their
// bounds together, a state the anchor's raised bounds cannot prune also
// becomes the next anchor (its own bounds are computed either way). The
// answers are Nearest's. Make one with NewTrail; it is not safe for
// concurrent use, and a Memory serves any number of Trails.
type Trail struct {
	mem  *Memory
	buf  searchBuf
	za   []float32 // the anchor, standardised
	ub   []float32 // its bounds (in buf.ubq), nil before the first anchor
	prev int       // the previous state's nearest row, −1 if it was not pruned
}

// NewTrail starts a trajectory's search.
func (mem *Memory) NewTrail() *Trail { return &Trail{mem: mem, prev: -1} }

// Nearest is Memory.Nearest of one prediction, the trajectory's next state.
func (tr *Trail) Nearest(pred []float32) (int, float32) {
	mem, buf := tr.mem, &tr.buf
	var idx [1]int
	var corr [1]float32
	if mem.quant == nil {
		mem.NearestBrute([][]float32{pred}, idx[:], corr[:])
		return idx[0], corr[0]
	}
	buf.z = grow(buf.z, mem.Q)
	z := standardizeTo(buf.z, pred)
	if c, ok := degenerate(z); ok {
		return 0, c
	}
	trace := mem.trace
	retried := false
	if tr.ub != nil {
		if d := dist(z, tr.za); d <= chainReach {
			if mem.prune(buf, 0, tr.ub, d, tr.prev, idx[:], corr[:]) {
				tr.prev = idx[0]
				if trace != nil {
					trace.chained++
				}
				return idx[0], corr[0]
			}
			retried = true
		}
	}
	buf.anchor = append(buf.anchor[:0], 0)
	mem.bounds(buf, buf.anchor)
	tr.za, tr.ub = append(tr.za[:0], z...), buf.ubs[0]
	if trace != nil {
		trace.anchors++
	}
	if mem.prune(buf, 0, tr.ub, 0, tr.prev, idx[:], corr[:]) {
		tr.prev = idx[0]
		if trace != nil && retried {
			trace.rescued++
		}
		return idx[0], corr[0]
	}
	if trace != nil {
		trace.dense++
	}
	buf.dense = append(buf.dense[:0], 0)
	mem.denseSearch(buf.z, buf.dense, idx[:], corr[:], &buf.rowBuf)
	tr.prev = -1
	return idx[0], corr[0]
}

// bounds computes the quantised bounds of the predictions ps of buf into
// buf.ubs (one slice of M per prediction, in the order of ps).
func (mem *Memory) bounds(buf *searchBuf, ps []int) {
	Q, M := mem.Q, mem.M
	buf.ubq = grow(buf.ubq, len(ps)*M)
	buf.zs, buf.ubs = buf.zs[:0], buf.ubs[:0]
	for c, p := range ps {
		buf.zs = append(buf.zs, buf.z[p*Q:(p+1)*Q])
		buf.ubs = append(buf.ubs, buf.ubq[c*M:(c+1)*M])
	}
	if len(ps) > 0 {
		buf.p, buf.dots = mem.quant.bounds(buf.zs, buf.ubs, buf.p, buf.dots)
	}
}

// prune searches prediction p of buf with the bounds ub raised by shift.
// A row's exact value is a first threshold; only rows whose bound reaches
// it can beat it. Consecutive predictions (a trajectory) mostly share their
// nearest row, so the previous one's (prev, when not −1) comes first; if
// that leaves too many rows, the row with the highest bound is tried. It
// reports false, with idx[p] and corr[p] untouched, if the rows left are
// still too many.
func (mem *Memory) prune(buf *searchBuf, p int, ub []float32, shift float32, prev int, idx []int, corr []float32) bool {
	z := buf.z[p*mem.Q : (p+1)*mem.Q]
	k0 := prev
	if k0 < 0 {
		k0 = argmax(ub)
	}
	best, bi := dotQ(z, mem.row(k0, &buf.rowBuf, 0)), k0
	var ok bool
	buf.cand, ok = mem.candidates(buf.cand, ub, best-shift)
	if !ok && prev >= 0 {
		if k := argmax(ub); k != prev {
			if v := dotQ(z, mem.row(k, &buf.rowBuf, 0)); v > best || (v == best && k < bi) {
				best, bi = v, k
			}
			buf.cand, ok = mem.candidates(buf.cand, ub, best-shift)
		}
	}
	if !ok {
		return false
	}
	idx[p], corr[p] = mem.exact(z, buf.cand, best, bi, &buf.rowBuf)
	return true
}

// exact takes the exact products of z with the candidate rows and returns
// the best of them and of (best, bi): the highest value, of equal values
// the lowest index.
func (mem *Memory) exact(z []float32, cand []int32, best float32, bi int, sc *codedRows) (int, float32) {
	var m [4][]float32
	var out [4]float32
	for i := 0; i < len(cand); i += 4 {
		for r := range m {
			k := bi
			if i+r < len(cand) {
				k = int(cand[i+r])
			}
			m[r] = mem.row(k, sc, r)
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

// codedRows is room for the coded rows one kernel call multiplies.
type codedRows [6][]float32

// row is stored row k (standardised): a slice of the rows, or, for coded
// rows, row k standardised into the scratch's room r.
func (mem *Memory) row(k int, sc *codedRows, r int) []float32 {
	if mem.rows != nil {
		return mem.rows[k*mem.Q : (k+1)*mem.Q]
	}
	out := grow(sc[r], mem.Q)
	sc[r] = out
	if mem.zero[k] {
		clear(out)
		return out
	}
	// A code's value, as standardizeGo takes it: 256 values, each once.
	m, inv := mem.mean[k], mem.inv[k]
	var val [256]float32
	for c, v := range mem.pal {
		val[c] = float32((float64(v) - m) * inv)
	}
	for i, c := range mem.codes[k*mem.Q : (k+1)*mem.Q] {
		out[i] = val[c]
	}
	return out
}

// candidates puts into dst (emptied first) the rows whose bound in ub
// reaches thr − boundSlack: the only rows that can beat an exact value
// thr. It reports false once they pass a denseShare-th of the rows.
func (mem *Memory) candidates(dst []int32, ub []float32, thr float32) ([]int32, bool) {
	return above(dst[:0], ub, thr-boundSlack, mem.M/denseShare)
}

// quantMaxQ is the longest row the quantised bound takes: its integer
// products stay exact in float32 (127²·1040 < 2²⁴).
const quantMaxQ = 1040

// denseBlock rows (196 KiB at Q = 784) stay in the core's cache while
// every dense prediction is multiplied with them.
const denseBlock = 60

// denseSearch takes every row's exact product with the predictions ps
// (indices into the standardised z), block by block of rows.
func (mem *Memory) denseSearch(z []float32, ps []int, idx []int, corr []float32, sc *codedRows) {
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
					m[r] = mem.row(kr, sc, r)
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
	var sc codedRows
	for p := range preds {
		standardizeTo(z, preds[p])
		if c, ok := degenerate(z); ok || mem.M == 0 {
			idx[p], corr[p] = 0, c
			continue
		}
		best, bi := float32(math.Inf(-1)), 0
		for k := 0; k < mem.M; k++ {
			if s := dotQ(z, mem.row(k, &sc, 0)); s > best {
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

// grow returns s with length n, reallocated (contents lost) when its
// capacity is short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

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

func distGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		d := float64(v) - float64(b[i])
		s += d * d
	}
	return float32(math.Sqrt(s))
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
