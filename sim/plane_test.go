package sim

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"attractorlab/assets"
	"attractorlab/sim/mnist"
)

// The plane embedded with the sample is the one computed from it today,
// to 1e-6 (regenerate: go run ./sim/mnist/internal/gensample -plane -out assets/sample).
func TestEmbeddedPlaneIsTheComputedOne(t *testing.T) {
	if raceOn {
		t.Skip("a second of single-goroutine numerics; test-portable and test-simd run it")
	}
	for _, em := range []struct {
		sample func() (*mnist.Set, *mnist.Set, error)
		fsys   interface{ ReadFile(string) ([]byte, error) }
		name   string
	}{{mnist.Sample, assets.Sample, EmbeddedPlane}, {mnist.FashionSample, assets.FashionSample, FashionPlane}} {
		if em.name == FashionPlane && runtime.GOARCH == "wasm" {
			// A second 10,000-picture plane under Node took a minute; the
			// native builds (portable, assembly, AVX-512) each check it.
			continue
		}
		train, _, err := em.sample()
		if err != nil {
			t.Fatal(err)
		}
		b, err := em.fsys.ReadFile(em.name)
		if err != nil {
			t.Fatalf("the sample has no plane (%v): go run ./sim/mnist/internal/gensample -plane -out assets/sample", err)
		}
		kept, err := ReadPlane(b, SetHash(train))
		if err != nil {
			t.Fatalf("%s: %v", em.name, err)
		}
		got := ComputePlane(train)
		if kept.N != got.N {
			t.Fatalf("%s: kept plane of %d pictures, the sample has %d", em.name, kept.N, got.N)
		}
		worst := 0.0
		for _, pair := range [][2][]float64{{kept.Mean, got.Mean}, {kept.PC[0], got.PC[0]}, {kept.PC[1], got.PC[1]}, {kept.Share[:], got.Share[:]}} {
			for q := range pair[0] {
				worst = math.Max(worst, math.Abs(pair[0][q]-pair[1][q]))
			}
		}
		if worst > 1e-6 {
			t.Errorf("%s: the embedded plane differs from the computed one by %.3g (allowed 1e-6)", em.name, worst)
		}
		// The window and reproduce take it from the embedded file.
		s := StateSpaceOf(train, t.TempDir())
		if s.Source != "embedded" || s.Warning != "" {
			t.Errorf("%s: sample's state space from %q (warning %q), want the embedded plane", em.name, s.Source, s.Warning)
		}
		want := got.Space(train)
		for k := range want.Points {
			for c := range 2 {
				if d := math.Abs(s.Points[k][c] - want.Points[k][c]); d > 1e-5 {
					t.Fatalf("%s: picture %d, component %d: %v from the embedded plane, %v computed", em.name, k, c, s.Points[k][c], want.Points[k][c])
				}
			}
		}
	}
}

// A set other than the sample: its plane is computed once, kept under its
// hash, read back the next time; a damaged or foreign file is refused by
// name and replaced; nothing half-written stays.
func TestPlaneKeptInTheCache(t *testing.T) {
	_, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	set := test.Pick([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39})
	other := test.Pick([]int{100, 200, 300, 400, 500, 600, 700, 800, 900})
	dir := t.TempDir()
	path := PlanePath(dir, SetHash(set))

	first := StateSpaceOf(set, dir)
	if !strings.HasPrefix(first.Source, "computed") || !strings.Contains(first.Source, path) || first.Warning != "" {
		t.Fatalf("first use: source %q, warning %q; want computed and kept in %s", first.Source, first.Warning, path)
	}
	again := StateSpaceOf(set, dir)
	if again.Source != path || again.Warning != "" {
		t.Fatalf("second use: source %q, warning %q; want read from %s", again.Source, again.Warning, path)
	}
	for k := range first.Points {
		if first.Points[k] != again.Points[k] {
			t.Fatalf("digit %d at %v computed, %v read back", k, first.Points[k], again.Points[k])
		}
	}

	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := ComputePlane(other).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[100] ^= 1
	for _, tc := range []struct {
		name, want string
		file       []byte
	}{
		{"damaged", "checksum", flipped},
		{"cut short", "bytes, a plane file has", good[:len(good)/2]},
		{"empty", "0 bytes", nil},
		{"not a plane", "not a plane file", append([]byte("PNG\x00\x00\x00\x00\x00"), good[8:]...)},
		{"other digits", "the plane of other digits", foreign},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, tc.file, 0o644); err != nil {
				t.Fatal(err)
			}
			s := StateSpaceOf(set, dir)
			if !strings.Contains(s.Warning, path) || !strings.Contains(s.Warning, tc.want) || !strings.Contains(s.Warning, "computed again") {
				t.Errorf("warning %q, want it to name %s and say %q", s.Warning, path, tc.want)
			}
			if s.Points[3] != first.Points[3] {
				t.Errorf("recomputed digit 3 at %v, first %v", s.Points[3], first.Points[3])
			}
			b, err := os.ReadFile(path)
			if err != nil || string(b) != string(good) {
				t.Errorf("the refused file was not replaced by the good plane (err %v)", err)
			}
		})
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A cache that cannot be written: the plane is still computed and used,
// and the warning says it was not kept.
func TestPlaneCacheUnwritable(t *testing.T) {
	_, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	set := test.Pick([]int{5, 6, 7, 8, 9, 10})
	block := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(block, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := StateSpaceOf(set, filepath.Join(block, "planes"))
	if len(s.Points) != set.Len() || !strings.Contains(s.Warning, "could not be kept") {
		t.Errorf("points %d, warning %q", len(s.Points), s.Warning)
	}
}

func FuzzReadPlane(f *testing.F) {
	_, test, err := mnist.Sample()
	if err != nil {
		f.Fatal(err)
	}
	set := test.Pick([]int{1, 2, 3, 4})
	good, err := ComputePlane(set).MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:40])
	f.Add([]byte(planeMagic))
	h := SetHash(set)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ReadPlane(b, h)
		if err != nil {
			return
		}
		back, err := p.MarshalBinary()
		if err != nil || string(back) != string(b) {
			t.Fatalf("a plane read did not write back the same bytes (%v)", err)
		}
	})
}
