// Package assets embeds what the app needs on a machine that has never seen
// MNIST: the icon, the sample digits and the pretrained weights.
package assets

import "embed"

//go:generate go run ./internal/gensample -mnist ${ATTRACTORLAB_DATA} -out sample

// Sample holds the embedded digits as gzipped IDX files:
// train-{images,labels,index}.idx.gz (the 10,000-image training subset of
// DESIGN §5) and test-{images,labels,index}.idx.gz (the first 100 test
// digits of every class). index holds each digit's position in MNIST.
//
//go:embed sample
var Sample embed.FS

// Weights holds the pretrained safetensors files.
//
//go:embed weights
var Weights embed.FS

// Icon is the application icon (256×256 PNG).
//
//go:embed icon.png
var Icon []byte
