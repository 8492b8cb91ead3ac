package models

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// BlockMap64 is the recycled block's application x → x′ (docs/maths.md §6)
// in float64, on the state of 49 tokens × 64 components, with its
// Jacobian (§11): forward-mode products through each layer, and their
// transposes through the layers' hand-written backward passes (the ones
// training uses).
type BlockMap64 struct {
	m          *Transformer[float64]
	p          blockParams[float64]
	T, D, H, M int
	relu       bool
}

// BlockMap is m's block in float64 (a copy of its 0.1 MB of weights). m
// must be a recycled block (depth 1): a ViT's five layers are five
// different maps.
func BlockMap(m *Transformer[float32]) (*BlockMap64, error) {
	if m.Cfg.Depth != 1 {
		return nil, fmt.Errorf("models: a network of %d layers is not one map to iterate", m.Cfg.Depth)
	}
	m64, err := NewTransformer[float64](m.Cfg)
	if err != nil {
		return nil, err
	}
	for k, v := range m.Params {
		m64.Params[k] = float64(v)
	}
	c := m.Cfg
	return &BlockMap64{m: m64, p: m64.block(m64.Params, 0), T: m.Pt.N, D: c.Dim, H: c.Heads, M: c.MLP, relu: c.Relu}, nil
}

// Size is the state's dimension, tokens × width (49 × 64 = 3,136).
func (f *BlockMap64) Size() int { return f.T * f.D }

// BlockLin is the block linearised at a state: the forward pass's
// activations, which both products read.
type BlockLin struct {
	f      *BlockMap64
	X, Out []float64
	a      *actCache[float64]
	dgelu  []float64 // GELU′ at the MLP's hidden units
}

// State is the state linearised at.
func (l *BlockLin) State() []float64 { return l.X }

// Next is the block's image of the state.
func (l *BlockLin) Next() []float64 { return l.Out }

// At applies the block to x (kept, not copied) and linearises it there.
func (f *BlockMap64) At(x []float64) *BlockLin {
	T, D, H, M, p := f.T, f.D, f.H, f.M, f.p
	a := newActCache[float64](T, D, H, M)
	copy(a.x, x)
	out := make([]float64, T*D)
	blockForward(a, p, out, T, D, H, M, f.relu, affine64)
	// GELU′ at the hidden units: the backward pass's own derivative
	// (GELUBackward of ones).
	dgelu, ones := make([]float64, len(a.h)), make([]float64, len(a.h))
	for k := range ones {
		ones[k] = 1
	}
	GELUBackward(dgelu, a.h, ones)
	return &BlockLin{f: f, X: x, Out: out, a: a, dgelu: dgelu}
}

// layerNormJVP writes the derivative of LN(x) along dx: per row, with
// x̂ = (x − μ)·r, dx̂ = r·(dx − mean(dx) − x̂·mean(dx ⊙ x̂)), out = w ⊙ dx̂.
func layerNormJVP(out, dx, x, w, mean, rstd []float64, T, C int) {
	for t := 0; t < T; t++ {
		xr, d, o := x[t*C:(t+1)*C], dx[t*C:(t+1)*C], out[t*C:(t+1)*C]
		m, rs := mean[t], rstd[t]
		var md, mdx float64
		for c, v := range xr {
			md += d[c]
			mdx += d[c] * (v - m) * rs
		}
		md /= float64(C)
		mdx /= float64(C)
		for c, v := range xr {
			o[c] = w[c] * rs * (d[c] - md - (v-m)*rs*mdx)
		}
	}
}

// attentionJVP writes the derivative of the attention output along dqkv:
// ds_ij = (dq_i·k_j + q_i·dk_j)/√hs; softmax: da_ij = a_ij(ds_ij − Σ_l a_il ds_il),
// relu/seqlen: da_ij = ds_ij/T where the score is positive;
// do_i = Σ_j da_ij v_j + a_ij dv_j.
func attentionJVP(out, dqkv, qkv, att []float64, T, C, H int, relu bool) {
	hs := C / H
	scale := 1 / math.Sqrt(float64(hs))
	da := make([]float64, T)
	for h := 0; h < H; h++ {
		for i := 0; i < T; i++ {
			row := att[(h*T+i)*T : (h*T+i+1)*T]
			q := qkv[i*3*C+h*hs : i*3*C+h*hs+hs]
			dq := dqkv[i*3*C+h*hs : i*3*C+h*hs+hs]
			var dot float64
			for j := 0; j < T; j++ {
				k := qkv[j*3*C+C+h*hs : j*3*C+C+h*hs+hs]
				dk := dqkv[j*3*C+C+h*hs : j*3*C+C+h*hs+hs]
				var s float64
				for d := range q {
					s += dq[d]*k[d] + q[d]*dk[d]
				}
				da[j] = s * scale
				dot += row[j] * da[j]
			}
			for j := range da {
				if relu {
					if row[j] <= 0 {
						da[j] = 0
					} else {
						da[j] /= float64(T)
					}
				} else {
					da[j] = row[j] * (da[j] - dot)
				}
			}
			o := out[i*C+h*hs : i*C+h*hs+hs]
			clear(o)
			for j := 0; j < T; j++ {
				v := qkv[j*3*C+2*C+h*hs : j*3*C+2*C+h*hs+hs]
				dv := dqkv[j*3*C+2*C+h*hs : j*3*C+2*C+h*hs+hs]
				for d := range o {
					o[d] += da[j]*v[d] + row[j]*dv[d]
				}
			}
		}
	}
}

// linear64 is LinearForward without a bias (its naive twin, which the
// tests compare): out[T][O] = in[T][I]·wᵀ by gonum's Dgemm.
func linear64(out, in, w []float64, T, I, O int) {
	blas64.Gemm(blas.NoTrans, blas.Trans, 1,
		blas64.General{Rows: T, Cols: I, Stride: I, Data: in},
		blas64.General{Rows: O, Cols: I, Stride: I, Data: w},
		0, blas64.General{Rows: T, Cols: O, Stride: O, Data: out})
}

// affine64 is LinearForward with its bias, by Dgemm (blockForward's
// linear layer here).
func affine64(out, in, w, b []float64, T, I, O int) {
	for t := 0; t < T; t++ {
		copy(out[t*O:(t+1)*O], b)
	}
	blas64.Gemm(blas.NoTrans, blas.Trans, 1,
		blas64.General{Rows: T, Cols: I, Stride: I, Data: in},
		blas64.General{Rows: O, Cols: I, Stride: I, Data: w},
		1, blas64.General{Rows: T, Cols: O, Stride: O, Data: out})
}

// JVP writes DF(x)·dx into out, layer by layer in the forward direction
// (biases drop out of a derivative).
func (l *BlockLin) JVP(dx, out []float64) {
	f, a, p := l.f, l.a, l.f.p
	T, D, H, M := f.T, f.D, f.H, f.M
	dln1 := make([]float64, T*D)
	layerNormJVP(dln1, dx, a.x, p.ln1w, a.mean1, a.rstd1, T, D)
	dqkv := make([]float64, T*3*D)
	linear64(dqkv, dln1, p.qkvw, T, D, 3*D)
	dao := make([]float64, T*D)
	attentionJVP(dao, dqkv, a.qkv, a.att, T, D, H, f.relu)
	du := make([]float64, T*D)
	linear64(du, dao, p.projw, T, D, D)
	for k := range du {
		du[k] += dx[k]
	}
	dln2 := make([]float64, T*D)
	layerNormJVP(dln2, du, a.u, p.ln2w, a.mean2, a.rstd2, T, D)
	dh := make([]float64, T*M)
	linear64(dh, dln2, p.fc1w, T, D, M)
	for k, g := range l.dgelu {
		dh[k] *= g
	}
	linear64(out[:T*D], dh, p.fc2w, T, M, D)
	for k := range du {
		out[k] += du[k]
	}
}

// VJP writes DF(x)ᵀ·g into out through the block's backward pass (the
// one training uses; the weights' gradients it also accumulates go to
// scratch).
func (l *BlockLin) VJP(g, out []float64) {
	f, a, p := l.f, l.a, l.f.p
	T, D, H, M := f.T, f.D, f.H, f.M
	sw := make([]float64, 3*D*max(D, M)) // the weights' gradients, discarded
	sb := make([]float64, 3*D)
	du := append([]float64(nil), g...)
	dg := make([]float64, T*M)
	LinearBackward(dg, sw, sb, g, a.g, p.fc2w, T, M, D)
	dh := make([]float64, T*M)
	GELUBackward(dh, a.h, dg)
	dln2 := make([]float64, T*D)
	LinearBackward(dln2, sw, sb, dh, a.ln2, p.fc1w, T, D, M)
	LayerNormBackward(du, sw, sb, dln2, a.u, p.ln2w, a.mean2, a.rstd2, T, D)
	copy(out[:T*D], du)
	dao := make([]float64, T*D)
	LinearBackward(dao, sw, sb, du, a.ao, p.projw, T, D, D)
	dqkv := make([]float64, T*3*D)
	AttentionBackward(dqkv, dao, a.qkv, a.att, T, D, H, f.relu)
	dln1 := make([]float64, T*D)
	LinearBackward(dln1, sw, sb, dqkv, a.ln1, p.qkvw, T, D, 3*D)
	LayerNormBackward(out[:T*D], sw, sb, dln1, a.x, p.ln1w, a.mean1, a.rstd1, T, D)
}

// Decode writes the picture of a state (784 pixels, unclamped): the output
// linear of x − pos, token by token (§6).
func (f *BlockMap64) Decode(img, x []float64) {
	pt := f.m.Pt
	shifted := make([]float64, f.T*f.D)
	UnembedForward(img, shifted, x, f.m.View("out.weight"), f.m.View("out.bias"), f.m.View("pos"), pt.Index, f.T, pt.A, f.D)
}

// DecodeJVP writes the derivative of the picture along v: the output
// linear's weights applied to each token's part of v (the decoder is
// affine, so the state does not matter).
func (f *BlockMap64) DecodeJVP(img, v []float64) {
	pt, w := f.m.Pt, f.m.View("out.weight")
	A, D := pt.A, f.D
	for i := 0; i < f.T; i++ {
		vi := v[i*D : (i+1)*D]
		for q := 0; q < A; q++ {
			var s float64
			for d, wv := range w[q*D : (q+1)*D] {
				s += wv * vi[d]
			}
			img[pt.Index[i*A+q]] = s
		}
	}
}

// Widen64 is x in float64.
func Widen64(x []float32) []float64 {
	out := make([]float64, len(x))
	for k, v := range x {
		out[k] = float64(v)
	}
	return out
}
