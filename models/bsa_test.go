package models

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// tinyBSA is a network with N tokens of dimension d and random couplings,
// without an image embedding (enough for the dynamics and the gradient).
func tinyBSA(n, d int, seed uint64) *BSA {
	m := newBSA(&Embedding{Patches: &Patches{N: n}, D: d})
	rng := rand.New(rand.NewPCG(seed, 9))
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			for r := 0; r < d; r++ {
				for e := 0; e < d; e++ {
					if i != j {
						m.J[m.jidx(i, j, r, e)] = float32(rng.NormFloat64() * 0.6)
					}
				}
			}
		}
	}
	return m
}

func randX(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for k := range x {
		x[k] = float32(rng.NormFloat64())
	}
	return x
}

// nplLoss64 is the mean token energy of §5 in float64, from the definition.
func nplLoss64(m *BSA, J []float64, xhs [][]float32, lam, clamp float64) float64 {
	return rowLoss64(m, J, xhs, clamp, func(sc []float64) float64 {
		mx := math.Inf(-1)
		for _, s := range sc {
			mx = math.Max(mx, s)
		}
		var z float64
		for _, s := range sc {
			z += math.Exp(lam * (s - mx))
		}
		return -(mx + math.Log(z)/lam)
	})
}

// reluLoss64 is the mean relu/seqlen token energy of §5 in float64, from
// the definition: e_i = −(1/(2λN)) Σ_{j≠i} max(λ min(s_ij, c), 0)².
func reluLoss64(m *BSA, J []float64, xhs [][]float32, lam, clamp float64) float64 {
	return rowLoss64(m, J, xhs, clamp, func(sc []float64) float64 {
		var e float64
		for _, s := range sc {
			v := math.Max(lam*s, 0)
			e -= v * v / (2 * lam * float64(m.N))
		}
		return e
	})
}

// rowLoss64 is the mean over images and query rows i of e(scores of row
// i): s_ij = x̂_iᵀ J_ij x̂_j for j ≠ i, clamped at clamp, in float64.
func rowLoss64(m *BSA, J []float64, xhs [][]float32, clamp float64, e func(scores []float64) float64) float64 {
	n, d, np := m.N, m.D, m.NP
	var loss float64
	for _, xh := range xhs {
		x := func(i, r int) float64 { return float64(xh[r*np+i]) }
		for i := 0; i < n; i++ {
			var sc []float64
			for j := 0; j < n; j++ {
				if j == i {
					continue
				}
				var s float64
				for r := 0; r < d; r++ {
					for e := 0; e < d; e++ {
						s += J[m.jidx(i, j, r, e)] * x(i, r) * x(j, e)
					}
				}
				sc = append(sc, math.Min(s, clamp))
			}
			loss += e(sc)
		}
	}
	return loss / float64(len(xhs)*n)
}

func TestNPLGradientFiniteDifference(t *testing.T) {
	for _, tc := range []struct {
		name  string
		clamp float32
		attn  AttnKind
	}{{"unclamped", 20, Softmax}, {"clamped", 1.5, Softmax}, {"relu-unclamped", 20, ReluSeqlen}, {"relu-clamped", 0.3, ReluSeqlen}} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 7))
			m := tinyBSA(6, 3, 1)
			m.Clamp = tc.clamp
			m.LambdaTrain = 5
			xs := [][]float32{randX(rng, 18), randX(rng, 18), randX(rng, 18)}
			tr := NewTrainer(m, TrainConfig{Workers: 2, Attn: tc.attn})
			loss := tr.Gradient(xs)
			nplLoss64 := nplLoss64
			if tc.attn == ReluSeqlen {
				nplLoss64 = reluLoss64
			}
			xhs := make([][]float32, len(xs))
			for b := range xs {
				xhs[b] = make([]float32, m.D*m.NP)
				m.layerNorm(xhs[b], xs[b], nil)
			}
			J := make([]float64, len(m.J))
			for k, v := range m.J {
				J[k] = float64(v)
			}
			lam, cl := float64(m.LambdaTrain), float64(m.Clamp)
			if l64 := nplLoss64(m, J, xhs, lam, cl); !closeTo(loss, l64, 1e-5) {
				t.Fatalf("loss %g, float64 reference %g", loss, l64)
			}
			const h = 1e-6
			var num, den, worst float64
			clampedSeen := 0
			for i := 0; i < m.N; i++ {
				for j := 0; j < m.N; j++ {
					for r := 0; r < m.D; r++ {
						for e := 0; e < m.D; e++ {
							k := m.jidx(i, j, r, e)
							old := J[k]
							J[k] = old + h
							lp := nplLoss64(m, J, xhs, lam, cl)
							J[k] = old - h
							lm := nplLoss64(m, J, xhs, lam, cl)
							J[k] = old
							fd := (lp - lm) / (2 * h)
							g := float64(tr.g[k])
							if i == j && g != 0 {
								t.Fatalf("gradient on J_ii = %g", g)
							}
							num += (g - fd) * (g - fd)
							den += fd * fd
							if rel := math.Abs(g-fd) / math.Max(math.Abs(fd), 1e-3); rel > worst {
								worst = rel
							}
						}
					}
				}
			}
			if rel := math.Sqrt(num / den); rel > 1e-4 {
				t.Fatalf("gradient relative error (norm) %g", rel)
			}
			if worst > 1e-3 {
				t.Fatalf("worst entry relative error %g", worst)
			}
			for _, xh := range xhs {
				for i := 0; i < m.N; i++ {
					for j := 0; j < m.N; j++ {
						var s float64
						for r := 0; r < m.D; r++ {
							for e := 0; e < m.D; e++ {
								s += J[m.jidx(i, j, r, e)] * float64(xh[r*m.NP+i]) * float64(xh[e*m.NP+j])
							}
						}
						if i != j && s > cl {
							clampedSeen++
						}
					}
				}
			}
			if tc.clamp < 20 && clampedSeen == 0 {
				t.Fatalf("clamp %g clamped no score: the test does not exercise clamping", tc.clamp)
			}
			t.Logf("norm error %.2e, worst entry %.2e, clamped scores %d", math.Sqrt(num/den), worst, clampedSeen)
		})
	}
}

// stepNaive is the dynamics of §4 written from its definition in float64.
func stepNaive(m *BSA, x []float32, masked []bool, first bool, dy Dynamics) ([]float32, []float64, float64) {
	n, d := m.N, m.D
	xh := make([]float32, d*m.NP)
	var mk []bool
	if first {
		mk = masked
	}
	m.layerNorm(xh, x, mk)
	xn := make([]float64, n*d)
	alpha := make([]float64, n*n)
	var energy float64
	for i := 0; i < n; i++ {
		s := make([]float64, n)
		ok := make([]bool, n)
		for j := 0; j < n; j++ {
			ok[j] = j != i && (mk == nil || !mk[j])
			for r := 0; r < d; r++ {
				for e := 0; e < d; e++ {
					s[j] += float64(xh[r*m.NP+i]) * float64(m.J[m.jidx(i, j, r, e)]) * float64(xh[e*m.NP+j])
				}
			}
			s[j] = math.Min(s[j], float64(m.Clamp))
		}
		var z float64
		mx := math.Inf(-1)
		for j := range s {
			if ok[j] {
				mx = math.Max(mx, s[j])
			}
		}
		lam := float64(dy.Lambda)
		for j := range s {
			if ok[j] {
				z += math.Exp(lam * (s[j] - mx))
			}
		}
		energy -= mx + math.Log(z)/lam
		for j := range s {
			if !ok[j] {
				continue
			}
			if dy.Attn == ReluSeqlen {
				alpha[i*n+j] = math.Max(lam*s[j], 0) / float64(n)
			} else {
				alpha[i*n+j] = math.Exp(lam*(s[j]-mx)) / z
			}
			for r := 0; r < d; r++ {
				var v float64
				for e := 0; e < d; e++ {
					v += float64(m.J[m.jidx(i, j, r, e)]) * float64(xh[e*m.NP+j])
				}
				xn[i*d+r] += float64(dy.Gamma) * alpha[i*n+j] * v
			}
		}
		for r := 0; r < d; r++ {
			xn[i*d+r] += float64(x[i*d+r])
		}
	}
	var mean float64
	for i := 0; i < n; i++ {
		var ss float64
		for r := 0; r < d; r++ {
			ss += xn[i*d+r] * xn[i*d+r]
		}
		mean += math.Sqrt(ss)
	}
	mean /= float64(n)
	out := make([]float32, n*d)
	for k := range out {
		out[k] = float32(xn[k] / (mean + 1e-9))
	}
	return out, alpha, energy
}

func TestStepMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	m := tinyBSA(20, 4, 3)
	masked := make([]bool, 20)
	masked[2], masked[7], masked[19] = true, true, true
	for _, attn := range []AttnKind{Softmax, ReluSeqlen} {
		for _, mk := range [][]bool{nil, masked} {
			dy := Dynamics{Lambda: 0.7, Gamma: 0.5, Attn: attn}
			x := randX(rng, 80)
			for i, on := range mk {
				if on {
					clear(x[i*4 : i*4+4])
				}
			}
			st := &State{X: append([]float32(nil), x...), Masked: mk}
			w := m.NewWorkspace(1)
			for step := 0; step < 3; step++ {
				want, wantA, wantE := stepNaive(m, st.X, mk, step == 0, dy)
				alpha := make([]float32, 400)
				e := make([]float64, 1)
				m.Step(w, []*State{st}, dy, [][]float32{alpha}, e)
				if !closeTo(e[0], wantE, 1e-4) {
					t.Fatalf("%v masked=%v step %d: energy %g want %g", attn, mk != nil, step, e[0], wantE)
				}
				for k := range want {
					if !closeTo(float64(st.X[k]), float64(want[k]), 1e-4) {
						t.Fatalf("%v masked=%v step %d: x[%d]=%g want %g", attn, mk != nil, step, k, st.X[k], want[k])
					}
				}
				for k := range wantA {
					if math.Abs(float64(alpha[k])-wantA[k]) > 1e-5 {
						t.Fatalf("%v step %d: alpha[%d]=%g want %g", attn, step, k, alpha[k], wantA[k])
					}
				}
				if step == 0 && mk != nil {
					for i := 0; i < 20; i++ {
						if alpha[i*20+2] != 0 || alpha[i*20+i] != 0 {
							t.Fatalf("first step: query %d attends to a masked key or itself", i)
						}
					}
				}
			}
		}
	}
}

func TestBatchStepEqualsSingle(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m := tinyBSA(17, 5, 2)
	dy := DefaultDynamics()
	var batch, single []*State
	for b := 0; b < 4; b++ {
		x := randX(rng, 17*5)
		batch = append(batch, &State{X: append([]float32(nil), x...)})
		single = append(single, &State{X: x})
	}
	w := m.NewWorkspace(4)
	eb := make([]float64, 4)
	m.Step(w, batch, dy, nil, eb)
	for b, st := range single {
		e := make([]float64, 1)
		m.Step(m.NewWorkspace(1), []*State{st}, dy, nil, e)
		if e[0] != eb[b] {
			t.Fatalf("image %d: energy %g in a batch, %g alone", b, eb[b], e[0])
		}
		for k := range st.X {
			if st.X[k] != batch[b].X[k] {
				t.Fatalf("image %d differs in a batch", b)
			}
		}
	}
}

func TestEmbeddingRoundTrip(t *testing.T) {
	for _, tc := range []struct{ p, d int }{{2, 8}, {4, 32}, {2, 12}} {
		e, err := NewEmbedding(tc.p, tc.d, 42)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		img := make([]float32, Pixels)
		for k := range img {
			img[k] = rng.Float32()
		}
		img[0], img[1] = 0, 1
		x := make([]float32, e.N*e.D)
		e.Encode(x, img, nil)
		out := make([]float32, Pixels)
		e.Decode(out, x)
		for k := range img {
			if math.Abs(float64(out[k]-img[k])) > 1e-5 {
				t.Fatalf("P=%d d=%d: pixel %d decodes to %g, want %g", tc.p, tc.d, k, out[k], img[k])
			}
		}
		// A scaled state decodes to the same image (decoding is a ratio).
		for k := range x {
			x[k] *= 3.5
		}
		e.Decode(out, x)
		if math.Abs(float64(out[100]-img[100])) > 1e-5 {
			t.Fatalf("decoding is not scale invariant")
		}
		// Fᵀ F = I/a.
		a := 2 * e.A
		for c1 := 0; c1 < a; c1++ {
			for c2 := 0; c2 < a; c2++ {
				var s float64
				for r := 0; r < e.D; r++ {
					s += float64(e.F[r*a+c1]) * float64(e.F[r*a+c2])
				}
				want := 0.0
				if c1 == c2 {
					want = 1 / float64(a)
				}
				if math.Abs(s-want) > 1e-5 {
					t.Fatalf("FᵀF[%d,%d] = %g, want %g", c1, c2, s, want)
				}
			}
		}
		masked := make([]bool, e.N)
		masked[3] = true
		e.Encode(x, img, masked)
		e.Decode(out, x)
		for k := 0; k < e.A; k++ {
			if out[e.Index[3*e.A+k]] != 0 {
				t.Fatalf("masked token does not decode to 0")
			}
		}
	}
}

func TestPatchesIndex(t *testing.T) {
	pt, err := NewPatches(4)
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]bool, Pixels)
	for i := 0; i < pt.N; i++ {
		for k := 0; k < pt.A; k++ {
			px := pt.Index[i*pt.A+k]
			if seen[px] {
				t.Fatalf("pixel %d in two tokens", px)
			}
			seen[px] = true
			if pt.Token(px) != i {
				t.Fatalf("Token(%d)=%d, want %d", px, pt.Token(px), i)
			}
		}
	}
	// token 8 is row 1, column 1 of the 7×7 grid: its first pixel is (4,4).
	if pt.Index[8*16] != 4*28+4 || pt.Index[8*16+5] != 5*28+5 {
		t.Fatalf("unexpected patch order")
	}
	if _, err := NewPatches(5); err == nil {
		t.Fatal("P=5 accepted")
	}
}

// TestGradientRowMatchesAllRows: the one-row gradient of the recipe is the
// all-rows gradient of that row, scaled by N (mean over one row instead of
// over N rows).
func TestGradientRowMatchesAllRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	m := tinyBSA(9, 4, 2)
	xs := [][]float32{randX(rng, 36), randX(rng, 36), randX(rng, 36), randX(rng, 36), randX(rng, 36)}
	tr := NewTrainer(m, TrainConfig{Workers: 2})
	tr.Gradient(xs)
	all := append([]float32(nil), tr.g...)
	for _, i := range []int{0, 4, 8} {
		tr.GradientRow(xs, i)
		slab := m.D * m.D * m.NP
		for k, v := range tr.g {
			want := float32(0)
			if k/slab == i {
				want = all[k] * float32(m.N)
			}
			if !closeTo(float64(v), float64(want), 1e-5) {
				t.Fatalf("row %d: g[%d] = %g, want %g", i, k, v, want)
			}
		}
	}
}

func TestRMSKeptAndDiagonalZero(t *testing.T) {
	m, err := NewBSA(2, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := m.rms()
	// §5: U(−0.5,0.5)/d² has RMS 1/(√12 d²), times √((N−1)/N) for the zero diagonal.
	exp := 1 / math.Sqrt(12) / 64 * math.Sqrt(195.0/196)
	if math.Abs(want-exp)/exp > 0.01 {
		t.Fatalf("initial RMS %g, want ≈ %g", want, exp)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	imgs := make([][]float32, 8)
	for k := range imgs {
		imgs[k] = make([]float32, m.N*m.D)
		img := make([]float32, Pixels)
		for q := range img {
			img[q] = rng.Float32()
		}
		m.Encode(imgs[k], img, nil)
	}
	tr := NewTrainer(m, DefaultTrainConfig())
	l0 := tr.Gradient(imgs)
	for range 5 {
		tr.Gradient(imgs)
		tr.Update(5e-3)
	}
	if got := m.rms(); math.Abs(got-want)/want > 1e-5 {
		t.Fatalf("RMS %g after training, want %g", got, want)
	}
	for i := 0; i < m.N; i++ {
		for r := 0; r < m.D; r++ {
			if m.J[m.jidx(i, i, r, r)] != 0 {
				t.Fatalf("J_ii became nonzero")
			}
		}
	}
	if l1 := tr.Gradient(imgs); !(l1 < l0) {
		t.Fatalf("loss did not decrease: %g → %g", l0, l1)
	}
}

func TestSafetensorsRoundTrip(t *testing.T) {
	m, err := NewBSA(4, 32, 3)
	if err != nil {
		t.Fatal(err)
	}
	m.Meta["command"] = "test"
	var buf bytes.Buffer
	if err := m.WriteBSA(&buf); err != nil {
		t.Fatal(err)
	}
	m2, err := ParseBSA(buf.Bytes(), "rt.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if m2.P != 4 || m2.D != 32 || m2.Meta["command"] != "test" || m2.Meta["pixel_gain"] != "2" {
		t.Fatalf("metadata lost: P=%d d=%d meta=%v", m2.P, m2.D, m2.Meta)
	}
	for k := range m.J {
		if m.J[k] != m2.J[k] {
			t.Fatal("J differs after a round trip")
		}
	}
	for k := range m.F {
		if m.F[k] != m2.F[k] {
			t.Fatal("F differs after a round trip")
		}
	}
}

func TestSafetensorsRejects(t *testing.T) {
	m, _ := NewBSA(2, 8, 3)
	var good bytes.Buffer
	if err := m.WriteBSA(&good); err != nil {
		t.Fatal(err)
	}
	// hdr is a file with header json and a data section of data bytes.
	hdr := func(json string, data int) []byte {
		for len(json)%8 != 0 {
			json += " "
		}
		b := make([]byte, 8, 8+len(json)+data)
		b[0] = byte(len(json))
		b[1] = byte(len(json) >> 8)
		return append(append(b, json...), make([]byte, data)...)
	}
	cases := []struct {
		name, want string
		data       []byte
	}{
		{"empty", "shorter than", nil},
		{"huge header", "exceeds", []byte{0, 0, 0, 0, 0, 0, 0, 1}},
		{"truncated", "data_offsets", good.Bytes()[:good.Len()-100]},
		{"truncated header", "truncated", good.Bytes()[:40]},
		{"dtype", `dtype "F64", want F32 or F16`, hdr(`{"J":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}}`, 16)},
		{"size mismatch", "want 8", hdr(`{"J":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, 4)},
		{"overlap", "overlap", hdr(`{"A":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"B":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, 12)},
		{"gap", "no gaps", hdr(`{"A":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"B":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}}`, 20)},
		{"negative shape", "negative", hdr(`{"A":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, 8)},
		{"trailing bytes", "4 trailing bytes", hdr(`{"A":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 12)},
		{"not model", `model=""`, hdr(`{"A":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 8)},
		{"wrong J shape", `tensor "J" has shape`, func() []byte {
			var b bytes.Buffer
			WriteSafetensors(&b, map[string]Tensor{"F": {Shape: []int{8, 8}, Data: make([]float32, 64)}, "J": {Shape: []int{4, 4}, Data: make([]float32, 16)}},
				map[string]string{"model": "bsa", "patch": "2"})
			return b.Bytes()
		}()},
		{"missing J", `tensor "J" is missing`, func() []byte {
			var b bytes.Buffer
			WriteSafetensors(&b, map[string]Tensor{"F": {Shape: []int{8, 8}, Data: make([]float32, 64)}},
				map[string]string{"model": "bsa", "patch": "2"})
			return b.Bytes()
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseBSA(tc.data, "bad.safetensors")
			if err == nil {
				t.Fatal("accepted")
			}
			if !bytes.Contains([]byte(err.Error()), []byte("bad.safetensors")) || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Fatalf("error %q does not name the file and %q", err, tc.want)
			}
		})
	}
}

func FuzzParseSafetensors(f *testing.F) {
	m, _ := NewBSA(4, 32, 1)
	var b bytes.Buffer
	m.WriteBSA(&b)
	f.Add(b.Bytes())
	var small bytes.Buffer
	WriteSafetensors(&small, map[string]Tensor{"x": {Shape: []int{3}, Data: []float32{1, 2, 3}}}, map[string]string{"a": "b"})
	f.Add(small.Bytes())
	f.Add([]byte{})
	if gz, err := os.ReadFile("testdata/bsa_torch.safetensors.gz"); err == nil {
		if zr, err := gzip.NewReader(bytes.NewReader(gz)); err == nil {
			if b, err := io.ReadAll(zr); err == nil {
				f.Add(b) // written by PyTorch (testdata/bsa_torch.py)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, meta, err := ParseSafetensors(data, "fuzz")
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteSafetensors(&out, ts, meta); err != nil {
			t.Fatalf("parsed tensors do not write back: %v", err)
		}
		ts2, _, err := ParseSafetensors(out.Bytes(), "fuzz2")
		if err != nil {
			t.Fatalf("round trip fails: %v", err)
		}
		if len(ts2) != len(ts) {
			t.Fatalf("round trip lost tensors")
		}
		ParseBSA(data, "fuzz")
	})
}

// TestSetCanonicalNaive: SetCanonical (offsets stepped, in J's order) puts
// every coupling where the naive loop over jidx does, J_ii zeroed, and
// Canonical gives the file's order back.
func TestSetCanonicalNaive(t *testing.T) {
	for _, p := range []int{5, 17} { // N tokens, the padded width NP ≥ N
		m := tinyBSA(p, 3, 1)
		r := rand.New(rand.NewPCG(uint64(p), 9))
		c := make([]float32, m.N*m.N*m.D*m.D)
		for k := range c {
			c[k] = float32(r.NormFloat64())
		}
		if err := m.SetCanonical(c); err != nil {
			t.Fatal(err)
		}
		want := make([]float32, len(m.J))
		copy(want, m.J) // the padding columns, which neither writes
		for i := 0; i < m.N; i++ {
			for j := 0; j < m.N; j++ {
				for a := 0; a < m.D; a++ {
					for e := 0; e < m.D; e++ {
						v := c[((i*m.N+j)*m.D+a)*m.D+e]
						if i == j {
							v = 0
						}
						want[m.jidx(i, j, a, e)] = v
					}
				}
			}
		}
		for k := range want {
			if m.J[k] != want[k] {
				t.Fatalf("N=%d: J[%d] = %g, the naive loop puts %g", p, k, m.J[k], want[k])
			}
		}
		back := m.Canonical()
		for i := 0; i < m.N; i++ {
			for j := 0; j < m.N; j++ {
				for k := (i*m.N + j) * m.D * m.D; k < (i*m.N+j+1)*m.D*m.D; k++ {
					if w := c[k]; (i != j && back[k] != w) || (i == j && back[k] != 0) {
						t.Fatalf("N=%d: Canonical()[%d] = %g, want %g", p, k, back[k], w)
					}
				}
			}
		}
	}
}
