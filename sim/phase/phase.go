// Package phase is the training phase diagram: the bare self-attention
// trained from random couplings on training sets of several sizes, at
// several training λ and seeds (each cell the same number of updates),
// then run on noisy test digits. Whether the state at each digit's best
// step sits nearer a training image (memorisation) or nearer the clean
// digit (generalisation) is read off every cell. Grids are sharded and
// merged as sweeps are (package sweep): a cell's result never depends on
// the sharding, and a merged table is byte-equal to one process's.
package phase

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
	"reflect"
	"slices"
	"strconv"
	"strings"

	"attractorlab/models"
	"attractorlab/sim"
	"attractorlab/sim/figures"
	"attractorlab/sim/mnist"
)

// MaxCells bounds a grid: a cell trains a network (tens of seconds).
const MaxCells = 2000

// Version is the manifest (phase.json) version this code writes and reads.
const Version = 1

// Config is a phase-diagram grid.
type Config struct {
	Patch      int       `json:"patch"`
	Images     []int     `json:"images"`       // training set sizes, balanced by class
	Lambdas    []float64 `json:"lambda_train"` // λ of the training loss
	Seeds      []uint64  `json:"seeds"`        // training seeds
	Updates    int       `json:"updates"`      // gradient updates of every cell
	HalveEvery int       `json:"halve_every"`  // the learning rate halves every this many updates (0: never)
	N          int       `json:"n"`            // test digits
	Steps      int       `json:"steps"`        // iterations
	Sigma2     float64   `json:"noise_sigma2"` // the test digits' noise (corruption seed 0)
}

// DefaultConfig is the grid the command runs by default: 3 sizes × 2 λ ×
// 2 seeds, 2,000 updates a cell.
func DefaultConfig() Config {
	return Config{Patch: 2, Images: []int{100, 1000, 10000}, Lambdas: []float64{1, 5}, Seeds: []uint64{0, 1},
		Updates: 2000, HalveEvery: 400, N: 200, Steps: 100, Sigma2: sim.DefaultNoise.Sigma2}
}

// Validate refuses a grid out of range, naming the flag and the range.
func (c Config) Validate() error {
	if c.Patch != 2 && c.Patch != 4 {
		return fmt.Errorf("--patch = %d is out of range (allowed 2 or 4)", c.Patch)
	}
	if len(c.Images) == 0 || len(c.Lambdas) == 0 || len(c.Seeds) == 0 {
		return fmt.Errorf("--images, --lambda and --seeds each need at least one value")
	}
	for k, n := range c.Images {
		if err := sim.TrainImages.CheckInt(n, sim.ViaFlag); err != nil {
			return fmt.Errorf("--images: %w", err)
		}
		if slices.Contains(c.Images[:k], n) {
			return fmt.Errorf("--images: %d twice (each size once)", n)
		}
	}
	for k, l := range c.Lambdas {
		if err := sim.TrainLambda.Check(l, sim.ViaFlag); err != nil {
			return err
		}
		if slices.Contains(c.Lambdas[:k], l) {
			return fmt.Errorf("--lambda: %g twice (each value once)", l)
		}
	}
	if len(c.Seeds) > sim.MaxTrainSeeds {
		return fmt.Errorf("--seeds: %d seeds, more than %d", len(c.Seeds), sim.MaxTrainSeeds)
	}
	for k, s := range c.Seeds {
		if s > 999 || slices.Contains(c.Seeds[:k], s) {
			return fmt.Errorf("--seeds: seed %d twice or above 999 (allowed 0 … 999, each once)", s)
		}
	}
	if c.Updates < 1 || c.Updates > 100000 {
		return fmt.Errorf("--updates = %d is out of range (allowed 1 … 100000)", c.Updates)
	}
	if c.HalveEvery < 0 || c.HalveEvery > 100000 {
		return fmt.Errorf("--halve-every = %d is out of range (allowed 0 … 100000; 0: never)", c.HalveEvery)
	}
	if err := sim.Digits.CheckInt(c.N, sim.ViaFlag); err != nil {
		return err
	}
	if err := sim.Steps.CheckInt(c.Steps, sim.ViaFlag); err != nil {
		return err
	}
	if err := sim.NoiseSigma2.Check(c.Sigma2, sim.ViaFlag); err != nil {
		return err
	}
	if n := c.NumCells(); n > MaxCells {
		return fmt.Errorf("the grid has %d cells (%d sizes × %d λ × %d seeds), more than %d: a cell trains a network", n, len(c.Images), len(c.Lambdas), len(c.Seeds), MaxCells)
	}
	return nil
}

// NumCells is the grid's size.
func (c Config) NumCells() int { return len(c.Images) * len(c.Lambdas) * len(c.Seeds) }

// Cell is one training: its index in the grid (sizes outermost, then λ,
// then seeds) and its settings.
type Cell struct {
	Index  int
	Images int
	Lambda float64
	Seed   uint64
}

// CellAt is the grid's cell of index k.
func (c Config) CellAt(k int) Cell {
	ns, nl := len(c.Seeds), len(c.Lambdas)
	return Cell{Index: k, Images: c.Images[k/(ns*nl)], Lambda: c.Lambdas[k/ns%nl], Seed: c.Seeds[k%ns]}
}

// Shard is shard i of n: the cells k ≡ i (mod n), in order.
func (c Config) Shard(i, n int) []Cell {
	var out []Cell
	for k := i; k < c.NumCells(); k += n {
		out = append(out, c.CellAt(k))
	}
	return out
}

// Result is a cell's outcome.
type Result struct {
	Cell
	N, Updates int
	// The mean curve's best step beside the input's error (sim.BestOf).
	Best sim.Best
	// Transient is the share of digits whose own curve dips below their
	// input's and rises again (sim.IsTransient).
	Transient float64
	// CorrTrain and CorrClean are the means over digits of the state at
	// the digit's own best step correlated with its nearest training
	// image (of the cell's set) and with its clean digit; CleanTrain is
	// the baseline: the clean digit itself correlated with its nearest
	// training image (the nearest of more images is nearer by chance).
	CorrTrain, CorrClean, CleanTrain float64
}

// Memorisation is CorrTrain − CleanTrain: above 0, the best states sit
// nearer a stored training image than the clean digit itself does (the
// dynamics pulled them toward what was stored); the larger set's nearer
// nearest image is taken out.
func (r Result) Memorisation() float64 { return r.CorrTrain - r.CleanTrain }

// Env is what RunCell runs on.
type Env struct {
	Train, Test *mnist.Set
	Workers     int
}

// TrainConfig is a cell's training: the recipe's optimiser, Updates
// updates in whole epochs, the learning rate halving every HalveEvery
// updates (rounded to epochs), as the capacity experiment trains.
func (c Config) TrainConfig(cell Cell, trainLen int) sim.BSATraining {
	cfg := models.DefaultTrainConfig()
	batches := (min(cell.Images, trainLen) + cfg.Batch - 1) / cfg.Batch
	cfg.Epochs = (c.Updates + batches - 1) / batches
	cfg.HalveEvery = 0
	if c.HalveEvery > 0 {
		cfg.HalveEvery = max(1, (c.HalveEvery+batches/2)/batches)
	}
	return sim.BSATraining{Patch: c.Patch, Images: cell.Images, Lambda: cell.Lambda, Seed: cell.Seed, Config: cfg, SkipVal: true}
}

// RunCell trains the cell's network and measures it on the first N test
// digits under noise (corruption seed 0, the same digits for every cell).
func (c Config) RunCell(ctx context.Context, env Env, cell Cell) (Result, error) {
	s := c.TrainConfig(cell, env.Train.Len())
	m, _, err := sim.TrainBSA(ctx, env.Train, env.Test, s, nil)
	if err != nil {
		return Result{}, fmt.Errorf("cell %d (%d images, λ %g, seed %d): %w", cell.Index, cell.Images, cell.Lambda, cell.Seed, err)
	}
	pt, err := models.NewPatches(c.Patch)
	if err != nil {
		return Result{}, err
	}
	n := min(c.N, env.Test.Len())
	corr := sim.Corruption{Kind: sim.Noise, Fraction: sim.DefaultNoise.Fraction, Sigma2: c.Sigma2}
	inputs := make([]*sim.Corrupted, n)
	for k := range inputs {
		inputs[k] = corr.Apply(env.Test.Clean(k, mnist.PixelGain), pt, k)
	}
	mse := make([][]float64, c.Steps+1)
	for t := range mse {
		mse[t] = make([]float64, n)
	}
	// Each digit's best state so far (its own t*: the first step t ≥ 1
	// of the lowest MSE, as sim.BestStep finds it).
	bestMSE := make([]float64, n)
	bestAt := make([][]float32, n)
	for b := range bestAt {
		bestMSE[b] = math.Inf(1)
		bestAt[b] = make([]float32, models.Pixels)
	}
	if err := sim.RunBSA(ctx, m, sim.DefaultDynamics(), inputs, c.Steps, models.NewCrew(env.Workers), func(t, b int, pred []float32, _ float64) {
		e, _, _ := sim.MSE(pred, inputs[b].Clean, inputs[b].Pixel)
		mse[t][b] = e
		if t >= 1 && e < bestMSE[b] {
			bestMSE[b] = e
			for k, v := range pred {
				bestAt[b][k] = min(max(v, 0), 1)
			}
		}
	}); err != nil {
		return Result{}, err
	}
	r := Result{Cell: cell, N: n, Updates: s.Config.Epochs * ((min(cell.Images, env.Train.Len()) + s.Config.Batch - 1) / s.Config.Batch)}
	curve := make([]float64, c.Steps+1)
	for t := range mse {
		for _, v := range mse[t] {
			curve[t] += v / float64(n)
		}
	}
	r.Best = sim.BestOf(len(curve), func(t int) float64 { return curve[t] })
	train := standardized(sim.TrainingImages(env.Train, cell.Images))
	transient := 0
	for b := range n {
		d := sim.DigitBests(1, c.Steps+1, func(t, _ int) float64 { return mse[t][b] }, func(int) int { return 0 })[0]
		if sim.IsTransient(d.MSETStar, d.MSE0, mse[c.Steps][b]) {
			transient++
		}
		r.CorrClean += sim.Pearson(bestAt[b], inputs[b].Clean) / float64(n)
		r.CorrTrain += nearestCorr(standardized([][]float32{bestAt[b]})[0], train) / float64(n)
		r.CleanTrain += nearestCorr(standardized([][]float32{inputs[b].Clean})[0], train) / float64(n)
	}
	r.Transient = float64(transient) / float64(n)
	return r, nil
}

// standardized is each image with its mean taken out and scaled to unit
// norm (a constant image stays 0): Pearson's r is then a dot product.
func standardized(imgs [][]float32) [][]float32 {
	out := make([][]float32, len(imgs))
	for k, img := range imgs {
		var mean float64
		for _, v := range img {
			mean += float64(v)
		}
		mean /= float64(len(img))
		z := make([]float32, len(img))
		var ss float64
		for i, v := range img {
			d := float64(v) - mean
			z[i] = float32(d)
			ss += d * d
		}
		if ss > 0 {
			inv := float32(1 / math.Sqrt(ss))
			for i := range z {
				z[i] *= inv
			}
		}
		out[k] = z
	}
	return out
}

// nearestCorr is the largest correlation of the standardized state with
// a standardized training image.
func nearestCorr(z []float32, train [][]float32) float64 {
	best := math.Inf(-1)
	for _, t := range train {
		var s float32
		for i, v := range t {
			s += v * z[i]
		}
		best = max(best, float64(s))
	}
	return best
}

// Columns are phase.csv's columns, a row per cell in cell order.
var Columns = []string{"images", "lambda_train", "seed", "n", "updates", "t_star", "improves", "mse_t_star", "mse_0",
	"transient_share", "corr_train_at_tstar", "corr_clean_at_tstar", "corr_clean_digit_to_train"}

func num(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// WriteCSV writes the results in the order given; numbers carry every
// digit, so equal runs write equal bytes.
func WriteCSV(w io.Writer, rs []Result) error {
	cw := csv.NewWriter(w)
	cw.Write(Columns)
	for _, r := range rs {
		cw.Write([]string{strconv.Itoa(r.Images), num(r.Lambda), strconv.FormatUint(r.Seed, 10), strconv.Itoa(r.N), strconv.Itoa(r.Updates),
			strconv.Itoa(r.Best.T), strconv.FormatBool(r.Best.Improves), num(r.Best.MSE), num(r.Best.Input),
			num(r.Transient), num(r.CorrTrain), num(r.CorrClean), num(r.CleanTrain)})
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV reads a table WriteCSV wrote, checking each value's range and
// that the rows are cells (the cell identity is checked by Merge).
func ReadCSV(b []byte, path string) ([]Result, error) {
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 || !slices.Equal(rows[0], Columns) {
		return nil, fmt.Errorf("%s: not a phase table (want the columns %s)", path, strings.Join(Columns, ","))
	}
	var out []Result
	for i, rec := range rows[1:] {
		line := i + 2
		bad := func(col int, why string) error {
			return fmt.Errorf("%s line %d: %s = %q %s", path, line, Columns[col], rec[col], why)
		}
		f := func(col int, lo, hi float64) (float64, error) {
			v, err := strconv.ParseFloat(rec[col], 64)
			if err != nil || math.IsNaN(v) || v < lo || v > hi {
				return 0, bad(col, fmt.Sprintf("is not a number in [%g, %g]", lo, hi))
			}
			return v, nil
		}
		var r Result
		vals := make([]float64, len(Columns))
		ranges := [][2]float64{{100, 10000}, {0.1, 10}, {0, 999}, {1, 10000}, {1, 1e7}, {0, 1000}, {0, 0}, {0, 1}, {0, 1}, {0, 1}, {-1, 1}, {-1, 1}, {-1, 1}}
		for col := range Columns {
			if col == 6 {
				if rec[col] != "true" && rec[col] != "false" {
					return nil, bad(col, "is not true or false")
				}
				continue
			}
			if vals[col], err = f(col, ranges[col][0], ranges[col][1]); err != nil {
				return nil, err
			}
		}
		r.Images, r.Lambda, r.Seed, r.N, r.Updates = int(vals[0]), vals[1], uint64(vals[2]), int(vals[3]), int(vals[4])
		r.Best = sim.Best{T: int(vals[5]), Improves: rec[6] == "true", MSE: vals[7], Input: vals[8]}
		r.Transient, r.CorrTrain, r.CorrClean, r.CleanTrain = vals[9], vals[10], vals[11], vals[12]
		if r.Best.Improves != (r.Best.T >= 1 && sim.Improves(r.Best.MSE, r.Best.Input)) {
			return nil, bad(6, "does not agree with mse_t_star against mse_0")
		}
		out = append(out, r)
	}
	return out, nil
}

// Manifest is phase.json: the grid, the data, and which shard of how many.
type Manifest struct {
	Version int    `json:"version"`
	Config  Config `json:"grid"`
	Data    string `json:"data"` // fingerprint of the training and test digits
	Cells   int    `json:"cells"`
	Shard   int    `json:"shard"`
	Shards  int    `json:"shards"`
	CSV     string `json:"csv"` // sha256 of the directory's phase.csv
}

// Checksum is the manifest's record of a table.
func Checksum(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// ParseManifest decodes and checks a phase.json (path names it in errors).
func ParseManifest(b []byte, path string) (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	if m.Version != Version {
		return m, fmt.Errorf("%s: version %d, this program reads version %d", path, m.Version, Version)
	}
	if err := m.Config.Validate(); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	if m.Cells != m.Config.NumCells() {
		return m, fmt.Errorf("%s: cells = %d, the grid has %d", path, m.Cells, m.Config.NumCells())
	}
	if !(m.Shards >= 1 && m.Shards <= m.Cells && m.Shard >= 0 && m.Shard < m.Shards) {
		return m, fmt.Errorf("%s: shard %d of %d is not a shard of %d cells (allowed shards 1 … cells, shard 0 … shards−1)", path, m.Shard, m.Shards, m.Cells)
	}
	if h, ok := strings.CutPrefix(m.CSV, "sha256:"); !ok || len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
		return m, fmt.Errorf("%s: csv = %q is not a checksum (sha256: and 64 hex digits)", path, m.CSV)
	}
	if len(m.Data) > 200 {
		return m, fmt.Errorf("%s: data is not a fingerprint", path)
	}
	return m, nil
}

// Part is one shard's directory read: its manifest and table.
type Part struct {
	Dir      string
	Manifest []byte
	Table    []byte
}

// Merge checks the parts (the same grid and data, each shard once, every
// shard there, each table the one its manifest's checksum records, each
// row its shard's cell) and returns the grid's manifest (one shard,
// without a checksum) and every result in cell order.
func Merge(parts []Part) (Manifest, []Result, error) {
	if len(parts) == 0 {
		return Manifest{}, nil, fmt.Errorf("phase merge: no part given")
	}
	var first Manifest
	seen := map[int]string{}
	results := map[int]Result{}
	for k, p := range parts {
		m, err := ParseManifest(p.Manifest, p.Dir+"/phase.json")
		if err != nil {
			return Manifest{}, nil, fmt.Errorf("phase merge: %s is not a phase part: %w", p.Dir, err)
		}
		if k == 0 {
			first = m
		} else {
			a, b := first, m
			a.Shard, b.Shard, a.CSV, b.CSV = 0, 0, "", ""
			if !reflect.DeepEqual(a, b) {
				return Manifest{}, nil, fmt.Errorf("phase merge: %s is from another grid than %s (grid, data or shards differ)", p.Dir, parts[0].Dir)
			}
		}
		if prev, ok := seen[m.Shard]; ok {
			return Manifest{}, nil, fmt.Errorf("phase merge: shard %d of %d is given twice: %s and %s", m.Shard, m.Shards, prev, p.Dir)
		}
		seen[m.Shard] = p.Dir
		if sum := Checksum(p.Table); sum != m.CSV {
			return Manifest{}, nil, fmt.Errorf("phase merge: %s/phase.csv: checksum %s, its manifest records %s: the table was changed after it was written", p.Dir, sum, m.CSV)
		}
		rows, err := ReadCSV(p.Table, p.Dir+"/phase.csv")
		if err != nil {
			return Manifest{}, nil, fmt.Errorf("phase merge: %w", err)
		}
		want := m.Config.Shard(m.Shard, m.Shards)
		if len(rows) != len(want) {
			return Manifest{}, nil, fmt.Errorf("phase merge: %s/phase.csv has %d rows, shard %d of %d has %d cells", p.Dir, len(rows), m.Shard, m.Shards, len(want))
		}
		for i, r := range rows {
			c := want[i]
			if r.Images != c.Images || r.Lambda != c.Lambda || r.Seed != c.Seed {
				return Manifest{}, nil, fmt.Errorf("phase merge: %s/phase.csv line %d is %d images, λ %g, seed %d; shard %d of %d has %d images, λ %g, seed %d there",
					p.Dir, i+2, r.Images, r.Lambda, r.Seed, m.Shard, m.Shards, c.Images, c.Lambda, c.Seed)
			}
			r.Cell = c
			results[c.Index] = r
		}
	}
	if len(seen) != first.Shards {
		var missing []string
		for s := range first.Shards {
			if _, ok := seen[s]; !ok {
				missing = append(missing, strconv.Itoa(s))
			}
		}
		return Manifest{}, nil, fmt.Errorf("phase merge: shard %s of %d missing", strings.Join(missing, ", "), first.Shards)
	}
	out := make([]Result, 0, len(results))
	for k := range first.Cells {
		out = append(out, results[k])
	}
	whole := first
	whole.Shard, whole.Shards, whole.CSV = 0, 1, ""
	return whole, out, nil
}

// Diagram is the phase diagram: for each training set size (columns) and
// training λ (rows), the means over seeds of MSE(t*)/MSE(0) (below 1: the
// best step repairs the input), the share of digits with a transient
// memory, and Memorisation at the digits' best steps (above 0: the
// states were pulled toward stored images; near or below 0: not).
func Diagram(c Config, rs []Result) figures.Basin {
	nx, ny := len(c.Images), len(c.Lambdas)
	grid := func() [][]float64 {
		z := make([][]float64, ny)
		for r := range z {
			z[r] = make([]float64, nx)
		}
		return z
	}
	ratio, trans, memo, cnt := grid(), grid(), grid(), grid()
	for _, r := range rs {
		col, row := slices.Index(c.Images, r.Images), slices.Index(c.Lambdas, r.Lambda)
		if col < 0 || row < 0 {
			continue
		}
		ratio[row][col] += r.Best.MSE / r.Best.Input
		trans[row][col] += r.Transient
		memo[row][col] += r.Memorisation()
		cnt[row][col]++
	}
	for r := range ratio {
		for k := range ratio[r] {
			if n := cnt[r][k]; n > 0 {
				ratio[r][k] /= n
				trans[r][k] /= n
				memo[r][k] /= n
			} else {
				ratio[r][k], trans[r][k], memo[r][k] = math.NaN(), math.NaN(), math.NaN()
			}
		}
	}
	xs, ys := make([]float64, nx), slices.Clone(c.Lambdas)
	for k, n := range c.Images {
		xs[k] = float64(n)
	}
	seeds := "seed"
	if len(c.Seeds) != 1 {
		seeds = "seeds"
	}
	// Colour ranges that mean something: the ratio from 0 to at least 1
	// (the input's error), the share on [0, 1], the difference centred
	// on 0.
	hiRatio, absMemo := 1.0, 0.05
	for r := range ratio {
		for k := range ratio[r] {
			if v := ratio[r][k]; !math.IsNaN(v) {
				hiRatio = max(hiRatio, v)
			}
			if v := memo[r][k]; !math.IsNaN(v) {
				absMemo = max(absMemo, math.Abs(v))
			}
		}
	}
	return figures.Basin{
		Title: fmt.Sprintf("bsa-p%d trained %d updates from random couplings · noise σ² %g · %d test digits · mean of %d %s",
			c.Patch, c.Updates, c.Sigma2, c.N, len(c.Seeds), seeds),
		XLabel: "training images",
		YLabel: "training λ",
		X:      xs,
		Y:      ys,
		Panels: []figures.Heat{
			{Title: "MSE(t*) / MSE(0)", Z: ratio, Range: [2]float64{0, hiRatio}},
			{Title: "share with a transient memory", Z: trans, Range: [2]float64{0, 1}},
			{Title: "r(state at t*, nearest training image) − r(clean digit, its nearest)", Z: memo, Range: [2]float64{-absMemo, absMemo}},
		},
	}
}
