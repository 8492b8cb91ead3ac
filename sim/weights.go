package sim

import (
	"fmt"
	"strings"

	"attractorlab/assets"
	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// LoadBSA reads bare self-attention weights from path, or the embedded
// pretrained weights for patch side p when path is empty.
func LoadBSA(p int, path string) (*models.BSA, error) {
	var m *models.BSA
	var err error
	if path != "" {
		m, err = models.LoadBSA(path)
	} else {
		name := fmt.Sprintf("bsa-p%d.safetensors", p)
		b, rerr := readShipped(name)
		if rerr != nil {
			return nil, fmt.Errorf("no embedded weights for P=%d: %v: pass --weights FILE", p, rerr)
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

// LoadTransformer reads a block or ViT from path, or the embedded
// pretrained weights name (e.g. "block-mask") when path is empty.
func LoadTransformer(name, path string) (*models.Transformer[float32], error) {
	if path != "" {
		return models.LoadTransformer(path)
	}
	file := name + ".safetensors"
	b, err := readShipped(file)
	if err != nil {
		return nil, fmt.Errorf("no embedded weights %s: %v: pass --weights FILE", file, err)
	}
	return models.ParseTransformer(b, "embedded "+file)
}

// readShipped returns the shipped weights file name: embedded in float32,
// or, in the web build, fetched in half precision and unwrapped
// (models.UnwrapWeb; docs/maths.md says what half precision changes).
func readShipped(name string) ([]byte, error) {
	b, err := assets.ReadWeights(name)
	if err != nil || !assets.WebWeights {
		return b, err
	}
	st, err := models.UnwrapWebYield(b, name, 8+models.MaxHeader+models.MaxDataBytes, pause)
	pause() // the page's turn before the file is parsed
	return st, err
}

// shippedDeferred tells whether the model name's shipped weights would
// have to be fetched first (the web build fetches them on first use; the
// block and the ViT come with both their tasks' files).
func shippedDeferred(name string) bool {
	sp, _ := Spec(name)
	for _, f := range sp.Shipped {
		if assets.WeightsDeferred(f) {
			return true
		}
	}
	return false
}

// shippedHead is the start of the shipped weights file name: its length
// and JSON header (the web build has it before the file).
func shippedHead(name string) ([]byte, error) { return assets.WeightsHead(name) }

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
func CorruptFirst(set *mnist.Set, n int, c Corruption, pt *models.Patches) (inputs, clean [][]float32) {
	n = min(n, set.Len())
	for k := 0; k < n; k++ {
		cl := set.Clean(k, mnist.PixelGain)
		inputs = append(inputs, c.Apply(cl, pt, k).Input)
		clean = append(clean, cl)
	}
	return inputs, clean
}

// LoadTransformerModel builds the block or ViT ("block" or "vit") from the
// file at path (used for both tasks), or from the embedded weights for
// masking and for noise. A missing embedded network is reported and the
// other one serves both tasks; an error means neither loaded.
func LoadTransformerModel(name, path string) (*TransformerModel, []string, error) {
	check := func(m *models.Transformer[float32], src string) error {
		if (m.Cfg.Depth > 1) != (name == "vit") {
			return fmt.Errorf("%s: holds a %s (depth %d), not a %s", src, m.Meta["model"], m.Cfg.Depth, name)
		}
		return nil
	}
	if path != "" {
		m, err := models.LoadTransformer(path)
		if err == nil {
			err = check(m, path)
		}
		if err != nil {
			return nil, nil, err
		}
		return NewTransformerModel(m, m), nil, nil
	}
	var nets [2]*models.Transformer[float32]
	var problems []string
	for k, task := range []string{"mask", "noise"} {
		m, err := LoadTransformer(name+"-"+task, "")
		if err == nil {
			err = check(m, "embedded "+name+"-"+task)
		}
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		nets[k] = m
	}
	if nets[0] == nil && nets[1] == nil {
		return nil, problems, fmt.Errorf("%s: %s", name, strings.Join(problems, "; "))
	}
	return NewTransformerModel(nets[0], nets[1]), problems, nil
}
