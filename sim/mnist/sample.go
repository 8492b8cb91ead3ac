package mnist

//go:generate go run ./internal/gensample -mnist ${ATTRACTORLAB_DATA} -out ../../assets/sample

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"attractorlab/assets"
)

// Sizes of the embedded sample (§5): the training subset and the test digits.
const (
	SubsetPerClass = 1000 // training images per class in the subset
	TestPerClass   = 100  // first test images per class embedded
	SubsetSeed     = 0
)

// SubsetIndices chooses perClass images of every class, uniformly with the
// given seed, and returns their indices in ascending order.
func SubsetIndices(labels []uint8, perClass int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 0x5ab5e7))
	var out []int
	for c := uint8(0); c < 10; c++ {
		var idx []int
		for k, l := range labels {
			if l == c {
				idx = append(idx, k)
			}
		}
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		out = append(out, idx[:min(perClass, len(idx))]...)
	}
	slices.Sort(out)
	return out
}

// FirstPerClass returns the indices of the first n images of every class,
// in ascending order.
func FirstPerClass(labels []uint8, n int) []int {
	var cnt [10]int
	var out []int
	for k, l := range labels {
		if cnt[l] < n {
			cnt[l]++
			out = append(out, k)
		}
	}
	return out
}

// Pick returns the subset of s at the given indices.
func (s *Set) Pick(idx []int) *Set {
	out := &Set{Images: make([]byte, 0, len(idx)*784), Labels: make([]uint8, len(idx)), Index: make([]int, len(idx))}
	for q, k := range idx {
		out.Images = append(out.Images, s.Raw(k)...)
		out.Labels[q] = s.Labels[k]
		out.Index[q] = s.Index[k]
	}
	return out
}

// SampleIDX encodes a set as three IDX files: images, labels, indices.
func SampleIDX(s *Set) (images, labels, index *IDX) {
	n := s.Len()
	images = &IDX{Type: 0x08, Dims: []int{n, 28, 28}, Data: s.Images}
	labels = &IDX{Type: 0x08, Dims: []int{n}, Data: s.Labels}
	ib := make([]byte, 4*n)
	for k, v := range s.Index {
		ib[4*k], ib[4*k+1], ib[4*k+2], ib[4*k+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
	index = &IDX{Type: 0x0C, Dims: []int{n}, Data: ib}
	return
}

func setFromEmbedded(prefix string) (*Set, error) { return setFromFS(assets.Sample, "sample", prefix) }

// setFromFS reads an embedded set (dir/prefix-{images,labels,index}.idx.gz).
func setFromFS(fsys fs.ReadFileFS, dir, prefix string) (*Set, error) {
	read := func(name string) (*IDX, error) {
		b, err := fsys.ReadFile(dir + "/" + prefix + "-" + name + ".idx.gz")
		if err != nil {
			return nil, err
		}
		x, err := ReadIDX(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("embedded sample %s-%s: %w", prefix, name, err)
		}
		return x, nil
	}
	im, err := read("images")
	if err != nil {
		return nil, err
	}
	lb, err := read("labels")
	if err != nil {
		return nil, err
	}
	ix, err := read("index")
	if err != nil {
		return nil, err
	}
	s, err := SetFromIDX(im, lb)
	if err != nil {
		return nil, err
	}
	if len(ix.Dims) != 1 || ix.Dims[0] != s.Len() || ix.Type != 0x0C {
		return nil, fmt.Errorf("embedded sample %s-index: dims %v", prefix, ix.Dims)
	}
	for k, v := range ix.Int32s() {
		s.Index[k] = int(v)
	}
	return s, nil
}

var sample struct {
	once        sync.Once
	train, test *Set
	err         error
}

var fashionSample struct {
	once        sync.Once
	train, test *Set
	err         error
	loaded      atomic.Bool
}

// FashionSample returns the embedded Fashion-MNIST sample: the training
// subset drawn as MNIST's (10,000 pictures, 1,000 a class) and the first
// 100 test pictures of every class. A build without it (the page) says so.
func FashionSample() (train, test *Set, err error) {
	fashionSample.once.Do(func() {
		if _, err := assets.FashionSample.ReadFile("fashion/train-labels.idx.gz"); err != nil {
			fashionSample.err = errors.New("this build has no Fashion-MNIST sample")
			return
		}
		fashionSample.train, fashionSample.err = setFromFS(assets.FashionSample, "fashion", "train")
		if fashionSample.err == nil {
			fashionSample.test, fashionSample.err = setFromFS(assets.FashionSample, "fashion", "test")
		}
		fashionSample.loaded.Store(true)
	})
	return fashionSample.train, fashionSample.test, fashionSample.err
}

// FashionSampleLoaded is FashionSample once it has been read, an error
// before (it reads nothing: in the page, reading is a download).
func FashionSampleLoaded() (train, test *Set, err error) {
	if fashionSample.loaded.Load() {
		return FashionSample()
	}
	return nil, nil, errors.New("the Fashion-MNIST sample is not read yet")
}

// Sample returns the embedded training subset (10,000 images) and test
// digits (1,000).
func Sample() (train, test *Set, err error) {
	sample.once.Do(func() {
		sample.train, sample.err = setFromEmbedded("train")
		if sample.err == nil {
			sample.test, sample.err = setFromEmbedded("test")
		}
	})
	return sample.train, sample.test, sample.err
}

// Data is what the app and the experiments run on.
type Data struct {
	Train  *Set   // the training subset: stored memories, training images
	Test   *Set   // full t10k when available, else the embedded 1,000
	Source string // where Test came from
	// Warning says why full MNIST was not used although it was expected
	// (a corrupt cache); "" when nothing went wrong.
	Warning string
	// Dataset names the data set (Datasets, or FolderPrefix and a
	// folder's name): "" is MNIST.
	Dataset string
	// ClassNames name the labels of a folder's data set (its
	// sub-folders); nil for MNIST and Fashion-MNIST.
	ClassNames []string
	// TrainMD5 is a folder data set's training pictures' md5 (its
	// manifest's), "" for the others.
	TrainMD5 string
}

// FolderPrefix starts the name of a data set made from a folder of
// pictures ("folder:leaves").
const FolderPrefix = "folder:"

// Dataset names.
const (
	MNISTName   = "mnist"
	FashionName = "fashion-mnist"
)

// Datasets are the data sets the app runs on.
var Datasets = []string{MNISTName, FashionName}

// DatasetOrMNIST is name, MNISTName for "".
func DatasetOrMNIST(name string) string {
	if name == "" {
		return MNISTName
	}
	return name
}

// Name is the data set's name (MNISTName for "").
func (d *Data) Name() string {
	if d.Dataset == "" {
		return MNISTName
	}
	return d.Dataset
}

// DatasetLabel is a data set's name as a person reads it.
func DatasetLabel(name string) string {
	switch name {
	case FashionName:
		return "Fashion-MNIST"
	case MNISTName, "":
		return "MNIST"
	}
	if f, ok := strings.CutPrefix(name, FolderPrefix); ok {
		return f + " (folder)"
	}
	return name
}

// Classes names the labels of the data set: the digits, or Fashion-MNIST's
// ten kinds of clothing.
func (d *Data) Classes() []string {
	if d.ClassNames != nil {
		return d.ClassNames
	}
	if d.Dataset == FashionName {
		return FashionClasses[:]
	}
	return []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
}

// LoadFashionData is Fashion-MNIST from its cache (dir, or FashionCache
// when ""), as the app runs on it: the training subset drawn as MNIST's
// is (SubsetPerClass images a class, SubsetSeed), and the 10,000 test
// images. Without a converted cache (dir ""), the embedded sample: the
// same training subset and 100 test pictures a class. A cache dir named
// that is missing, or a cache that fails its md5s, says how to make it.
func LoadFashionData(dir string) (*Data, error) {
	explicit := dir != ""
	if dir == "" {
		c, err := FashionCache()
		if err != nil {
			// No cache folder here (the page): the sample.
			train, test, serr := FashionSample()
			if serr != nil {
				return nil, fmt.Errorf("Fashion-MNIST: no cache (%v) and %w", err, serr)
			}
			return &Data{Train: train, Test: test, Source: "the Fashion-MNIST sample (100 test pictures a class)", Dataset: FashionName}, nil
		}
		dir = c
	}
	m, err := LoadFashion(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !explicit {
			// Not converted here: the embedded sample, as MNIST's.
			train, test, serr := FashionSample()
			if serr == nil {
				return &Data{Train: train, Test: test, Source: "the embedded Fashion-MNIST sample (100 test pictures a class; attractorlab data --dataset fashion-mnist converts all 10,000)",
					Dataset: FashionName}, nil
			}
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no Fashion-MNIST in %s: run `attractorlab data --dataset fashion-mnist` first", dir)
		}
		return nil, err
	}
	return &Data{Train: m.Train.Pick(SubsetIndices(m.Train.Labels, SubsetPerClass, SubsetSeed)), Test: m.Test,
		Source: "Fashion-MNIST test set from " + dir, Dataset: FashionName}, nil
}

// LoadData uses full MNIST from dir when dir is not empty (checksums
// verified), else the embedded sample. The training subset is always the
// embedded one: it is the seeded subset of §5.
func LoadData(dir string) (*Data, error) {
	// The embedded sample decodes while the test files are read.
	type sample struct {
		train, test *Set
		err         error
	}
	sc := make(chan sample, 1)
	go func() {
		train, test, err := Sample()
		sc <- sample{train, test, err}
	}()
	var test *Set
	var err error
	if dir != "" {
		test, err = LoadTest(dir)
	}
	smp := <-sc
	if smp.err != nil {
		return nil, smp.err
	}
	if err != nil {
		return nil, err
	}
	d := &Data{Train: smp.train, Test: smp.test, Source: "embedded sample (1,000 test digits)"}
	if test != nil {
		d.Test = test
		d.Source = "MNIST t10k from " + dir
	}
	return d, nil
}

// LoadCached uses full MNIST from the cache (DataDir) when it is there and
// intact, else the embedded sample. A cache that fails its checks does not
// stop the app: the sample is used and Warning says what was wrong and
// how to mend it.
func LoadCached() (*Data, error) {
	dir := DataDir()
	d, err := LoadData(dir)
	if err == nil || dir == "" {
		return d, err
	}
	d, serr := LoadData("")
	if serr != nil {
		return nil, serr
	}
	d.Warning = fmt.Sprintf("MNIST in %s is unusable (%v); using the embedded sample of 1,000 test digits. Run `attractorlab data` to fetch it again.", dir, err)
	return d, nil
}
