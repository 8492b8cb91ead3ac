package phase

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"attractorlab/sim/mnist"
)

func tiny() Config {
	c := DefaultConfig()
	c.Images, c.Lambdas, c.Seeds = []int{100, 200}, []float64{1, 5}, []uint64{0}
	c.Updates, c.N, c.Steps = 2, 4, 3
	return c
}

func env(t *testing.T) Env {
	train, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	return Env{Train: train, Test: test}
}

// part runs shard i of n of c as a part directory would hold it.
func part(t *testing.T, c Config, e Env, i, n int) Part {
	t.Helper()
	var rs []Result
	for _, cell := range c.Shard(i, n) {
		r, err := c.RunCell(context.Background(), e, cell)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	var tb bytes.Buffer
	if err := WriteCSV(&tb, rs); err != nil {
		t.Fatal(err)
	}
	m := Manifest{Version: Version, Config: c, Data: "test", Cells: c.NumCells(), Shard: i, Shards: n, CSV: Checksum(tb.Bytes())}
	mb, _ := json.Marshal(m)
	return Part{Dir: fmt.Sprintf("shard-%d-of-%d", i, n), Manifest: mb, Table: tb.Bytes()}
}

// TestShardsMergeToOneProcess: a grid run as three shards merges to the
// very table one process writes (the cells in order); a missing, doubled,
// changed or foreign part is refused by name.
func TestShardsMergeToOneProcess(t *testing.T) {
	c, e := tiny(), env(t)
	whole := part(t, c, e, 0, 1)
	parts := []Part{part(t, c, e, 2, 3), part(t, c, e, 0, 3), part(t, c, e, 1, 3)}
	m, rs, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WriteCSV(&b, rs)
	if !bytes.Equal(b.Bytes(), whole.Table) || m.Shards != 1 || m.Cells != 4 {
		t.Fatalf("merged:\n%s\none process:\n%s", b.Bytes(), whole.Table)
	}
	for _, r := range rs {
		if r.Best.Input <= 0 || r.CorrTrain < r.CorrClean-2 || r.N != 4 || r.Updates < 2 {
			t.Fatalf("a cell's result: %+v", r)
		}
	}
	changed := parts[1]
	changed.Table = bytes.Replace(changed.Table, []byte("\n100,"), []byte("\n200,"), 1)
	other := tiny()
	other.N = 5
	for _, c := range []struct {
		parts []Part
		want  string
	}{
		{parts[:2], "shard 1 of 3 missing"},
		{[]Part{parts[0], parts[0], parts[1], parts[2]}, "given twice"},
		{[]Part{parts[0], changed, parts[2]}, "checksum"},
		{[]Part{parts[0], part(t, other, e, 1, 3)}, "another grid"},
		{[]Part{{Dir: "x", Manifest: []byte(`{"version": 2}`)}}, "version 2"},
	} {
		if _, _, err := Merge(c.parts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error with %q, got %v", c.want, err)
		}
	}
}

func TestValidateRefuses(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Images = []int{50} }, "--images"},
		{func(c *Config) { c.Images = []int{100, 100} }, "twice"},
		{func(c *Config) { c.Lambdas = []float64{20} }, "--lambda"},
		{func(c *Config) { c.Lambdas = []float64{1, 1} }, "twice"},
		{func(c *Config) { c.Seeds = []uint64{3, 3} }, "--seeds"},
		{func(c *Config) { c.Updates = 0 }, "--updates"},
		{func(c *Config) { c.N = 0 }, "--n"},
		{func(c *Config) { c.Images = nil }, "at least one"},
		{func(c *Config) {
			c.Images = []int{100, 200, 300, 400, 500, 600, 700, 800, 900, 1000}
			c.Lambdas = []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
			c.Seeds = []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}[:20]
			c.Images = append(c.Images, 1100)
		}, "more than 2000"},
	} {
		cfg := DefaultConfig()
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}
