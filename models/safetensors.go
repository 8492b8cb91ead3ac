package models

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Tensor is a float32 tensor read from or written to safetensors.
type Tensor struct {
	Shape []int
	Data  []float32
}

// MaxHeader caps the JSON header of a safetensors file we accept.
const MaxHeader = 16 << 20

// MaxTensorBytes caps the data section we accept.
const MaxTensorBytes = 1 << 30

// ErrFormat is wrapped by every safetensors parse error.
var ErrFormat = errors.New("invalid safetensors file")

type stEntry struct {
	Dtype   string  `json:"dtype"`
	Shape   []int   `json:"shape"`
	Offsets []int64 `json:"data_offsets"`
}

// ParseSafetensors decodes a safetensors file held in data; name is used in
// error messages. Every tensor must be F32 (little-endian); offsets must lie
// in the data section, match the shape and not overlap.
func ParseSafetensors(data []byte, name string) (map[string]Tensor, map[string]string, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s: %w: %s", name, ErrFormat, fmt.Sprintf(format, a...))
	}
	if len(data) < 8 {
		return nil, nil, fail("file is %d bytes, shorter than the 8-byte header length", len(data))
	}
	hl := binary.LittleEndian.Uint64(data)
	if hl > MaxHeader {
		return nil, nil, fail("header length %d exceeds the %d-byte limit", hl, MaxHeader)
	}
	if uint64(len(data)-8) < hl {
		return nil, nil, fail("truncated: header says %d bytes, file has %d after the length", hl, len(data)-8)
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data[8 : 8+hl]))
	if err := dec.Decode(&raw); err != nil {
		return nil, nil, fail("header is not a JSON object: %v", err)
	}
	body := data[8+hl:]
	meta := map[string]string{}
	tensors := map[string]Tensor{}
	type span struct {
		a, b int64
		name string
	}
	var spans []span
	for k, v := range raw {
		if k == "__metadata__" {
			if err := json.Unmarshal(v, &meta); err != nil {
				return nil, nil, fail("__metadata__ must map strings to strings: %v", err)
			}
			continue
		}
		var e stEntry
		if err := json.Unmarshal(v, &e); err != nil {
			return nil, nil, fail("tensor %q: %v", k, err)
		}
		if e.Dtype != "F32" {
			return nil, nil, fail("tensor %q has dtype %q, want F32", k, e.Dtype)
		}
		if len(e.Offsets) != 2 {
			return nil, nil, fail("tensor %q: data_offsets must have 2 entries", k)
		}
		n := int64(1)
		for _, s := range e.Shape {
			if s < 0 || (s > 0 && n > MaxTensorBytes/4/int64(s)) {
				return nil, nil, fail("tensor %q: shape %v is negative or too large", k, e.Shape)
			}
			n *= int64(s)
		}
		a, b := e.Offsets[0], e.Offsets[1]
		if a < 0 || b < a || b > int64(len(body)) {
			return nil, nil, fail("tensor %q: data_offsets [%d,%d] outside the %d-byte data section (truncated file?)", k, a, b, len(body))
		}
		if b-a != 4*n {
			return nil, nil, fail("tensor %q: %d bytes for shape %v, want %d", k, b-a, e.Shape, 4*n)
		}
		spans = append(spans, span{a, b, k})
		d := make([]float32, n)
		for q := range d {
			d[q] = math.Float32frombits(binary.LittleEndian.Uint32(body[a+4*int64(q):]))
		}
		tensors[k] = Tensor{Shape: e.Shape, Data: d}
	}
	slices.SortFunc(spans, func(x, y span) int { return int(x.a - y.a) })
	for q := 1; q < len(spans); q++ {
		if spans[q].a < spans[q-1].b {
			return nil, nil, fail("tensors %q and %q overlap", spans[q-1].name, spans[q].name)
		}
	}
	return tensors, meta, nil
}

// WriteSafetensors encodes tensors (in name order) and metadata.
func WriteSafetensors(w io.Writer, tensors map[string]Tensor, meta map[string]string) error {
	names := make([]string, 0, len(tensors))
	for k := range tensors {
		names = append(names, k)
	}
	slices.Sort(names)
	hdr := map[string]any{}
	if len(meta) > 0 {
		hdr["__metadata__"] = meta
	}
	var off int64
	for _, k := range names {
		t := tensors[k]
		n := 1
		for _, s := range t.Shape {
			n *= s
		}
		if n != len(t.Data) {
			return fmt.Errorf("tensor %q: %d values for shape %v: %w", k, len(t.Data), t.Shape, ErrShape)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		hdr[k] = stEntry{Dtype: "F32", Shape: shape, Offsets: []int64{off, off + int64(4*n)}}
		off += int64(4 * n)
	}
	h, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	var l [8]byte
	binary.LittleEndian.PutUint64(l[:], uint64(len(h)))
	if _, err := w.Write(l[:]); err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for _, k := range names {
		for _, v := range tensors[k].Data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	_, err = w.Write(buf)
	return err
}

// ErrExists is returned when saving would overwrite a file.
var ErrExists = errors.New("file exists")

// SaveFile writes through a temporary file and renames it into place. It
// refuses to replace an existing path unless overwrite is set.
func SaveFile(path string, overwrite bool, write func(io.Writer) error) error {
	if !overwrite {
		if _, err := os.Stat(path); err == nil {
			return fmt.Errorf("%s: %w (choose another name or allow overwriting)", path, ErrExists)
		}
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if !overwrite {
		// Link fails if path appeared meanwhile, so nothing is replaced.
		if err := os.Link(tmp, path); err != nil {
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%s: %w", path, ErrExists)
			}
			return fmt.Errorf("save %s: %w", path, err)
		}
		return nil
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
}

// need fetches a tensor and checks its shape, naming file and tensor.
func need(ts map[string]Tensor, file, name string, shape ...int) ([]float32, error) {
	t, ok := ts[name]
	if !ok {
		return nil, fmt.Errorf("%s: tensor %q is missing", file, name)
	}
	if !slices.Equal(t.Shape, shape) {
		return nil, fmt.Errorf("%s: tensor %q has shape %v, want %v: %w", file, name, t.Shape, shape, ErrShape)
	}
	return t.Data, nil
}

func metaInt(meta map[string]string, file, key string) (int, error) {
	v, ok := meta[key]
	if !ok {
		return 0, fmt.Errorf("%s: metadata %q is missing", file, key)
	}
	var n int
	if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d", &n); err != nil {
		return 0, fmt.Errorf("%s: metadata %q = %q is not an integer", file, key, v)
	}
	return n, nil
}

func metaFloat(meta map[string]string, key string, def float32) float32 {
	var f float64
	if _, err := fmt.Sscanf(meta[key], "%g", &f); err != nil {
		return def
	}
	return float32(f)
}

// ParseBSA builds a bare self-attention network from safetensors bytes
// (§9: model=bsa, tensors J [N,N,d,d] and F [d,2P²]).
func ParseBSA(data []byte, file string) (*BSA, error) {
	ts, meta, err := ParseSafetensors(data, file)
	if err != nil {
		return nil, err
	}
	if meta["model"] != "bsa" {
		return nil, fmt.Errorf("%s: metadata model=%q, want \"bsa\"", file, meta["model"])
	}
	p, err := metaInt(meta, file, "patch")
	if err != nil {
		return nil, err
	}
	pt, err := NewPatches(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	f, ok := ts["F"]
	if !ok || len(f.Shape) != 2 {
		return nil, fmt.Errorf("%s: tensor \"F\" is missing or not 2-D", file)
	}
	d := f.Shape[0]
	if d < 2*pt.A || d > 4096 {
		return nil, fmt.Errorf("%s: tensor \"F\" has shape %v, want [d,%d] with %d ≤ d: %w", file, f.Shape, 2*pt.A, 2*pt.A, ErrShape)
	}
	if _, err := need(ts, file, "F", d, 2*pt.A); err != nil {
		return nil, err
	}
	j, err := need(ts, file, "J", pt.N, pt.N, d, d)
	if err != nil {
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
	m.LambdaTrain = metaFloat(meta, "lambda_train", 5)
	m.Clamp = metaFloat(meta, "clamp", 20)
	m.Meta = meta
	return m, nil
}

// LoadBSA reads a bare self-attention network from a safetensors file.
func LoadBSA(path string) (*BSA, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseBSA(data, path)
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
