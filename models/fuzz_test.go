package models

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"testing"
)

// fuzzHeaders are small hand-made files that reach the model checks: odd
// metadata (huge, negative, non-numeric, NaN), tensors of the wrong shape.
var fuzzHeaders = []string{
	`{"__metadata__":{"model":"bsa","patch":"2"},"F":{"dtype":"F32","shape":[8,8],"data_offsets":[0,256]}}`,
	`{"__metadata__":{"model":"bsa","patch":"28"},"F":{"dtype":"F32","shape":[1568,1568],"data_offsets":[0,0]}}`,
	`{"__metadata__":{"model":"bsa","patch":"7","lambda_train":"NaN","clamp":"-1"},"F":{"dtype":"F32","shape":[98,98],"data_offsets":[0,38416]}}`,
	`{"__metadata__":{"model":"bsa","patch":"1"},"F":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"J":{"dtype":"F32","shape":[784,784,2,2],"data_offsets":[16,32]}}`,
	`{"__metadata__":{"model":"bsa","patch":"x"},"F":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}`,
	`{"__metadata__":{"model":"vit","patch":"4","dim":"4096","heads":"1","mlp":"4096","depth":"4096"}}`,
	`{"__metadata__":{"model":"block","patch":"3","dim":"8","heads":"2","mlp":"8","depth":"1"}}`,
	`{"__metadata__":{"model":"block","patch":"4","dim":"8","heads":"3","mlp":"8","depth":"1"}}`,
	`{"__metadata__":{"model":"block","patch":"4","dim":"-8","heads":"2","mlp":"8","depth":"1"}}`,
	`{"__metadata__":{"model":"block","patch":"4","dim":"8","heads":"2","mlp":"8","depth":"1"},"embed.weight":{"dtype":"F32","shape":[8,16],"data_offsets":[0,512]}}`,
	`{"__metadata__":null}`,
	`null`,
}

// fuzzSeeds adds the testdata files, hand-made headers and small files
// written by us.
func fuzzSeeds(f *testing.F) {
	for _, h := range fuzzHeaders {
		b := stFile(h, 0)
		f.Add(b)
		if hd, err := parseHeader([]byte(h), "seed"); err == nil {
			f.Add(stFile(h, int(hd.data))) // the right size
		}
	}
	if gz, err := os.ReadFile("testdata/bsa_torch.safetensors.gz"); err == nil {
		if zr, err := gzip.NewReader(bytes.NewReader(gz)); err == nil {
			if b, err := io.ReadAll(zr); err == nil {
				f.Add(b)
			}
		}
	}
	for _, name := range []string{"testdata/transformer_torch-block.safetensors", "testdata/transformer_torch-vit.safetensors"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	m, err := NewTransformer[float32](TransformerConfig{Patch: 7, Dim: 4, Heads: 2, MLP: 4, Depth: 2})
	if err != nil {
		f.Fatal(err)
	}
	m.Init(1)
	var b bytes.Buffer
	if err := m.WriteTransformer(&b, "vit", "mask"); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
}

// FuzzParseBSA: ParseBSA never panics, and what it accepts is a network
// within the allowed ranges, with finite couplings, that writes and reads
// back unchanged.
func FuzzParseBSA(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseBSA(data, "fuzz")
		if err != nil {
			return
		}
		if err := checkBSADim(m.P, m.D); err != nil {
			t.Fatalf("accepted P=%d d=%d: %v", m.P, m.D, err)
		}
		if k := firstNonFinite(m.J); k >= 0 {
			t.Fatalf("accepted a non-finite coupling at %d", k)
		}
		if !(m.LambdaTrain > 0) || !(m.Clamp > 0) {
			t.Fatalf("accepted λ_train %g, clamp %g", m.LambdaTrain, m.Clamp)
		}
		var out bytes.Buffer
		if err := m.WriteBSA(&out); err != nil {
			t.Fatalf("accepted network does not write: %v", err)
		}
		m2, err := ParseBSA(out.Bytes(), "fuzz2")
		if err != nil {
			t.Fatalf("round trip fails: %v", err)
		}
		if !slicesEqual(m.J, m2.J) || !slicesEqual(m.F, m2.F) {
			t.Fatal("round trip changed the weights")
		}
	})
}

// FuzzParseTransformer: ParseTransformer never panics (nor runs out of
// memory on metadata describing a huge model), and what it accepts has
// finite parameters and writes and reads back unchanged.
func FuzzParseTransformer(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseTransformer(data, "fuzz")
		if err != nil {
			return
		}
		if k := firstNonFinite(m.Params); k >= 0 {
			t.Fatalf("accepted a non-finite parameter at %d", k)
		}
		var out bytes.Buffer
		if err := m.WriteTransformer(&out, m.Meta["model"], m.Meta["task"]); err != nil {
			t.Fatalf("accepted model does not write: %v", err)
		}
		m2, err := ParseTransformer(out.Bytes(), "fuzz2")
		if err != nil {
			t.Fatalf("round trip fails: %v", err)
		}
		if m2.Cfg != m.Cfg || !slicesEqual(m.Params, m2.Params) {
			t.Fatal("round trip changed the model")
		}
	})
}
