package sim

import (
	"fmt"

	"attractorlab/assets"
	"attractorlab/models"
)

// LoadBSA reads bare self-attention weights from path, or the embedded
// pretrained weights for patch side p when path is empty.
func LoadBSA(p int, path string) (*models.BSA, error) {
	var m *models.BSA
	var err error
	if path != "" {
		m, err = models.LoadBSA(path)
	} else {
		name := fmt.Sprintf("weights/bsa-p%d.safetensors", p)
		b, rerr := assets.Weights.ReadFile(name)
		if rerr != nil {
			return nil, fmt.Errorf("no embedded weights for P=%d (%s): pass --weights FILE", p, name)
		}
		m, err = models.ParseBSA(b, "embedded "+name)
		path = "embedded " + name
	}
	if err != nil {
		return nil, err
	}
	if p != 0 && m.P != p {
		return nil, fmt.Errorf("%s: weights are for P=%d, not P=%d", path, m.P, p)
	}
	return m, nil
}

// TransformerNames are the embedded pretrained transformers: the recycled
// block and the ViT, each trained for masking and for noise.
var TransformerNames = []string{"block-mask", "block-noise", "vit-mask", "vit-noise"}

// LoadTransformer reads a block or ViT from path, or the embedded
// pretrained weights name (e.g. "block-mask") when path is empty.
func LoadTransformer(name, path string) (*models.Transformer[float32], error) {
	if path != "" {
		return models.LoadTransformer(path)
	}
	file := "weights/" + name + ".safetensors"
	b, err := assets.Weights.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("no embedded weights %s: pass --weights FILE", file)
	}
	return models.ParseTransformer(b, "embedded "+file)
}

// TrainCorrupter draws the training corruption of §6 for a transformer on
// patches pt: c with the draw (seed, k), masked pixels 0 and noise unclamped.
func TrainCorrupter(c Corruption, pt *models.Patches) func(clean []float32, seed uint64, k int) []float32 {
	return func(clean []float32, seed uint64, k int) []float32 {
		c := c
		c.Seed = seed
		return c.Apply(clean, pt, k).Input
	}
}

// CorruptFirst corrupts the first n digits of set (gain applied) with c on
// patches pt and returns the inputs and the clean images.
func CorruptFirst(set *Set, n int, c Corruption, pt *models.Patches) (inputs, clean [][]float32) {
	n = min(n, set.Len())
	for k := 0; k < n; k++ {
		cl := set.Clean(k, PixelGain)
		inputs = append(inputs, c.Apply(cl, pt, k).Input)
		clean = append(clean, cl)
	}
	return inputs, clean
}
