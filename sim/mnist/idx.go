package mnist

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// IDX is a decoded IDX file (the MNIST container format).
type IDX struct {
	Type byte   // element type: 0x08 unsigned byte, 0x0C int32
	Dims []int  // dimensions
	Data []byte // raw elements, big-endian for multi-byte types
}

// Caps on what an IDX header may announce before we allocate.
const (
	MaxIDXDims  = 4
	MaxIDXBytes = 64 << 20 // MNIST's largest file is 47 MB
	// MaxFileBytes caps any file read from --data or the cache (an IDX
	// file, plain or gzipped, or the npm package's .tgz).
	MaxFileBytes = 256 << 20
)

// ErrIDX is wrapped by every IDX decoding error.
var ErrIDX = errors.New("invalid IDX data")

// ReadIDX decodes an IDX stream, transparently gunzipping it. It checks the
// magic number, caps the announced size before allocating, and requires the
// data to be exactly as long as the header says.
func ReadIDX(r io.Reader) (*IDX, error) {
	br := bufio.NewReader(r)
	if head, err := br.Peek(2); err == nil && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", ErrIDX, err)
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	var magic [4]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil {
		return nil, fmt.Errorf("%w: reading magic: %v", ErrIDX, err)
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, fmt.Errorf("%w: bad magic %x (not an IDX file)", ErrIDX, magic)
	}
	size := 0
	switch magic[2] {
	case 0x08:
		size = 1
	case 0x0C:
		size = 4
	default:
		return nil, fmt.Errorf("%w: unsupported element type 0x%02x", ErrIDX, magic[2])
	}
	nd := int(magic[3])
	if nd < 1 || nd > MaxIDXDims {
		return nil, fmt.Errorf("%w: %d dimensions (want 1..%d)", ErrIDX, nd, MaxIDXDims)
	}
	dims := make([]int, nd)
	total := int64(size)
	for k := range dims {
		var v uint32
		if err := binary.Read(br, binary.BigEndian, &v); err != nil {
			return nil, fmt.Errorf("%w: reading dimension %d: %v", ErrIDX, k, err)
		}
		dims[k] = int(v)
		total *= int64(v)
		if total > MaxIDXBytes {
			return nil, fmt.Errorf("%w: dimensions %v exceed the %d-byte limit", ErrIDX, dims[:k+1], MaxIDXBytes)
		}
	}
	data := make([]byte, total)
	if n, err := io.ReadFull(br, data); err != nil {
		return nil, fmt.Errorf("%w: data truncated: %d of %d bytes: %v", ErrIDX, n, total, err)
	}
	if n, _ := br.Read(make([]byte, 1)); n != 0 {
		return nil, fmt.Errorf("%w: trailing data after %d bytes", ErrIDX, total)
	}
	return &IDX{Type: magic[2], Dims: dims, Data: data}, nil
}

// WriteIDX encodes an IDX file (uncompressed).
func WriteIDX(w io.Writer, x *IDX) error {
	var b bytes.Buffer
	b.Write([]byte{0, 0, x.Type, byte(len(x.Dims))})
	for _, d := range x.Dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return err
	}
	_, err := w.Write(x.Data)
	return err
}

// Int32s returns the elements of an int32 IDX.
func (x *IDX) Int32s() []int32 {
	out := make([]int32, len(x.Data)/4)
	for k := range out {
		out[k] = int32(binary.BigEndian.Uint32(x.Data[4*k:]))
	}
	return out
}
