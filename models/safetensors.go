package models

import (
	"attractorlab/models/infile"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Tensor is a float32 tensor read from or written to safetensors.
type Tensor struct {
	Shape []int
	Data  []float32
}

// MaxHeader caps the JSON header of a safetensors file we accept.
const MaxHeader = 16 << 20

// MaxDataBytes caps the data section (all tensors together) of a
// safetensors file we read or write: 1 GiB. Every network the trainers can
// make fits (see MaxBSADim), and the check comes before any allocation.
const MaxDataBytes = 1 << 30

// ErrFormat is wrapped by every safetensors parse error.
var ErrFormat = errors.New("invalid safetensors file")

// ErrNonFinite is wrapped by the error for a tensor holding NaN or ±Inf,
// or a value larger in magnitude than MaxWeight.
var ErrNonFinite = errors.New("weights must be finite numbers")

// MaxWeight bounds every weight's magnitude. Trained weights are of order
// 1; a value near float32's limit (3·10³⁸) overflows the energies and
// turns them into NaN, so such a file is refused when it is read.
const MaxWeight = 1e6

type stEntry struct {
	Dtype   string  `json:"dtype"`
	Shape   []int   `json:"shape"`
	Offsets []int64 `json:"data_offsets"`
}

// stTensor is one checked tensor of a header: bytes [a, b) of the data
// section.
type stTensor struct {
	name  string
	shape []int
	a, b  int64
	size  int64 // bytes per element: 4 (F32) or 2 (F16)
}

// stHeader is a checked header: tensors in file order, tiling the data
// section [0, data) without gaps or overlaps.
type stHeader struct {
	tensors []stTensor
	meta    map[string]string
	data    int64
}

// formatError names the file and wraps ErrFormat.
func formatError(name, format string, a ...any) error {
	return fmt.Errorf("%s: %w: %s", name, ErrFormat, fmt.Sprintf(format, a...))
}

// headerLength checks the 8-byte header length against MaxHeader and the
// size of the file (size bytes in all).
func headerLength(b []byte, size int64, name string) (int64, error) {
	hl := binary.LittleEndian.Uint64(b)
	if hl > MaxHeader {
		return 0, formatError(name, "header length %d exceeds the %d-byte limit", hl, MaxHeader)
	}
	if int64(hl) > size-8 {
		return 0, formatError(name, "truncated: header says %d bytes, file has %d after the length", hl, size-8)
	}
	return int64(hl), nil
}

// dtypeSize are the element types read, by safetensors dtype name.
var dtypeSize = map[string]int64{"F32": 4, "F16": 2}

// parseHeader checks the JSON header: every tensor F32 or F16 with a shape of at
// most MaxDataBytes, data_offsets matching the shape, the tensors tiling
// the data section as safetensors requires, and the data section within
// MaxDataBytes. Nothing is allocated in proportion to the tensors.
func parseHeader(h []byte, name string) (*stHeader, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(h))
	if err := dec.Decode(&raw); err != nil {
		return nil, formatError(name, "header is not a JSON object: %v", err)
	}
	if raw == nil {
		return nil, formatError(name, "header is not a JSON object")
	}
	out := &stHeader{meta: map[string]string{}}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		v := raw[k]
		if k == "__metadata__" {
			if err := json.Unmarshal(v, &out.meta); err != nil {
				return nil, formatError(name, "__metadata__ must map strings to strings: %v", err)
			}
			if out.meta == nil {
				out.meta = map[string]string{}
			}
			continue
		}
		var e stEntry
		if err := json.Unmarshal(v, &e); err != nil {
			return nil, formatError(name, "tensor %q: %v", k, err)
		}
		size, ok := dtypeSize[e.Dtype]
		if !ok {
			return nil, formatError(name, "tensor %q has dtype %q, want F32 or F16", k, e.Dtype)
		}
		if len(e.Offsets) != 2 {
			return nil, formatError(name, "tensor %q: data_offsets must have 2 entries", k)
		}
		n := int64(1)
		for _, s := range e.Shape {
			if s < 0 || (s > 0 && n > MaxDataBytes/4/int64(s)) {
				return nil, formatError(name, "tensor %q: shape %v is negative or larger than the %d-byte limit", k, e.Shape, MaxDataBytes)
			}
			n *= int64(s)
		}
		a, b := e.Offsets[0], e.Offsets[1]
		if a < 0 || b < a {
			return nil, formatError(name, "tensor %q: data_offsets [%d,%d] are not a byte range", k, a, b)
		}
		if b-a != size*n {
			return nil, formatError(name, "tensor %q: %d bytes for shape %v of %s, want %d", k, b-a, e.Shape, e.Dtype, size*n)
		}
		shape := e.Shape
		if shape == nil {
			shape = []int{}
		}
		out.tensors = append(out.tensors, stTensor{name: k, shape: shape, a: a, b: b, size: size})
	}
	slices.SortStableFunc(out.tensors, func(x, y stTensor) int {
		return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b))
	})
	var end int64
	prev := ""
	for _, t := range out.tensors {
		switch {
		case t.a < end:
			return nil, formatError(name, "tensors %q and %q overlap", prev, t.name)
		case t.a > end:
			return nil, formatError(name, "tensor %q starts at byte %d of the data section, but the tensors before it end at %d (safetensors allows no gaps)", t.name, t.a, end)
		}
		end, prev = t.b, t.name
		if end > MaxDataBytes {
			return nil, formatError(name, "the tensors need more than %d bytes, the limit (MaxDataBytes)", MaxDataBytes)
		}
	}
	out.data = end
	return out, nil
}

// checkSize refuses a file whose size is not 8 + header + data.
func checkSize(size, hl int64, h *stHeader, name string) error {
	want := 8 + hl + h.data
	switch {
	case size < want:
		return formatError(name, "truncated: the file is %d bytes, but its header's data_offsets need %d (8 + %d header + %d tensor data)", size, want, hl, h.data)
	case size > want:
		return formatError(name, "%d trailing bytes: the file is %d bytes, but its header's data_offsets need exactly %d (8 + %d header + %d tensor data)", size-want, size, want, hl, h.data)
	}
	return nil
}

// readTensors reads the data section described by h from r, refusing
// NaN and ±Inf by tensor and element.
func readTensors(r io.Reader, h *stHeader, name string) (map[string]Tensor, error) {
	ts := make(map[string]Tensor, len(h.tensors))
	buf := make([]byte, 64<<10)
	for _, t := range h.tensors {
		d := make([]float32, (t.b-t.a)/t.size)
		for q := 0; q < len(d); {
			c := buf[:4*min(len(buf)/4, len(d)-q)]
			if t.size == 2 {
				c = c[:len(c)/2]
			}
			if _, err := io.ReadFull(r, c); err != nil {
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					return nil, formatError(name, "truncated while reading tensor %q (did the file change?)", t.name)
				}
				return nil, fmt.Errorf("%s: reading tensor %q: %w", name, t.name, err)
			}
			if t.size == 2 {
				tab := float16Table()
				for p := 0; p < len(c); p += 2 {
					d[q] = math.Float32frombits(tab[binary.LittleEndian.Uint16(c[p:])])
					q++
				}
				continue
			}
			for p := 0; p < len(c); p += 4 {
				d[q] = math.Float32frombits(binary.LittleEndian.Uint32(c[p:]))
				q++
			}
		}
		if k := firstNonFinite(d); k >= 0 {
			return nil, fmt.Errorf("%s: %w", name, nonFiniteError(t.name, t.shape, d, k))
		}
		ts[t.name] = Tensor{Shape: t.shape, Data: d}
	}
	return ts, nil
}

// firstNonFinite returns the index of the first NaN, ±Inf or value
// beyond ±MaxWeight in d, or −1.
func firstNonFinite(d []float32) int {
	for k, v := range d {
		if !(v >= -MaxWeight && v <= MaxWeight) {
			return k
		}
	}
	return -1
}

// nonFiniteError names the tensor and element k of d (also as an index
// into shape).
func nonFiniteError(tensor string, shape []int, d []float32, k int) error {
	idx := make([]int, len(shape))
	r := k
	for a := len(shape) - 1; a >= 0; a-- {
		if shape[a] > 0 {
			idx[a] = r % shape[a]
			r /= shape[a]
		}
	}
	v := float64(d[k])
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		return fmt.Errorf("tensor %q element %d (index %v of shape %v) is %g, out of range (allowed |w| ≤ %g): %w", tensor, k, idx, shape, v, float64(MaxWeight), ErrNonFinite)
	}
	return fmt.Errorf("tensor %q element %d (index %v of shape %v) is %v: %w", tensor, k, idx, shape, d[k], ErrNonFinite)
}

// ParseSafetensors decodes a safetensors file held in data; name is used in
// error messages. Every tensor must be F32 or F16 (little-endian; F16 is
// widened to float32 exactly) and finite; the
// tensors must tile the data section (no gaps, no overlaps, as safetensors
// requires), which must be at most MaxDataBytes, and data must be exactly
// 8 + header + data section bytes long.
func ParseSafetensors(data []byte, name string) (map[string]Tensor, map[string]string, error) {
	if len(data) < 8 {
		return nil, nil, formatError(name, "file is %d bytes, shorter than the 8-byte header length", len(data))
	}
	hl, err := headerLength(data, int64(len(data)), name)
	if err != nil {
		return nil, nil, err
	}
	h, err := parseHeader(data[8:8+hl], name)
	if err != nil {
		return nil, nil, err
	}
	if err := checkSize(int64(len(data)), hl, h, name); err != nil {
		return nil, nil, err
	}
	ts, err := readTensors(bytes.NewReader(data[8+hl:]), h, name)
	if err != nil {
		return nil, nil, err
	}
	return ts, h.meta, nil
}

// LoadSafetensors reads the safetensors file at path with the checks of
// ParseSafetensors, made before the tensors are allocated or read: path
// must be a regular file (not a device, pipe or directory), its header at
// most MaxHeader bytes, its data section at most MaxDataBytes, and its size
// exactly what the header describes.
func LoadSafetensors(path string) (map[string]Tensor, map[string]string, error) {
	in, err := infile.Open(path, "weights", 8+MaxHeader+MaxDataBytes)
	if err != nil {
		return nil, nil, err
	}
	defer in.Close()
	f := in.OS()
	size := in.Size
	if size < 8 {
		return nil, nil, formatError(path, "file is %d bytes, shorter than the 8-byte header length", size)
	}
	var l [8]byte
	if _, err := io.ReadFull(f, l[:]); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	hl, err := headerLength(l[:], size, path)
	if err != nil {
		return nil, nil, err
	}
	hb := make([]byte, hl)
	if _, err := io.ReadFull(f, hb); err != nil {
		return nil, nil, fmt.Errorf("%s: reading the header: %w", path, err)
	}
	h, err := parseHeader(hb, path)
	if err != nil {
		return nil, nil, err
	}
	if err := checkSize(size, hl, h, path); err != nil {
		return nil, nil, err
	}
	ts, err := readTensors(f, h, path)
	if err != nil {
		return nil, nil, err
	}
	return ts, h.meta, nil
}

// WriteSafetensors encodes tensors (in name order) and metadata. It writes
// only what ParseSafetensors accepts: before writing anything it refuses a
// shape that does not match the data, NaN or ±Inf (by tensor and element),
// a data section over MaxDataBytes and a header over MaxHeader.
func WriteSafetensors(w io.Writer, tensors map[string]Tensor, meta map[string]string) error {
	return writeSafetensors(w, tensors, meta, "F32")
}

// WriteSafetensorsF16 writes the tensors as WriteSafetensors does, but in
// IEEE half precision (dtype F16, rounded to nearest even): the web build's
// weights (docs/maths.md). A value beyond half precision's range (65504) is
// refused by tensor and element.
func WriteSafetensorsF16(w io.Writer, tensors map[string]Tensor, meta map[string]string) error {
	return writeSafetensors(w, tensors, meta, "F16")
}

func writeSafetensors(w io.Writer, tensors map[string]Tensor, meta map[string]string, dtype string) error {
	size := int(dtypeSize[dtype])
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
		if k == "__metadata__" {
			return fmt.Errorf("tensor name %q is reserved for the metadata", k)
		}
		n := 1
		for _, s := range t.Shape {
			if s < 0 || (s > 0 && n > MaxDataBytes/4/s) {
				return fmt.Errorf("tensor %q: shape %v is negative or larger than the %d-byte limit: %w", k, t.Shape, MaxDataBytes, ErrShape)
			}
			n *= s
		}
		if n != len(t.Data) {
			return fmt.Errorf("tensor %q: %d values for shape %v: %w", k, len(t.Data), t.Shape, ErrShape)
		}
		if q := firstNonFinite(t.Data); q >= 0 {
			return nonFiniteError(k, t.Shape, t.Data, q)
		}
		if dtype == "F16" {
			for q, v := range t.Data {
				if math.Abs(float64(v)) > MaxFloat16 {
					return fmt.Errorf("tensor %q element %d is %g, beyond half precision's range (|w| ≤ %g)", k, q, v, float64(MaxFloat16))
				}
			}
		}
		if off+int64(size*n) > MaxDataBytes {
			return fmt.Errorf("the tensors need more than %d bytes, the limit a file may hold (MaxDataBytes)", MaxDataBytes)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		hdr[k] = stEntry{Dtype: dtype, Shape: shape, Offsets: []int64{off, off + int64(size*n)}}
		off += int64(size * n)
	}
	h, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	if len(h) > MaxHeader {
		return fmt.Errorf("the header is %d bytes, over the %d-byte limit", len(h), MaxHeader)
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
			if dtype == "F16" {
				buf = binary.LittleEndian.AppendUint16(buf, Float32To16(v))
			} else {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			}
			if len(buf) >= cap(buf)-4 {
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
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("%s: metadata %q = %q is not an integer", file, key, v)
	}
	return n, nil
}

// metaPositive reads an optional positive, finite metadata number (def
// when the key is absent).
// PixelGain is the gain g of docs/maths.md §1 that every model here reads
// its digits with (min(g·b/255, 1)); a weights file records it as
// pixel_gain.
const PixelGain = 2

// checkPixelGain refuses weights trained on digits prepared with another
// gain: the app prepares every digit with PixelGain, so such a model
// would see inputs it was not trained on. A file without the key (older
// files, PyTorch's) was trained with PixelGain.
func checkPixelGain(meta map[string]string, file string) error {
	v, ok := meta["pixel_gain"]
	if !ok {
		return nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f != PixelGain {
		return fmt.Errorf("%s: metadata \"pixel_gain\" = %q: this app prepares every digit with gain %d (docs/maths.md §1) and reads only weights trained so (allowed: %d)", file, v, PixelGain, PixelGain)
	}
	return nil
}

func metaPositive(meta map[string]string, file, key string, def float32) (float32, error) {
	v, ok := meta[key]
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 32)
	if err != nil || !(f > 0) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s: metadata %q = %q is not a positive finite number", file, key, v)
	}
	return float32(f), nil
}
