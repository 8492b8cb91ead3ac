package models

import (
	"fmt"
	"io"
)

// The bare self-attention's weights file (docs/maths.md §9): its tensors
// and metadata read into a BSA and written from one.

// ParseBSA builds a bare self-attention network from safetensors bytes
// (§9: model=bsa, tensors J [N,N,d,d] and F [d,2P²]).
func ParseBSA(data []byte, file string) (*BSA, error) {
	ts, meta, err := ParseSafetensors(data, file)
	if err != nil {
		return nil, err
	}
	return bsaFromTensors(ts, meta, file)
}

// LoadBSA reads a bare self-attention network from a safetensors file,
// with the checks of LoadSafetensors.
func LoadBSA(path string) (*BSA, error) {
	ts, meta, err := LoadSafetensors(path)
	if err != nil {
		return nil, err
	}
	return bsaFromTensors(ts, meta, path)
}

func bsaFromTensors(ts map[string]Tensor, meta map[string]string, file string) (*BSA, error) {
	if meta["model"] != "bsa" {
		return nil, fmt.Errorf("%s: metadata model=%q, want \"bsa\"", file, meta["model"])
	}
	p, err := metaInt(meta, file, "patch")
	if err != nil {
		return nil, err
	}
	pt, err := bsaPatches(p)
	if err != nil {
		return nil, fmt.Errorf("%s: metadata patch: %w", file, err)
	}
	f, ok := ts["F"]
	if !ok || len(f.Shape) != 2 {
		return nil, fmt.Errorf("%s: tensor \"F\" is missing or not 2-D", file)
	}
	d := f.Shape[0]
	if err := checkBSADim(p, d); err != nil {
		return nil, fmt.Errorf("%s: tensor \"F\" has shape %v: %w", file, f.Shape, err)
	}
	if _, err := need(ts, file, "F", d, 2*pt.A); err != nil {
		return nil, err
	}
	j, err := need(ts, file, "J", pt.N, pt.N, d, d)
	if err != nil {
		return nil, err
	}
	lt, err := metaPositive(meta, file, "lambda_train", 5)
	if err != nil {
		return nil, err
	}
	clamp, err := metaPositive(meta, file, "clamp", 20)
	if err != nil {
		return nil, err
	}
	if err := checkPixelGain(meta, file); err != nil {
		return nil, err
	}
	emb, err := EmbeddingFromF(p, d, f.Data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	m := newBSA(emb)
	if err := m.SetCanonical(j); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	m.LambdaTrain = lt
	m.Clamp = clamp
	m.Meta = meta
	return m, nil
}

// WriteBSA encodes m as safetensors with the §9 names and metadata.
func (m *BSA) WriteBSA(w io.Writer) error {
	meta := map[string]string{}
	for k, v := range m.Meta {
		meta[k] = v
	}
	meta["model"] = "bsa"
	meta["patch"] = fmt.Sprint(m.P)
	meta["d"] = fmt.Sprint(m.D)
	meta["lambda_train"] = fmt.Sprint(m.LambdaTrain)
	meta["clamp"] = fmt.Sprint(m.Clamp)
	if _, ok := meta["pixel_gain"]; !ok {
		meta["pixel_gain"] = "2"
	}
	if _, ok := meta["command"]; !ok {
		meta["command"] = "unknown"
	}
	return WriteSafetensors(w, map[string]Tensor{
		"J": {Shape: []int{m.N, m.N, m.D, m.D}, Data: m.Canonical()},
		"F": {Shape: []int{m.D, 2 * m.A}, Data: m.F},
	}, meta)
}
