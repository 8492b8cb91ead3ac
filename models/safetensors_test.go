package models

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// stFile builds a safetensors file: the 8-byte length, header json (padded
// to 8) and data zero bytes of data section.
func stFile(json string, data int) []byte {
	for len(json)%8 != 0 {
		json += " "
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(json)))
	return append(append(b, json...), make([]byte, data)...)
}

// withTimeout runs f and fails the test if it has not returned after d
// (the input made it hang).
func withTimeout[T any](t *testing.T, d time.Duration, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("no answer after %v", d)
		panic("unreachable")
	}
}

// TestLoadRefusesBeforeReading: loading from a path refuses non-regular
// files, oversized headers, headers whose tensors exceed MaxDataBytes, and
// files whose size is not 8 + header + data, without reading or allocating
// the data (at most 64 MB allocated, and an answer within seconds).
func TestLoadRefusesBeforeReading(t *testing.T) {
	m, err := NewBSA(4, 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	var good bytes.Buffer
	if err := m.WriteBSA(&good); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// sparse is a file of size bytes starting with head (holes read as 0).
	sparse := func(name string, head []byte, size int64) string {
		p := write(name, head)
		if err := os.Truncate(p, size); err != nil {
			t.Skipf("no sparse files here: %v", err)
		}
		return p
	}
	cases := []struct {
		name  string
		path  func(t *testing.T) string
		want  string
		bytes bool // also check ParseBSA on the file's bytes
	}{
		{"dev zero", func(t *testing.T) string {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip("no /dev/zero")
			}
			return "/dev/zero"
		}, "not a regular file (a character device)", false},
		{"pipe", func(t *testing.T) string {
			r, w, err := os.Pipe()
			if err != nil && runtime.GOOS == "js" {
				t.Skip("no pipes in the browser's file system")
			} else if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() })
			p := fmt.Sprintf("/proc/self/fd/%d", r.Fd())
			if _, err := os.Stat(p); err != nil {
				t.Skip("no /proc/self/fd")
			}
			return p
		}, "not a regular file (a named pipe (FIFO))", false},
		{"directory", func(t *testing.T) string { return dir }, "not a regular file (a directory)", false},
		{"file of zeros", func(t *testing.T) string { return write("zeros", make([]byte, 1<<20)) }, "header is not a JSON object", true},
		{"2 GiB of zeros", func(t *testing.T) string { return sparse("zeros2g", nil, 2<<30) }, "file too large: 2.0 GB, the limit is 1.0 GB", false},
		{"header length too large", func(t *testing.T) string {
			return write("hl", binary.LittleEndian.AppendUint64(nil, MaxHeader+1))
		}, "exceeds the 16777216-byte limit", true},
		{"header longer than the file", func(t *testing.T) string { return write("short", good.Bytes()[:40]) }, "truncated: header says", true},
		{"one huge tensor, small file", func(t *testing.T) string {
			return write("huge", stFile(`{"J":{"dtype":"F32","shape":[268435457],"data_offsets":[0,1073741828]}}`, 16))
		}, "larger than the 1073741824-byte limit", true},
		{"huge tensors, file of that size", func(t *testing.T) string {
			h := stFile(`{"A":{"dtype":"F32","shape":[268435456],"data_offsets":[0,1073741824]},`+
				`"B":{"dtype":"F32","shape":[1],"data_offsets":[1073741824,1073741828]}}`, 0)
			return sparse("huge2", h, int64(len(h))+1<<30+4)
		}, "the tensors need more than 1073741824 bytes", false},
		{"valid header, 2 GiB file", func(t *testing.T) string {
			return sparse("big", good.Bytes(), 2<<30)
		}, "file too large: 2.0 GB, the limit is 1.0 GB", false},
		{"truncated", func(t *testing.T) string { return write("trunc", good.Bytes()[:good.Len()-100]) },
			fmt.Sprintf("truncated: the file is %d bytes, but its header's data_offsets need %d", good.Len()-100, good.Len()), true},
		{"trailing bytes", func(t *testing.T) string { return write("trail", append(bytes.Clone(good.Bytes()), 1, 2, 3)) },
			fmt.Sprintf("3 trailing bytes: the file is %d bytes", good.Len()+3), true},
		{"header claims tensor past the end", func(t *testing.T) string {
			return write("past", stFile(`{"J":{"dtype":"F32","shape":[4096],"data_offsets":[0,16384]}}`, 8))
		}, "truncated: the file is 80 bytes, but its header's data_offsets need 16456 (8 + 64 header + 16384 tensor data)", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.path(t)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := withTimeout(t, 20*time.Second, func() error { _, err := LoadBSA(p); return err })
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not name %s and say %q", err, p, tc.want)
			}
			if a := after.TotalAlloc - before.TotalAlloc; a > 64<<20 {
				t.Fatalf("allocated %d bytes before refusing", a)
			}
			if _, err := LoadTransformer(p); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadTransformer: error %v, want %q", err, tc.want)
			}
			if tc.bytes {
				b, rerr := os.ReadFile(p)
				if rerr != nil {
					t.Fatal(rerr)
				}
				if _, err := ParseBSA(b, "embedded x"); err == nil || !strings.Contains(err.Error(), "embedded x") ||
					!strings.Contains(err.Error(), strings.ReplaceAll(tc.want, p, "embedded x")) {
					t.Fatalf("ParseBSA: error %v, want %q", err, tc.want)
				}
			}
		})
	}
	t.Run("good file loads", func(t *testing.T) {
		p := write("good.safetensors", good.Bytes())
		m2, err := LoadBSA(p)
		if err != nil {
			t.Fatal(err)
		}
		if m2.P != 4 || m2.D != 32 || !slicesEqual(m2.J, m.J) || !slicesEqual(m2.F, m.F) {
			t.Fatal("loaded network differs")
		}
	})
}

func slicesEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if math.Float32bits(a[k]) != math.Float32bits(b[k]) {
			return false
		}
	}
	return true
}

// poke overwrites element k of tensor name in the safetensors bytes b.
func poke(t *testing.T, b []byte, name string, k int, v float32) []byte {
	t.Helper()
	b = bytes.Clone(b)
	hl := int64(binary.LittleEndian.Uint64(b))
	h, err := parseHeader(b[8:8+hl], "poke")
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range h.tensors {
		if ts.name == name {
			binary.LittleEndian.PutUint32(b[8+hl+ts.a+4*int64(k):], math.Float32bits(v))
			return b
		}
	}
	t.Fatalf("no tensor %q", name)
	return nil
}

// TestNonFiniteWeightsRefused: a NaN or ±Inf in J, F or a transformer
// tensor is refused, from bytes and from a path, naming the file, the
// tensor and the element.
func TestNonFiniteWeightsRefused(t *testing.T) {
	bsa, err := NewBSA(4, 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	var bb bytes.Buffer
	if err := bsa.WriteBSA(&bb); err != nil {
		t.Fatal(err)
	}
	tf, err := NewTransformer[float32](TransformerConfig{Patch: 4, Dim: 8, Heads: 2, MLP: 8, Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	tf.Init(1)
	var tb bytes.Buffer
	if err := tf.WriteTransformer(&tb, "vit", "mask"); err != nil {
		t.Fatal(err)
	}
	parseBSA := func(b []byte, f string) error { _, err := ParseBSA(b, f); return err }
	loadBSA := func(p string) error { _, err := LoadBSA(p); return err }
	parseT := func(b []byte, f string) error { _, err := ParseTransformer(b, f); return err }
	loadT := func(p string) error { _, err := LoadTransformer(p); return err }
	inf := float32(math.Inf(1))
	cases := []struct {
		name   string
		file   []byte
		tensor string
		k      int
		v      float32
		want   string
		parse  func([]byte, string) error
		load   func(string) error
	}{
		{"J NaN", bb.Bytes(), "J", 1234, float32(math.NaN()), `tensor "J" element 1234 (index [0 1 6 18] of shape [49 49 32 32]) is NaN`, parseBSA, loadBSA},
		{"J +Inf", bb.Bytes(), "J", 0, inf, `tensor "J" element 0 (index [0 0 0 0] of shape [49 49 32 32]) is +Inf`, parseBSA, loadBSA},
		{"F -Inf", bb.Bytes(), "F", 33, -inf, `tensor "F" element 33 (index [1 1] of shape [32 32]) is -Inf`, parseBSA, loadBSA},
		{"qkv NaN", tb.Bytes(), "blocks.1.attn.qkv.weight", 17, float32(math.NaN()), `tensor "blocks.1.attn.qkv.weight" element 17 (index [2 1] of shape [24 8]) is NaN`, parseT, loadT},
		{"out.bias Inf", tb.Bytes(), "out.bias", 15, inf, `tensor "out.bias" element 15 (index [15] of shape [16]) is +Inf`, parseT, loadT},
		// Finite but near float32's limit: the energies would overflow to NaN.
		{"J 3e38", bb.Bytes(), "J", 7, 3e38, `tensor "J" element 7 (index [0 0 0 7] of shape [49 49 32 32]) is 3.0000000054977558e+38, out of range (allowed |w| ≤ 1e+06)`, parseBSA, loadBSA},
		{"qkv -2e6", tb.Bytes(), "blocks.1.attn.qkv.weight", 3, -2e6, `tensor "blocks.1.attn.qkv.weight" element 3 (index [0 3] of shape [24 8]) is -2e+06, out of range (allowed |w| ≤ 1e+06)`, parseT, loadT},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := poke(t, tc.file, tc.tensor, tc.k, tc.v)
			// The first bad element is reported, not a later one.
			b = poke(t, b, tc.tensor, tc.k+1, float32(math.NaN()))
			err := tc.parse(b, "w.safetensors")
			if err == nil || !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "w.safetensors: "+tc.want) {
				t.Fatalf("parse: error %v, want %q", err, tc.want)
			}
			p := filepath.Join(dir, tc.name+".safetensors")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			err = tc.load(p)
			if err == nil || !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), p+": "+tc.want) {
				t.Fatalf("load: error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestWriteRefusesWhatParseRefuses: the writer refuses NaN/Inf by tensor
// and element and negative shapes, and writes nothing.
func TestWriteRefusesWhatParseRefuses(t *testing.T) {
	cases := []struct {
		name string
		ts   map[string]Tensor
		want string
	}{
		{"NaN", map[string]Tensor{"a": {Shape: []int{1}, Data: []float32{1}}, "J": {Shape: []int{2, 2}, Data: []float32{0, 1, float32(math.NaN()), 2}}},
			`tensor "J" element 2 (index [1 0] of shape [2 2]) is NaN`},
		{"-Inf", map[string]Tensor{"F": {Shape: []int{3}, Data: []float32{float32(math.Inf(-1)), 0, 0}}},
			`tensor "F" element 0 (index [0] of shape [3]) is -Inf`},
		{"negative shape", map[string]Tensor{"F": {Shape: []int{-1, -2}, Data: []float32{0, 0}}}, `tensor "F": shape [-1 -2] is negative`},
		{"reserved name", map[string]Tensor{"__metadata__": {Shape: []int{1}, Data: []float32{0}}}, "reserved"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := WriteSafetensors(&b, tc.ts, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if b.Len() != 0 {
				t.Fatalf("%d bytes written", b.Len())
			}
		})
	}
}

// TestNewBSARange: NewBSA refuses P and d outside the ranges whose files
// load, and the largest d gives a file the loader's limit accepts (sizes
// computed from a synthesized header; nothing large is allocated).
func TestNewBSARange(t *testing.T) {
	cases := []struct {
		p, d int
		want string // "" for accepted
	}{
		{2, 84, "d = 84 is out of range for P=2 (allowed 8 … 81)"},
		{2, 82, "d = 82 is out of range for P=2 (allowed 8 … 81)"},
		{2, 7, "d = 7 is out of range for P=2 (allowed 8 … 81)"},
		{2, 8, ""},
		{4, 31, "d = 31 is out of range for P=4 (allowed 32 … 292)"},
		{4, 32, ""},
		{1, 21, "d = 21 is out of range for P=1 (allowed 2 … 20)"},
		{28, 1568, "patch = 28 is out of range (allowed 1, 2, 4, 7 or 14)"},
		{3, 18, "patch = 3 is out of range (allowed 1, 2, 4, 7 or 14)"},
		{0, 8, "patch = 0 is out of range"},
		{-2, 8, "patch = -2 is out of range"},
		{2, -1, "d = -1 is out of range for P=2"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("P=%d,d=%d", tc.p, tc.d), func(t *testing.T) {
			_, err := NewBSA(tc.p, tc.d, 1)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	for _, p := range BSAPatchSides {
		t.Run(fmt.Sprintf("max d for P=%d", p), func(t *testing.T) {
			pt, _ := NewPatches(p)
			dmax := MaxBSADim(p)
			if dmax < MinBSADim(p) {
				t.Fatalf("MaxBSADim(%d) = %d below the minimum %d", p, dmax, MinBSADim(p))
			}
			n, np, a2 := int64(pt.N), int64(roundUp16(pt.N)), int64(2*pt.A)
			// The header WriteBSA would write for d = dmax passes the
			// loader's checks; its J in memory is within the limit too.
			jb := n * n * int64(dmax) * int64(dmax) * 4
			h := fmt.Sprintf(`{"__metadata__":{"model":"bsa"},"F":{"dtype":"F32","shape":[%d,%d],"data_offsets":[0,%d]},`+
				`"J":{"dtype":"F32","shape":[%d,%d,%d,%d],"data_offsets":[%d,%d]}}`,
				dmax, a2, 4*int64(dmax)*a2, n, n, dmax, dmax, 4*int64(dmax)*a2, 4*int64(dmax)*a2+jb)
			hd, err := parseHeader([]byte(h), "max")
			if err != nil {
				t.Fatalf("the loader refuses the largest network: %v", err)
			}
			if hd.data != bsaFileBytes(n, a2, int64(dmax)) || hd.data > MaxDataBytes {
				t.Fatalf("data section %d bytes, want %d ≤ %d", hd.data, bsaFileBytes(n, a2, int64(dmax)), MaxDataBytes)
			}
			if mem := 4 * n * np * int64(dmax) * int64(dmax); mem > MaxDataBytes {
				t.Fatalf("J in memory is %d bytes, over %d", mem, MaxDataBytes)
			}
			// dmax is the largest: one more exceeds the limit in the file
			// or in memory, and NewBSA refuses it before allocating.
			if bsaFits(n, np, a2, int64(dmax)+1) {
				t.Fatalf("d = %d would also fit", dmax+1)
			}
			want := fmt.Sprintf("d = %d is out of range for P=%d (allowed %d … %d)", dmax+1, p, 2*p*p, dmax)
			if _, err := NewBSA(p, dmax+1, 1); err == nil || err.Error() != want {
				t.Fatalf("NewBSA(%d, %d): %v, want %q", p, dmax+1, err, want)
			}
		})
	}
}

// TestParseModelMetadata: metadata that is not a usable number, a patch
// side or d outside the allowed ranges, and transformer metadata describing
// a huge model are refused by name, without allocating the model.
func TestParseModelMetadata(t *testing.T) {
	bsa := func(meta map[string]string, d int) []byte {
		pt, _ := NewPatches(2)
		var b bytes.Buffer
		err := WriteSafetensors(&b, map[string]Tensor{
			"F": {Shape: []int{d, 8}, Data: make([]float32, d*8)},
			"J": {Shape: []int{pt.N, pt.N, d, d}, Data: make([]float32, pt.N*pt.N*d*d)},
		}, meta)
		if err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	transformer := func(meta map[string]string) []byte {
		var b bytes.Buffer
		if err := WriteSafetensors(&b, map[string]Tensor{"x": {Shape: []int{1}, Data: []float32{0}}}, meta); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	tmeta := func(kv ...string) map[string]string {
		m := map[string]string{"model": "vit", "patch": "4", "dim": "8", "heads": "2", "mlp": "8", "depth": "2"}
		for k := 0; k < len(kv); k += 2 {
			m[kv[k]] = kv[k+1]
		}
		return m
	}
	parseBSA := func(b []byte) error { _, err := ParseBSA(b, "m.safetensors"); return err }
	parseT := func(b []byte) error { _, err := ParseTransformer(b, "m.safetensors"); return err }
	cases := []struct {
		name  string
		file  []byte
		parse func([]byte) error
		want  string
	}{
		{"lambda_train NaN", bsa(map[string]string{"model": "bsa", "patch": "2", "lambda_train": "NaN"}, 8), parseBSA,
			`m.safetensors: metadata "lambda_train" = "NaN" is not a positive finite number`},
		{"clamp negative", bsa(map[string]string{"model": "bsa", "patch": "2", "clamp": "-1"}, 8), parseBSA,
			`m.safetensors: metadata "clamp" = "-1" is not a positive finite number`},
		{"clamp Inf", bsa(map[string]string{"model": "bsa", "patch": "2", "clamp": "+Inf"}, 8), parseBSA,
			`m.safetensors: metadata "clamp" = "+Inf" is not a positive finite number`},
		{"patch not an integer", bsa(map[string]string{"model": "bsa", "patch": "2x"}, 8), parseBSA,
			`m.safetensors: metadata "patch" = "2x" is not an integer`},
		{"patch 28", transformer(map[string]string{"model": "bsa", "patch": "28"}), parseBSA,
			`m.safetensors: metadata patch: patch = 28 is out of range (allowed 1, 2, 4, 7 or 14)`},
		{"d below 2P²", bsa(map[string]string{"model": "bsa", "patch": "2"}, 7), parseBSA,
			`m.safetensors: tensor "F" has shape [7 8]: d = 7 is out of range for P=2 (allowed 8 … 81)`},
		{"huge transformer", transformer(tmeta("dim", "4096", "mlp", "4096", "depth", "4096", "heads", "1")), parseT,
			`m.safetensors: tensor "embed.weight" is missing`},
		{"heads do not divide dim", transformer(tmeta("heads", "3")), parseT,
			`m.safetensors: metadata dim = 8 is not a multiple of heads = 3`},
		{"patch 3", transformer(tmeta("patch", "3")), parseT,
			`m.safetensors: metadata patch: patch side 3 does not divide 28`},
		{"dim too large", transformer(tmeta("dim", "4097")), parseT,
			`m.safetensors: metadata dim = 4097 out of range (allowed 1 … 4096)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := tc.parse(tc.file)
			runtime.ReadMemStats(&after)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if a := after.TotalAlloc - before.TotalAlloc; a > 64<<20 {
				t.Fatalf("allocated %d bytes before refusing", a)
			}
		})
	}
}

// A weights file trained on digits of another gain is refused by its
// field; the gain we use, written any way, is read.
func TestPixelGainChecked(t *testing.T) {
	if raceOn {
		t.Skip("single-goroutine numerics: checked natively without the race detector (make test-portable, test-simd)")
	}
	m, err := NewBSA(2, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		gain string
		ok   bool
	}{{"2", true}, {"2.0", true}, {" 2 ", true}, {"3", false}, {"0", false}, {"two", false}, {"NaN", false}} {
		m.Meta = map[string]string{"pixel_gain": tc.gain}
		var b bytes.Buffer
		if err := m.WriteBSA(&b); err != nil {
			t.Fatal(err)
		}
		_, err := ParseBSA(b.Bytes(), "w.safetensors")
		if tc.ok != (err == nil) {
			t.Errorf("pixel_gain %q: error %v, want ok %v", tc.gain, err, tc.ok)
		}
		if err != nil && (!strings.Contains(err.Error(), "w.safetensors") || !strings.Contains(err.Error(), "pixel_gain") || !strings.Contains(err.Error(), "allowed: 2")) {
			t.Errorf("pixel_gain %q: %v, want the file, the field and the allowed value named", tc.gain, err)
		}
	}
}
