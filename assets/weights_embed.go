//go:build !webweights

package assets

import (
	"embed"
	"path"
	"strings"
)

// weights holds the pretrained safetensors files (float32).
//
//go:embed weights
var weights embed.FS

// WebWeights tells whether ReadWeights returns the web build's transport
// form (half precision, wrapped: models.UnwrapWeb) instead of the float32
// files. Only the web build (tag webweights) does.
const WebWeights = false

// ReadWeights returns the pretrained weights file name (e.g.
// "bsa-p2.safetensors").
func ReadWeights(name string) ([]byte, error) {
	return weights.ReadFile("weights/" + name)
}

// WeightsDeferred tells whether reading name would first have to fetch it
// (the web build fetches the larger files on first use); the embedded
// files never are.
func WeightsDeferred(name string) bool { return false }

// WeightNames lists the pretrained weights files (e.g.
// "bsa-p2.safetensors"), in the order of their names.
func WeightNames() ([]string, error) {
	entries, err := weights.ReadDir("weights")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && path.Ext(e.Name()) == ".safetensors" && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
