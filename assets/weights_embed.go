//go:build !webweights

package assets

import (
	"embed"
	"encoding/binary"
	"fmt"
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

// WeightsHead returns the start of the weights file name: the 8-byte
// header length and the JSON header it counts.
func WeightsHead(name string) ([]byte, error) {
	b, err := ReadWeights(name)
	if err != nil {
		return nil, err
	}
	if len(b) < 8 {
		return nil, fmt.Errorf("weights/%s: shorter than its header length", name)
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) {
		return nil, fmt.Errorf("weights/%s: header of %d bytes, file of %d", name, n, len(b))
	}
	return b[:8+n], nil
}
