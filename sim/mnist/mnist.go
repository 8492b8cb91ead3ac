package mnist

import (
	"attractorlab/models/infile"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"attractorlab/models"
)

// Set is a labelled collection of 28×28 digits.
type Set struct {
	Images []byte  // n×784 raw bytes
	Labels []uint8 // n labels 0..9
	Index  []int   // position of each image in its MNIST file (for display)
}

// Len is the number of digits.
func (s *Set) Len() int { return len(s.Labels) }

// Raw returns the bytes of digit k.
func (s *Set) Raw(k int) []byte { return s.Images[k*models.Pixels : (k+1)*models.Pixels] }

// Clean returns digit k as gain-adjusted pixels: min(g·b/255, 1) (§1).
func (s *Set) Clean(k int, gain float32) []float32 {
	return s.CleanTo(make([]float32, models.Pixels), k, gain)
}

// CleanBytes is a digit's bytes as Clean gives a stored one's.
func CleanBytes(raw []uint8, gain float32) []float32 {
	out := make([]float32, len(raw))
	for q, b := range raw {
		out[q] = min(gain*float32(b)/255, 1)
	}
	return out
}

// CleanTo is Clean into out (of models.Pixels values), which it returns.
func (s *Set) CleanTo(out []float32, k int, gain float32) []float32 {
	out = out[:models.Pixels]
	lut := Palette(gain)
	for q, b := range s.Raw(k) {
		out[q] = lut[b]
	}
	return out
}

// Palette is the pixel value of each byte at gain (Clean's): 256
// possible bytes, each value computed once, by the formula.
func Palette(gain float32) (lut [256]float32) {
	for b := range lut {
		lut[b] = min(gain*float32(b)/255, 1)
	}
	return lut
}

// PixelGain is the authors' preprocessing gain (§1).
const PixelGain = models.PixelGain

// SetFromIDX pairs an image and a label IDX file, checking their shapes.
func SetFromIDX(images, labels *IDX) (*Set, error) {
	if images.Type != 0x08 || len(images.Dims) != 3 || images.Dims[1] != 28 || images.Dims[2] != 28 {
		return nil, fmt.Errorf("%w: images have type 0x%02x and dims %v, want bytes [n,28,28]", ErrIDX, images.Type, images.Dims)
	}
	if labels.Type != 0x08 || len(labels.Dims) != 1 || labels.Dims[0] != images.Dims[0] {
		return nil, fmt.Errorf("%w: labels dims %v do not match %d images", ErrIDX, labels.Dims, images.Dims[0])
	}
	s := &Set{Images: images.Data, Labels: labels.Data, Index: make([]int, images.Dims[0])}
	for k := range s.Index {
		s.Index[k] = k
		if s.Labels[k] > 9 {
			return nil, fmt.Errorf("%w: label %d of image %d is not a digit", ErrIDX, s.Labels[k], k)
		}
	}
	return s, nil
}

// MNIST file names and the md5 of their uncompressed contents.
var MNISTFiles = []struct{ Name, MD5 string }{
	{"train-images-idx3-ubyte", "6bbc9ace898e44ae57da46a324031adb"},
	{"train-labels-idx1-ubyte", "a25bea736e30d166cdddb491f175f624"},
	{"t10k-images-idx3-ubyte", "2646ac647ad5339dbf082846283269ea"},
	{"t10k-labels-idx1-ubyte", "27ae3e4e09519cfbb04c329615203637"},
}

// MNIST is the full dataset.
type MNIST struct {
	Train, Test *Set
}

// readIDXFile opens path (or path.gz) and decodes it, naming the file in errors.
func readIDXFile(path string) (*IDX, error) {
	if _, err := os.Lstat(path); err != nil {
		if _, err2 := os.Lstat(path + ".gz"); err2 != nil {
			return nil, err
		}
		path += ".gz"
	}
	f, err := infile.Open(path, "MNIST file", MaxFileBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	x, err := ReadIDX(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return x, nil
}

// mnistMend is what a wrong MNIST md5 means.
const mnistMend = "corrupt or not MNIST"

// LoadMNIST reads the four files from dir (plain or .gz) and verifies their
// checksums.
func LoadMNIST(dir string) (*MNIST, error) {
	train, test, err := LoadPairs(dir, MNISTFiles, mnistMend)
	if err != nil {
		return nil, err
	}
	return &MNIST{Train: train, Test: test}, nil
}

// LoadTest reads only the test set (t10k) from dir, md5-checked: what a
// run on test digits needs, without reading the 47 MB of training images.
func LoadTest(dir string) (*Set, error) {
	return loadPair(dir, MNISTFiles, 2, mnistMend)
}

// LoadPairs reads a training pair (files[0], [1]) and a test pair
// ([2], [3]) from dir, each file md5-checked as loadPair does.
func LoadPairs(dir string, files []struct{ Name, MD5 string }, mend string) (train, test *Set, err error) {
	if train, err = loadPair(dir, files, 0, mend); err != nil {
		return nil, nil, err
	}
	if test, err = loadPair(dir, files, 2, mend); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// loadPair reads files[k] (images) and [k+1] (labels) from dir, each
// md5-checked, into a Set; a wrong md5 is reported with mend (what it
// means and what to do).
func loadPair(dir string, files []struct{ Name, MD5 string }, k int, mend string) (*Set, error) {
	var xs [2]*IDX
	for i, f := range files[k : k+2] {
		x, err := readIDXFile(filepath.Join(dir, f.Name))
		if err != nil {
			return nil, err
		}
		if got := idxMD5(x); got != f.MD5 {
			return nil, fmt.Errorf("%s: md5 %s, want %s (%s)", filepath.Join(dir, f.Name), got, f.MD5, mend)
		}
		xs[i] = x
	}
	set, err := SetFromIDX(xs[0], xs[1])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return set, nil
}

// idxMD5 is the md5 of the uncompressed file contents.
func idxMD5(x *IDX) string {
	h := md5.New()
	WriteIDX(h, x)
	return hex.EncodeToString(h.Sum(nil))
}

func fileMD5(path string) (string, error) {
	f, err := infile.Open(path, "MNIST file", MaxFileBytes)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Balanced returns the indices of n images with the classes as even as
// the set allows: the first images of each label, in round-robin label
// order (0, 1, …, 9, 0, …), so a smaller set is a prefix of a larger one's
// per-class lists. n must be at most Len.
func (s *Set) Balanced(n int) []int {
	byLabel := make([][]int, 256)
	for k, l := range s.Labels {
		byLabel[l] = append(byLabel[l], k)
	}
	next := make([]int, 256)
	out := make([]int, 0, n)
	for len(out) < n {
		took := false
		for l := range byLabel {
			if len(out) < n && next[l] < len(byLabel[l]) {
				out = append(out, byLabel[l][next[l]])
				next[l]++
				took = true
			}
		}
		if !took {
			break
		}
	}
	return out
}
