package sim

import (
	"fmt"
	"math"

	"attractorlab/models"
)

// TransformerModel is the recycled block or the ViT (§6). It holds the
// weights trained for masking and for noise and runs the ones matching the
// corruption of the input (the other when one is missing).
type TransformerModel struct {
	Name, Label string
	Mask, Noise *models.Transformer[float32]
}

// NewTransformerModel names a block (depth 1) or ViT pair of networks.
func NewTransformerModel(mask, noise *models.Transformer[float32]) *TransformerModel {
	m := mask
	if m == nil {
		m = noise
	}
	t := &TransformerModel{Name: "block", Label: "Block (recycled)", Mask: mask, Noise: noise}
	if m != nil && m.Cfg.Depth > 1 {
		t.Name, t.Label = "vit", transformerLabel(m.Cfg.Depth)
	}
	return t
}

func (t *TransformerModel) net(noise bool) *models.Transformer[float32] {
	if (noise && t.Noise != nil) || t.Mask == nil {
		return t.Noise
	}
	return t.Mask
}

// Info describes the network: 49 tokens of 4×4 pixels, 4 heads; the ViT
// stops after its 5 layers.
func (t *TransformerModel) Info() ModelInfo {
	info := transformerInfo(t.Name, t.net(false).Cfg)
	info.Label = t.Label
	return info
}

// transformerInfo describes a block or ViT of configuration cfg.
func transformerInfo(name string, cfg models.TransformerConfig) ModelInfo {
	pt, _ := models.NewPatches(cfg.Patch) // cfg was checked when read
	info := ModelInfo{Name: name, Label: "Block (recycled)", Patch: cfg.Patch, Tokens: pt.N, Heads: cfg.Heads}
	if cfg.Depth > 1 {
		info.Label, info.MaxSteps = transformerLabel(cfg.Depth), cfg.Depth
	}
	return info
}

// transformerLabel names a ViT of depth layers.
func transformerLabel(depth int) string { return fmt.Sprintf("ViT (%d layers)", depth) }

// Start embeds the corrupted image: masked pixels 0, noise unclamped (§2).
func (t *TransformerModel) Start(in *Corrupted) Trajectory {
	m := t.net(in.Masked == nil)
	b := models.NewBatch(m, 1)
	b.Start([][]float32{in.Input})
	return &transformerTraj{m: m, b: b, in: in.Input}
}

type transformerTraj struct {
	m  *models.Transformer[float32]
	b  *models.Batch
	t  int
	in []float32
}

// Decode writes the image of the current state. At t = 0 that is the
// corrupted input itself (§8); the output linear of the embedded input is
// not trained to reproduce it.
func (t *transformerTraj) Decode(dst []float32) {
	if t.t == 0 {
		copy(dst, t.in)
		return
	}
	t.b.Decode([][]float32{dst})
}
func (t *transformerTraj) Energy() float64 { return math.NaN() }

// Step applies the block once (the ViT's next layer; past the last layer
// the state stays). attn receives the head average, then every head (§ModelInfo.Heads).
func (t *transformerTraj) Step(attn []float32) {
	if t.m.Cfg.Depth > 1 && t.t >= t.m.Cfg.Depth {
		return
	}
	blk := 0
	if t.m.Cfg.Depth > 1 {
		blk = t.t
	}
	t.b.Apply(blk)
	t.t++
	if attn != nil {
		headAttention(attn, t.b.Attention(0), t.b.H, t.b.T, t.b.TP)
	}
}

// transformerSaved is a saved state of a transformerTraj.
type transformerSaved struct {
	x []float32
	t int
}

func (t *transformerTraj) Save() any { return &transformerSaved{x: t.b.State(0, nil), t: t.t} }

func (t *transformerTraj) Restore(saved any) {
	s := saved.(*transformerSaved)
	t.b.SetState(0, s.x)
	t.t = s.t
}

func (t *transformerTraj) Fork() Rewinder {
	b := models.NewBatch(t.m, 1)
	b.Start([][]float32{t.in})
	b.SetState(0, t.b.State(0, nil))
	return &transformerTraj{m: t.m, b: b, t: t.t, in: t.in}
}

// headAttention writes the head average of att ([H][T][tp]) and then each
// head as T×T matrices, as far as dst has room.
func headAttention(dst, att []float32, H, T, tp int) {
	n := T * T
	avg := dst[:n]
	clear(avg)
	for h := 0; h < H; h++ {
		var hd []float32
		if len(dst) >= (h+2)*n {
			hd = dst[(h+1)*n : (h+2)*n]
		}
		for i := 0; i < T; i++ {
			row := att[(h*T+i)*tp : (h*T+i)*tp+T]
			for j, v := range row {
				avg[i*T+j] += v / float32(H)
				if hd != nil {
					hd[i*T+j] = v
				}
			}
		}
	}
}

// Net is the network the model runs on a task's corruption (the other
// task's when that one is missing).
func (t *TransformerModel) Net(task Kind) *models.Transformer[float32] { return t.net(task == Noise) }
