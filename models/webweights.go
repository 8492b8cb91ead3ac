package models

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
)

// The web build carries its weights as half-precision safetensors files
// (WriteSafetensorsF16) in a transport wrapping that compresses them well:
// gzip of the file with its data section split into byte planes (every
// element's low byte, then every high byte). The sign, exponent and top
// mantissa bits of trained weights repeat, so the high plane shrinks to a
// fraction; gzip alone saves little on float data. Unwrapping gives back
// the safetensors file byte for byte.

// WrapWeb returns the transport form of the F16 safetensors file st.
func WrapWeb(st []byte) ([]byte, error) {
	start, err := dataStart(st, "weights")
	if err != nil {
		return nil, err
	}
	out := bytes.NewBuffer(make([]byte, 0, len(st)/2))
	zw, err := gzip.NewWriterLevel(out, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	zw.Write(st[:start])
	zw.Write(planes(st[start:], true))
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// UnwrapWeb reverses WrapWeb, reading at most max bytes of the file (name
// is for messages): more is refused without being inflated.
func UnwrapWeb(wire []byte, name string, max int64) ([]byte, error) {
	return UnwrapWebYield(wire, name, max, nil)
}

// UnwrapWebYield is UnwrapWeb calling yield (unless nil) after every
// yieldEvery bytes it inflates: in the page, where inflating the opening
// model's weights took 0.15 s of the one thread, that lets the page
// answer meanwhile.
func UnwrapWebYield(wire []byte, name string, max int64, yield func()) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(wire))
	if err != nil {
		return nil, fmt.Errorf("%s: not a gzip stream: %w", name, err)
	}
	var r io.Reader = zr
	if yield != nil {
		r = &yielding{r: zr, yield: yield}
	}
	st, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(st)) > max {
		return nil, fmt.Errorf("%s: inflates to more than %d bytes, the limit", name, max)
	}
	start, err := dataStart(st, name)
	if err != nil {
		return nil, err
	}
	copy(st[start:], planes(st[start:], false))
	return st, nil
}

// yieldEvery is how many inflated bytes UnwrapWebYield reads between
// yields.
const yieldEvery = 256 << 10

// yielding reads r, calling yield after every yieldEvery bytes.
type yielding struct {
	r     io.Reader
	yield func()
	n     int
}

func (y *yielding) Read(p []byte) (int, error) {
	n, err := y.r.Read(p)
	if y.n += n; y.n >= yieldEvery {
		y.n = 0
		y.yield()
	}
	return n, err
}

// dataStart is the offset of the data section of the safetensors file st.
func dataStart(st []byte, name string) (int, error) {
	if len(st) < 8 {
		return 0, formatError(name, "file is %d bytes, shorter than the 8-byte header length", len(st))
	}
	hl, err := headerLength(st, int64(len(st)), name)
	if err != nil {
		return 0, err
	}
	if (len(st)-8-int(hl))%2 != 0 {
		return 0, formatError(name, "data section of %d bytes is not whole half-precision values", len(st)-8-int(hl))
	}
	return 8 + int(hl), nil
}

// planes splits 2-byte elements into a low and a high plane (split) or
// joins them back (!split).
func planes(d []byte, split bool) []byte {
	n := len(d) / 2
	out := make([]byte, len(d))
	for k := 0; k < n; k++ {
		if split {
			out[k], out[n+k] = d[2*k], d[2*k+1]
		} else {
			out[2*k], out[2*k+1] = d[k], d[n+k]
		}
	}
	return out
}

// WebWeights converts a float32 safetensors file to the web build's
// transport form (half precision, WrapWeb); name is for messages.
func WebWeights(f32 []byte, name string) ([]byte, error) {
	f16, err := HalfWeights(f32, name)
	if err != nil {
		return nil, err
	}
	return WrapWeb(f16)
}

// HalfWeights converts a float32 safetensors file to the same file in
// half precision (F16), noting so in its metadata.
func HalfWeights(f32 []byte, name string) ([]byte, error) {
	ts, meta, err := ParseSafetensors(f32, name)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(meta)+1)
	for k, v := range meta {
		m[k] = v
	}
	m["dtype_note"] = "half precision for the web build, rounded from the float32 file"
	var buf bytes.Buffer
	if err := WriteSafetensorsF16(&buf, ts, m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return buf.Bytes(), nil
}
