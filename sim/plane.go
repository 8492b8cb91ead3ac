package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"attractorlab/assets"
	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// A stored set's principal plane (docs/maths.md §8) is computed once and
// kept: the embedded sample's is written by the sample's generator and
// embedded beside it (assets/sample/train-plane.bin); any other set's is
// computed on first use and kept in the cache (PlaneCache), named by the
// set's hash, so it is computed again only when the set changes.

// Plane is the costly part of a state space: the mean digit and the two
// principal components of a set, with the hash of the set it belongs to.
type Plane struct {
	Set   [32]byte     // SetHash of the digits
	N     int          // how many digits
	Mean  []float64    // 784: the mean digit (gain applied)
	PC    [2][]float64 // 2×784: unit vectors, the first with the larger variance
	Share [2]float64   // each one's share of the total variance
}

// SetHash is the SHA-256 of a set's digits and labels (with their count):
// what names its plane.
func SetHash(s *mnist.Set) [32]byte {
	h := sha256.New()
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(s.Len()))
	h.Write([]byte("attractorlab set\n"))
	h.Write(n[:])
	// In parts of 1 MB: in the browser the page answers between them.
	for b := s.Images; len(b) > 0; {
		k := min(len(b), 1<<20)
		h.Write(b[:k])
		b = b[k:]
		pause()
	}
	h.Write(s.Labels)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// The plane file (version 1), little-endian: the magic "ALPLANE1", the
// set's hash (32 bytes), the count of digits (uint64), the mean, the two
// components and the two shares (float64, 784 + 2×784 + 2 of them), and
// the SHA-256 of everything before it.
const (
	planeMagic  = "ALPLANE1"
	planeFloats = 3*models.Pixels + 2
	// PlaneFileBytes is a plane file's size.
	PlaneFileBytes = len(planeMagic) + 32 + 8 + 8*planeFloats + 32
)

// MarshalBinary writes the plane file.
func (p *Plane) MarshalBinary() ([]byte, error) {
	if len(p.Mean) != models.Pixels || len(p.PC[0]) != models.Pixels || len(p.PC[1]) != models.Pixels {
		return nil, fmt.Errorf("plane: want %d pixels in the mean and each component", models.Pixels)
	}
	b := make([]byte, 0, PlaneFileBytes)
	b = append(b, planeMagic...)
	b = append(b, p.Set[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(p.N))
	for _, v := range [][]float64{p.Mean, p.PC[0], p.PC[1], p.Share[:]} {
		for _, a := range v {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(a))
		}
	}
	sum := sha256.Sum256(b)
	return append(b, sum[:]...), nil
}

// ErrPlaneSet says a plane file belongs to other digits.
var ErrPlaneSet = errors.New("the plane of other digits")

// ReadPlane reads a plane file made for the digits hashed want. Every
// check names what failed: the size, the magic, the checksum, the set,
// a value that is not finite, components that are not unit vectors or
// not orthogonal.
func ReadPlane(b []byte, want [32]byte) (*Plane, error) {
	if len(b) != PlaneFileBytes {
		return nil, fmt.Errorf("%d bytes, a plane file has %d", len(b), PlaneFileBytes)
	}
	if string(b[:len(planeMagic)]) != planeMagic {
		return nil, fmt.Errorf("not a plane file (magic %q, want %q)", b[:len(planeMagic)], planeMagic)
	}
	body := b[:len(b)-32]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], b[len(b)-32:]) {
		return nil, errors.New("checksum mismatch (the file is damaged)")
	}
	p := &Plane{}
	off := len(planeMagic)
	copy(p.Set[:], b[off:off+32])
	off += 32
	if p.Set != want {
		return nil, fmt.Errorf("%w (set %s…, want %s…)", ErrPlaneSet, hex.EncodeToString(p.Set[:6]), hex.EncodeToString(want[:6]))
	}
	n := binary.LittleEndian.Uint64(b[off:])
	off += 8
	if n == 0 || n > math.MaxInt32 {
		return nil, fmt.Errorf("count of digits %d, allowed 1 … %d", n, math.MaxInt32)
	}
	p.N = int(n)
	f := make([]float64, planeFloats)
	for k := range f {
		f[k] = math.Float64frombits(binary.LittleEndian.Uint64(b[off:]))
		off += 8
		if math.IsNaN(f[k]) || math.IsInf(f[k], 0) {
			return nil, fmt.Errorf("value %d is %v", k, f[k])
		}
	}
	p.Mean, p.PC[0], p.PC[1] = f[:models.Pixels], f[models.Pixels:2*models.Pixels], f[2*models.Pixels:3*models.Pixels]
	p.Share = [2]float64{f[3*models.Pixels], f[3*models.Pixels+1]}
	var n0, n1, d float64
	for q := range models.Pixels {
		n0 += p.PC[0][q] * p.PC[0][q]
		n1 += p.PC[1][q] * p.PC[1][q]
		d += p.PC[0][q] * p.PC[1][q]
	}
	if math.Abs(n0-1) > 1e-9 || math.Abs(n1-1) > 1e-9 || math.Abs(d) > 1e-9 {
		return nil, fmt.Errorf("components not orthonormal (norms² %.3g, %.3g; product %.3g)", n0, n1, d)
	}
	for c, s := range p.Share {
		if s < 0 || s > 1 {
			return nil, fmt.Errorf("share of component %d is %v, allowed 0 … 1", c+1, s)
		}
	}
	return p, nil
}

// recordedSet is the set hash a plane file records (for a file whose set is known).
func recordedSet(b []byte) (h [32]byte) {
	if len(b) >= len(planeMagic)+32 {
		copy(h[:], b[len(planeMagic):])
	}
	return h
}

// EmbeddedPlane is the name of the sample's plane in assets.Sample,
// FashionPlane of the Fashion-MNIST sample's in assets.FashionSample.
const (
	EmbeddedPlane = "sample/train-plane.bin"
	FashionPlane  = "fashion/train-plane.bin"
)

// embeddedPlanes are the planes the build carries: MNIST's sample's and
// Fashion-MNIST's (when the build has it).
func embeddedPlanes() [][]byte {
	var out [][]byte
	if b, err := assets.Sample.ReadFile(EmbeddedPlane); err == nil {
		out = append(out, b)
	}
	if _, _, err := mnist.FashionSampleLoaded(); err == nil {
		// Read only once the sample is (in the page, a download).
		if b, err := assets.FashionSample.ReadFile(FashionPlane); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// PlaneCache is where the planes of sets other than the embedded sample
// are kept: os.UserCacheDir()/attractorlab/planes.
func PlaneCache() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "attractorlab", "planes"), nil
}

// PlanePath is the file in dir that keeps the plane of the digits hashed h.
func PlanePath(dir string, h [32]byte) string {
	return filepath.Join(dir, "plane-"+hex.EncodeToString(h[:16])+".bin")
}

// StateSpaceOf is set's state space, its plane read from the embedded
// sample's when set is the sample, else from the cache dir ("" for none);
// computed and kept there otherwise. A kept file that fails its checks is
// refused by name (Warning) and replaced by a plane computed again.
func StateSpaceOf(set *mnist.Set, dir string) *StateSpace {
	// The embedded subset itself (the set every run stores) needs no
	// hash: the plane was made from it (TestEmbeddedPlaneIsTheComputedOne
	// checks the hash it records). Hashing its 7.8 MB held the web page.
	for _, em := range []struct {
		sample func() (*mnist.Set, *mnist.Set, error)
		fsys   interface{ ReadFile(string) ([]byte, error) }
		name   string
	}{{mnist.Sample, assets.Sample, EmbeddedPlane}, {mnist.FashionSampleLoaded, assets.FashionSample, FashionPlane}} {
		if train, _, err := em.sample(); err == nil && set == train {
			if b, err := em.fsys.ReadFile(em.name); err == nil {
				if p, err := ReadPlane(b, recordedSet(b)); err == nil {
					s := p.Space(set)
					s.Source = "embedded"
					return s
				}
			}
		}
	}
	h := SetHash(set)
	for _, b := range embeddedPlanes() {
		if p, err := ReadPlane(b, h); err == nil {
			s := p.Space(set)
			s.Source = "embedded"
			return s
		}
	}
	var warn string
	path := ""
	if dir != "" {
		path = PlanePath(dir, h)
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			p, err := ReadPlane(b, h)
			if err == nil {
				s := p.Space(set)
				s.Source = path
				return s
			}
			warn = fmt.Sprintf("the kept state-space plane %s is refused (%v); computed again", path, err)
		case !errors.Is(err, fs.ErrNotExist):
			warn = fmt.Sprintf("the kept state-space plane %s cannot be read (%v); computed again", path, err)
		}
	}
	start := time.Now()
	p := ComputePlane(set)
	s := p.Space(set)
	s.Source = fmt.Sprintf("computed in %.1f s", time.Since(start).Seconds())
	if path != "" {
		if err := writePlane(path, p); err != nil {
			warn = joinNote(warn, fmt.Sprintf("the state-space plane could not be kept in %s (%v)", path, err))
		} else {
			s.Source += ", kept in " + path
		}
	}
	s.Warning = warn
	return s
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// writePlane writes the plane file whole or not at all: a temporary file
// in dir, renamed over path once written and synced.
func writePlane(path string, p *Plane) error {
	b, err := p.MarshalBinary()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".part*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
