package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDotQMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	fs := []func(a, b []float32) float32{dotQGo}
	if hasAVX512() {
		fs = append(fs, dotQAVX512)
	} else {
		t.Run("avx512", needFast)
	}
	for fi, f := range fs {
		for _, q := range []int{1, 7, 16, 17, 784, 799} {
			a, b := guarded(rng, q), guarded(rng, q)
			got, want := f(a, b), dotQNaive(a, b)
			if !closeTo(float64(got), float64(want), 1e-5) {
				t.Fatalf("impl %d q=%d: %g want %g", fi, q, got, want)
			}
		}
	}
}

// lowRankRows are n rows of length q near a few shared patterns, like
// digits: what the pruned search is built for.
func lowRankRows(rng *rand.Rand, n, q, rank int, noise float64) [][]float32 {
	pat := make([][]float32, rank)
	for r := range pat {
		pat[r] = make([]float32, q)
		for i := range pat[r] {
			pat[r][i] = float32(rng.NormFloat64())
		}
	}
	rows := make([][]float32, n)
	for k := range rows {
		rows[k] = make([]float32, q)
		for r := range pat {
			c := float32(rng.NormFloat64()) / float32(r+1)
			for i := range rows[k] {
				rows[k][i] += c * pat[r][i]
			}
		}
		for i := range rows[k] {
			rows[k][i] += float32(noise * rng.NormFloat64())
		}
	}
	return rows
}

// checkPruned compares mem's Nearest and a Trail through preds with the
// brute force, bit for bit (a NaN correlation must be NaN in both).
func checkPruned(t *testing.T, name string, mem *Memory, preds [][]float32) (idx []int, corr []float32) {
	t.Helper()
	idx, corr = make([]int, len(preds)), make([]float32, len(preds))
	bidx, bcorr := make([]int, len(preds)), make([]float32, len(preds))
	mem.Nearest(preds, idx, corr)
	mem.NearestBrute(preds, bidx, bcorr)
	same := func(k int, c float32, p int) bool {
		return k == bidx[p] && (c == bcorr[p] || c != c && bcorr[p] != bcorr[p])
	}
	trail := mem.NewTrail()
	for p := range preds {
		if !same(idx[p], corr[p], p) {
			t.Fatalf("%s, prediction %d: pruned %d (%g), brute %d (%g)", name, p, idx[p], corr[p], bidx[p], bcorr[p])
		}
		if k, c := trail.Nearest(preds[p]); !same(k, c, p) {
			t.Fatalf("%s, prediction %d: trail %d (%g), brute %d (%g)", name, p, k, c, bidx[p], bcorr[p])
		}
	}
	return idx, corr
}

// drift is a trajectory of n states from a, each step·k from it along a
// random direction, then (past jumpAt) a jump back to a.
func drift(rng *rand.Rand, a []float32, n int, step float64, jumpAt int) [][]float32 {
	dir := guarded(rng, len(a))
	var out [][]float32
	for k := 0; k < n; k++ {
		f := float32(step * float64(k%jumpAt))
		p := make([]float32, len(a))
		for i := range p {
			p[i] = a[i] + f*dir[i]
		}
		out = append(out, p)
	}
	return out
}

// TestPrunedMatchesBrute: the pruned search, in one call and state by
// state along a Trail, returns the brute force's index and correlation
// bit for bit: on stored rows, near them, far from them, on pure noise, on
// near-ties, on constant and NaN predictions, and along trajectories whose
// states are pruned with their anchor's raised bounds, with bounds of
// their own after those left too many rows, or densely (each path is
// taken, in Nearest and in the Trail, counted by the memory's trace).
func TestPrunedMatchesBrute(t *testing.T) {
	var paths searchPaths
	rng := rand.New(rand.NewPCG(10, 10))
	for _, noise := range []float64{0.05, 0.5, 3} {
		rows := lowRankRows(rng, 1500, 300, 40, noise)
		rows[901] = slices.Clone(rows[900]) // an exact tie: the lower index wins
		mem := NewMemory(rows)
		if !mem.Pruned() {
			t.Fatal("no pruning for 1500 rows of 300")
		}
		mem.trace = &paths
		preds := [][]float32{rows[17], rows[900], rows[901], make([]float32, 300), guarded(rng, 300)}
		preds = append(preds, lowRankRows(rng, 40, 300, 40, noise)...)
		for k := 0; k < 20; k++ {
			p := slices.Clone(rows[rng.IntN(len(rows))])
			for i := range p {
				p[i] += float32(rng.NormFloat64() * float64(k) * 0.1)
			}
			preds = append(preds, p)
		}
		nanAt := len(preds)
		nan := slices.Clone(rows[3])
		nan[5] = float32(math.NaN())
		preds = append(preds, nan)
		preds = append(preds, drift(rng, rows[rng.IntN(len(rows))], 60, 0.01, 20)...)
		// Trajectories from one stored row to another: past the crossing,
		// the anchor's bound of the new nearest row is below the old one's
		// exact value by more than the margin, and only the distance
		// raised keeps it a candidate.
		for range 5 {
			a, b := rows[rng.IntN(len(rows))], rows[rng.IntN(len(rows))]
			for k := 0; k <= 40; k++ {
				f := float32(k) / 40
				p := make([]float32, len(a))
				for i := range p {
					p[i] = (1-f)*a[i] + f*b[i]
				}
				preds = append(preds, p)
			}
		}
		idx, corr := checkPruned(t, fmt.Sprintf("noise %g", noise), mem, preds)
		if idx[0] != 17 || idx[1] != 900 || idx[2] != 900 {
			t.Fatalf("stored rows found at %v, want 17, 900, 900", idx[:3])
		}
		if idx[3] != 0 || corr[3] != 0 {
			t.Fatalf("constant prediction: %d (%g), want 0 (0)", idx[3], corr[3])
		}
		if corr[nanAt] == corr[nanAt] {
			t.Fatalf("a prediction with a NaN correlates %g, want NaN", corr[nanAt])
		}
	}
	// A cluster: rows whose correlations with a state near its centre
	// spread over a few hundredths, so an anchor's bounds raised by a few
	// hundredths keep most rows while a state's own bounds prune.
	base := guarded(rng, 300)
	cluster := make([][]float32, 1500)
	for k := range cluster {
		cluster[k] = slices.Clone(base)
		for i := range cluster[k] {
			cluster[k][i] += float32(0.3 * rng.NormFloat64())
		}
	}
	mem := NewMemory(cluster)
	mem.trace = &paths
	checkPruned(t, "cluster", mem, drift(rng, base, 30, 0.05, 30))
	// Rows all within 10⁻⁵ of each other leave every row under any bound:
	// states are searched densely.
	near := make([][]float32, 1500)
	for k := range near {
		near[k] = slices.Clone(base)
		for i := range near[k] {
			near[k][i] += float32(1e-5 * rng.NormFloat64())
		}
	}
	mem = NewMemory(near)
	mem.trace = &paths
	checkPruned(t, "near-identical rows", mem, drift(rng, base, 10, 0.002, 10))
	t.Logf("paths: %+v", paths)
	if paths.chained == 0 || paths.rescued == 0 || paths.dense == 0 {
		t.Fatalf("paths taken: %+v; want states chained, pruned with their own bounds after a retry, and dense", paths)
	}
}

// TestChainedBoundHolds: an anchor's quantised bound raised by the
// distance to another prediction is never below that prediction's exact
// products, near the anchor or far from it.
func TestChainedBoundHolds(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	mem := NewMemory(lowRankRows(rng, 600, 260, 20, 0.3))
	za := standardize(guarded(rng, mem.Q))
	ub := make([]float32, mem.M)
	mem.quant.bounds([][]float32{za}, [][]float32{ub}, nil, nil)
	for _, step := range []float64{0, 1e-3, 0.05, 0.3, 2} {
		y := slices.Clone(za)
		for i := range y {
			y[i] += float32(step * rng.NormFloat64())
		}
		z := standardize(y)
		d := dist(z, za)
		for k := 0; k < mem.M; k++ {
			exact := float64(dotQNaive(z, mem.row(k, &codedRows{}, 0)))
			if exact > float64(ub[k]+d)+1e-5 {
				t.Fatalf("step %g, row %d: exact %g above the chained bound %g + %g", step, k, exact, ub[k], d)
			}
		}
	}
}

func TestMemoryNearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	rows := make([][]float32, 300)
	for k := range rows {
		rows[k] = make([]float32, 50)
		for q := range rows[k] {
			rows[k][q] = rng.Float32()
		}
	}
	mem := NewMemory(rows)
	preds := [][]float32{rows[17], rows[299], make([]float32, 50), guarded(rng, 50)}
	for q := range preds[0] {
		preds[0][q] = preds[0][q]*2 + 1 // correlation is affine invariant
	}
	idx := make([]int, 4)
	corr := make([]float32, 4)
	mem.Nearest(preds, idx, corr)
	if idx[0] != 17 || math.Abs(float64(corr[0])-1) > 1e-5 || idx[1] != 299 {
		t.Fatalf("nearest of stored rows: idx %v corr %v", idx, corr)
	}
	if corr[2] != 0 {
		t.Fatalf("constant prediction has correlation %g", corr[2])
	}
	// brute force for the random prediction
	best, bi := -2.0, -1
	z := standardize(preds[3])
	for k, r := range rows {
		zr := standardize(r)
		var s float64
		for q := range z {
			s += float64(z[q]) * float64(zr[q])
		}
		if s > best {
			best, bi = s, k
		}
	}
	if idx[3] != bi || math.Abs(float64(corr[3])-best) > 1e-5 {
		t.Fatalf("random prediction: got %d (%g), want %d (%g)", idx[3], corr[3], bi, best)
	}
}

// TestSearchKernels: the batched products give dotQ's bits, the scans the
// portable ones' answers, and dotQ is close to the definition.
func TestSearchKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	for _, q := range []int{16, 23, 784} {
		var z [4][]float32
		var m [6][]float32
		for r := range z {
			z[r] = guarded(rng, q)
		}
		for r := range m {
			m[r] = guarded(rng, q)
		}
		var o4 [4]float32
		var o24 [24]float32
		dots1x4(z[1], (*[4][]float32)(m[:4]), &o4)
		dots4x6(&z, &m, &o24)
		for c := range z {
			for r := range m {
				want := dotQ(z[c], m[r])
				if o24[c*6+r] != want || c == 1 && r < 4 && o4[r] != want {
					t.Fatalf("q=%d (%d,%d): dots4x6 %g, dots1x4 %g, dotQ %g", q, c, r, o24[c*6+r], o4[r%4], want)
				}
				if !closeTo(float64(want), float64(dotQNaive(z[c], m[r])), 1e-5) {
					t.Fatalf("q=%d: dotQ %g, naive %g", q, want, dotQNaive(z[c], m[r]))
				}
			}
		}
	}
	for _, q := range []int{1, 7, 8, 13, 784} {
		a, b := guarded(rng, q), guarded(rng, q)
		var dd float64
		for i := range a {
			dd += (float64(a[i]) - float64(b[i])) * (float64(a[i]) - float64(b[i]))
		}
		if got, want := dist(a, b), float32(math.Sqrt(dd)); !closeTo(float64(got), float64(want), 1e-6) || distGo(a, b) != want {
			t.Fatalf("q=%d: dist %g, portable %g, definition %g", q, got, distGo(a, b), want)
		}
	}
	for _, n := range []int{1, 15, 16, 33, 10000} {
		ub := guarded(rng, n)
		if n > 20 {
			ub[n-3] = 9
			ub[7] = 9 // the first maximum wins
		}
		if got, want := argmax(ub), argmaxGo(ub); got != want {
			t.Fatalf("n=%d: argmax %d, portable %d", n, got, want)
		}
		for _, limit := range []int{0, 3, n} {
			got, ok := above(nil, ub, 0.3, limit)
			want, wok := aboveGo(nil, ub, 0.3, limit)
			if ok != wok || !slices.Equal(got, want) {
				t.Fatalf("n=%d limit %d: above %v %v, portable %v %v", n, limit, got, ok, want, wok)
			}
		}
	}
}

// TestStandardizeMatchesGo: the standardisation this CPU runs agrees with
// the portable one (float64 sums in another order: within 1e-6), gives
// zeros for a constant row and NaN for a row with a NaN, at lengths with
// and without a tail past the vector width.
func TestStandardizeMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{1, 7, 8, 13, 784} {
		x := guarded(rng, n)
		for k := range x {
			x[k] = x[k]*3 + 5
		}
		a, b := standardizeGo(make([]float32, n), x), standardizeTo(make([]float32, n), x)
		for k := range a {
			if math.Abs(float64(a[k]-b[k])) > 1e-6 {
				t.Fatalf("n=%d: z[%d] = %g, portable %g", n, k, b[k], a[k])
			}
		}
		c := make([]float32, n)
		for k := range c {
			c[k] = 0.25
		}
		for k, v := range standardizeTo(make([]float32, n), c) {
			if v != 0 {
				t.Fatalf("n=%d: constant row gives z[%d] = %g", n, k, v)
			}
		}
		x[n/2] = float32(math.NaN())
		if v := standardizeTo(make([]float32, n), x)[0]; v == v {
			t.Fatalf("n=%d: a NaN gives %g", n, v)
		}
	}
}

// NewMemoryOf, fed one row at a time from several goroutines, stores the
// rows NewMemory's standardisation of each row gives, to the bit, and the
// same 8-bit copies.
func TestNewMemoryOfRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	const m, q = 700, 784
	rows := make([][]float32, m)
	for k := range rows {
		rows[k] = make([]float32, q)
		for i := range rows[k] {
			if rng.IntN(3) == 0 {
				rows[k][i] = rng.Float32()
			}
		}
	}
	clear(rows[5]) // a constant row: zeros
	mem := NewMemoryOf(m, q, func(k int, dst []float32) { copy(dst, rows[k]) })
	for k := range rows {
		want := standardizeTo(make([]float32, q), rows[k])
		for i, v := range mem.row(k, &codedRows{}, 0) {
			if math.Float32bits(v) != math.Float32bits(want[i]) {
				t.Fatalf("row %d, value %d: %g, standardised alone %g", k, i, v, want[i])
			}
		}
	}
	ref := newQuantRows(mem, m, q)
	if !slices.Equal(mem.quant.packed, ref.packed) || !slices.Equal(mem.quant.scale, ref.scale) || !slices.Equal(mem.quant.err, ref.err) {
		t.Fatal("the 8-bit rows differ from those of the standardised rows")
	}
}

// TestCodedRowsSameSearch: a memory that keeps its rows as codes (the
// web build's) stores the rows NewMemoryOf stores, to the bit, with the
// same 8-bit copies, and its searches (Nearest, a Trail, the brute force)
// answer the same, through every path: rows like digits (most values 0,
// the rest of 256 levels), a constant row, ties, states near rows and
// far from them, and near-identical rows searched densely.
func TestCodedRowsSameSearch(t *testing.T) {
	// The coded rows are standardised as the portable kernel does (the
	// web build has no other); the AVX-512 one sums in another order.
	defer func(f func(out, x []float32) []float32) { standardizeTo = f }(standardizeTo)
	standardizeTo = standardizeGo
	rng := rand.New(rand.NewPCG(12, 12))
	var pal [256]float32
	for b := range pal {
		pal[b] = min(1.7*float32(b)/255, 1)
	}
	const m, q = 700, 196
	var paths searchPaths
	for _, near := range []bool{false, true} {
		codes := make([]uint8, m*q)
		base := make([]uint8, q)
		for i := range base {
			if rng.IntN(3) == 0 {
				base[i] = uint8(rng.IntN(256))
			}
		}
		for k := range m {
			row := codes[k*q : (k+1)*q]
			for i := range row {
				switch {
				case near: // a few levels from one row: near-identical
					row[i] = base[i]
					if rng.IntN(40) == 0 {
						row[i] = uint8(min(255, int(base[i])+rng.IntN(3)))
					}
				case rng.IntN(4) == 0:
					row[i] = uint8(rng.IntN(256))
				}
			}
		}
		clear(codes[5*q : 6*q])                      // a constant row
		copy(codes[301*q:302*q], codes[300*q:301*q]) // a tie: the lower index wins
		full := newMemoryOfCodes(m, q, codes, &pal, false)
		coded := newMemoryOfCodes(m, q, codes, &pal, true)
		if full.rows == nil || coded.rows != nil || coded.codes == nil {
			t.Fatal("newMemoryOfCodes did not keep what it was asked to")
		}
		var a, b codedRows
		for k := range m {
			if !slices.Equal(bitsOf(full.row(k, &a, 0)), bitsOf(coded.row(k, &b, 3))) {
				t.Fatalf("row %d differs between the two memories", k)
			}
		}
		if !slices.Equal(full.quant.packed, coded.quant.packed) || !slices.Equal(full.quant.scale, coded.quant.scale) ||
			!slices.Equal(full.quant.norm, coded.quant.norm) || !slices.Equal(full.quant.err, coded.quant.err) {
			t.Fatal("the 8-bit copies differ")
		}
		var preds [][]float32
		for k := range 60 {
			p := make([]float32, q)
			src := codes[rng.IntN(m)*q:]
			for i := range p {
				p[i] = pal[src[i]] + float32(float64(k%6)*0.05*rng.NormFloat64())
			}
			preds = append(preds, p)
		}
		preds = append(preds, make([]float32, q), guarded(rng, q))
		preds = append(preds, drift(rng, preds[0], 40, 0.02, 20)...)
		coded.trace = &paths
		idx, corr := checkPruned(t, fmt.Sprintf("coded, near %v", near), coded, preds)
		fidx, fcorr := checkPruned(t, fmt.Sprintf("full, near %v", near), full, preds)
		for p := range preds {
			if idx[p] != fidx[p] || math.Float32bits(corr[p]) != math.Float32bits(fcorr[p]) {
				t.Fatalf("near %v, prediction %d: coded %d (%g), full %d (%g)", near, p, idx[p], corr[p], fidx[p], fcorr[p])
			}
		}
	}
	t.Logf("the coded memory's paths: %+v", paths)
	if paths.anchors == 0 || paths.chained == 0 || paths.dense == 0 {
		t.Fatalf("paths taken: %+v; want anchors, chained states and dense searches", paths)
	}
}

func bitsOf(x []float32) []uint32 {
	out := make([]uint32, len(x))
	for i, v := range x {
		out[i] = math.Float32bits(v)
	}
	return out
}
