package models

import (
	"math"
	"sync"
)

// The batched bare self-attention. Step runs one image after another
// through each query row, computing J_ij x̂_j for every key j of every
// image: N²d² multiply-adds per image, each coupling loaded once per image.
// A Chunker steps Lanes images together instead, laid out image-last
// ("lanes over images"): for a query i and a key j the d×d block J_ij is
// loaded once and multiplies the d×Lanes panel of the chunk's normalised
// keys, so the couplings are read once per chunk and the inner loops run
// over the images with unit stride. Scores, clamp, key masks, softmax and
// the weighted sum then work on Lanes images at once. Step (per image) is
// its naive twin: the tests compare the two on random inputs.

// Lanes is how many images a Chunker steps together (one AVX-512 vector).
const Lanes = 16

// Chunker holds the couplings in block order, the states of up to Lanes
// images image-last (Load puts them there, Store writes them back), and the
// scratch memory of stepping them. Between Load and Store the states stay
// in the chunk's layout, so stepping and decoding need no transposes. One
// per goroutine; NewChunker copies J, and its twins (Twin) share that copy.
type Chunker struct {
	m     *BSA
	jb    []float32 // J[i][j][r][e]: the d×d blocks, contiguous (shared by twins)
	x     []float32 // the loaded states [i][r][Lanes]; unused lanes zero
	nb    int       // how many states are loaded
	t     [Lanes]int
	masks [Lanes][]bool    // each state's masked tokens, used while its t is 0
	xh    []float32        // x̂ [j][e][Lanes]
	pen   []float32        // 0, or invalidScore for a key masked on the first step [j][Lanes]
	xn    []float32        // the new states before their normalisation [i][r][Lanes]
	w     []float64        // 1 for a token in its image's statistics, 0 for a masked one [i][Lanes]
	px    []float32        // Decode's pixels [i·A+k][Lanes]
	rmx   [][Lanes]float32 // each query row's largest valid score [i]
	rsum  [][Lanes]float32 // each query row's sum of weights [i]
	// Split, when set, runs the query rows of a step in parts (Crew.Split);
	// nil runs them all on the calling goroutine.
	Split func(n int, f func(i0, i1 int))
	rows  sync.Pool // *rowScratch, one per part running
}

// rowScratch is the memory one part of a step's query rows works in.
type rowScratch struct {
	xi  []float32 // the query's x̂ [r][Lanes]
	v   []float32 // J_ij x̂_j [j][r][Lanes]
	s   []float32 // scores [j][Lanes]
	out []float32 // Σ_j a_j v_j [r][Lanes]
}

// NewChunker copies J into block order.
func (m *BSA) NewChunker() *Chunker {
	n, d := m.N, m.D
	jb := make([]float32, n*n*d*d)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			for r := 0; r < d; r++ {
				for e := 0; e < d; e++ {
					jb[((i*n+j)*d+r)*d+e] = m.J[m.jidx(i, j, r, e)]
				}
			}
		}
	}
	return m.chunker(jb)
}

// Twin is a Chunker of the same couplings with memory of its own: it
// shares c's copy of J (read only), so a goroutine can step other states
// without a second copy.
func (c *Chunker) Twin() *Chunker { return c.m.chunker(c.jb) }

func (m *BSA) chunker(jb []float32) *Chunker {
	n, d := m.N, m.D
	c := &Chunker{m: m, jb: jb,
		x:    make([]float32, n*d*Lanes),
		xh:   make([]float32, n*d*Lanes),
		pen:  make([]float32, n*Lanes),
		xn:   make([]float32, n*d*Lanes),
		w:    make([]float64, n*Lanes),
		px:   make([]float32, n*m.A*Lanes),
		rmx:  make([][Lanes]float32, n),
		rsum: make([][Lanes]float32, n),
	}
	c.rows.New = func() any {
		return &rowScratch{
			xi:  make([]float32, d*Lanes),
			v:   make([]float32, n*d*Lanes),
			s:   make([]float32, n*Lanes),
			out: make([]float32, d*Lanes),
		}
	}
	return c
}

// Load puts up to Lanes states into the chunk (their step counts and
// first-step masks with them).
func (c *Chunker) Load(states []*State) {
	n, d := c.m.N, c.m.D
	if len(states) > Lanes {
		panic("models: Chunker.Load: more states than Lanes")
	}
	clear(c.x)
	c.nb = len(states)
	for b, st := range states {
		for k, v := range st.X[:n*d] {
			c.x[k*Lanes+b] = v
		}
		c.t[b] = st.T
		c.masks[b] = st.Masked
	}
}

// Store writes the chunk's states back into states, which must be the ones
// loaded, in the same order.
func (c *Chunker) Store(states []*State) {
	n, d := c.m.N, c.m.D
	if len(states) != c.nb {
		panic("models: Chunker.Store: not the loaded states")
	}
	for b, st := range states {
		for k := range st.X[:n*d] {
			st.X[k] = c.x[k*Lanes+b]
		}
		st.T = c.t[b]
	}
}

// Step advances the loaded states by one step of the dynamics (§4), as
// BSA.Step does, and writes the energy of each state before the step.
func (c *Chunker) Step(dy Dynamics, energy []float64) {
	c.pass(dy, energy, true)
}

// Energy writes the NPL energy of the loaded states without stepping.
func (c *Chunker) Energy(dy Dynamics, energy []float64) {
	c.pass(dy, energy, false)
}

func (c *Chunker) pass(dy Dynamics, energy []float64, update bool) {
	n := c.m.N
	first := c.normalize()
	rows := func(i0, i1 int) { c.queryRows(dy, update, first, i0, i1) }
	if c.Split != nil {
		c.Split(n, rows)
	} else {
		rows(0, n)
	}
	// The energy sums the rows in order, however they were split.
	var ok [Lanes]bool
	var en energyAcc
	en.reset()
	for i := 0; i < n; i++ {
		en.add(&c.rmx[i], &c.rsum[i], &ok)
	}
	en.energy(energy[:c.nb], dy.Lambda)
	if !update {
		return
	}
	chunkRenorm(c.x, c.xn, n, c.m.D)
	for b := range c.nb {
		c.t[b]++
	}
}

// queryRows runs the query rows [i0, i1) of a pass: their scores, softmax
// (or ReLU) and, with update, their residual update into xn; each row's
// largest score and sum of weights go to rmx and rsum.
func (c *Chunker) queryRows(dy Dynamics, update, first bool, i0, i1 int) {
	m := c.m
	n, d := m.N, m.D
	sc := c.rows.Get().(*rowScratch)
	defer c.rows.Put(sc)
	var norm, g [Lanes]float32
	for i := i0; i < i1; i++ {
		mx, sum := &c.rmx[i], &c.rsum[i]
		copy(sc.xi, c.xh[i*d*Lanes:(i+1)*d*Lanes])
		chunkScores(c.jb[i*n*d*d:(i+1)*n*d*d], c.xh, sc.xi, sc.v, sc.s, n, d)
		// Clamp; a query never attends to itself; masked keys are left out
		// on the first step.
		chunkClamp(sc.s, m.Clamp)
		for b := range Lanes {
			sc.s[i*Lanes+b] = invalidScore
		}
		if first {
			for k, p := range c.pen {
				sc.s[k] += p
			}
		}
		if dy.Attn == ReluSeqlen {
			// α_ij = max(λ s_ij, 0)/N, with the softmax's energy.
			*sum = chunkSoftmax(sc.s, sc.v, sc.out, mx, dy.Lambda, n, d, false)
			chunkRelu(sc.s, sc.v, sc.out, dy.Lambda, n, d)
			for b := range norm {
				norm[b] = 1 / float32(n)
			}
		} else {
			*sum = chunkSoftmax(sc.s, sc.v, sc.out, mx, dy.Lambda, n, d, update)
			for b := range norm {
				norm[b] = 0
				if mx[b] > invalidBelow {
					norm[b] = 1 / sum[b]
				}
			}
		}
		if !update {
			continue
		}
		for b := range g {
			g[b] = dy.Gamma * norm[b]
		}
		chunkResidual(c.xn[i*d*Lanes:(i+1)*d*Lanes], sc.out, c.x[i*d*Lanes:(i+1)*d*Lanes], &g)
	}
}

func chunkResidualGo(xn, out, x []float32, g *[Lanes]float32) {
	for k := range xn {
		xn[k] = g[k%Lanes]*out[k] + x[k]
	}
}

func chunkRenormGo(x, xn []float32, n, d int) {
	var mean [Lanes]float64
	for i := 0; i < n; i++ {
		var ss [Lanes]float64
		for r := 0; r < d; r++ {
			row := xn[(i*d+r)*Lanes : (i*d+r+1)*Lanes]
			for b := range ss {
				v := float64(row[b])
				ss[b] += v * v
			}
		}
		for b := range mean {
			mean[b] += math.Sqrt(ss[b])
		}
	}
	var inv [Lanes]float32
	for b := range inv {
		inv[b] = float32(1 / (mean[b]/float64(n) + 1e-9))
	}
	for k := range x[:n*d*Lanes] {
		x[k] = xn[k] * inv[k%Lanes]
	}
}

// normalize writes x̂ of every loaded state into xh, image-last (unused
// lanes zero), and invalidScore into pen for the keys masked on a first
// step; it reports whether any key is. It is BSA.layerNorm (§4 step 1) on
// the lanes: the same float64 sums in the same order for each image, so
// the same bits, with a masked token's weight 0 in the statistics and
// x̂ = 0.
func (c *Chunker) normalize() (first bool) {
	n, d := c.m.N, c.m.D
	clear(c.pen)
	for k := range c.w {
		c.w[k] = 1
	}
	var cnt, den [Lanes]float64
	for b := range Lanes {
		cnt[b], den[b] = float64(n), float64(n-1)
		if b >= c.nb || c.t[b] != 0 || c.masks[b] == nil {
			continue
		}
		for i, masked := range c.masks[b][:n] {
			if masked {
				c.w[i*Lanes+b] = 0
				c.pen[i*Lanes+b] = invalidScore
				cnt[b]--
				first = true
			}
		}
		den[b] = cnt[b]
	}
	chunkNormalize(c.x, c.w, &cnt, &den, c.xh, n, d)
	return first
}

func chunkNormalizeGo(x []float32, w []float64, cnt, den *[Lanes]float64, xh []float32, n, d int) {
	var mu, ss, inv [Lanes]float64
	for r := 0; r < d; r++ {
		clear(mu[:])
		clear(ss[:])
		for i := 0; i < n; i++ {
			xr := x[(i*d+r)*Lanes : (i*d+r+1)*Lanes]
			wi := w[i*Lanes : (i+1)*Lanes]
			for b := range mu {
				mu[b] += wi[b] * float64(xr[b])
			}
		}
		for b := range mu {
			mu[b] /= cnt[b]
		}
		for i := 0; i < n; i++ {
			xr := x[(i*d+r)*Lanes : (i*d+r+1)*Lanes]
			wi := w[i*Lanes : (i+1)*Lanes]
			for b := range ss {
				dv := float64(xr[b]) - mu[b]
				ss[b] += wi[b] * (dv * dv)
			}
		}
		for b := range inv {
			sd := 0.0
			if den[b] > 0 {
				sd = math.Sqrt(ss[b] / den[b])
			}
			inv[b] = 1 / (sd + 1e-9)
		}
		for i := 0; i < n; i++ {
			xr := x[(i*d+r)*Lanes : (i*d+r+1)*Lanes]
			wi := w[i*Lanes : (i+1)*Lanes]
			out := xh[(i*d+r)*Lanes : (i*d+r+1)*Lanes]
			for b := range out {
				out[b] = float32(wi[b] * ((float64(xr[b]) - mu[b]) * inv[b]))
			}
		}
	}
}

// chunkScoresGo sums each v[j][r][·] over e in order, sixteen images at a
// time (a lane's sum is the plain loops', chunkScoresLoop, to the bit).
// The page's WebAssembly pays for a loop's every turn (its bounds checks
// and jumps) more than for a product, so the sums are written out: eight
// terms at a time, and for d = 8 (patches of 2×2) in one expression per
// lane with the key's sixteen images' rows fetched once. The kernels of
// d = 8 and of any multiple of 8 took 0.52 and 0.62 of the loops' time
// there (0.68 and 0.67 natively); other widths keep the loops.
func chunkScoresGo(jb, xh, xi, v, s []float32, n, d int) {
	switch {
	case d == 8:
		chunkScores8(jb, xh, xi, v, s, n)
	case d%8 == 0:
		chunkScoresBy8(jb, xh, xi, v, s, n, d)
	default:
		chunkScoresLoops(jb, xh, xi, v, s, n, d)
	}
}

// chunkScores8 is chunkScoresGo for d = 8.
func chunkScores8(jb, xh, xi, v, s []float32, n int) {
	const d = 8
	for j := 0; j < n; j++ {
		sj := (*[Lanes]float32)(s[j*Lanes : (j+1)*Lanes])
		clear(sj[:])
		x := (*[d * Lanes]float32)(xh[j*d*Lanes : (j+1)*d*Lanes])
		jj := (*[d * d]float32)(jb[j*d*d : (j+1)*d*d])
		vj := (*[d * Lanes]float32)(v[j*d*Lanes : (j+1)*d*Lanes])
		for r := 0; r < d; r++ {
			c := (*[d]float32)(jj[r*d : (r+1)*d])
			c0, c1, c2, c3, c4, c5, c6, c7 := c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
			vr := (*[Lanes]float32)(vj[r*Lanes : (r+1)*Lanes])
			// 0 + …: the loops' sum starts at 0 (−0 products sum to +0).
			vr[0] = 0 + c0*x[0] + c1*x[16] + c2*x[32] + c3*x[48] + c4*x[64] + c5*x[80] + c6*x[96] + c7*x[112]
			vr[1] = 0 + c0*x[1] + c1*x[17] + c2*x[33] + c3*x[49] + c4*x[65] + c5*x[81] + c6*x[97] + c7*x[113]
			vr[2] = 0 + c0*x[2] + c1*x[18] + c2*x[34] + c3*x[50] + c4*x[66] + c5*x[82] + c6*x[98] + c7*x[114]
			vr[3] = 0 + c0*x[3] + c1*x[19] + c2*x[35] + c3*x[51] + c4*x[67] + c5*x[83] + c6*x[99] + c7*x[115]
			vr[4] = 0 + c0*x[4] + c1*x[20] + c2*x[36] + c3*x[52] + c4*x[68] + c5*x[84] + c6*x[100] + c7*x[116]
			vr[5] = 0 + c0*x[5] + c1*x[21] + c2*x[37] + c3*x[53] + c4*x[69] + c5*x[85] + c6*x[101] + c7*x[117]
			vr[6] = 0 + c0*x[6] + c1*x[22] + c2*x[38] + c3*x[54] + c4*x[70] + c5*x[86] + c6*x[102] + c7*x[118]
			vr[7] = 0 + c0*x[7] + c1*x[23] + c2*x[39] + c3*x[55] + c4*x[71] + c5*x[87] + c6*x[103] + c7*x[119]
			vr[8] = 0 + c0*x[8] + c1*x[24] + c2*x[40] + c3*x[56] + c4*x[72] + c5*x[88] + c6*x[104] + c7*x[120]
			vr[9] = 0 + c0*x[9] + c1*x[25] + c2*x[41] + c3*x[57] + c4*x[73] + c5*x[89] + c6*x[105] + c7*x[121]
			vr[10] = 0 + c0*x[10] + c1*x[26] + c2*x[42] + c3*x[58] + c4*x[74] + c5*x[90] + c6*x[106] + c7*x[122]
			vr[11] = 0 + c0*x[11] + c1*x[27] + c2*x[43] + c3*x[59] + c4*x[75] + c5*x[91] + c6*x[107] + c7*x[123]
			vr[12] = 0 + c0*x[12] + c1*x[28] + c2*x[44] + c3*x[60] + c4*x[76] + c5*x[92] + c6*x[108] + c7*x[124]
			vr[13] = 0 + c0*x[13] + c1*x[29] + c2*x[45] + c3*x[61] + c4*x[77] + c5*x[93] + c6*x[109] + c7*x[125]
			vr[14] = 0 + c0*x[14] + c1*x[30] + c2*x[46] + c3*x[62] + c4*x[78] + c5*x[94] + c6*x[110] + c7*x[126]
			vr[15] = 0 + c0*x[15] + c1*x[31] + c2*x[47] + c3*x[63] + c4*x[79] + c5*x[95] + c6*x[111] + c7*x[127]
			lanesAddMul(sj, (*[Lanes]float32)(xi[r*Lanes:(r+1)*Lanes]), vr)
		}
	}
}

// chunkScoresBy8 is chunkScoresGo for d a multiple of 8.
func chunkScoresBy8(jb, xh, xi, v, s []float32, n, d int) {
	for j := 0; j < n; j++ {
		sj := (*[Lanes]float32)(s[j*Lanes : (j+1)*Lanes])
		clear(sj[:])
		xj := xh[j*d*Lanes : (j+1)*d*Lanes]
		for r := 0; r < d; r++ {
			vr := (*[Lanes]float32)(v[(j*d+r)*Lanes : (j*d+r+1)*Lanes])
			cr := jb[(j*d+r)*d : (j*d+r+1)*d]
			var a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15 float32
			for e := 0; e+8 <= len(cr); e += 8 {
				c := (*[8]float32)(cr[e : e+8])
				x := (*[8 * Lanes]float32)(xj[e*Lanes : (e+8)*Lanes])
				c0, c1, c2, c3, c4, c5, c6, c7 := c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
				a0 = a0 + c0*x[0] + c1*x[16] + c2*x[32] + c3*x[48] + c4*x[64] + c5*x[80] + c6*x[96] + c7*x[112]
				a1 = a1 + c0*x[1] + c1*x[17] + c2*x[33] + c3*x[49] + c4*x[65] + c5*x[81] + c6*x[97] + c7*x[113]
				a2 = a2 + c0*x[2] + c1*x[18] + c2*x[34] + c3*x[50] + c4*x[66] + c5*x[82] + c6*x[98] + c7*x[114]
				a3 = a3 + c0*x[3] + c1*x[19] + c2*x[35] + c3*x[51] + c4*x[67] + c5*x[83] + c6*x[99] + c7*x[115]
				a4 = a4 + c0*x[4] + c1*x[20] + c2*x[36] + c3*x[52] + c4*x[68] + c5*x[84] + c6*x[100] + c7*x[116]
				a5 = a5 + c0*x[5] + c1*x[21] + c2*x[37] + c3*x[53] + c4*x[69] + c5*x[85] + c6*x[101] + c7*x[117]
				a6 = a6 + c0*x[6] + c1*x[22] + c2*x[38] + c3*x[54] + c4*x[70] + c5*x[86] + c6*x[102] + c7*x[118]
				a7 = a7 + c0*x[7] + c1*x[23] + c2*x[39] + c3*x[55] + c4*x[71] + c5*x[87] + c6*x[103] + c7*x[119]
				a8 = a8 + c0*x[8] + c1*x[24] + c2*x[40] + c3*x[56] + c4*x[72] + c5*x[88] + c6*x[104] + c7*x[120]
				a9 = a9 + c0*x[9] + c1*x[25] + c2*x[41] + c3*x[57] + c4*x[73] + c5*x[89] + c6*x[105] + c7*x[121]
				a10 = a10 + c0*x[10] + c1*x[26] + c2*x[42] + c3*x[58] + c4*x[74] + c5*x[90] + c6*x[106] + c7*x[122]
				a11 = a11 + c0*x[11] + c1*x[27] + c2*x[43] + c3*x[59] + c4*x[75] + c5*x[91] + c6*x[107] + c7*x[123]
				a12 = a12 + c0*x[12] + c1*x[28] + c2*x[44] + c3*x[60] + c4*x[76] + c5*x[92] + c6*x[108] + c7*x[124]
				a13 = a13 + c0*x[13] + c1*x[29] + c2*x[45] + c3*x[61] + c4*x[77] + c5*x[93] + c6*x[109] + c7*x[125]
				a14 = a14 + c0*x[14] + c1*x[30] + c2*x[46] + c3*x[62] + c4*x[78] + c5*x[94] + c6*x[110] + c7*x[126]
				a15 = a15 + c0*x[15] + c1*x[31] + c2*x[47] + c3*x[63] + c4*x[79] + c5*x[95] + c6*x[111] + c7*x[127]
			}
			vr[0] = a0
			vr[1] = a1
			vr[2] = a2
			vr[3] = a3
			vr[4] = a4
			vr[5] = a5
			vr[6] = a6
			vr[7] = a7
			vr[8] = a8
			vr[9] = a9
			vr[10] = a10
			vr[11] = a11
			vr[12] = a12
			vr[13] = a13
			vr[14] = a14
			vr[15] = a15
			lanesAddMul(sj, (*[Lanes]float32)(xi[r*Lanes:(r+1)*Lanes]), vr)
		}
	}
}

// chunkScoresLoops is chunkScoresGo for any d, in eight registers at a
// time: adding into v itself made the page's WebAssembly load and store
// every lane for each product, and took 1.4 times as long.
func chunkScoresLoops(jb, xh, xi, v, s []float32, n, d int) {
	for j := 0; j < n; j++ {
		sj := (*[Lanes]float32)(s[j*Lanes : (j+1)*Lanes])
		clear(sj[:])
		xj := xh[j*d*Lanes : (j+1)*d*Lanes]
		for r := 0; r < d; r++ {
			vr := (*[Lanes]float32)(v[(j*d+r)*Lanes : (j*d+r+1)*Lanes])
			c := jb[(j*d+r)*d : (j*d+r+1)*d]
			{
				var a0, a1, a2, a3, a4, a5, a6, a7 float32
				for e, ce := range c {
					x := (*[Lanes]float32)(xj[e*Lanes : (e+1)*Lanes])
					a0 += ce * x[0]
					a1 += ce * x[1]
					a2 += ce * x[2]
					a3 += ce * x[3]
					a4 += ce * x[4]
					a5 += ce * x[5]
					a6 += ce * x[6]
					a7 += ce * x[7]
				}
				vr[0] = a0
				vr[1] = a1
				vr[2] = a2
				vr[3] = a3
				vr[4] = a4
				vr[5] = a5
				vr[6] = a6
				vr[7] = a7
			}
			{
				var a8, a9, a10, a11, a12, a13, a14, a15 float32
				for e, ce := range c {
					x := (*[Lanes]float32)(xj[e*Lanes : (e+1)*Lanes])
					a8 += ce * x[8]
					a9 += ce * x[9]
					a10 += ce * x[10]
					a11 += ce * x[11]
					a12 += ce * x[12]
					a13 += ce * x[13]
					a14 += ce * x[14]
					a15 += ce * x[15]
				}
				vr[8] = a8
				vr[9] = a9
				vr[10] = a10
				vr[11] = a11
				vr[12] = a12
				vr[13] = a13
				vr[14] = a14
				vr[15] = a15
			}
			lanesAddMul(sj, (*[Lanes]float32)(xi[r*Lanes:(r+1)*Lanes]), vr)
		}
	}
}

// lanesAddMul sets dst[b] += x[b]·y[b] over a chunk's 16 images, written
// out: the page's WebAssembly spends more on a loop's turn (its bounds
// checks and jumps) than on a product. Each lane's sum is the loop's, to
// the bit.
func lanesAddMul(dst, x, y *[Lanes]float32) {
	dst[0] += x[0] * y[0]
	dst[1] += x[1] * y[1]
	dst[2] += x[2] * y[2]
	dst[3] += x[3] * y[3]
	dst[4] += x[4] * y[4]
	dst[5] += x[5] * y[5]
	dst[6] += x[6] * y[6]
	dst[7] += x[7] * y[7]
	dst[8] += x[8] * y[8]
	dst[9] += x[9] * y[9]
	dst[10] += x[10] * y[10]
	dst[11] += x[11] * y[11]
	dst[12] += x[12] * y[12]
	dst[13] += x[13] * y[13]
	dst[14] += x[14] * y[14]
	dst[15] += x[15] * y[15]
}

func chunkClampGo(s []float32, clamp float32) {
	for k, v := range s {
		s[k] = minF(v, clamp)
	}
}

func chunkSoftmaxGo(s, v, out []float32, mx *[Lanes]float32, lambda float32, n, d int, weigh bool) (sum [Lanes]float32) {
	for b := range mx {
		mx[b] = invalidScore
	}
	for j := 0; j < n; j++ {
		for b, x := range (*[Lanes]float32)(s[j*Lanes : (j+1)*Lanes]) {
			mx[b] = maxF(mx[b], x)
		}
	}
	clear(out[:d*Lanes])
	var a [Lanes]float32
	for j := 0; j < n; j++ {
		sj := (*[Lanes]float32)(s[j*Lanes : (j+1)*Lanes])
		// The key's sixteen weights in one call (the page's WebAssembly
		// pays for every call); an invalid lane's is computed, not used.
		expLanes(&a, sj, mx, lambda)
		valid := true
		for b, x := range sj {
			if x <= invalidBelow {
				valid = false
				continue
			}
			sum[b] += a[b]
		}
		if !weigh {
			continue
		}
		if valid {
			// Every image's key j is valid: its weights go in over the
			// lanes at once (each lane's sum in the same order), written
			// out as lanesAddMul is, without its call.
			vj := v[j*d*Lanes : (j+1)*d*Lanes]
			for r := 0; r < d; r++ {
				o := (*[Lanes]float32)(out[r*Lanes : (r+1)*Lanes])
				y := (*[Lanes]float32)(vj[r*Lanes : (r+1)*Lanes])
				o[0] += a[0] * y[0]
				o[1] += a[1] * y[1]
				o[2] += a[2] * y[2]
				o[3] += a[3] * y[3]
				o[4] += a[4] * y[4]
				o[5] += a[5] * y[5]
				o[6] += a[6] * y[6]
				o[7] += a[7] * y[7]
				o[8] += a[8] * y[8]
				o[9] += a[9] * y[9]
				o[10] += a[10] * y[10]
				o[11] += a[11] * y[11]
				o[12] += a[12] * y[12]
				o[13] += a[13] * y[13]
				o[14] += a[14] * y[14]
				o[15] += a[15] * y[15]
			}
			continue
		}
		for b := range Lanes {
			if s[j*Lanes+b] <= invalidBelow {
				continue
			}
			for r := 0; r < d; r++ {
				out[r*Lanes+b] += a[b] * v[(j*d+r)*Lanes+b]
			}
		}
	}
	return sum
}

// energyAcc sums, per image, the query rows' lse_i = mx_i + (1/λ) log sum_i
// for the energy −Σ_i lse_i, without a logarithm per row: the sums (each
// in [1, N]) are multiplied in float64 and their product's logarithm taken
// every energyRun rows, before it could overflow.
type energyAcc struct {
	mx, logs, prod [Lanes]float64
	rows           int
	invalid        [Lanes]bool // a row with no valid key
}

const energyRun = 64

func (e *energyAcc) reset() {
	*e = energyAcc{}
	for b := range e.prod {
		e.prod[b] = 1
	}
}

// add takes one query row's largest scores and sums, and sets ok (some key
// is valid: mx above invalidBelow).
func (e *energyAcc) add(mx, sum *[Lanes]float32, ok *[Lanes]bool) {
	for b := range mx {
		ok[b] = mx[b] > invalidBelow
		if !ok[b] {
			e.invalid[b] = true
			continue
		}
		e.mx[b] += float64(mx[b])
		e.prod[b] *= float64(sum[b])
	}
	if e.rows++; e.rows%energyRun == 0 {
		e.flush()
	}
}

func (e *energyAcc) flush() {
	for b := range e.prod {
		e.logs[b] += math.Log(e.prod[b])
		e.prod[b] = 1
	}
}

// energy writes −Σ_i lse_i of each image, NaN for one with a row that had
// no valid key.
func (e *energyAcc) energy(out []float64, lambda float32) {
	e.flush()
	for b := range out {
		out[b] = -(e.mx[b] + e.logs[b]/float64(lambda))
		if e.invalid[b] {
			out[b] = math.NaN()
		}
	}
}

// chunkRelu writes out[r][b] = Σ_j max(λ s_j, 0)·v[j][r][b].
func chunkRelu(s, v, out []float32, lambda float32, n, d int) {
	clear(out[:d*Lanes])
	for j := 0; j < n; j++ {
		for b := range Lanes {
			a := maxF(lambda*s[j*Lanes+b], 0)
			if a == 0 {
				continue
			}
			for r := 0; r < d; r++ {
				out[r*Lanes+b] += a * v[(j*d+r)*Lanes+b]
			}
		}
	}
}

// Decode writes the decoded images of the loaded states into preds:
// Embedding.Decode for the chunk at once, the couplings F broadcast over
// the images' tokens.
func (c *Chunker) Decode(preds [][]float32) {
	m := c.m
	n, d, a := m.N, m.D, m.A
	chunkDecode(m.F, c.x, c.px, n, d, a)
	for q, idx := range m.Index[:n*a] {
		row := c.px[q*Lanes : (q+1)*Lanes]
		for b := range c.nb {
			preds[b][idx] = row[b]
		}
	}
}

func chunkDecodeGo(f, xd, px []float32, n, d, a int) {
	w := 2 * a
	for i := 0; i < n; i++ {
		for k := 0; k < a; k++ {
			out := px[(i*a+k)*Lanes : (i*a+k+1)*Lanes]
			for b := range out {
				var c0, c1 float32
				for r := 0; r < d; r++ {
					x := xd[(i*d+r)*Lanes+b]
					c0 += f[r*w+2*k] * x
					c1 += f[r*w+2*k+1] * x
				}
				c0 = min(max(c0, 0), 1)
				c1 = min(max(c1, 0), 1)
				var p float32
				if c0+c1 > 0 {
					p = c0 / (c0 + c1)
				}
				out[b] = p
			}
		}
	}
}
