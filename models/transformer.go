package models

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
)

// TransformerConfig describes the recycled block (Depth 1, applied τ
// times) or the ViT (Depth 5, each block once) of docs/maths.md §6.
type TransformerConfig struct {
	Patch int  // 4: 49 tokens of 16 pixels
	Dim   int  // D = 64
	Heads int  // 4
	MLP   int  // hidden width, 128
	Depth int  // distinct blocks: 1 (recycled) or 5 (ViT)
	Relu  bool // relu/seqlen attention instead of softmax
}

// BlockConfig and ViTConfig are §6's two models.
var (
	BlockConfig = TransformerConfig{Patch: 4, Dim: 64, Heads: 4, MLP: 128, Depth: 1}
	ViTConfig   = TransformerConfig{Patch: 4, Dim: 64, Heads: 4, MLP: 128, Depth: 5}
)

// tensorSpec is one named parameter tensor with its §9 name and shape.
type tensorSpec struct {
	name  string
	shape []int
	off   int
}

func (s tensorSpec) size() int {
	n := 1
	for _, d := range s.shape {
		n *= d
	}
	return n
}

// specs lists the parameters in the order of the flat buffer.
func (c TransformerConfig) specs() []tensorSpec {
	pt, _ := NewPatches(c.Patch)
	D, A, N := c.Dim, pt.A, pt.N
	var out []tensorSpec
	add := func(name string, shape ...int) { out = append(out, tensorSpec{name: name, shape: shape}) }
	add("embed.weight", D, A)
	add("embed.bias", D)
	add("pos", N, D)
	for k := 0; k < c.Depth; k++ {
		p := fmt.Sprintf("blocks.%d.", k)
		add(p+"ln1.weight", D)
		add(p+"ln1.bias", D)
		add(p+"attn.qkv.weight", 3*D, D)
		add(p+"attn.qkv.bias", 3*D)
		add(p+"attn.proj.weight", D, D)
		add(p+"attn.proj.bias", D)
		add(p+"ln2.weight", D)
		add(p+"ln2.bias", D)
		add(p+"mlp.fc1.weight", c.MLP, D)
		add(p+"mlp.fc1.bias", c.MLP)
		add(p+"mlp.fc2.weight", D, c.MLP)
		add(p+"mlp.fc2.bias", D)
	}
	add("out.weight", A, D)
	add("out.bias", A)
	off := 0
	for k := range out {
		out[k].off = off
		off += out[k].size()
	}
	return out
}

// Transformer holds the parameters of a block or ViT in one flat buffer
// with named views (every view's shape is its §9 shape).
type Transformer[F Float] struct {
	Cfg    TransformerConfig
	Pt     *Patches
	Params []F
	specs  []tensorSpec
	Meta   map[string]string
}

// blockParams are the views of block k.
type blockParams[F Float] struct {
	ln1w, ln1b, qkvw, qkvb, projw, projb, ln2w, ln2b, fc1w, fc1b, fc2w, fc2b []F
}

// NewTransformer allocates zero parameters for cfg.
func NewTransformer[F Float](cfg TransformerConfig) (*Transformer[F], error) {
	pt, err := NewPatches(cfg.Patch)
	if err != nil {
		return nil, err
	}
	if cfg.Dim <= 0 || cfg.Heads <= 0 || cfg.Dim%cfg.Heads != 0 || cfg.MLP <= 0 || cfg.Depth <= 0 {
		return nil, fmt.Errorf("transformer: dim %d must be a positive multiple of heads %d; mlp %d and depth %d positive",
			cfg.Dim, cfg.Heads, cfg.MLP, cfg.Depth)
	}
	sp := cfg.specs()
	last := sp[len(sp)-1]
	return &Transformer[F]{Cfg: cfg, Pt: pt, Params: make([]F, last.off+last.size()), specs: sp, Meta: map[string]string{}}, nil
}

// View returns the parameters named name (nil if there is none).
func (m *Transformer[F]) View(name string) []F { return view(m.specs, m.Params, name) }

func view[F Float](specs []tensorSpec, buf []F, name string) []F {
	for _, s := range specs {
		if s.name == name {
			return buf[s.off : s.off+s.size()]
		}
	}
	return nil
}

func (m *Transformer[F]) block(buf []F, k int) blockParams[F] {
	p := fmt.Sprintf("blocks.%d.", k)
	v := func(n string) []F { return view(m.specs, buf, p+n) }
	return blockParams[F]{v("ln1.weight"), v("ln1.bias"), v("attn.qkv.weight"), v("attn.qkv.bias"),
		v("attn.proj.weight"), v("attn.proj.bias"), v("ln2.weight"), v("ln2.bias"),
		v("mlp.fc1.weight"), v("mlp.fc1.bias"), v("mlp.fc2.weight"), v("mlp.fc2.bias")}
}

// Init draws PyTorch-like initial values: Linear weights and biases
// U(−1/√in, 1/√in), LayerNorm weight 1 and bias 0, positions N(0, 0.02²).
func (m *Transformer[F]) Init(seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x7f0))
	for _, s := range m.specs {
		v := m.Params[s.off : s.off+s.size()]
		switch {
		case strings.Contains(s.name, "ln") && strings.HasSuffix(s.name, ".weight"):
			for k := range v {
				v[k] = 1
			}
		case strings.Contains(s.name, "ln"):
			clear(v)
		case s.name == "pos":
			for k := range v {
				v[k] = F(rng.NormFloat64() * 0.02)
			}
		default:
			fanIn := s.shape[len(s.shape)-1]
			if strings.HasSuffix(s.name, ".bias") {
				fanIn = m.fanIn(s.name)
			}
			b := 1 / math.Sqrt(float64(fanIn))
			for k := range v {
				v[k] = F((rng.Float64()*2 - 1) * b)
			}
		}
	}
}

// fanIn of a bias is the input width of its weight.
func (m *Transformer[F]) fanIn(bias string) int {
	w := strings.TrimSuffix(bias, ".bias") + ".weight"
	for _, s := range m.specs {
		if s.name == w {
			return s.shape[1]
		}
	}
	return 1
}

// actCache holds one application's activations for backward.
type actCache[F Float] struct {
	x, ln1, mean1, rstd1, qkv, att, ao, u, ln2, mean2, rstd2, h, g []F
}

func newActCache[F Float](T, D, H, M int) *actCache[F] {
	return &actCache[F]{x: make([]F, T*D), ln1: make([]F, T*D), mean1: make([]F, T), rstd1: make([]F, T),
		qkv: make([]F, T*3*D), att: make([]F, H*T*T), ao: make([]F, T*D), u: make([]F, T*D),
		ln2: make([]F, T*D), mean2: make([]F, T), rstd2: make([]F, T), h: make([]F, T*M), g: make([]F, T*M)}
}

// Run is one forward pass over an image, keeping what backward needs.
type Run[F Float] struct {
	m       *Transformer[F]
	tokens  []F // [N][A] input pixels per token
	x0      []F // embedded tokens + pos
	acts    []*actCache[F]
	outs    [][]F // output image (784 pixels) after each application
	shifted []F   // x − pos of the last application, for backward
}

// Applications returns which block each application uses: τ times block 0
// for the recycled block, blocks 0..Depth−1 once for the ViT.
func (c TransformerConfig) Applications(tau int) []int {
	if c.Depth == 1 {
		return make([]int, tau)
	}
	apps := make([]int, c.Depth)
	for k := range apps {
		apps[k] = k
	}
	return apps
}

// blockForward is one pre-LN block on a.x (§6), keeping in a what
// backward needs: u = x + proj(attn(qkv(LN₁(x)))), next = u +
// fc2(GELU(fc1(LN₂(u)))). linear is the linear layer (LinearForward, or a
// faster twin).
func blockForward[F Float](a *actCache[F], p blockParams[F], next []F, T, D, H, M int, relu bool, linear func(out, in, w, b []F, T, I, O int)) {
	LayerNormForward(a.ln1, a.mean1, a.rstd1, a.x, p.ln1w, p.ln1b, T, D)
	linear(a.qkv, a.ln1, p.qkvw, p.qkvb, T, D, 3*D)
	AttentionForward(a.ao, a.att, a.qkv, T, D, H, relu)
	linear(a.u, a.ao, p.projw, p.projb, T, D, D)
	for k := range a.u {
		a.u[k] += a.x[k]
	}
	LayerNormForward(a.ln2, a.mean2, a.rstd2, a.u, p.ln2w, p.ln2b, T, D)
	linear(a.h, a.ln2, p.fc1w, p.fc1b, T, D, M)
	GELUForward(a.g, a.h)
	linear(next, a.g, p.fc2w, p.fc2b, T, M, D)
	for k := range next {
		next[k] += a.u[k]
	}
}

// Forward runs the model on a corrupted image (784 pixels; masked tokens
// are 0 and noise unclamped, §2) for the given applications; Images(k)
// is the prediction after application k.
func (m *Transformer[F]) Forward(img []F, apps []int) *Run[F] {
	c, pt := m.Cfg, m.Pt
	T, D, A, H, M := pt.N, c.Dim, pt.A, c.Heads, c.MLP
	r := &Run[F]{m: m, tokens: make([]F, T*A), x0: make([]F, T*D), shifted: make([]F, T*D)}
	pos := m.View("pos")
	PatchEmbedForward(r.x0, r.tokens, img, m.View("embed.weight"), m.View("embed.bias"), pos, pt.Index, T, A, D)
	x := r.x0
	for _, b := range apps {
		a := newActCache[F](T, D, H, M)
		copy(a.x, x)
		next := make([]F, T*D)
		blockForward(a, m.block(m.Params, b), next, T, D, H, M, c.Relu, LinearForward[F])
		r.acts = append(r.acts, a)
		// Output image after this application: out(x − pos).
		o := make([]F, Pixels)
		UnembedForward(o, r.shifted, next, m.View("out.weight"), m.View("out.bias"), pos, pt.Index, T, A, D)
		r.outs = append(r.outs, o)
		x = next
	}
	return r
}

// Image writes the prediction after application k as 784 pixels.
func (r *Run[F]) Image(k int, dst []F) {
	copy(dst, r.outs[k])
}

// Loss is the MSE of the last application's prediction against clean.
func (r *Run[F]) Loss(clean []F) float64 {
	pred := make([]F, Pixels)
	r.Image(len(r.outs)-1, pred)
	var s float64
	for q, v := range pred {
		d := float64(v - clean[q])
		s += d * d
	}
	return s / Pixels
}

// Backward accumulates into grad (len(Params)) the gradient of Loss(clean)
// with respect to every parameter.
func (r *Run[F]) Backward(clean, grad []F) {
	m, c, pt := r.m, r.m.Cfg, r.m.Pt
	T, D, A, H, M := pt.N, c.Dim, pt.A, c.Heads, c.MLP
	gv := func(n string) []F { return view(m.specs, grad, n) }
	last := len(r.outs) - 1
	// dLoss/dimage
	dImg := make([]F, Pixels)
	for q, v := range r.outs[last] {
		dImg[q] = 2 * (v - clean[q]) / Pixels
	}
	dpos := gv("pos")
	dx := make([]F, T*D)
	UnembedBackward(dx, gv("out.weight"), gv("out.bias"), dpos, dImg, r.shifted, m.View("out.weight"), pt.Index, T, A, D)
	apps := len(r.acts)
	for ai := apps - 1; ai >= 0; ai-- {
		a := r.acts[ai]
		b := 0
		if c.Depth > 1 {
			b = ai
		}
		p := m.block(m.Params, b)
		g := m.block(grad, b)
		// x_next = u + fc2(gelu(fc1(ln2(u))))
		du := append([]F(nil), dx...)
		dg := make([]F, T*M)
		LinearBackward(dg, g.fc2w, g.fc2b, dx, a.g, p.fc2w, T, M, D)
		dh := make([]F, T*M)
		GELUBackward(dh, a.h, dg)
		dln2 := make([]F, T*D)
		LinearBackward(dln2, g.fc1w, g.fc1b, dh, a.ln2, p.fc1w, T, D, M)
		LayerNormBackward(du, g.ln2w, g.ln2b, dln2, a.u, p.ln2w, a.mean2, a.rstd2, T, D)
		// u = x + proj(attn(qkv(ln1(x))))
		dxPrev := append([]F(nil), du...)
		dao := make([]F, T*D)
		LinearBackward(dao, g.projw, g.projb, du, a.ao, p.projw, T, D, D)
		dqkv := make([]F, T*3*D)
		AttentionBackward(dqkv, dao, a.qkv, a.att, T, D, H, c.Relu)
		dln1 := make([]F, T*D)
		LinearBackward(dln1, g.qkvw, g.qkvb, dqkv, a.ln1, p.qkvw, T, D, 3*D)
		LayerNormBackward(dxPrev, g.ln1w, g.ln1b, dln1, a.x, p.ln1w, a.mean1, a.rstd1, T, D)
		dx = dxPrev
	}
	// x0 = embed(tokens) + pos
	PatchEmbedBackward(gv("embed.weight"), gv("embed.bias"), dpos, dx, r.tokens, T, A, D)
}

// WriteTransformer encodes float32 parameters with the §9 names.
func (m *Transformer[F]) WriteTransformer(w io.Writer, model, task string) error {
	ts := map[string]Tensor{}
	for _, s := range m.specs {
		d := make([]float32, s.size())
		for k, v := range m.Params[s.off : s.off+s.size()] {
			d[k] = float32(v)
		}
		ts[s.name] = Tensor{Shape: s.shape, Data: d}
	}
	meta := map[string]string{}
	for k, v := range m.Meta {
		meta[k] = v
	}
	meta["model"], meta["task"] = model, task
	meta["patch"] = fmt.Sprint(m.Cfg.Patch)
	meta["dim"], meta["heads"] = fmt.Sprint(m.Cfg.Dim), fmt.Sprint(m.Cfg.Heads)
	meta["mlp"], meta["depth"] = fmt.Sprint(m.Cfg.MLP), fmt.Sprint(m.Cfg.Depth)
	if m.Cfg.Relu {
		meta["attention"] = "relu/seqlen"
	}
	for _, k := range []string{"pixel_gain", "command"} {
		if _, ok := meta[k]; !ok {
			meta[k] = map[string]string{"pixel_gain": "2", "command": "unknown"}[k]
		}
	}
	return WriteSafetensors(w, ts, meta)
}

// ParseTransformer reads a block or ViT (model=block|vit) from safetensors
// bytes written by us or by PyTorch with the §9 names.
func ParseTransformer(data []byte, file string) (*Transformer[float32], error) {
	ts, meta, err := ParseSafetensors(data, file)
	if err != nil {
		return nil, err
	}
	return transformerFromTensors(ts, meta, file)
}

// LoadTransformer reads a block or ViT from a safetensors file, with the
// checks of LoadSafetensors.
func LoadTransformer(path string) (*Transformer[float32], error) {
	ts, meta, err := LoadSafetensors(path)
	if err != nil {
		return nil, err
	}
	return transformerFromTensors(ts, meta, path)
}

// transformerConfig reads a block's or ViT's configuration from a
// weights file's metadata, checked.
func transformerConfig(meta map[string]string, file string) (TransformerConfig, error) {
	var cfg TransformerConfig
	if meta["model"] != "block" && meta["model"] != "vit" {
		return cfg, fmt.Errorf("%s: metadata model=%q, want \"block\" or \"vit\"", file, meta["model"])
	}
	if err := checkPixelGain(meta, file); err != nil {
		return cfg, err
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{"patch", &cfg.Patch}, {"dim", &cfg.Dim}, {"heads", &cfg.Heads}, {"mlp", &cfg.MLP}, {"depth", &cfg.Depth}} {
		v, err := metaInt(meta, file, f.key)
		if err != nil {
			return cfg, err
		}
		if v <= 0 || v > 4096 {
			return cfg, fmt.Errorf("%s: metadata %s = %d out of range (allowed 1 … 4096)", file, f.key, v)
		}
		*f.dst = v
	}
	cfg.Relu = meta["attention"] == "relu/seqlen"
	if _, err := NewPatches(cfg.Patch); err != nil {
		return cfg, fmt.Errorf("%s: metadata patch: %w", file, err)
	}
	if cfg.Dim%cfg.Heads != 0 {
		return cfg, fmt.Errorf("%s: metadata dim = %d is not a multiple of heads = %d", file, cfg.Dim, cfg.Heads)
	}
	return cfg, nil
}

// TransformerConfigOfHeader reads a block's or ViT's configuration from
// the start of its safetensors file (the length and the JSON header,
// without the tensors): the web build describes a model whose weights it
// has not fetched yet.
func TransformerConfigOfHeader(head []byte, file string) (TransformerConfig, error) {
	if len(head) < 8 {
		return TransformerConfig{}, formatError(file, "shorter than the 8-byte header length")
	}
	hl, err := headerLength(head, int64(len(head)), file)
	if err != nil {
		return TransformerConfig{}, err
	}
	h, err := parseHeader(head[8:8+hl], file)
	if err != nil {
		return TransformerConfig{}, err
	}
	return transformerConfig(h.meta, file)
}

// transformerFromTensors checks every tensor the metadata's configuration
// needs before allocating the parameters, so metadata describing a huge
// model is refused by the missing tensors rather than by running out of
// memory.
func transformerFromTensors(ts map[string]Tensor, meta map[string]string, file string) (*Transformer[float32], error) {
	cfg, err := transformerConfig(meta, file)
	if err != nil {
		return nil, err
	}
	for _, s := range cfg.specs() {
		if _, err := need(ts, file, s.name, s.shape...); err != nil {
			return nil, err
		}
	}
	m, err := NewTransformer[float32](cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for _, s := range m.specs {
		copy(m.Params[s.off:], ts[s.name].Data)
	}
	m.Meta = meta
	return m, nil
}
