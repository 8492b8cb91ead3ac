package models

import "math"

// Layers of the comparison transformers (docs/maths.md §6), written as llm.c-style
// forward/backward pairs: arguments are outputs, inputs, then sizes;
// forward saves what backward needs; backward accumulates (+=) into its
// gradients, zeroing is the caller's. They are generic over float32 (used
// to train) and float64 (used by the finite-difference gradient checks).

// Float is the element type of the layers.
type Float interface{ ~float32 | ~float64 }

// LinearForward: out[t][o] = b[o] + Σ_i in[t][i]·w[o][i] (PyTorch nn.Linear,
// weight [O,I]). b may be nil.
func LinearForward[F Float](out, in, w, b []F, T, I, O int) {
	for t := 0; t < T; t++ {
		x := in[t*I : (t+1)*I]
		for o := 0; o < O; o++ {
			var s F
			if b != nil {
				s = b[o]
			}
			wr := w[o*I : (o+1)*I]
			for i, v := range x {
				s += v * wr[i]
			}
			out[t*O+o] = s
		}
	}
}

// LinearBackward accumulates dIn, dW and dB (dB may be nil) from dOut.
func LinearBackward[F Float](dIn, dW, dB, dOut, in, w []F, T, I, O int) {
	for t := 0; t < T; t++ {
		x := in[t*I : (t+1)*I]
		dx := dIn[t*I : (t+1)*I]
		for o := 0; o < O; o++ {
			g := dOut[t*O+o]
			if dB != nil {
				dB[o] += g
			}
			wr := w[o*I : (o+1)*I]
			dwr := dW[o*I : (o+1)*I]
			for i, v := range x {
				dx[i] += g * wr[i]
				dwr[i] += g * v
			}
		}
	}
}

// LNEps is LayerNorm's ε (PyTorch's default).
const LNEps = 1e-5

// LayerNormForward normalises each of T rows of C values (population
// variance, as PyTorch), then scales by w and shifts by b; it saves the
// mean and 1/std of each row.
func LayerNormForward[F Float](out, mean, rstd, in, w, b []F, T, C int) {
	for t := 0; t < T; t++ {
		x := in[t*C : (t+1)*C]
		var m float64
		for _, v := range x {
			m += float64(v)
		}
		m /= float64(C)
		var v2 float64
		for _, v := range x {
			d := float64(v) - m
			v2 += d * d
		}
		rs := 1 / math.Sqrt(v2/float64(C)+LNEps)
		mean[t], rstd[t] = F(m), F(rs)
		o := out[t*C : (t+1)*C]
		for c, v := range x {
			o[c] = F((float64(v)-m)*rs)*w[c] + b[c]
		}
	}
}

// LayerNormBackward accumulates dIn, dW and dB.
func LayerNormBackward[F Float](dIn, dW, dB, dOut, in, w, mean, rstd []F, T, C int) {
	for t := 0; t < T; t++ {
		x := in[t*C : (t+1)*C]
		g := dOut[t*C : (t+1)*C]
		m, rs := mean[t], rstd[t]
		var meanG, meanGX F
		for c := range x {
			xh := (x[c] - m) * rs
			dn := g[c] * w[c]
			meanG += dn
			meanGX += dn * xh
			dW[c] += g[c] * xh
			dB[c] += g[c]
		}
		meanG /= F(C)
		meanGX /= F(C)
		dx := dIn[t*C : (t+1)*C]
		for c := range x {
			xh := (x[c] - m) * rs
			dx[c] += (g[c]*w[c] - meanG - xh*meanGX) * rs
		}
	}
}

// GELUForward is the exact GELU x·Φ(x) = x·½(1 + erf(x/√2)) (PyTorch's default).
func GELUForward[F Float](out, in []F) {
	for k, v := range in {
		x := float64(v)
		out[k] = F(0.5 * x * (1 + math.Erf(x/math.Sqrt2)))
	}
}

// GELUBackward accumulates dIn = dOut·(Φ(x) + x·φ(x)).
func GELUBackward[F Float](dIn, in, dOut []F) {
	for k, v := range in {
		x := float64(v)
		cdf := 0.5 * (1 + math.Erf(x/math.Sqrt2))
		pdf := math.Exp(-0.5*x*x) / math.Sqrt(2*math.Pi)
		dIn[k] += dOut[k] * F(cdf+x*pdf)
	}
}

// AttentionForward is multi-head self-attention over T tokens (no causal
// mask: every token sees every token) from packed qkv [T][3C] (rows q, k,
// v; heads contiguous within each): per head h with hs = C/H,
// att[h][i][j] = softmax_j(q_i·k_j/√hs), or relu(q_i·k_j/√hs)/T with
// relu; out[i][h·hs:] = Σ_j att[h][i][j] v_j. att [H][T][T] is saved.
func AttentionForward[F Float](out, att, qkv []F, T, C, H int, relu bool) {
	hs := C / H
	scale := 1 / math.Sqrt(float64(hs))
	for h := 0; h < H; h++ {
		for i := 0; i < T; i++ {
			q := qkv[i*3*C+h*hs : i*3*C+h*hs+hs]
			row := att[(h*T+i)*T : (h*T+i+1)*T]
			mx := math.Inf(-1)
			for j := 0; j < T; j++ {
				k := qkv[j*3*C+C+h*hs : j*3*C+C+h*hs+hs]
				var s float64
				for d := range q {
					s += float64(q[d]) * float64(k[d])
				}
				s *= scale
				row[j] = F(s)
				mx = math.Max(mx, s)
			}
			if relu {
				for j := range row {
					row[j] = F(math.Max(float64(row[j]), 0) / float64(T))
				}
			} else {
				var z float64
				for j := range row {
					e := expK(float64(row[j]) - mx)
					row[j] = F(e)
					z += e
				}
				for j := range row {
					row[j] = F(float64(row[j]) / z)
				}
			}
			o := out[i*C+h*hs : i*C+h*hs+hs]
			clear(o)
			for j, a := range row {
				v := qkv[j*3*C+2*C+h*hs : j*3*C+2*C+h*hs+hs]
				for d := range o {
					o[d] += a * v[d]
				}
			}
		}
	}
}

// AttentionBackward accumulates dQKV from dOut, using the saved att.
func AttentionBackward[F Float](dQKV, dOut, qkv, att []F, T, C, H int, relu bool) {
	hs := C / H
	scale := F(1 / math.Sqrt(float64(hs)))
	dA := make([]F, T)
	for h := 0; h < H; h++ {
		for i := 0; i < T; i++ {
			row := att[(h*T+i)*T : (h*T+i+1)*T]
			g := dOut[i*C+h*hs : i*C+h*hs+hs]
			// through out = Σ_j a_j v_j
			for j := 0; j < T; j++ {
				v := qkv[j*3*C+2*C+h*hs : j*3*C+2*C+h*hs+hs]
				dv := dQKV[j*3*C+2*C+h*hs : j*3*C+2*C+h*hs+hs]
				var s F
				for d := range g {
					s += g[d] * v[d]
					dv[d] += row[j] * g[d]
				}
				dA[j] = s
			}
			// through the nonlinearity to the scaled scores
			if relu {
				for j := range dA {
					if row[j] <= 0 {
						dA[j] = 0
					} else {
						dA[j] /= F(T)
					}
				}
			} else {
				var dot F
				for j := range dA {
					dot += dA[j] * row[j]
				}
				for j := range dA {
					dA[j] = row[j] * (dA[j] - dot)
				}
			}
			// through s_ij = q_i·k_j·scale
			q := qkv[i*3*C+h*hs : i*3*C+h*hs+hs]
			dq := dQKV[i*3*C+h*hs : i*3*C+h*hs+hs]
			for j := 0; j < T; j++ {
				ds := dA[j] * scale
				if ds == 0 {
					continue
				}
				k := qkv[j*3*C+C+h*hs : j*3*C+C+h*hs+hs]
				dk := dQKV[j*3*C+C+h*hs : j*3*C+C+h*hs+hs]
				for d := range q {
					dq[d] += ds * k[d]
					dk[d] += ds * q[d]
				}
			}
		}
	}
}

// PatchEmbedForward is the patch embedding with the learned positions
// (§6): token t gathers its A pixels from img through index (Patches.Index)
// into tok, and x[t] = b + W·tok[t] + pos[t] with W [D,A]. tok is saved.
func PatchEmbedForward[F Float](x, tok, img, w, b, pos []F, index []int, T, A, D int) {
	for k := 0; k < T*A; k++ {
		tok[k] = img[index[k]]
	}
	LinearForward(x, tok, w, b, T, A, D)
	PosForward(x, pos, T, D)
}

// PatchEmbedBackward accumulates dW, dB and dPos from dX (no gradient to
// the image: it is the input).
func PatchEmbedBackward[F Float](dW, dB, dPos, dX, tok []F, T, A, D int) {
	PosBackward(dPos, dX, T, D)
	for t := 0; t < T; t++ {
		g := dX[t*D : (t+1)*D]
		x := tok[t*A : (t+1)*A]
		for o, gv := range g {
			dB[o] += gv
			row := dW[o*A : (o+1)*A]
			for i, v := range x {
				row[i] += gv * v
			}
		}
	}
}

// PosForward adds the positional embedding: x[t] += pos[t].
func PosForward[F Float](x, pos []F, T, D int) {
	for k := range x[:T*D] {
		x[k] += pos[k]
	}
}

// PosBackward accumulates dPos += dX.
func PosBackward[F Float](dPos, dX []F, T, D int) {
	for k := range dX[:T*D] {
		dPos[k] += dX[k]
	}
}

// UnembedForward is the output of §6: shifted = x − pos (saved), and the
// A pixels of token t, b + W·shifted[t] with W [A,D], are scattered into
// img through index.
func UnembedForward[F Float](img, shifted, x, w, b, pos []F, index []int, T, A, D int) {
	for k := range shifted[:T*D] {
		shifted[k] = x[k] - pos[k]
	}
	out := make([]F, T*A)
	LinearForward(out, shifted, w, b, T, D, A)
	for k, v := range out {
		img[index[k]] = v
	}
}

// UnembedBackward accumulates dX, dW, dB and dPos from dImg (784 pixels).
func UnembedBackward[F Float](dX, dW, dB, dPos, dImg, shifted, w []F, index []int, T, A, D int) {
	dOut := make([]F, T*A)
	for k := range dOut {
		dOut[k] = dImg[index[k]]
	}
	dS := make([]F, T*D)
	LinearBackward(dS, dW, dB, dOut, shifted, w, T, D, A)
	for k, g := range dS {
		dX[k] += g
		dPos[k] -= g
	}
}
