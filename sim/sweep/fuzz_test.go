package sweep

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"attractorlab/sim"
)

// csvPlaceholder in a fuzzed manifest stands for the checksum of the
// fuzzed table beside it, so the fuzzer reaches the table's checks.
const csvPlaceholder = "sha256:CSV"

// seedPart is a valid part (manifest with the placeholder, table) of cfg.
func seedPart(cfg Config, shard, shards int) (man, table []byte) {
	var rs []Result
	for _, c := range Shard(cfg.Cells(), shard, shards) {
		rs = append(rs, Result{Cell: c, N: cfg.N, TStar: 1 + c.Index%cfg.Steps, MSETStar: 0.01 * float64(c.Index%50), MSE0: 0.5, Improves: true, MSEEnd: 0.6, Escape: -1})
	}
	var t, m bytes.Buffer
	WriteCSV(&t, cfg.Task, rs)
	mf := NewManifest(cfg, "sha256:00 (6 test digits)", "", shard, shards)
	mf.CSV = csvPlaceholder
	WriteManifest(&m, mf)
	return m.Bytes(), t.Bytes()
}

// checkResults fails on a result ReadCSV should have refused.
func checkResults(t *testing.T, rs []Result) {
	t.Helper()
	for _, r := range rs {
		ok := r.N >= 1 && r.N <= int(sim.Digits.Max) && r.TStar >= 0 && r.TStar <= int(sim.Steps.Max) &&
			r.MSE0 >= 0 && r.MSE0 <= 1 && (math.IsNaN(r.MSETStar) || r.MSETStar >= 0 && r.MSETStar <= 1) &&
			(math.IsNaN(r.MSEEnd) || r.MSEEnd >= 0 && r.MSEEnd <= 1) && (r.Escape == -1 || r.Escape > r.TStar && r.Escape <= int(sim.Steps.Max)) &&
			!math.IsNaN(r.Level) && !math.IsInf(r.Level, 0) && !math.IsInf(r.Param, 0) && r.Improves == (r.MSETStar < r.MSE0)
		if !ok {
			t.Fatalf("accepted %+v", r)
		}
	}
}

func FuzzReadSweepCSV(f *testing.F) {
	_, table := seedPart(smallConfig(), 0, 1)
	f.Add(table)
	f.Add([]byte(csvHead + "bsa-p2,noise,0.3,0.5,0,6,3,0.05,0.1,true,0.2,7\n"))
	f.Add([]byte(csvHead + "block,mask,0.1,,3,5,0,,0.2,false,,\n"))
	f.Add([]byte(csvHead + "bsa-p2,noise,0.3,0.5,0,6,3,-Inf,0.1,true,0.2,9223372036854775807\n"))
	f.Add([]byte(csvHead + "\"bsa-p2\",noise,0.3,0.5,0,6,3,0.05,0.1,true,0.2,7\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := ReadCSV(bytes.NewReader(b), "f.csv")
		if err != nil {
			if !strings.Contains(err.Error(), "f.csv") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		checkResults(t, rs)
		// What was read writes and reads back the same (when one task).
		if len(rs) > 0 {
			task, _ := sim.ParseKind(strings.Split(strings.Split(string(b), "\n")[1], ",")[1])
			var w bytes.Buffer
			if err := WriteCSV(&w, task, rs); err != nil {
				t.Fatal(err)
			}
			back, err := ReadCSV(bytes.NewReader(w.Bytes()), "w.csv")
			if err != nil && !strings.Contains(err.Error(), "task") {
				t.Fatalf("written back: %v\n%s", err, w.Bytes())
			}
			if err == nil && len(back) != len(rs) {
				t.Fatalf("%d rows back of %d", len(back), len(rs))
			}
		}
	})
}

func FuzzReadManifest(f *testing.F) {
	for _, cfg := range seedConfigs() {
		m, _ := seedPart(cfg, 0, 1)
		f.Add(bytes.Replace(m, []byte(csvPlaceholder), []byte(Checksum(nil)), 1))
	}
	f.Add([]byte(`{"version": 3, "shards": 1000000000000, "shard": 0}`))
	f.Add([]byte(`{"version": 3, "shards": 1e12}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseManifest(b, "f.json")
		if err != nil {
			if !strings.Contains(err.Error(), "f.json") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		cfg, err := m.Config()
		if err != nil {
			t.Fatalf("accepted a manifest whose grid is refused: %v", err)
		}
		if n := cfg.NumCells(); n != m.Cells || n > MaxCells || m.Shards < 1 || m.Shards > n || m.Shard < 0 || m.Shard >= m.Shards {
			t.Fatalf("accepted cells %d (grid %d), shard %d of %d", m.Cells, n, m.Shard, m.Shards)
		}
		// A part written from it reads back equal.
		var w bytes.Buffer
		if err := WriteManifest(&w, m); err != nil {
			t.Fatal(err)
		}
		back, err := ParseManifest(w.Bytes(), "w.json")
		if err != nil {
			t.Fatalf("written back: %v", err)
		}
		if d := differs(m, back); d != "" || back.Shard != m.Shard || back.CSV != m.CSV {
			t.Fatalf("written back, %s differs", d)
		}
	})
}

// seedConfigs are grids of every model kind and parameter.
func seedConfigs() []Config {
	own := smallConfig()
	own.Models, own.Param, own.Values = []string{"block", "vit", "hopfield-classic"}, NoParam, nil
	mask := smallConfig()
	mask.Task, mask.Levels, mask.Models, mask.Param, mask.Values = sim.Mask, []float64{0.1, 0.5}, []string{"hopfield"}, ParamOf("hopfield"), []float64{1, 8}
	return []Config{smallConfig(), own, mask}
}

func FuzzMerge(f *testing.F) {
	for _, cfg := range seedConfigs() {
		m0, t0 := seedPart(cfg, 0, 2)
		m1, t1 := seedPart(cfg, 1, 2)
		f.Add(m0, t0, m1, t1)
		m, tb := seedPart(cfg, 0, 1)
		f.Add(m, tb, []byte{}, []byte{})
	}
	f.Fuzz(func(t *testing.T, m0, t0, m1, t1 []byte) {
		// The parts in memory (Merge's reading of files is infile's, and
		// tested with files): "a/sweep.json", "a/sweep.csv", ….
		files := map[string][]byte{}
		var dirs []string
		for k, p := range [][2][]byte{{m0, t0}, {m1, t1}} {
			if len(p[0]) == 0 {
				continue
			}
			d := string(rune('a' + k))
			files[filepath.Join(d, ManifestName)] = bytes.ReplaceAll(p[0], []byte(csvPlaceholder), []byte(Checksum(p[1])))
			files[filepath.Join(d, CSVName)] = p[1]
			dirs = append(dirs, d)
		}
		read := func(path string, max int64) ([]byte, error) {
			b := files[path]
			if int64(len(b)) > max {
				return nil, fmt.Errorf("%s: too large", path)
			}
			return b, nil
		}
		cfg, whole, rs, err := merge(context.Background(), dirs, read)
		if err != nil {
			if !strings.Contains(err.Error(), "sweep merge: ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		if len(rs) != cfg.NumCells() || whole.Cells != len(rs) || whole.Shards != 1 {
			t.Fatalf("merged %d results of %d cells", len(rs), cfg.NumCells())
		}
		checkResults(t, rs)
		for k, r := range rs {
			if r.Index != k || r.N != cfg.N || r.TStar > cfg.Steps || r.Escape > cfg.Steps {
				t.Fatalf("result %d: %+v", k, r)
			}
		}
		// What merges maps to values a basin map draws: MSE in [0, 1],
		// steps within the run, or NaN (grey).
		for _, m := range cfg.Models {
			for k, h := range Map(cfg, rs, m).Panels {
				hi := 1.0
				if k > 0 {
					hi = float64(cfg.Steps)
				}
				for _, row := range h.Z {
					for _, v := range row {
						if !math.IsNaN(v) && !(v >= 0 && v <= hi) {
							t.Fatalf("%s %s: %v", m, h.Title, v)
						}
					}
				}
			}
		}
	})
}
