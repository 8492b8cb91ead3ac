package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// digitFolder writes DIR/<digit>/<k>.png: perClass of the embedded
// sample's test digits of each class, as PNG pictures (light on dark, as
// MNIST is), and a text file by mistake.
func digitFolder(t *testing.T, dir string, perClass int) {
	t.Helper()
	_, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	have := map[uint8]int{}
	for k := range test.Len() {
		l := test.Labels[k]
		if have[l] >= perClass {
			continue
		}
		have[l]++
		sub := filepath.Join(dir, fmt.Sprint(l))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		img := image.NewGray(image.Rect(0, 0, 28, 28))
		for q, b := range test.Raw(k) {
			img.SetGray(q%28, q/28, color.Gray{Y: b})
		}
		f, err := os.Create(filepath.Join(sub, fmt.Sprintf("%04d.png", k)))
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if err := os.WriteFile(filepath.Join(dir, "3", "notes.txt"), []byte("not a picture"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFolderCommands: `data --dataset FOLDER` caches a folder of pictures
// as folder:NAME, which train, reproduce and the window's flag take; the
// weights record it; what is refused is refused by name.
func TestFolderCommands(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	tmp := t.TempDir()
	ctx := context.Background()
	dir := filepath.Join(tmp, "My Digits")
	digitFolder(t, dir, 12)
	out, err := captureStdout(func() error { return run(ctx, []string{"data", "--dataset", dir}) })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"folder:my-digits ready", "100 training and 20 test pictures, 10 classes: 0, 1, 2", "skipped 1", "3/notes.txt: not a PNG or JPEG picture", "--dataset folder:my-digits"} {
		if !strings.Contains(out, want) {
			t.Errorf("data said\n%s\nwant %q", out, want)
		}
	}
	w := filepath.Join(tmp, "w.safetensors")
	if err := run(ctx, []string{"train", "--dataset", "folder:my-digits", "--patch", "2", "--epochs", "1", "--images", "100", "--val", "10", "--batch", "50", "--out", w}); err != nil {
		t.Fatal(err)
	}
	m, err := models.LoadBSA(w)
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta["dataset"] != "folder:my-digits" || len(m.Meta["dataset_md5"]) != 32 {
		t.Fatalf("the weights say they were trained on %q (md5 %q)", m.Meta["dataset"], m.Meta["dataset_md5"])
	}
	rep := filepath.Join(tmp, "rep")
	if err := run(ctx, []string{"reproduce", "--dataset", "folder:my-digits", "--model", "bsa", "--patch", "2", "--weights", w, "--task", "noise", "--n", "5", "--steps", "3", "--out", rep}); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(filepath.Join(rep, "summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(fh).ReadAll()
	fh.Close()
	if err != nil || len(recs) != 2 || recs[1][2] != "5" {
		t.Fatalf("summary %v %v", recs, err)
	}
	if opts, err := parseGUIFlags([]string{"--dataset", "folder:my-digits"}); err != nil || opts.dataset != "folder:my-digits" {
		t.Fatalf("the window's --dataset folder:my-digits: %+v, %v", opts, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"data", "--dataset", dir, "--package", "x.tgz"}, "--package is not for a folder of pictures"},
		{[]string{"data", "--dataset", "folder:my-digits"}, "make it from its folder with --dataset FOLDER --name my-digits"},
		{[]string{"data", "--name", "x"}, "--name is for --dataset FOLDER"},
		{[]string{"data", "--dataset", filepath.Join(tmp, "nowhere") + "/"}, "no such file or directory"},
		{[]string{"data", "--dataset", filepath.Join(tmp, "rep"), "--name", "my-digits"}, "is already the folder"},
		{[]string{"reproduce", "--dataset", "folder:leaves", "--n", "3", "--steps", "3", "--out", filepath.Join(tmp, "x")}, "no data set folder:leaves here: make it with `attractorlab data --dataset DIR --name leaves`"},
		{[]string{"reproduce", "--dataset", "folder:Bad", "--n", "3", "--steps", "3", "--out", filepath.Join(tmp, "y")}, "a folder's name is 1 to 64"},
		{[]string{"gui", "--dataset", "folder:Bad"}, `--dataset "folder:Bad" is not a data set here`},
	} {
		var err error
		if c.args[0] == "gui" {
			_, err = parseGUIFlags(c.args[1:])
		} else {
			err = run(ctx, c.args)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// captureStdout runs f and returns what it printed to standard output.
func captureStdout(f func() error) (string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", err
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		done <- b.String()
	}()
	ferr := f()
	os.Stdout = old
	w.Close()
	return <-done, ferr
}

// TestFolderOpenedAnew: the window's data sets keep what they opened, but
// a folder converted again (its pictures changed) is opened anew.
func TestFolderOpenedAnew(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "digits")
	digitFolder(t, dir, 6)
	if _, err := captureStdout(func() error { return run(ctx, []string{"data", "--dataset", dir}) }); err != nil {
		t.Fatal(err)
	}
	home, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	open := openSources(home, nil)
	a, err := open("folder:digits")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := open("folder:digits"); err != nil || b != a {
		t.Fatalf("opened twice: %v, the same source %v", err, b == a)
	}
	digitFolder(t, dir, 12)
	if _, err := captureStdout(func() error { return run(ctx, []string{"data", "--dataset", dir}) }); err != nil {
		t.Fatal(err)
	}
	c, err := open("folder:digits")
	if err != nil || c == a || c.Data.Train.Len() != 100 {
		t.Fatalf("converted again: %v, a new source %v, %d training pictures", err, c != a, c.Data.Train.Len())
	}
}
