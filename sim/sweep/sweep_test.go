package sweep

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

func testEnv(t *testing.T) Env {
	t.Helper()
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	return Env{Data: data, Cat: sim.NewCatalogue(data.Train, sim.WeightFiles{})}
}

func smallConfig() Config {
	return Config{Models: []string{"bsa-p2"}, Task: sim.Noise, Levels: []float64{0.3, 1.5}, Param: ParamOf("bsa-p2"),
		Values: []float64{0.5, 2}, N: 6, Steps: 12, Seeds: 2, Base: sim.DefaultSettings()}
}

// TestCellsAndShards: cells come in the fixed order (model, level, value,
// seed) and every shard split covers each cell exactly once.
func TestCellsAndShards(t *testing.T) {
	cfg := smallConfig()
	cfg.Models = []string{"bsa-p2", "bsa-p4"}
	cells := cfg.Cells()
	if len(cells) != 2*2*2*2 || cfg.NumCells() != len(cells) {
		t.Fatalf("%d cells", len(cells))
	}
	for _, c := range append([]Config{cfg, smallConfig()}, func() Config {
		own := smallConfig()
		own.Models, own.Param, own.Values, own.Seeds = []string{"block", "hopfield", "bsa-p4"}, NoParam, nil, 3
		return own
	}()) {
		all := c.Cells()
		for k, cell := range all {
			if got := c.CellAt(k); got != cell && !(got.Index == cell.Index && got.Model == cell.Model && got.Seed == cell.Seed && got.Level == cell.Level && math.IsNaN(got.Param) && math.IsNaN(cell.Param)) {
				t.Fatalf("CellAt(%d) = %+v, Cells()[%d] = %+v", k, got, k, cell)
			}
		}
		for n := 1; n <= len(all); n++ {
			for i := 0; i < n; i++ {
				if got, want := c.ShardLen(i, n), len(Shard(all, i, n)); got != want {
					t.Fatalf("ShardLen(%d, %d) = %d, want %d", i, n, got, want)
				}
			}
		}
	}
	c := cells[5] // bsa-p2, level 1.5, λ 0.5, seed 1
	if c.Model != "bsa-p2" || c.Level != 1.5 || c.Param != 0.5 || c.Seed != 1 || c.Index != 5 {
		t.Fatalf("cell 5 is %+v", c)
	}
	for _, n := range []int{1, 2, 3, 7, 16} {
		seen := map[int]int{}
		for i := 0; i < n; i++ {
			for _, c := range Shard(cells, i, n) {
				seen[c.Index]++
			}
		}
		for _, c := range cells {
			if seen[c.Index] != 1 {
				t.Fatalf("%d shards: cell %d run %d times", n, c.Index, seen[c.Index])
			}
		}
	}
	// Without a swept parameter, a model's own value fills the column.
	own := Config{Models: []string{"hopfield", "block"}, Task: sim.Mask, Levels: []float64{0.3}, N: 1, Steps: 1, Seeds: 1, Base: sim.DefaultSettings()}
	oc := own.Cells()
	if oc[0].Param != 1 || !math.IsNaN(oc[1].Param) {
		t.Fatalf("own parameters %v, %v: want β = 1 and none", oc[0].Param, oc[1].Param)
	}
}

func TestValidateRefuses(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want []string
	}{
		{func(c *Config) { c.Models = []string{"block"} }, []string{"--lambda", "block", "bsa-p2, bsa-p4"}},
		{func(c *Config) { c.Levels = []float64{0.3, 9} }, []string{"--levels", "9", "0 … 4"}},
		{func(c *Config) { c.Task = sim.Mask; c.Levels = []float64{0.95} }, []string{"--levels", "0.95", "0 … 0.9"}},
		{func(c *Config) { c.Levels = nil }, []string{"--levels"}},
		{func(c *Config) { c.Values = []float64{0.5, 0.5} }, []string{"--lambda", "twice"}},
		{func(c *Config) { c.Values = []float64{50} }, []string{"--lambda = 50", "0.1 … 10"}},
		{func(c *Config) { c.Param, c.Values = ParamOf("hopfield-classic"), []float64{2.5} }, []string{"--k"}},
		{func(c *Config) { c.Seeds = 0 }, []string{"--seeds = 0", "1 … 1000"}},
		{func(c *Config) { c.N = 0 }, []string{"--n = 0"}},
		{func(c *Config) { c.Steps = 5000 }, []string{"--steps = 5000"}},
		{func(c *Config) { c.Models = []string{"bsa-p2", "bsa-p2"} }, []string{"twice"}},
		{func(c *Config) { c.Models = []string{"gpt"} }, []string{`"gpt"`}},
		{func(c *Config) {
			c.Seeds = 1000
			c.Levels = []float64{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4}
			c.Values = []float64{0.1, 0.2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
			c.Models = []string{"bsa-p2", "bsa-p4"}
			c.Param = ParamOf("bsa-p2")
		}, nil},
	} {
		cfg := smallConfig()
		c.edit(&cfg)
		err := cfg.Validate()
		if c.want == nil {
			if err != nil {
				t.Errorf("refused a valid grid: %v", err)
			}
			continue
		}
		if err == nil {
			t.Errorf("accepted %+v", cfg)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not say %q", err, w)
			}
		}
	}
}

// TestCellSummary: t*, MSE(t*), the escape step and improves follow from
// the cell's curve as defined, and a cell's result does not depend on
// which other cells ran with it or on the workers.
func TestCellSummary(t *testing.T) {
	env := testEnv(t)
	cfg := smallConfig()
	cells := cfg.Cells()
	all, err := cfg.Run(context.Background(), env, cells, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		bt, bv := 0, math.Inf(1)
		for tt := 1; tt < len(r.Curve); tt++ {
			if r.Curve[tt] < bv {
				bt, bv = tt, r.Curve[tt]
			}
		}
		if r.TStar != bt || r.MSETStar != bv || r.MSE0 != r.Curve[0] || r.MSEEnd != r.Curve[len(r.Curve)-1] || r.Improves != (bv < r.Curve[0]) {
			t.Fatalf("cell %d: summary %+v against its curve %v", r.Index, r, r.Curve)
		}
		esc := -1
		for tt := bt + 1; tt < len(r.Curve); tt++ {
			if r.Curve[tt] > r.MSE0 {
				esc = tt
				break
			}
		}
		if r.Escape != esc {
			t.Fatalf("cell %d: escape %d, want %d", r.Index, r.Escape, esc)
		}
	}
	env.Workers = 1
	alone, err := cfg.RunCell(context.Background(), env, cells[5])
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	WriteCSV(&a, cfg.Task, []Result{alone})
	WriteCSV(&b, cfg.Task, all[5:6])
	if a.String() != b.String() {
		t.Fatalf("cell 5 alone on one worker:\n%s\nwith the others:\n%s", a.String(), b.String())
	}
	// The seeds corrupt differently.
	if all[0].MSE0 == all[1].MSE0 {
		t.Fatal("seeds 0 and 1 give the same input MSE")
	}
}

// TestCSVRoundTrip: a table read back writes the same bytes.
func TestCSVRoundTrip(t *testing.T) {
	rs := []Result{
		{Cell: Cell{Model: "bsa-p2", Level: 0.7, Param: 1, Seed: 0}, N: 200, TStar: 29, MSETStar: 0.058123456789, MSE0: 0.11, Improves: true, MSEEnd: 0.16, Escape: 47},
		{Cell: Cell{Model: "block", Level: 0.1, Param: math.NaN(), Seed: 3}, N: 5, TStar: 1, MSETStar: 1e-300, MSE0: 0.2, Improves: true, MSEEnd: 0.2, Escape: -1},
	}
	var a bytes.Buffer
	if err := WriteCSV(&a, sim.Noise, rs); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCSV(bytes.NewReader(a.Bytes()), "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WriteCSV(&b, sim.Noise, back)
	if a.String() != b.String() {
		t.Fatalf("round trip:\n%s\n%s", a.String(), b.String())
	}
	if !strings.Contains(a.String(), "block,noise,0.1,,3,5,1,1e-300,0.2,true,0.2,,,,\n") {
		t.Fatalf("missing values are not empty fields:\n%s", a.String())
	}
	// Under masking, the masked and visible errors: at t* only where
	// there is one; masked and visible errors under noise are refused.
	rs[0].MaskedTStar, rs[0].VisibleTStar, rs[0].Masked0 = 0.21, 0.003, 0.3
	rs[1].TStar, rs[1].MSETStar, rs[1].Improves, rs[1].Masked0 = 0, math.NaN(), false, 0.25
	a.Reset()
	WriteCSV(&a, sim.Mask, rs)
	if !strings.Contains(a.String(), ",47,0.21,0.003,0.3\n") || !strings.Contains(a.String(), ",0,,0.2,false,0.2,,,,0.25\n") {
		t.Fatalf("masked and visible errors:\n%s", a.String())
	}
	back, err = ReadCSV(bytes.NewReader(a.Bytes()), "m.csv")
	if err != nil || back[0].MaskedTStar != 0.21 || back[0].VisibleTStar != 0.003 || back[0].Masked0 != 0.3 || !math.IsNaN(back[1].MaskedTStar) {
		t.Fatalf("read back: %v %+v", err, back)
	}
	head := strings.Join(Columns, ",") + "\n"
	for _, c := range []struct{ row, want string }{
		{"bsa-p2,noise,0.7,1,0,200,29,0.05,0.11,true,0.16,47,0.2,0.01,0.3", "task = \"noise\" has masked and visible errors"},
		{"bsa-p2,mask,0.7,1,0,200,29,0.05,0.11,true,0.16,47,0.2,0.01,", "mse_masked_0 = \"\" is missing"},
		{"bsa-p2,mask,0.7,1,0,200,29,0.05,0.11,true,0.16,47,,0.01,0.3", "mse_masked_t_star = \"\" is missing"},
		{"bsa-p2,mask,0.7,1,0,200,29,0.05,0.11,true,0.16,47,0.2,,0.3", "mse_visible_t_star = \"\" is missing"},
		{"bsa-p2,mask,0.7,1,0,200,0,,0.11,false,0.16,,0.2,0.01,0.3", "is given without a t*"},
		{"bsa-p2,mask,0.7,1,0,200,29,0.05,0.11,true,0.16,47,1.5,0.01,0.3", "mse_masked_t_star = \"1.5\" is out of range"},
	} {
		if _, err := ReadCSV(strings.NewReader(head+c.row+"\n"), "bad.csv"); err == nil || !strings.Contains(err.Error(), "bad.csv line 2") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %s", c.row, err, c.want)
		}
	}
	// A table of version 3 (without them) still reads.
	old := strings.Join(columnsV3, ",") + "\nbsa-p2,mask,0.7,1,0,200,29,0.05,0.11,true,0.16,47\n"
	if rs, err := ReadCSV(strings.NewReader(old), "v3.csv"); err != nil || len(rs) != 1 || !math.IsNaN(rs[0].Masked0) {
		t.Fatalf("a version 3 table: %v %+v", err, rs)
	}
	if _, err := ReadCSV(strings.NewReader(strings.Join(Columns, ",")+"\nbsa-p2,noise,x,1,0,1,1,1,1,true,1,,,,\n"), "bad.csv"); err == nil || !strings.Contains(err.Error(), "bad.csv line 2: level") {
		t.Fatalf("a bad level: %v", err)
	}
}

// writePart writes a part directory as `sweep --shard` does.
func writePart(t *testing.T, dir string, cfg Config, rs []Result, shard, shards int) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	var b bytes.Buffer
	WriteCSV(&b, cfg.Task, rs)
	os.WriteFile(filepath.Join(dir, CSVName), b.Bytes(), 0o644)
	m := NewManifest(cfg, "data", "", shard, shards)
	m.CSV = Checksum(b.Bytes())
	b.Reset()
	WriteManifest(&b, m)
	os.WriteFile(filepath.Join(dir, ManifestName), b.Bytes(), 0o644)
}

// TestMergeRefuses: parts merge into the whole table in cell order, and a
// missing, duplicated, foreign or altered part is refused by name.
func TestMergeRefuses(t *testing.T) {
	cfg := smallConfig()
	cells := cfg.Cells()
	fake := func(cs []Cell) []Result {
		var out []Result
		for _, c := range cs {
			out = append(out, Result{Cell: c, N: 6, TStar: 1 + c.Index, MSETStar: 0.01 * float64(c.Index), MSE0: 0.5, Improves: true, MSEEnd: 0.6, Escape: -1})
		}
		return out
	}
	root := t.TempDir()
	var dirs []string
	for i := 0; i < 3; i++ {
		d := filepath.Join(root, "p", string(rune('a'+i)))
		writePart(t, d, cfg, fake(Shard(cells, i, 3)), i, 3)
		dirs = append(dirs, d)
	}
	_, man, rs, err := Merge(context.Background(), []string{dirs[2], dirs[0], dirs[1]})
	if err != nil {
		t.Fatal(err)
	}
	var got, want bytes.Buffer
	WriteCSV(&got, cfg.Task, rs)
	WriteCSV(&want, cfg.Task, fake(cells))
	if got.String() != want.String() || man.Shards != 1 {
		t.Fatalf("merged:\n%s\nwant:\n%s", got.String(), want.String())
	}
	other := cfg
	other.Steps = 13
	od := filepath.Join(root, "other")
	writePart(t, od, other, fake(Shard(cells, 1, 3)), 1, 3)
	altered := filepath.Join(root, "altered")
	rows := fake(Shard(cells, 1, 3))
	rows[0].Seed = 7
	writePart(t, altered, cfg, rows, 1, 3)
	for _, c := range []struct {
		dirs []string
		want []string
	}{
		{[]string{dirs[0], dirs[2]}, []string{"shard 1 of 3 missing"}},
		{[]string{dirs[0], dirs[1], dirs[1], dirs[2]}, []string{"shard 1 of 3 is given twice", dirs[1]}},
		{[]string{dirs[0], od, dirs[2]}, []string{od, "another sweep", "steps"}},
		{[]string{dirs[0], altered, dirs[2]}, []string{altered, "line 2", "seed 7"}},
		{[]string{dirs[0], filepath.Join(root, "nowhere")}, []string{"nowhere", "not a sweep part"}},
	} {
		_, _, _, err := Merge(context.Background(), c.dirs)
		if err == nil {
			t.Errorf("merged %v", c.dirs)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not say %q", err, w)
			}
		}
	}
}

// TestMapAndPNG: the basin map averages seeds per (level, value), marks
// cells that never escape as NaN, and renders; a pixel inside a cell maps
// back to it.
func TestMapAndPNG(t *testing.T) {
	cfg := smallConfig()
	var rs []Result
	for _, c := range cfg.Cells() {
		esc := -1
		if c.Level == 1.5 {
			esc = 10 + c.Seed
		}
		rs = append(rs, Result{Cell: c, TStar: 3 + c.Seed, MSETStar: c.Level * c.Param, Escape: esc})
	}
	b := Map(cfg, rs, "bsa-p2")
	if len(b.X) != 2 || len(b.Y) != 2 || b.Panels[1].Z[0][0] != 3.5 || b.Panels[0].Z[1][1] != 3 {
		t.Fatalf("map %+v", b)
	}
	if !math.IsNaN(b.Panels[2].Z[0][0]) || b.Panels[2].Z[0][1] != 10.5 {
		t.Fatalf("escape panel %v", b.Panels[2].Z)
	}
	plots, err := b.Plots()
	if err != nil {
		t.Fatal(err)
	}
	img, cell := b.Render(plots, 900, 360, 96)
	if img.Bounds().Dx() != 900 {
		t.Fatalf("image %v", img.Bounds())
	}
	found := map[[3]int]bool{}
	for x := 0.0; x < 900; x += 3 {
		for y := 0.0; y < 360; y += 3 {
			if p, c, r, ok := cell(x, y); ok {
				found[[3]int{p, c, r}] = true
			}
		}
	}
	if len(found) != 3*2*2 {
		t.Fatalf("pixels map to %d cells, want 12", len(found))
	}
}

// TestCellMaskedErrors: under masking a cell's errors on the masked and
// the visible pixels are the parts of its MSE: every digit loses the same
// number of pixels at a level, so MSE = f·masked + (1 − f)·visible with f
// the masked share, at t* and at the input (whose visible pixels are
// exact); under noise there are none.
func TestCellMaskedErrors(t *testing.T) {
	env := testEnv(t)
	cfg := smallConfig()
	cfg.Task, cfg.Levels, cfg.Values, cfg.Seeds = sim.Mask, []float64{0.3, 0.7}, []float64{1}, 1
	cfg.Models = []string{"bsa-p2", "bsa-p4"}
	rs, err := cfg.Run(context.Background(), env, cfg.Cells(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.TStar < 1 || math.IsNaN(r.MaskedTStar+r.VisibleTStar+r.Masked0) {
			t.Fatalf("%s level %v: t* %d, masked %v visible %v masked(0) %v", r.Model, r.Level, r.TStar, r.MaskedTStar, r.VisibleTStar, r.Masked0)
		}
		f := r.MSE0 / r.Masked0 // the input's visible pixels are exact
		if !(f > 0 && f < 1) {
			t.Fatalf("%s level %v: masked share %v", r.Model, r.Level, f)
		}
		if got := f*r.MaskedTStar + (1-f)*r.VisibleTStar; math.Abs(got-r.MSETStar) > 1e-9 {
			t.Errorf("%s level %v: f·masked + (1−f)·visible = %v at t* = %d, MSE(t*) %v", r.Model, r.Level, got, r.TStar, r.MSETStar)
		}
	}
	noise, err := smallConfig().RunCell(context.Background(), env, smallConfig().Cells()[0])
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(noise.MaskedTStar) || !math.IsNaN(noise.Masked0) {
		t.Fatalf("noise: masked errors %v, %v", noise.MaskedTStar, noise.Masked0)
	}
}
