package dynamics

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/cmplx"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"attractorlab/models"
	"attractorlab/sim"
)

// The files of a dynamics directory.
const (
	CSVName      = "dynamics.csv"
	ManifestName = "dynamics.json"
)

// Version is dynamics.json's version.
const Version = 1

// Columns are dynamics.csv's columns: a row per digit and asked step, in
// digit order then the order of --at. The digit's own fields (t* and its
// MSE, the input's, the escape, the growth, the late residual) repeat on
// each of its rows; eigN_re, eigN_im are the N-th leading eigenvalue.
var Columns = func() []string {
	c := []string{"digit", "label", "at", "t", "t_star", "mse_t_star", "mse_0", "improves", "escape_t",
		"horizon", "growth", "growth_converged", "residual_end", "peak_step_t", "spectral_radius", "unstable", "converged", "step_size"}
	for k := 1; k <= Eigs; k++ {
		c = append(c, fmt.Sprintf("eig%d_re", k), fmt.Sprintf("eig%d_im", k))
	}
	return c
}()

func num(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// WriteCSV writes the digits' rows (k is the run's horizon); numbers carry
// every digit, so equal runs write equal bytes.
func WriteCSV(w io.Writer, at []Step, k int, ds []Digit) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns); err != nil {
		return err
	}
	for _, d := range ds {
		for a, sp := range d.Spectra {
			rec := []string{strconv.Itoa(d.Index), strconv.Itoa(d.Label), at[a].String(), strconv.Itoa(sp.T),
				strconv.Itoa(d.Best.T), num(d.Best.MSE), num(d.Best.Input), strconv.FormatBool(d.Best.Improves), strconv.Itoa(d.Escape),
				strconv.Itoa(k), num(d.Growth), strconv.FormatBool(d.GrowthConverged), num(d.Residual), strconv.Itoa(d.PeakStep),
				num(sp.Radius), strconv.Itoa(sp.Unstable), strconv.FormatBool(sp.Converged), num(sp.StepSize)}
			for _, e := range sp.Eigs {
				rec = append(rec, num(real(e.Value)), num(imag(e.Value)))
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV reads a table WriteCSV wrote for a run asking at with k,
// checking every value's range, that each digit has one row per asked
// step in order and that its own fields agree across them. The digits
// come back without their MSE curves.
func ReadCSV(b []byte, path string, at []Step, k, steps int) ([]Digit, error) {
	cr := csv.NewReader(bytes.NewReader(b))
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 || !slices.Equal(rows[0], Columns) {
		return nil, fmt.Errorf("%s: not a dynamics table (want the columns %s)", path, strings.Join(Columns[:6], ",")+",…")
	}
	var out []Digit
	for i, rec := range rows[1:] {
		line := i + 2
		var perr error
		bad := func(col int, why string, a ...any) {
			if perr == nil {
				perr = fmt.Errorf("%s line %d: %s = %q %s", path, line, Columns[col], rec[col], fmt.Sprintf(why, a...))
			}
		}
		f := func(col int, lo, hi float64, empty bool) float64 {
			if rec[col] == "" && empty {
				return math.NaN()
			}
			v, err := strconv.ParseFloat(rec[col], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi {
				bad(col, "is not a number in [%g, %g]", lo, hi)
			}
			return v
		}
		in := func(col int, lo, hi int) int {
			v, err := strconv.Atoi(rec[col])
			if err != nil || v < lo || v > hi {
				bad(col, "is not a whole number in %d … %d", lo, hi)
			}
			return v
		}
		bl := func(col int) bool {
			if rec[col] != "true" && rec[col] != "false" {
				bad(col, "is not true or false")
			}
			return rec[col] == "true"
		}
		a := i % len(at)
		idx := in(0, 0, int(sim.Digits.Max)-1)
		label := in(1, 0, 9)
		if rec[2] != at[a].String() {
			bad(2, "is not the asked step %s (each digit has a row per step of --at, in its order)", at[a])
		}
		t := in(3, 1, steps)
		var d Digit
		d.Index, d.Label = idx, label
		d.Best.T = in(4, 1, steps)
		d.Best.MSE, d.Best.Input = f(5, 0, 1, false), f(6, 0, 1, false)
		d.Best.Improves = bl(7)
		d.Escape = in(8, -1, steps)
		if kk := in(9, 1, MaxK); kk != k && perr == nil {
			bad(9, "is not the run's k = %d", k)
		}
		d.Growth = f(10, 0, math.MaxFloat64, false)
		d.GrowthConverged = bl(11)
		d.Residual = f(12, 0, math.MaxFloat64, false)
		d.PeakStep = in(13, 0, steps)
		sp := Spectrum{T: t, Radius: f(14, 0, math.MaxFloat64, false), Unstable: in(15, 0, Eigs), Converged: bl(16), StepSize: f(17, 0, math.MaxFloat64, false)}
		for e := 0; e < Eigs; e++ {
			re, im := f(18+2*e, -math.MaxFloat64, math.MaxFloat64, false), f(19+2*e, -math.MaxFloat64, math.MaxFloat64, false)
			sp.Eigs = append(sp.Eigs, models.Eig{Value: complex(re, im)})
		}
		if perr == nil {
			switch {
			case at[a].TStar && t != d.Best.T:
				bad(3, "is not the digit's t* = %d (at = t*)", d.Best.T)
			case !at[a].TStar && t != at[a].T:
				bad(3, "is not the asked step %d", at[a].T)
			case d.Best.Improves != sim.Improves(d.Best.MSE, d.Best.Input):
				bad(7, "does not agree with mse_t_star against mse_0")
			case d.Escape >= 0 && d.Escape <= d.Best.T:
				bad(8, "is not after t_star = %d", d.Best.T)
			case math.Abs(sp.Radius-cmplx.Abs(sp.Eigs[0].Value)) > 1e-12*max(1, sp.Radius):
				bad(14, "is not |eig1|")
			}
		}
		if perr != nil {
			return nil, perr
		}
		if a == 0 {
			out = append(out, d)
		} else {
			p := &out[len(out)-1]
			q := d
			q.Spectra = p.Spectra
			if !reflect.DeepEqual(*p, q) {
				return nil, fmt.Errorf("%s line %d: digit %d's own fields differ from its first row's", path, line, idx)
			}
		}
		out[len(out)-1].Spectra = append(out[len(out)-1].Spectra, sp)
	}
	if len(rows) > 1 && (len(rows)-1)%len(at) != 0 {
		return nil, fmt.Errorf("%s: %d rows is not a whole number of digits × %d asked steps", path, len(rows)-1, len(at))
	}
	return out, nil
}

// Manifest is dynamics.json: the run, the data and weights, and which
// shard of how many.
type Manifest struct {
	Version   int                `json:"version"`
	Model     string             `json:"model"`
	Task      string             `json:"task"`
	Seed      uint64             `json:"seed"`
	Settings  map[string]float64 `json:"settings"` // every knob by its scenario field
	Attention string             `json:"attention"`
	N         int                `json:"n"`
	Steps     int                `json:"steps"`
	At        []string           `json:"at"`
	K         int                `json:"horizon"`
	Data      string             `json:"data"`
	Weights   string             `json:"weights"`
	Digits    int                `json:"digits"` // digits analysed in all: min(n, the test digits)
	Shard     int                `json:"shard"`
	Shards    int                `json:"shards"`
	CSV       string             `json:"csv"`
}

// NewManifest describes c run over digits test digits.
func NewManifest(c Config, digits int, data, weights string, shard, shards int) Manifest {
	settings := sim.KnobFields(c.Settings)
	at := make([]string, len(c.At))
	for i, s := range c.At {
		at[i] = s.String()
	}
	return Manifest{Version: Version, Model: c.Model, Task: c.Settings.Corruption.Kind.String(), Seed: c.Settings.Corruption.Seed,
		Settings: settings, Attention: c.Settings.Dyn.Attn.String(), N: c.N, Steps: c.Steps, At: at, K: c.K,
		Data: data, Weights: weights, Digits: digits, Shard: shard, Shards: shards}
}

// Config rebuilds the run's configuration (and checks it).
func (m Manifest) Config() (Config, error) {
	if _, err := sim.ParseModel(m.Model); err != nil {
		return Config{}, err
	}
	set := sim.DefaultSettings()
	kind, err := sim.ParseKind(m.Task)
	if err != nil {
		return Config{}, err
	}
	set.Corruption.Kind, set.Corruption.Seed = kind, m.Seed
	if err := sim.SetKnobFields(&set, m.Settings); err != nil {
		return Config{}, fmt.Errorf("settings: %w", err)
	}
	if set.Dyn.Attn, err = sim.ParseAttention(m.Attention); err != nil {
		return Config{}, err
	}
	at, err := ParseSteps(strings.Join(m.At, ","), m.Steps)
	if err != nil {
		return Config{}, err
	}
	c := Config{Model: m.Model, Settings: set, N: m.N, Steps: m.Steps, At: at, K: m.K}
	return c, c.Validate()
}

// Checksum is the manifest's record of a table.
func Checksum(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// WriteManifest writes m as indented JSON.
func WriteManifest(w io.Writer, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ParseManifest decodes and checks a dynamics.json (path names it).
func ParseManifest(b []byte, path string) (Manifest, Config, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if m.Version != Version {
		return m, Config{}, fmt.Errorf("%s: version %d, this program reads version %d", path, m.Version, Version)
	}
	c, err := m.Config()
	if err != nil {
		return m, Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if !(m.Digits >= 1 && m.Digits <= m.N) {
		return m, Config{}, fmt.Errorf("%s: digits = %d is out of range (1 … n = %d)", path, m.Digits, m.N)
	}
	if !(m.Shards >= 1 && m.Shards <= m.Digits && m.Shard >= 0 && m.Shard < m.Shards) {
		return m, Config{}, fmt.Errorf("%s: shard %d of %d is not a shard of %d digits (allowed shards 1 … digits, shard 0 … shards−1)", path, m.Shard, m.Shards, m.Digits)
	}
	if h, ok := strings.CutPrefix(m.CSV, "sha256:"); !ok || len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
		return m, Config{}, fmt.Errorf("%s: csv = %q is not a checksum (sha256: and 64 hex digits)", path, m.CSV)
	}
	for _, f := range []string{m.Data, m.Weights} {
		if len(f) > 200 || strings.ContainsFunc(f, func(r rune) bool { return r < ' ' }) {
			return m, Config{}, fmt.Errorf("%s: data or weights is not a fingerprint (at most 200 printable characters)", path)
		}
	}
	return m, c, nil
}

// Part is one shard's directory read: its manifest and table.
type Part struct {
	Dir      string
	Manifest []byte
	Table    []byte
}

// Merge checks the parts (one run, each shard once, every shard there,
// each table the one its manifest records, each digit its shard's) and
// returns the whole run's manifest (one shard, no checksum), its config
// and every digit in index order.
func Merge(parts []Part) (Manifest, Config, []Digit, error) {
	fail := func(format string, a ...any) (Manifest, Config, []Digit, error) {
		return Manifest{}, Config{}, nil, fmt.Errorf("dynamics merge: "+format, a...)
	}
	if len(parts) == 0 {
		return fail("no part given")
	}
	var first Manifest
	var cfg Config
	seen := map[int]string{}
	digits := map[int]Digit{}
	for k, p := range parts {
		m, c, err := ParseManifest(p.Manifest, p.Dir+"/"+ManifestName)
		if err != nil {
			return fail("%s is not a dynamics part: %w", p.Dir, err)
		}
		if k == 0 {
			first, cfg = m, c
		} else {
			a, b := first, m
			a.Shard, b.Shard, a.CSV, b.CSV = 0, 0, "", ""
			if !reflect.DeepEqual(a, b) {
				return fail("%s is from another run than %s (model, settings, digits, steps, --at, k, data or shards differ)", p.Dir, parts[0].Dir)
			}
		}
		if prev, ok := seen[m.Shard]; ok {
			return fail("shard %d of %d is given twice: %s and %s", m.Shard, m.Shards, prev, p.Dir)
		}
		seen[m.Shard] = p.Dir
		if sum := Checksum(p.Table); sum != m.CSV {
			return fail("%s/%s: checksum %s, its manifest records %s: the table was changed after it was written", p.Dir, CSVName, sum, m.CSV)
		}
		ds, err := ReadCSV(p.Table, p.Dir+"/"+CSVName, c.At, c.K, c.Steps)
		if err != nil {
			return fail("%w", err)
		}
		want := 0
		for i := m.Shard; i < m.Digits; i += m.Shards {
			if want < len(ds) && ds[want].Index != i {
				return fail("%s/%s: digit %d where shard %d of %d has digit %d", p.Dir, CSVName, ds[want].Index, m.Shard, m.Shards, i)
			}
			want++
		}
		if len(ds) != want {
			return fail("%s/%s has %d digits, shard %d of %d has %d", p.Dir, CSVName, len(ds), m.Shard, m.Shards, want)
		}
		for _, d := range ds {
			digits[d.Index] = d
		}
	}
	if len(seen) != first.Shards {
		var missing []string
		for s := range first.Shards {
			if _, ok := seen[s]; !ok {
				missing = append(missing, strconv.Itoa(s))
			}
		}
		return fail("shard %s of %d missing", strings.Join(missing, ", "), first.Shards)
	}
	out := make([]Digit, 0, len(digits))
	for i := range first.Digits {
		out = append(out, digits[i])
	}
	whole := first
	whole.Shard, whole.Shards, whole.CSV = 0, 1, ""
	return whole, cfg, out, nil
}
