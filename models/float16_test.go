package models

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Every half value widens exactly and rounds back to itself.
func TestFloat16RoundTripsEveryValue(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := Float16To32(uint16(h))
		if math.IsNaN(float64(f)) {
			if g := Float32To16(f); g&0x7c00 != 0x7c00 || g&0x3ff == 0 {
				t.Fatalf("NaN %#04x came back as %#04x", h, g)
			}
			continue
		}
		if g := Float32To16(f); g != uint16(h) {
			t.Fatalf("%#04x → %g → %#04x", h, f, g)
		}
	}
}

// naiveHalf is Float16To32's twin by arithmetic: (−1)^s · 2^(e−15) · (1 + m/1024).
func naiveHalf(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch e {
	case 0x1f:
		if m != 0 {
			return math.NaN()
		}
		return s * math.Inf(1)
	case 0:
		return s * m * math.Pow(2, -24)
	}
	return s * math.Pow(2, float64(e-15)) * (1 + m/1024)
}

func TestFloat16WidenMatchesNaive(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		got, want := float64(Float16To32(uint16(h))), naiveHalf(uint16(h))
		if !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("%#04x: %g, want %g", h, got, want)
		}
	}
}

// Rounding picks the nearest half value, ties to the even one, on random
// float32s of every magnitude the weights can have and beyond.
func TestFloat32To16Nearest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for k := 0; k < 200000; k++ {
		f := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(44)-30)))
		h := Float32To16(f)
		got := naiveHalf(h)
		if math.Abs(float64(f)) > MaxFloat16+16 { // past the midpoint to Inf
			if !math.IsInf(got, 0) {
				t.Fatalf("%g → %g, want Inf", f, got)
			}
			continue
		}
		d := math.Abs(got - float64(f))
		for _, n := range []uint16{h - 1, h + 1} {
			if n&0x7c00 == 0x7c00 || (n^h)&0x8000 != 0 {
				continue
			}
			dn := math.Abs(naiveHalf(n) - float64(f))
			if dn < d || (dn == d && n&1 == 0) {
				t.Fatalf("%g → %#04x (%g), but %#04x (%g) is nearer or the even tie", f, h, got, n, naiveHalf(n))
			}
		}
	}
}

func TestSafetensorsF16(t *testing.T) {
	ts := map[string]Tensor{
		"a": {Shape: []int{2, 3}, Data: []float32{1, -2.5, 0.1, 3e-6, 1000, -0.333}},
		"b": {Shape: []int{}, Data: []float32{7}},
	}
	var buf bytes.Buffer
	if err := WriteSafetensorsF16(&buf, ts, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"dtype":"F16"`)) {
		t.Fatalf("header has no F16 dtype: %q", buf.Bytes()[:80])
	}
	got, meta, err := ParseSafetensors(buf.Bytes(), "f16")
	if err != nil {
		t.Fatal(err)
	}
	if meta["k"] != "v" {
		t.Errorf("metadata %v", meta)
	}
	for name, want := range ts {
		for i, w := range want.Data {
			g := got[name].Data[i]
			if g != Float16To32(Float32To16(w)) || math.Abs(float64(g-w)) > 1e-3*math.Abs(float64(w))+6e-8 {
				t.Errorf("%s[%d] = %g, want %g rounded to half", name, i, g, w)
			}
		}
	}
	err = WriteSafetensorsF16(&bytes.Buffer{}, map[string]Tensor{"big": {Shape: []int{2}, Data: []float32{1, 70000}}}, nil)
	if err == nil || !strings.Contains(err.Error(), `tensor "big" element 1`) || !strings.Contains(err.Error(), "65504") {
		t.Errorf("70000 in F16: %v", err)
	}
}

func TestWebWeightsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	d := make([]float32, 4096)
	for i := range d {
		d[i] = float32(r.NormFloat64() * 0.05)
	}
	var f32 bytes.Buffer
	if err := WriteSafetensors(&f32, map[string]Tensor{"J": {Shape: []int{64, 64}, Data: d}}, map[string]string{"model": "bsa"}); err != nil {
		t.Fatal(err)
	}
	wire, err := WebWeights(f32.Bytes(), "j")
	if err != nil {
		t.Fatal(err)
	}
	st, err := UnwrapWeb(wire, "j.web", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	ts, meta, err := ParseSafetensors(st, "j.web")
	if err != nil {
		t.Fatal(err)
	}
	if meta["model"] != "bsa" {
		t.Errorf("metadata lost: %v", meta)
	}
	for i, w := range d {
		if g := ts["J"].Data[i]; g != Float16To32(Float32To16(w)) {
			t.Fatalf("J[%d] = %g, want %g in half precision", i, g, w)
		}
	}
	if len(wire) >= f32.Len()/2 {
		t.Errorf("transport form %d bytes, not under half the float32 file's %d", len(wire), f32.Len())
	}
	if _, err := UnwrapWeb(wire, "j.web", 1000); err == nil || !strings.Contains(err.Error(), "more than 1000 bytes") {
		t.Errorf("limit: %v", err)
	}
	if _, err := UnwrapWeb([]byte("not gzip"), "x.web", 1000); err == nil || !strings.Contains(err.Error(), "x.web") {
		t.Errorf("garbage: %v", err)
	}
}

// TestTransformerConfigOfHeader: the start of a weights file (its length
// and JSON header, in float32 or in the web build's half precision) gives
// the configuration the whole file does; a cut or foreign header is
// refused by name.
func TestTransformerConfigOfHeader(t *testing.T) {
	cfg := TransformerConfig{Patch: 4, Dim: 16, Heads: 2, MLP: 32, Depth: 3}
	m, err := NewTransformer[float32](cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.WriteTransformer(&buf, "vit", "mask"); err != nil {
		t.Fatal(err)
	}
	f32 := buf.Bytes()
	web, err := WebWeights(f32, "tiny.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	f16, err := UnwrapWeb(web, "tiny.safetensors", 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	for name, file := range map[string][]byte{"float32": f32, "float16": f16} {
		hl := int(binary.LittleEndian.Uint64(file))
		got, err := TransformerConfigOfHeader(file[:8+hl], "tiny.safetensors")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		full, err := ParseTransformer(file, "tiny.safetensors")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != full.Cfg || got != cfg {
			t.Fatalf("%s: header gives %+v, the file %+v, written %+v", name, got, full.Cfg, cfg)
		}
		if _, err := TransformerConfigOfHeader(file[:8+hl/2], "tiny.safetensors"); err == nil || !strings.Contains(err.Error(), "tiny.safetensors") {
			t.Fatalf("%s: a cut header: %v", name, err)
		}
	}
	var bsa bytes.Buffer
	b := tinyBSA(4, 3, 1)
	if err := b.WriteBSA(&bsa); err != nil {
		t.Fatal(err)
	}
	hl := int(binary.LittleEndian.Uint64(bsa.Bytes()))
	if _, err := TransformerConfigOfHeader(bsa.Bytes()[:8+hl], "p2.safetensors"); err == nil || !strings.Contains(err.Error(), "want \"block\" or \"vit\"") {
		t.Fatalf("a bare self-attention's header: %v", err)
	}
}

// TestUnwrapWebYields: UnwrapWebYield gives UnwrapWeb's bytes and calls
// its yield as it inflates (every yieldEvery bytes).
func TestUnwrapWebYields(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	d := make([]float32, 400_000)
	for i := range d {
		d[i] = float32(r.NormFloat64() * 0.05)
	}
	var f32 bytes.Buffer
	if err := WriteSafetensors(&f32, map[string]Tensor{"J": {Shape: []int{400, 1000}, Data: d}}, nil); err != nil {
		t.Fatal(err)
	}
	wire, err := WebWeights(f32.Bytes(), "j")
	if err != nil {
		t.Fatal(err)
	}
	want, err := UnwrapWeb(wire, "j.web", 1<<22)
	if err != nil {
		t.Fatal(err)
	}
	yields := 0
	got, err := UnwrapWebYield(wire, "j.web", 1<<22, func() { yields++ })
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("UnwrapWebYield's file differs from UnwrapWeb's")
	}
	if min := len(want)/yieldEvery - 1; yields < min {
		t.Errorf("%d yields inflating %d bytes, want at least %d", yields, len(want), min)
	}
}

// TestFloat16Table: the table the file reader converts through is
// Float16To32, bit for bit, for every half-precision value.
func TestFloat16Table(t *testing.T) {
	tab := float16Table()
	for h := range 1 << 16 {
		if got, want := tab[h], math.Float32bits(Float16To32(uint16(h))); got != want {
			t.Fatalf("table[%#04x] = %#08x, Float16To32 gives %#08x", h, got, want)
		}
	}
}
