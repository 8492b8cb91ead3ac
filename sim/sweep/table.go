package sweep

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"attractorlab/models/infile"
	"attractorlab/sim"
)

// Columns are sweep.csv's columns, in order: those of columnsV3 and, under
// masking, the mean error on the masked pixels at t*, on the visible ones
// at t* and on the masked ones at the input (empty under noise and
// without a t*).
var Columns = append(columnsV3[:len(columnsV3):len(columnsV3)], "mse_masked_t_star", "mse_visible_t_star", "mse_masked_0")

// columnsV3 are the columns of a table written with a manifest of version
// 2 or 3, still read and, when such parts merge, written.
var columnsV3 = []string{"model", "task", "level", "param", "seed", "n", "t_star", "mse_t_star", "mse_0", "improves", "mse_end", "escape_step"}

// columnsOf are the columns of a table of manifest version v.
func columnsOf(v int) []string {
	if v < 4 {
		return columnsV3
	}
	return Columns
}

// CSVName and ManifestName are a sweep directory's table and manifest.
const (
	CSVName      = "sweep.csv"
	ManifestName = "sweep.json"
)

func num(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// WriteCSV writes the results in the order given. A value that does not
// exist (a model without a parameter, a cell that never escapes) is an
// empty field; numbers carry every digit, so equal runs write equal bytes.
func WriteCSV(w io.Writer, task sim.Kind, rs []Result) error {
	return WriteCSVVersion(w, ManifestVersion, task, rs)
}

// WriteCSVVersion writes the table as manifest version v has it: parts
// written before version 4 merge to the table their version wrote.
func WriteCSVVersion(w io.Writer, v int, task sim.Kind, rs []Result) error {
	cols := columnsOf(v)
	cw := csv.NewWriter(w)
	if err := cw.Write(cols); err != nil {
		return err
	}
	for _, r := range rs {
		esc := ""
		if r.Escape >= 0 {
			esc = strconv.Itoa(r.Escape)
		}
		rec := []string{r.Model, task.String(), num(r.Level), num(r.Param), strconv.Itoa(r.Seed), strconv.Itoa(r.N),
			strconv.Itoa(r.TStar), num(r.MSETStar), num(r.MSE0), strconv.FormatBool(r.Improves), num(r.MSEEnd), esc}
		if len(cols) > len(columnsV3) {
			// Only a mask task has them, and the errors at t* only a
			// run with a t*.
			var m, v, m0 string
			if task == sim.Mask {
				m0 = num(r.Masked0)
				if r.TStar > 0 {
					m, v = num(r.MaskedTStar), num(r.VisibleTStar)
				}
			}
			rec = append(rec, m, v, m0)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV reads a sweep.csv (file names it in errors). Results carry no
// curve and no per-digit bests. Every value is checked on its own (see
// readCSV); Merge also checks them against the part's manifest.
func ReadCSV(r io.Reader, file string) ([]Result, error) {
	return readCSV(context.Background(), r, file, nil)
}

// MSERange is the range of an MSE in sweep.csv: the mean squared
// difference of pixel values in [0, 1].
var MSERange = sim.Range{Name: "MSE", Min: 0, Max: 1}

// readCSV reads a sweep.csv, refusing, by file, line and column: a value
// that is not a number (NaN and ±Inf included: a missing one is an empty
// field, where the sweep writes one), a model or task that does not exist,
// n outside 1 … 10000, t_star outside 0 … 1000, an MSE outside [0, 1],
// t_star 0 with an MSE(t*) or t_star ≥ 1 without one, improves that is not
// MSE(t*) < MSE(0), an escape step not after t*, and masked and visible
// errors given where there are none (under noise, at no t*) or missing
// where there are. With a manifest, the task, n and the steps must be the
// manifest's too, and the header its version's; without one, the header
// of version 4 or of versions 2 and 3 (no masked and visible errors).
func readCSV(ctx context.Context, r io.Reader, file string, man *Manifest) ([]Result, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	cols := Columns
	switch {
	case man != nil:
		cols = columnsOf(man.Version)
	case reflect.DeepEqual(head, columnsV3):
		cols = columnsV3
	}
	if !reflect.DeepEqual(head, cols) {
		return nil, fmt.Errorf("%s: header %q, want %q", file, strings.Join(head, ","), strings.Join(cols, ","))
	}
	cr.FieldsPerRecord = len(cols)
	maxSteps := int(sim.Steps.Max)
	if man != nil {
		maxSteps = man.Steps
	}
	var out []Result
	for line := 2; ; line++ {
		if line%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		res := Result{MaskedTStar: math.NaN(), VisibleTStar: math.NaN(), Masked0: math.NaN()}
		var perr error
		bad := func(col int, format string, a ...any) {
			if perr == nil {
				perr = fmt.Errorf("%s line %d: %s = %q %s", file, line, Columns[col], rec[col], fmt.Sprintf(format, a...))
			}
		}
		f := func(col int, empty bool) float64 {
			if rec[col] == "" {
				if !empty {
					bad(col, "is missing")
				}
				return math.NaN()
			}
			v, err := strconv.ParseFloat(rec[col], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				bad(col, "is not a number")
			}
			return v
		}
		i := func(col int, r sim.Range, empty bool) int {
			if rec[col] == "" && empty {
				return -1
			}
			v, err := strconv.Atoi(rec[col])
			if err != nil {
				bad(col, "is not a whole number")
			} else if !(float64(v) >= r.Min && float64(v) <= r.Max) {
				bad(col, "is out of range (allowed %s)", r.Allowed())
			}
			return v
		}
		mse := func(col int, empty bool) float64 {
			v := f(col, empty)
			if !math.IsNaN(v) && !(v >= MSERange.Min && v <= MSERange.Max) {
				bad(col, "is out of range (an MSE of pixel values in [0, 1] is within %s)", MSERange.Allowed())
			}
			return v
		}
		res.Model = rec[0]
		if _, err := sim.ParseModel(rec[0]); err != nil {
			bad(0, "is not a model (%s)", strings.Join(sim.ModelNames, ", "))
		}
		if _, err := sim.ParseKind(rec[1]); err != nil {
			bad(1, "is not a task (%s)", strings.Join(sim.Tasks, ", "))
		} else if man != nil && rec[1] != man.Task {
			bad(1, "is not the sweep's task (%s)", man.Task)
		}
		res.Level, res.Param = f(2, false), f(3, true)
		res.Seed = i(4, sim.Range{Min: 0, Max: Seeds.Max - 1}, false)
		res.N = i(5, sim.Digits, false)
		if man != nil && perr == nil && res.N != man.N {
			bad(5, "is not the sweep's n (%d test digits per cell)", man.N)
		}
		res.TStar = i(6, sim.Range{Min: 0, Max: float64(maxSteps)}, false)
		res.MSETStar, res.MSE0, res.MSEEnd = mse(7, true), mse(8, false), mse(10, true)
		switch rec[9] {
		case "true", "false":
			res.Improves = rec[9] == "true"
		default:
			bad(9, "is not true or false")
		}
		res.Escape = i(11, sim.Range{Min: 2, Max: float64(maxSteps)}, true)
		if len(cols) > len(columnsV3) {
			res.MaskedTStar, res.VisibleTStar, res.Masked0 = mse(12, true), mse(13, true), mse(14, true)
			if perr == nil {
				mask := rec[1] == sim.Mask.String()
				switch {
				case !mask && !(math.IsNaN(res.MaskedTStar) && math.IsNaN(res.VisibleTStar) && math.IsNaN(res.Masked0)):
					bad(1, "has masked and visible errors (only a mask task has them)")
				case mask && math.IsNaN(res.Masked0):
					bad(14, "is missing (task mask)")
				case mask && res.TStar > 0 && math.IsNaN(res.MaskedTStar):
					bad(12, "is missing (t_star = %d)", res.TStar)
				case mask && res.TStar > 0 && math.IsNaN(res.VisibleTStar):
					bad(13, "is missing (t_star = %d)", res.TStar)
				case mask && res.TStar == 0 && !(math.IsNaN(res.MaskedTStar) && math.IsNaN(res.VisibleTStar)):
					bad(12, "is given without a t* (t_star = 0)")
				}
			}
		}
		if perr == nil {
			switch {
			case res.TStar == 0 && !math.IsNaN(res.MSETStar):
				bad(6, "has an MSE(t*) (t* ≥ 1; 0 is a run without one, with mse_t_star empty)")
			case res.TStar > 0 && math.IsNaN(res.MSETStar):
				bad(7, "is missing (t_star = %d)", res.TStar)
			case res.Improves != sim.Improves(res.MSETStar, res.MSE0) && res.Improves != (res.MSETStar < res.MSE0):
				// Older sweeps wrote mse_t_star < mse_0 here, today's
				// one sim.Improves (lower by more than rounding); the two
				// differ only within a millionth of mse_0, and either is
				// read as written.
				bad(9, "does not agree with mse_t_star %s against mse_0 %s", rec[7], rec[8])
			case res.Escape >= 0 && res.Escape <= res.TStar:
				bad(11, "is not after t_star = %d", res.TStar)
			}
		}
		if perr != nil {
			return nil, perr
		}
		out = append(out, res)
	}
}

// Checksum is "sha256:" and the hex digest of b: a manifest's record of
// its sweep.csv.
func Checksum(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// Manifest records what a sweep directory holds: the grid, the data and
// weights it ran on, and which shard of how many. Parts merge only when
// everything but the shard is equal.
type Manifest struct {
	Version int       `json:"version"`
	Models  []string  `json:"models"`
	Task    string    `json:"task"`
	Levels  []float64 `json:"levels"`
	Param   string    `json:"param"`
	Values  []float64 `json:"values"`
	N       int       `json:"n"`
	Steps   int       `json:"steps"`
	Seeds   int       `json:"seeds"`
	// Settings are every knob's value in the base settings, by its
	// scenario-file field (sim.Knobs; the swept one and the level are
	// the cells').
	Settings  map[string]float64 `json:"settings"`
	Attention string             `json:"attention"`
	Async     bool               `json:"async"`
	Data      string             `json:"data"`    // fingerprint of the test digits used
	Weights   string             `json:"weights"` // fingerprint of a --weights file, "" for the embedded ones
	Cells     int                `json:"cells"`
	Shard     int                `json:"shard"`
	Shards    int                `json:"shards"`
	CSV       string             `json:"csv"` // Checksum of the directory's sweep.csv
}

// ManifestVersion is the version this code writes (2 added the table's
// checksum, 3 keeps every knob's value under settings, 4 adds the masked
// and visible errors to the table). It reads versions 3 and 2 too
// (manifestV2, read as the version 3 it means), whose tables keep their
// columns (columnsV3); version 1 parts, without a checksum, were refused
// by version 2 already and still are.
const ManifestVersion = 4

// MaxManifestBytes caps a sweep.json: a grid of MaxCells cells fits many
// times over.
const MaxManifestBytes = 16 * infile.MB

// maxRowBytes bounds one line of sweep.csv (its longest is under 330
// bytes), so a part's table is capped by its count of cells.
const maxRowBytes = 512

// NewManifest describes cfg run on data (fingerprint) with weights.
func NewManifest(cfg Config, data, weights string, shard, shards int) Manifest {
	vals := cfg.Values
	if vals == nil {
		vals = []float64{}
	}
	settings := sim.KnobFields(cfg.Base)
	return Manifest{Version: ManifestVersion, Models: cfg.Models, Task: cfg.Task.String(), Levels: cfg.Levels,
		Param: cfg.Param.String(), Values: vals, N: cfg.N, Steps: cfg.Steps, Seeds: cfg.Seeds,
		Settings: settings, Attention: cfg.Base.Dyn.Attn.String(), Async: cfg.Base.Hop.Async,
		Data: data, Weights: weights, Cells: cfg.NumCells(), Shard: shard, Shards: shards}
}

// Config rebuilds the sweep's configuration.
func (m Manifest) Config() (Config, error) {
	task, err := sim.ParseKind(m.Task)
	if err != nil {
		return Config{}, err
	}
	p, err := ParseParam(m.Param)
	if err != nil {
		return Config{}, err
	}
	base := sim.DefaultSettings()
	if err := sim.SetKnobFields(&base, m.Settings); err != nil {
		return Config{}, fmt.Errorf("settings: %w", err)
	}
	if base.Dyn.Attn, err = sim.ParseAttention(m.Attention); err != nil {
		return Config{}, err
	}
	base.Hop.Async = m.Async
	var vals []float64
	if len(m.Values) > 0 {
		vals = m.Values
	}
	cfg := Config{Models: m.Models, Task: task, Levels: m.Levels, Param: p, Values: vals, N: m.N, Steps: m.Steps, Seeds: m.Seeds, Base: base}
	return cfg, cfg.Validate()
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

// ReadManifest reads dir's sweep.json (a regular file of at most
// MaxManifestBytes).
func ReadManifest(dir string) (Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	b, err := infile.ReadAll(path, "sweep part manifest", MaxManifestBytes)
	if err != nil {
		return Manifest{}, err
	}
	return ParseManifest(b, path)
}

// ParseManifest decodes and checks a sweep.json (path names it in
// errors): its version, a grid that Validate accepts, the cells it
// records, a shard of at most one shard per cell, the table's checksum,
// and fingerprints of printable text.
func ParseManifest(b []byte, path string) (Manifest, error) {
	var m Manifest
	var peek struct {
		Version int `json:"version"`
	}
	json.Unmarshal(b, &peek) // a bad file is refused by the strict decode below
	if peek.Version == 2 {
		old, err := decodeStrict[manifestV2](b, path)
		if err != nil {
			return Manifest{}, fmt.Errorf("%w (read as a version 2 manifest)", err)
		}
		m = old.upgrade()
	} else {
		var err error
		if m, err = decodeStrict[Manifest](b, path); err != nil {
			return Manifest{}, err
		}
		if m.Version != 3 && m.Version != ManifestVersion {
			return Manifest{}, fmt.Errorf("%s: version %d, this program reads versions 2 … %d (run the sweep again with this version)", path, m.Version, ManifestVersion)
		}
	}
	if !(m.Shards >= 1 && m.Shards <= MaxCells && m.Shard >= 0 && m.Shard < m.Shards) {
		return Manifest{}, fmt.Errorf("%s: shard %d of shards %d is not a shard (allowed shards 1 … %d, shard 0 … shards−1)", path, m.Shard, m.Shards, MaxCells)
	}
	for _, f := range []struct{ name, v string }{{"data", m.Data}, {"weights", m.Weights}, {"csv", m.CSV}} {
		if len(f.v) > 200 || strings.ContainsFunc(f.v, unicode.IsControl) {
			return Manifest{}, fmt.Errorf("%s: %s is not a fingerprint (at most 200 printable characters)", path, f.name)
		}
	}
	if m.CSV != "" {
		if h, ok := strings.CutPrefix(m.CSV, "sha256:"); !ok || len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
			return Manifest{}, fmt.Errorf("%s: csv = %q is not a checksum (sha256: and 64 hex digits)", path, m.CSV)
		}
	}
	cfg, err := m.Config()
	if err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", path, err)
	}
	if n := cfg.NumCells(); m.Cells != n {
		return Manifest{}, fmt.Errorf("%s: cells = %d, the grid has %d", path, m.Cells, n)
	}
	if m.Shards > m.Cells {
		return Manifest{}, fmt.Errorf("%s: shards = %d for %d cells (at most one shard per cell)", path, m.Shards, m.Cells)
	}
	return m, nil
}

// decodeStrict decodes one JSON value of type T, refusing unknown fields.
func decodeStrict[T any](b []byte, path string) (T, error) {
	var v T
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("%s: %w", path, err)
	}
	if dec.More() {
		return v, fmt.Errorf("%s: more than one JSON value", path)
	}
	return v, nil
}

// manifestV2 is sweep.json as version 2 wrote it: the bare model's γ and
// λ, the Hopfield networks' β and K as fields of their own; every other
// setting was the default (sweeps before version 3 had no flag for
// them). Parts written by it keep merging (TestManifestV2Merges).
type manifestV2 struct {
	Version   int       `json:"version"`
	Models    []string  `json:"models"`
	Task      string    `json:"task"`
	Levels    []float64 `json:"levels"`
	Param     string    `json:"param"`
	Values    []float64 `json:"values"`
	N         int       `json:"n"`
	Steps     int       `json:"steps"`
	Seeds     int       `json:"seeds"`
	Gamma     float32   `json:"gamma"`
	Attention string    `json:"attention"`
	Lambda    float32   `json:"lambda"`
	Beta      float32   `json:"beta"`
	K         int       `json:"k"`
	Async     bool      `json:"async"`
	Data      string    `json:"data"`
	Weights   string    `json:"weights"`
	Cells     int       `json:"cells"`
	Shard     int       `json:"shard"`
	Shards    int       `json:"shards"`
	CSV       string    `json:"csv"`
}

// upgrade is the version-3 manifest with the same meaning: the four
// settings under their fields, every other knob at its default.
func (o manifestV2) upgrade() Manifest {
	set := sim.DefaultSettings()
	set.Dyn.Gamma, set.Dyn.Lambda = o.Gamma, o.Lambda
	set.Hop.Beta, set.Hop.K = o.Beta, o.K
	settings := sim.KnobFields(set)
	return Manifest{Version: 3, Models: o.Models, Task: o.Task, Levels: o.Levels, Param: o.Param, Values: o.Values,
		N: o.N, Steps: o.Steps, Seeds: o.Seeds, Settings: settings, Attention: o.Attention, Async: o.Async,
		Data: o.Data, Weights: o.Weights, Cells: o.Cells, Shard: o.Shard, Shards: o.Shards, CSV: o.CSV}
}

// differs names the first field in which two manifests differ, ignoring
// the shard ("" when equal).
func differs(a, b Manifest) string {
	a.Shard, b.Shard = 0, 0
	a.CSV, b.CSV = "", ""
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for k := 0; k < va.NumField(); k++ {
		if !reflect.DeepEqual(va.Field(k).Interface(), vb.Field(k).Interface()) {
			tag := va.Type().Field(k).Tag.Get("json")
			return fmt.Sprintf("%s (%v against %v)", tag, va.Field(k).Interface(), vb.Field(k).Interface())
		}
	}
	return ""
}

// Merge reads the parts in dirs (each a sweep directory of one shard) and
// returns their common configuration, the manifest of the whole (without
// a checksum: its table is written after) and every result in cell order.
// It refuses, naming the file: a part that is not a sweep directory (a
// sweep.json or sweep.csv that is not a regular file, too large, or
// invalid), parts of different sweeps, a shard given twice, a shard
// missing, a table whose checksum is not the one its manifest records,
// and a part whose rows are not its shard's cells or hold values out of
// range. A cancelled ctx stops it with ctx.Err().
func Merge(ctx context.Context, dirs []string) (Config, Manifest, []Result, error) {
	return merge(ctx, dirs, func(path string, max int64) ([]byte, error) {
		what := "sweep part table"
		if filepath.Base(path) == ManifestName {
			what = "sweep part manifest"
		}
		return infile.ReadAll(path, what, max)
	})
}

// merge is Merge reading each part's files with read (path, cap).
func merge(ctx context.Context, dirs []string, read func(path string, max int64) ([]byte, error)) (Config, Manifest, []Result, error) {
	fail := func(format string, a ...any) (Config, Manifest, []Result, error) {
		return Config{}, Manifest{}, nil, fmt.Errorf("sweep merge: "+format, a...)
	}
	if len(dirs) == 0 {
		return fail("no part directory given")
	}
	var first Manifest
	var cfg Config
	byShard := map[int]string{}
	results := map[int]Result{}
	for k, dir := range dirs {
		if err := ctx.Err(); err != nil {
			return Config{}, Manifest{}, nil, err
		}
		mp := filepath.Join(dir, ManifestName)
		mb, err := read(mp, MaxManifestBytes)
		if err != nil {
			return fail("%s is not a sweep part: %w", dir, err)
		}
		m, err := ParseManifest(mb, mp)
		if err != nil {
			return fail("%s is not a sweep part: %w", dir, err)
		}
		if k == 0 {
			first = m
			if cfg, err = m.Config(); err != nil {
				return fail("%s: %w", filepath.Join(dir, ManifestName), err)
			}
		} else if d := differs(first, m); d != "" {
			return fail("%s is from another sweep than %s: %s differs", dir, dirs[0], d)
		}
		if prev, ok := byShard[m.Shard]; ok {
			return fail("shard %d of %d is given twice: %s and %s", m.Shard, m.Shards, prev, dir)
		}
		byShard[m.Shard] = dir
		path := filepath.Join(dir, CSVName)
		// The shard's cells are made as its rows are checked: memory
		// follows the table read, not the grid a manifest claims.
		want := cfg.ShardLen(m.Shard, m.Shards)
		b, err := read(path, int64(want+1)*maxRowBytes)
		if err != nil {
			return fail("%w", err)
		}
		if m.CSV == "" {
			return fail("%s records no checksum of %s: run the part again", filepath.Join(dir, ManifestName), path)
		}
		if sum := Checksum(b); sum != m.CSV {
			return fail("%s: checksum %s, %s records %s: the table was changed after the sweep wrote it", path, sum, filepath.Join(dir, ManifestName), m.CSV)
		}
		rows, err := readCSV(ctx, bytes.NewReader(b), path, &m)
		if err != nil {
			return fail("%w", err)
		}
		if len(rows) != want {
			return fail("%s has %d rows, shard %d of %d has %d cells", path, len(rows), m.Shard, m.Shards, want)
		}
		for i, r := range rows {
			c := cfg.CellAt(m.Shard + i*m.Shards)
			if r.Model != c.Model || r.Level != c.Level || r.Seed != c.Seed || !(r.Param == c.Param || math.IsNaN(r.Param) && math.IsNaN(c.Param)) {
				return fail("%s line %d is %s level %s %s seed %d, shard %d of %d has %s level %s %s seed %d there",
					path, i+2, r.Model, num(r.Level), num(r.Param), r.Seed, m.Shard, m.Shards, c.Model, num(c.Level), num(c.Param), c.Seed)
			}
			r.Cell = c
			results[c.Index] = r
		}
	}
	if len(byShard) < first.Shards {
		var missing []string
		for s := 0; s < first.Shards && len(missing) < 10; s++ {
			if _, ok := byShard[s]; !ok {
				missing = append(missing, strconv.Itoa(s))
			}
		}
		list := strings.Join(missing, ", ")
		if n := first.Shards - len(byShard); n > len(missing) {
			list += fmt.Sprintf(" … (%d in all)", n)
		}
		return fail("shard %s of %d missing (given: %s)", list, first.Shards, strings.Join(dirs, ", "))
	}
	out := make([]Result, 0, len(results))
	for _, r := range results {
		out = append(out, r)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Index < out[b].Index })
	whole := first
	whole.Shard, whole.Shards, whole.CSV = 0, 1, ""
	return cfg, whole, out, nil
}
