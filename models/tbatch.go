package models

import (
	"fmt"
	"math"
)

// Batch is the fast float32 path of the transformers (§6): it runs a
// Transformer on up to Cap images at once, stacking their tokens into
// R = n·49 rows so every linear layer is one gemm over all rows and
// attention is four small gemms per image and head. Transformer.Forward
// and Run.Backward (transformer.go) are its naive twin: the tests check
// that both give the same images and gradients.
//
// A Batch is not safe for concurrent use; training gives each goroutine
// its own. Call Prepare after the parameters change.
type Batch struct {
	m                     *Transformer[float32]
	Cap                   int
	T, D, A, H, M, TP, hs int

	// Transposed weights ([in][out]) for the forward gemms, from Prepare.
	embT, outT              []float32
	qkvT, projT, fc1T, fc2T [][]float32

	n      int
	tokens []float32   // [R][A]
	xs     [][]float32 // states [R][D]: xs[0] embedded, xs[k+1] after application k
	acts   []*bActs    // activations of each application (training) or of the last one
	cur    int         // index in xs of the current state (inference)
	out    []float32   // [R][A]
	kt, vt []float32   // per head: Kᵀ and Vᵀ padded to TP keys, [hs][TP]
	dA     []float32   // [T][TP]
	tmp    []float32   // [R][D]

	dx, du, dp, dln, dao, dqkv, dg, dh []float32
}

type bActs struct {
	ln1, mean1, rstd1, qkv, att, ao, u, ln2, mean2, rstd2, h, dgelu, g []float32
}

// NewBatch allocates a workspace for m and up to capacity images.
func NewBatch(m *Transformer[float32], capacity int) *Batch {
	c, pt := m.Cfg, m.Pt
	b := &Batch{m: m, Cap: capacity, T: pt.N, D: c.Dim, A: pt.A, H: c.Heads, M: c.MLP,
		TP: (pt.N + 15) &^ 15, hs: c.Dim / c.Heads}
	R := capacity * b.T
	b.embT = make([]float32, b.A*b.D)
	b.outT = make([]float32, b.D*b.A)
	for range c.Depth {
		b.qkvT = append(b.qkvT, make([]float32, b.D*3*b.D))
		b.projT = append(b.projT, make([]float32, b.D*b.D))
		b.fc1T = append(b.fc1T, make([]float32, b.D*b.M))
		b.fc2T = append(b.fc2T, make([]float32, b.M*b.D))
	}
	b.tokens = make([]float32, R*b.A)
	b.out = make([]float32, R*b.A)
	b.kt = make([]float32, b.hs*b.TP)
	b.vt = make([]float32, b.hs*b.TP)
	b.dA = make([]float32, b.T*b.TP)
	b.tmp = make([]float32, R*b.D)
	for _, p := range []*[]float32{&b.dx, &b.du, &b.dp, &b.dln, &b.dao} {
		*p = make([]float32, R*b.D)
	}
	b.dqkv = make([]float32, R*3*b.D)
	b.dg = make([]float32, R*b.M)
	b.dh = make([]float32, R*b.M)
	b.Prepare()
	return b
}

func (b *Batch) newActs() *bActs {
	R, D, M := b.Cap*b.T, b.D, b.M
	return &bActs{ln1: make([]float32, R*D), mean1: make([]float32, R), rstd1: make([]float32, R),
		qkv: make([]float32, R*3*D), att: make([]float32, b.Cap*b.H*b.T*b.TP), ao: make([]float32, R*D),
		u: make([]float32, R*D), ln2: make([]float32, R*D), mean2: make([]float32, R), rstd2: make([]float32, R),
		h: make([]float32, R*M), dgelu: make([]float32, R*M), g: make([]float32, R*M)}
}

// grow makes room for k+1 states and k activations.
func (b *Batch) grow(k int) {
	for len(b.xs) < k+1 {
		b.xs = append(b.xs, make([]float32, b.Cap*b.T*b.D))
	}
	for len(b.acts) < k {
		b.acts = append(b.acts, b.newActs())
	}
}

// transpose writes dst[i·o+j] = src[j·in+i] for src [o][in].
func transpose(dst, src []float32, o, in int) {
	for j := 0; j < o; j++ {
		for i := 0; i < in; i++ {
			dst[i*o+j] = src[j*in+i]
		}
	}
}

// Prepare copies the model's weights into the layouts the gemms read.
func (b *Batch) Prepare() {
	m := b.m
	transpose(b.embT, m.View("embed.weight"), b.D, b.A)
	transpose(b.outT, m.View("out.weight"), b.A, b.D)
	for k := range b.qkvT {
		p := m.block(m.Params, k)
		transpose(b.qkvT[k], p.qkvw, 3*b.D, b.D)
		transpose(b.projT[k], p.projw, b.D, b.D)
		transpose(b.fc1T[k], p.fc1w, b.M, b.D)
		transpose(b.fc2T[k], p.fc2w, b.D, b.M)
	}
}

// rowsBias sets every one of R rows of dst ([R][C]) to bias.
func rowsBias(dst, bias []float32, R, C int) {
	for r := 0; r < R; r++ {
		copy(dst[r*C:(r+1)*C], bias)
	}
}

// colSum accumulates dst[c] += Σ_r src[r·C+c].
func colSum(dst, src []float32, R, C int) {
	for r := 0; r < R; r++ {
		row := src[r*C : (r+1)*C]
		for c, v := range row {
			dst[c] += v
		}
	}
}

// Start embeds n ≤ Cap corrupted images (784 pixels each; masked pixels 0,
// noise unclamped) as the current state.
func (b *Batch) Start(imgs [][]float32) {
	if len(imgs) > b.Cap {
		panic(fmt.Sprintf("models: %d images in a batch of %d", len(imgs), b.Cap))
	}
	b.n = len(imgs)
	b.grow(1)
	b.embed(imgs)
	b.cur = 0
}

func (b *Batch) embed(imgs [][]float32) {
	T, A, D, pt := b.T, b.A, b.D, b.m.Pt
	R := len(imgs) * T
	for n, img := range imgs {
		for i := 0; i < T; i++ {
			for q := 0; q < A; q++ {
				b.tokens[(n*T+i)*A+q] = img[pt.Index[i*A+q]]
			}
		}
	}
	x0 := b.xs[0][:R*D]
	pos, bias := b.m.View("pos"), b.m.View("embed.bias")
	for r := 0; r < R; r++ {
		row := x0[r*D : (r+1)*D]
		p := pos[(r%T)*D : (r%T+1)*D]
		for d := range row {
			row[d] = bias[d] + p[d]
		}
	}
	gemm(R, D, A, b.tokens, A, false, b.embT, D, x0, D)
}

// Apply runs block blk once on the current state (inference: only this
// application's activations are kept, for Attention).
func (b *Batch) Apply(blk int) {
	b.grow(2)
	nxt := 1 - b.cur
	b.apply(b.acts[0], blk, b.xs[b.cur], b.xs[nxt])
	b.cur = nxt
}

// State copies image k's current state (T tokens × D components) into
// dst, or a new slice when dst is nil.
func (b *Batch) State(k int, dst []float32) []float32 {
	sz := b.T * b.D
	if dst == nil {
		dst = make([]float32, sz)
	}
	copy(dst, b.xs[b.cur][k*sz:(k+1)*sz])
	return dst
}

// SetState sets image k's current state (T tokens × D components) to src,
// as State copied it: the next Apply steps from there.
func (b *Batch) SetState(k int, src []float32) {
	sz := b.T * b.D
	if len(src) != sz {
		panic(fmt.Sprintf("models: a state of %d numbers for a batch of %d×%d", len(src), b.T, b.D))
	}
	copy(b.xs[b.cur][k*sz:(k+1)*sz], src)
}

// Attention is the attention of the last Apply for image k: [H][T][TP]
// (row i of head h starts at (h·T+i)·TP; entries j ≥ T are 0).
func (b *Batch) Attention(k int) []float32 {
	sz := b.H * b.T * b.TP
	return b.acts[0].att[k*sz : (k+1)*sz]
}

// Decode writes the output image (784 pixels) of each image's current
// state: out-linear(x − pos).
func (b *Batch) Decode(dst [][]float32) {
	b.decode(b.xs[b.cur])
	b.scatter(dst)
}

func (b *Batch) decode(x []float32) {
	T, D, A := b.T, b.D, b.A
	R := b.n * T
	pos := b.m.View("pos")
	for r := 0; r < R; r++ {
		xr, p, s := x[r*D:(r+1)*D], pos[(r%T)*D:(r%T+1)*D], b.tmp[r*D:(r+1)*D]
		for d := range s {
			s[d] = xr[d] - p[d]
		}
	}
	rowsBias(b.out, b.m.View("out.bias"), R, A)
	gemm(R, A, D, b.tmp, D, false, b.outT, A, b.out, A)
}

func (b *Batch) scatter(dst [][]float32) {
	T, A, pt := b.T, b.A, b.m.Pt
	for n := range dst[:b.n] {
		for i := 0; i < T; i++ {
			for q := 0; q < A; q++ {
				dst[n][pt.Index[i*A+q]] = b.out[(n*T+i)*A+q]
			}
		}
	}
}

// apply is one pre-LN block: u = x + proj(attn(qkv(LN1(x)))), next = u + fc2(gelu(fc1(LN2(u)))).
func (b *Batch) apply(a *bActs, blk int, x, next []float32) {
	T, D, M := b.T, b.D, b.M
	R := b.n * T
	p := b.m.block(b.m.Params, blk)
	LayerNormForward(a.ln1, a.mean1, a.rstd1, x[:R*D], p.ln1w, p.ln1b, R, D)
	rowsBias(a.qkv, p.qkvb, R, 3*D)
	gemm(R, 3*D, D, a.ln1, D, false, b.qkvT[blk], 3*D, a.qkv, 3*D)
	b.attnForward(a)
	copy(a.u[:R*D], x[:R*D])
	for r := 0; r < R; r++ {
		row := a.u[r*D : (r+1)*D]
		for d, v := range p.projb {
			row[d] += v
		}
	}
	gemm(R, D, D, a.ao, D, false, b.projT[blk], D, a.u, D)
	LayerNormForward(a.ln2, a.mean2, a.rstd2, a.u[:R*D], p.ln2w, p.ln2b, R, D)
	rowsBias(a.h, p.fc1b, R, M)
	gemm(R, M, D, a.ln2, D, false, b.fc1T[blk], M, a.h, M)
	gelu(a.g[:R*M], a.dgelu[:R*M], a.h[:R*M])
	copy(next[:R*D], a.u[:R*D])
	for r := 0; r < R; r++ {
		row := next[r*D : (r+1)*D]
		for d, v := range p.fc2b {
			row[d] += v
		}
	}
	gemm(R, D, M, a.g, M, false, b.fc2T[blk], D, next, D)
}

// head returns where q, k and v of image n and head h start in qkv (rows
// of 3D values).
func (b *Batch) head(qkv []float32, n, h int) (q, k, v []float32) {
	base := n*b.T*3*b.D + h*b.hs
	return qkv[base:], qkv[base+b.D:], qkv[base+2*b.D:]
}

// headT writes one head's T rows of src (stride 3D) transposed into dst
// [hs][TP]; columns T..TP−1 stay 0.
func (b *Batch) headT(dst, src []float32) {
	for j := 0; j < b.T; j++ {
		for d := 0; d < b.hs; d++ {
			dst[d*b.TP+j] = src[j*3*b.D+d]
		}
	}
}

func (b *Batch) attnForward(a *bActs) {
	T, D, H, TP, hs := b.T, b.D, b.H, b.TP, b.hs
	scale := float32(1 / math.Sqrt(float64(hs)))
	relu := b.m.Cfg.Relu
	clear(a.ao[:b.n*T*D])
	for n := 0; n < b.n; n++ {
		for h := 0; h < H; h++ {
			q, k, v := b.head(a.qkv, n, h)
			b.headT(b.kt, k)
			att := a.att[(n*H+h)*T*TP : (n*H+h+1)*T*TP]
			clear(att)
			gemm(T, TP, hs, q, 3*D, false, b.kt, TP, att, TP)
			for i := 0; i < T; i++ {
				row := att[i*TP : i*TP+T]
				if relu {
					for j, s := range row {
						row[j] = maxF(s*scale, 0) / float32(T)
					}
				} else {
					mx := maxf(row)
					z := expShift(row, row, scale, scale*mx)
					inv := 1 / z
					for j := range row {
						row[j] *= inv
					}
				}
				clear(att[i*TP+T : (i+1)*TP])
			}
			gemm(T, hs, T, att, TP, false, v, 3*D, a.ao[n*T*D+h*hs:], D)
		}
	}
}

// Train runs the applications apps on the corrupted images imgs (n ≤ Cap),
// keeping every activation, and accumulates into grad (len Params) the
// gradient of scale·Σ_n MSE(last image of n, clean[n]). It returns each
// image's MSE.
func (b *Batch) Train(imgs, clean [][]float32, apps []int, scale float32, grad []float32, losses []float64) {
	b.n = len(imgs)
	b.grow(len(apps) + 1)
	b.embed(imgs)
	for k, blk := range apps {
		b.apply(b.acts[k], blk, b.xs[k], b.xs[k+1])
	}
	last := len(apps)
	b.decode(b.xs[last])
	b.backward(clean, apps, scale, grad, losses)
}

func (b *Batch) backward(clean [][]float32, apps []int, scale float32, grad []float32, losses []float64) {
	m, pt := b.m, b.m.Pt
	T, D, A, M := b.T, b.D, b.A, b.M
	R := b.n * T
	gv := func(n string) []float32 { return view(m.specs, grad, n) }
	dO := b.out // overwritten with the gradient of the output tokens
	for n := 0; n < b.n; n++ {
		var s float64
		for i := 0; i < T; i++ {
			for q := 0; q < A; q++ {
				r := (n*T+i)*A + q
				e := dO[r] - clean[n][pt.Index[i*A+q]]
				s += float64(e) * float64(e)
				dO[r] = scale * 2 * e / Pixels
			}
		}
		losses[n] = s / Pixels
	}
	// b.tmp still holds x − pos of the final state (from decode).
	colSum(gv("out.bias"), dO, R, A)
	gemm(A, D, R, dO, A, true, b.tmp, D, gv("out.weight"), D)
	dx := b.dx[:R*D]
	clear(dx)
	gemm(R, D, A, dO, A, false, m.View("out.weight"), D, dx, D)
	dpos := gv("pos")
	for r := 0; r < R; r++ {
		p := dpos[(r%T)*D : (r%T+1)*D]
		for d, v := range dx[r*D : (r+1)*D] {
			p[d] -= v
		}
	}
	for k := len(apps) - 1; k >= 0; k-- {
		a, blk := b.acts[k], apps[k]
		p, g := m.block(m.Params, blk), m.block(grad, blk)
		// next = u + fc2(gelu(fc1(LN2(u))))
		colSum(g.fc2b, dx, R, D)
		gemm(D, M, R, dx, D, true, a.g, M, g.fc2w, M)
		dg := b.dg[:R*M]
		clear(dg)
		gemm(R, M, D, dx, D, false, p.fc2w, M, dg, M)
		dh := b.dh[:R*M]
		for q, d := range a.dgelu[:R*M] {
			dh[q] = dg[q] * d
		}
		colSum(g.fc1b, dh, R, M)
		gemm(M, D, R, dh, M, true, a.ln2, D, g.fc1w, D)
		dln := b.dln[:R*D]
		clear(dln)
		gemm(R, D, M, dh, M, false, p.fc1w, D, dln, D)
		du := b.du[:R*D]
		copy(du, dx)
		LayerNormBackward(du, g.ln2w, g.ln2b, dln, a.u, p.ln2w, a.mean2, a.rstd2, R, D)
		// u = x + proj(attn(qkv(LN1(x))))
		colSum(g.projb, du, R, D)
		gemm(D, D, R, du, D, true, a.ao, D, g.projw, D)
		dao := b.dao[:R*D]
		clear(dao)
		gemm(R, D, D, du, D, false, p.projw, D, dao, D)
		dqkv := b.dqkv[:R*3*D]
		clear(dqkv)
		b.attnBackward(a, dao, dqkv)
		colSum(g.qkvb, dqkv, R, 3*D)
		gemm(3*D, D, R, dqkv, 3*D, true, a.ln1, D, g.qkvw, D)
		clear(dln)
		gemm(R, D, 3*D, dqkv, 3*D, false, p.qkvw, D, dln, D)
		dp := b.dp[:R*D]
		copy(dp, du)
		LayerNormBackward(dp, g.ln1w, g.ln1b, dln, b.xs[k], p.ln1w, a.mean1, a.rstd1, R, D)
		b.dx, b.dp = b.dp, b.dx
		dx = dp
	}
	for r := 0; r < R; r++ {
		p := dpos[(r%T)*D : (r%T+1)*D]
		for d, v := range dx[r*D : (r+1)*D] {
			p[d] += v
		}
	}
	colSum(gv("embed.bias"), dx, R, D)
	gemm(D, A, R, dx, D, true, b.tokens, A, gv("embed.weight"), A)
}

func (b *Batch) attnBackward(a *bActs, dao, dqkv []float32) {
	T, D, H, TP, hs := b.T, b.D, b.H, b.TP, b.hs
	scale := float32(1 / math.Sqrt(float64(hs)))
	relu := b.m.Cfg.Relu
	for n := 0; n < b.n; n++ {
		base := n * T * 3 * D
		for h := 0; h < H; h++ {
			q, k, v := b.head(a.qkv, n, h)
			do := dao[n*T*D+h*hs:]
			att := a.att[(n*H+h)*T*TP : (n*H+h+1)*T*TP]
			b.headT(b.vt, v)
			// dA = dO·Vᵀ; dV += Aᵀ·dO
			clear(b.dA)
			gemm(T, TP, hs, do, D, false, b.vt, TP, b.dA, TP)
			gemm(T, hs, T, att, TP, true, do, D, dqkv[base+2*D+h*hs:], 3*D)
			// through softmax (or relu/T) and the 1/√hs scale
			for i := 0; i < T; i++ {
				ar, dr := att[i*TP:i*TP+T], b.dA[i*TP:i*TP+T]
				if relu {
					for j, av := range ar {
						if av > 0 {
							dr[j] *= scale / float32(T)
						} else {
							dr[j] = 0
						}
					}
				} else {
					var s float32
					for j, av := range ar {
						s += av * dr[j]
					}
					for j, av := range ar {
						dr[j] = av * (dr[j] - s) * scale
					}
				}
			}
			// dQ += dS·K; dK += dSᵀ·Q
			gemm(T, hs, T, b.dA, TP, false, k, 3*D, dqkv[base+h*hs:], 3*D)
			gemm(T, hs, T, b.dA, TP, true, q, 3*D, dqkv[base+D+h*hs:], 3*D)
		}
	}
}
