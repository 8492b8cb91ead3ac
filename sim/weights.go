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
