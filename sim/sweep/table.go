package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"attractorlab/sim"
)

// Columns are sweep.csv's columns, in order.
var Columns = []string{"model", "task", "level", "param", "seed", "n", "t_star", "mse_t_star", "mse_0", "improves", "mse_end", "escape_step"}

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
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns); err != nil {
		return err
	}
	for _, r := range rs {
		esc := ""
		if r.Escape >= 0 {
			esc = strconv.Itoa(r.Escape)
		}
		rec := []string{r.Model, task.String(), num(r.Level), num(r.Param), strconv.Itoa(r.Seed), strconv.Itoa(r.N),
			strconv.Itoa(r.TStar), num(r.MSETStar), num(r.MSE0), strconv.FormatBool(r.Improves), num(r.MSEEnd), esc}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV reads a sweep.csv (file names it in errors). Results carry no
// curve and no per-digit bests.
func ReadCSV(r io.Reader, file string) ([]Result, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(Columns)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if !reflect.DeepEqual(head, Columns) {
		return nil, fmt.Errorf("%s: header %q, want %q", file, strings.Join(head, ","), strings.Join(Columns, ","))
	}
	var out []Result
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		var res Result
		var perr error
		f := func(col int) float64 {
			if rec[col] == "" {
				return math.NaN()
			}
			v, err := strconv.ParseFloat(rec[col], 64)
			if err != nil && perr == nil {
				perr = fmt.Errorf("%s line %d: %s = %q is not a number", file, line, Columns[col], rec[col])
			}
			return v
		}
		i := func(col int) int {
			v, err := strconv.Atoi(rec[col])
			if err != nil && perr == nil {
				perr = fmt.Errorf("%s line %d: %s = %q is not a whole number", file, line, Columns[col], rec[col])
			}
			return v
		}
		res.Model = rec[0]
		res.Level, res.Param = f(2), f(3)
		res.Seed, res.N, res.TStar = i(4), i(5), i(6)
		res.MSETStar, res.MSE0, res.MSEEnd = f(7), f(8), f(10)
		res.Improves = rec[9] == "true"
		res.Escape = -1
		if rec[11] != "" {
			res.Escape = i(11)
		}
		if perr != nil {
			return nil, perr
		}
		out = append(out, res)
	}
}

// Manifest records what a sweep directory holds: the grid, the data and
// weights it ran on, and which shard of how many. Parts merge only when
// everything but the shard is equal.
type Manifest struct {
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
	Data      string    `json:"data"`    // fingerprint of the test digits used
	Weights   string    `json:"weights"` // fingerprint of a --weights file, "" for the embedded ones
	Cells     int       `json:"cells"`
	Shard     int       `json:"shard"`
	Shards    int       `json:"shards"`
}

// ManifestVersion is the version this code writes and reads.
const ManifestVersion = 1

// NewManifest describes cfg run on data (fingerprint) with weights.
func NewManifest(cfg Config, data, weights string, shard, shards int) Manifest {
	vals := cfg.Values
	if vals == nil {
		vals = []float64{}
	}
	return Manifest{Version: ManifestVersion, Models: cfg.Models, Task: cfg.Task.String(), Levels: cfg.Levels,
		Param: cfg.Param.String(), Values: vals, N: cfg.N, Steps: cfg.Steps, Seeds: cfg.Seeds,
		Gamma: cfg.Base.Dyn.Gamma, Attention: cfg.Base.Dyn.Attn.String(), Lambda: cfg.Base.Dyn.Lambda,
		Beta: cfg.Base.Hop.Beta, K: cfg.Base.Hop.K, Async: cfg.Base.Hop.Async,
		Data: data, Weights: weights, Cells: cfg.NumCells(), Shard: shard, Shards: shards}
}

// Config rebuilds the sweep's configuration.
func (m Manifest) Config() (Config, error) {
	task, err := sim.ParseKind(m.Task)
	if err != nil {
		return Config{}, err
	}
	p := NoParam
	for k, name := range Params {
		if name == m.Param {
			p = Param(k)
		}
	}
	base := sim.DefaultSettings()
	base.Dyn.Gamma, base.Dyn.Lambda = m.Gamma, m.Lambda
	if base.Dyn.Attn, err = sim.ParseAttention(m.Attention); err != nil {
		return Config{}, err
	}
	base.Hop = sim.HopfieldParams{Beta: m.Beta, K: m.K, Async: m.Async}
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

// ReadManifest reads dir's sweep.json.
func ReadManifest(dir string) (Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, err
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", path, err)
	}
	if m.Version != ManifestVersion {
		return Manifest{}, fmt.Errorf("%s: version %d, this program reads version %d", path, m.Version, ManifestVersion)
	}
	if !(m.Shards >= 1 && m.Shard >= 0 && m.Shard < m.Shards) {
		return Manifest{}, fmt.Errorf("%s: shard %d of %d is not a shard (allowed 0 … shards−1, shards ≥ 1)", path, m.Shard, m.Shards)
	}
	return m, nil
}

// differs names the first field in which two manifests differ, ignoring
// the shard ("" when equal).
func differs(a, b Manifest) string {
	a.Shard, b.Shard = 0, 0
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
// returns their common configuration, the manifest of the whole and every
// result in cell order. It refuses, naming the directory: a part that is
// not a sweep directory, parts of different sweeps, a shard given twice,
// a shard missing, and a part whose rows are not its shard's cells.
func Merge(dirs []string) (Config, Manifest, []Result, error) {
	if len(dirs) == 0 {
		return Config{}, Manifest{}, nil, fmt.Errorf("sweep merge: no part directory given")
	}
	var first Manifest
	var cfg Config
	var cells []Cell
	byShard := map[int]string{}
	results := map[int]Result{}
	for k, dir := range dirs {
		m, err := ReadManifest(dir)
		if err != nil {
			return Config{}, Manifest{}, nil, fmt.Errorf("sweep merge: %s is not a sweep part: %w", dir, err)
		}
		if k == 0 {
			first = m
			if cfg, err = m.Config(); err != nil {
				return Config{}, Manifest{}, nil, fmt.Errorf("sweep merge: %s: %w", filepath.Join(dir, ManifestName), err)
			}
			cells = cfg.Cells()
			if len(cells) != m.Cells {
				return Config{}, Manifest{}, nil, fmt.Errorf("sweep merge: %s: %d cells recorded, the grid has %d", filepath.Join(dir, ManifestName), m.Cells, len(cells))
			}
		} else if d := differs(first, m); d != "" {
			return Config{}, Manifest{}, nil, fmt.Errorf("sweep merge: %s is from another sweep than %s: %s differs", dir, dirs[0], d)
		}
		if prev, ok := byShard[m.Shard]; ok {
			return Config{}, Manifest{}, nil, fmt.Errorf("sweep merge: shard %d of %d is given twice: %s and %s", m.Shard, m.Shards, prev, dir)
		}
		byShard[m.Shard] = dir
		path := filepath.Join(dir, CSVName)
		f, err := os.Open(path)
		if err != nil {
			return Config{}, Manifest{}, nil, fmt.Errorf("sweep merge: %w", err)
		}
		rows, err := ReadCSV(f, path)
		f.Close()
		if err != nil {
			return Config{}, Manifest{}, nil, fmt.Errorf("sweep merge: %w", err)
		}
		want := Shard(cells, m.Shard, m.Shards)
		if len(rows) != len(want) {
			return Config{}, Manifest{}, nil, fmt.Errorf("sweep merge: %s has %d rows, shard %d of %d has %d cells", path, len(rows), m.Shard, m.Shards, len(want))
		}
		for i, r := range rows {
			c := want[i]
			if r.Model != c.Model || r.Level != c.Level || r.Seed != c.Seed || !(r.Param == c.Param || math.IsNaN(r.Param) && math.IsNaN(c.Param)) {
				return Config{}, Manifest{}, nil, fmt.Errorf("sweep merge: %s line %d is %s level %s %s seed %d, shard %d of %d has %s level %s %s seed %d there",
					path, i+2, r.Model, num(r.Level), num(r.Param), r.Seed, m.Shard, m.Shards, c.Model, num(c.Level), num(c.Param), c.Seed)
			}
			r.Cell = c
			results[c.Index] = r
		}
	}
	var missing []string
	for s := 0; s < first.Shards; s++ {
		if _, ok := byShard[s]; !ok {
			missing = append(missing, strconv.Itoa(s))
		}
	}
	if len(missing) > 0 {
		return Config{}, Manifest{}, nil, fmt.Errorf("sweep merge: shard %s of %d missing (given: %s)", strings.Join(missing, ", "), first.Shards, strings.Join(dirs, ", "))
	}
	out := make([]Result, 0, len(results))
	for _, r := range results {
		out = append(out, r)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Index < out[b].Index })
	whole := first
	whole.Shard, whole.Shards = 0, 1
	return cfg, whole, out, nil
}
