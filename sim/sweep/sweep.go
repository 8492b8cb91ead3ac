// Package sweep runs a model over a grid of settings: corruption level ×
// one parameter (λ, β or K) × corruption seeds, each cell averaging the MSE
// curve of N test digits, and reports where each cell's transient memory
// lies (t*), how deep it is and when it is lost (the escape step). The
// window's basin map and `attractorlab sweep` share it; a sweep splits into
// shards that run on separate machines and merge into the same table.
package sweep

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// Param is the setting a sweep varies besides the corruption level: a
// model's parameter (a sim.Knob that some model's registry row names as
// its Sweep), or NoParam.
type Param struct{ k *sim.Knob }

// NoParam: each model runs with its own setting (from Config.Base).
var NoParam Param

// Params are the parameters a sweep can vary, in sim.Knobs' order: the
// knobs that are some model's Sweep.
func Params() []Param {
	var out []Param
	for _, k := range sim.ParamKnobs() {
		for _, sp := range sim.Registry {
			if sp.Sweep == k.Flag {
				out = append(out, Param{k})
				break
			}
		}
	}
	return out
}

// ParseParam reads a parameter by its flag ("lambda"); "" is NoParam.
func ParseParam(name string) (Param, error) {
	if name == "" {
		return NoParam, nil
	}
	var names []string
	for _, p := range Params() {
		if p.k.Flag == name {
			return p, nil
		}
		names = append(names, p.k.Flag)
	}
	return NoParam, fmt.Errorf("parameter %q is not one of %s", name, strings.Join(names, ", "))
}

// String is its flag ("" for NoParam).
func (p Param) String() string {
	if p.k == nil {
		return ""
	}
	return p.k.Flag
}

// Knob is the parameter's knob (nil for NoParam).
func (p Param) Knob() *sim.Knob { return p.k }

// Range is the parameter's range (sim's, so flags, files and the window
// agree); ok is false for NoParam.
func (p Param) Range() (sim.Range, bool) {
	if p.k == nil {
		return sim.Range{}, false
	}
	return p.k.Range, true
}

// Symbol is how an axis labels the parameter.
func (p Param) Symbol() string {
	if p.k == nil {
		return "parameter"
	}
	return p.k.Symbol
}

// Owner names the kind of model that has the parameter.
func (p Param) Owner() string {
	if p.k == nil {
		return "no model"
	}
	return strings.Join(p.k.Families(), " and ")
}

// ParamOf is the parameter model name has (NoParam for the transformers).
func ParamOf(name string) Param {
	sp, _ := sim.Spec(name)
	for _, k := range sim.Knobs {
		if sp.Sweep != "" && k.Flag == sp.Sweep {
			return Param{k}
		}
	}
	return NoParam
}

// Config is a sweep: its grid and what every cell averages over.
type Config struct {
	Models []string
	Task   sim.Kind
	Levels []float64 // mask fractions or noise variances σ²
	Param  Param
	Values []float64 // Param's values (none when Param is NoParam)
	N      int       // test digits per cell (the first N)
	Steps  int
	Seeds  int // corruption seeds 0 … Seeds−1
	// Base holds every setting the grid does not vary (γ, attention, the
	// classical network's update rule, and λ, β, K when not swept).
	Base sim.Settings
}

// Seeds bounds --seeds.
var Seeds = sim.Range{Name: "corruption seeds", Flag: "seeds", Min: 1, Max: 1000, Default: 1, Integer: true}

// MaxCells bounds a grid: a million cells of even one digit each is days.
const MaxCells = 1_000_000

// LevelRange is the range of a task's corruption level.
func LevelRange(task sim.Kind) sim.Range { return sim.LevelKnob(task).Range }

// Validate checks the grid, naming the flag at fault and its allowed
// range. Every model must have the swept parameter.
func (c Config) Validate() error {
	if len(c.Models) == 0 {
		return fmt.Errorf("--model: no model named (allowed %s)", strings.Join(sim.ModelNames, ", "))
	}
	for k, name := range c.Models {
		if _, err := sim.ParseModel(name); err != nil {
			return fmt.Errorf("--model: %w", err)
		}
		if c.Param != NoParam && ParamOf(name) != c.Param {
			return fmt.Errorf("--%s is the %s's (%s); --model %s does not use it", c.Param, c.Param.Owner(), strings.Join(modelsWith(c.Param), ", "), name)
		}
		for _, o := range c.Models[:k] {
			if o == name {
				return fmt.Errorf("--model: %s is named twice", name)
			}
		}
	}
	if c.Task != sim.Mask && c.Task != sim.Noise {
		return fmt.Errorf("--task: kind %d is not one of %s", c.Task, strings.Join(sim.Tasks, ", "))
	}
	if len(c.Levels) == 0 {
		return fmt.Errorf("--levels: no level given (%s: %s)", LevelRange(c.Task).Name, LevelRange(c.Task).Allowed())
	}
	lr := LevelRange(c.Task)
	for _, v := range c.Levels {
		if err := lr.Check(v, sim.ViaName); err != nil {
			return fmt.Errorf("--levels: %w", err)
		}
	}
	if err := distinct("--levels", c.Levels); err != nil {
		return err
	}
	if r, ok := c.Param.Range(); ok {
		if len(c.Values) == 0 {
			return fmt.Errorf("--%s: no value given (allowed %s)", c.Param, r.Allowed())
		}
		for _, v := range c.Values {
			if err := r.Check(v, sim.ViaFlag); err != nil {
				return err
			}
		}
		if err := distinct("--"+c.Param.String(), c.Values); err != nil {
			return err
		}
	} else if len(c.Values) > 0 {
		var flags []string
		for _, p := range Params() {
			flags = append(flags, "--"+p.String())
		}
		return fmt.Errorf("parameter values given without %s", strings.Join(flags, " or "))
	}
	for _, ch := range []struct {
		r sim.Range
		v int
	}{{sim.Digits, c.N}, {sim.Steps, c.Steps}, {Seeds, c.Seeds}} {
		if err := ch.r.CheckInt(ch.v, sim.ViaFlag); err != nil {
			return err
		}
	}
	if n := c.NumCells(); n > MaxCells {
		return fmt.Errorf("the grid has %d cells (models × levels × values × seeds); at most %d", n, MaxCells)
	}
	return c.Base.Validate(sim.ViaFlag)
}

func modelsWith(p Param) []string {
	var out []string
	for _, n := range sim.ModelNames {
		if ParamOf(n) == p {
			out = append(out, n)
		}
	}
	return out
}

func distinct(flag string, vs []float64) error {
	seen := make(map[float64]bool, len(vs)) // 0 and −0 are one key, as they are equal
	for _, v := range vs {
		if seen[v] {
			return fmt.Errorf("%s: %s is given twice", flag, strconv.FormatFloat(v, 'g', -1, 64))
		}
		seen[v] = true
	}
	return nil
}

// values are the parameter values of the grid: Values, or one (NaN) when
// the parameter is each model's own.
func (c Config) values() []float64 {
	if c.Param == NoParam {
		return []float64{math.NaN()}
	}
	return c.Values
}

// NumCells is models × levels × values × seeds.
func (c Config) NumCells() int {
	return len(c.Models) * len(c.Levels) * len(c.values()) * c.Seeds
}

// Cell is one point of the grid. Param is the value the model runs with
// (NaN for a model without one).
type Cell struct {
	Index int
	Model string
	Level float64
	Param float64
	Seed  int
}

// Cells are the grid's cells in the sweep's fixed order: model (as given),
// level, parameter value, seed.
func (c Config) Cells() []Cell {
	var out []Cell
	for _, m := range c.Models {
		for _, l := range c.Levels {
			for _, v := range c.values() {
				for s := 0; s < c.Seeds; s++ {
					p := v
					if c.Param == NoParam {
						p = ownParam(m, c.Base)
					}
					out = append(out, Cell{Index: len(out), Model: m, Level: l, Param: p, Seed: s})
				}
			}
		}
	}
	return out
}

// ownParam is the value model runs with under settings s (NaN: none).
func ownParam(model string, s sim.Settings) float64 {
	if p := ParamOf(model); p.k != nil {
		return p.k.Get(s)
	}
	return math.NaN()
}

// CellAt is Cells()[index] without the others (index in 0 … NumCells−1).
func (c Config) CellAt(index int) Cell {
	vals := c.values()
	s := index % c.Seeds
	rest := index / c.Seeds
	v := rest % len(vals)
	rest /= len(vals)
	l := rest % len(c.Levels)
	m := c.Models[rest/len(c.Levels)]
	p := vals[v]
	if c.Param == NoParam {
		p = ownParam(m, c.Base)
	}
	return Cell{Index: index, Model: m, Level: c.Levels[l], Param: p, Seed: s}
}

// ShardLen is the count of cells of shard i of n: len(Shard(Cells(), i, n)).
func (c Config) ShardLen(i, n int) int {
	return (c.NumCells() - i + n - 1) / n
}

// Settings are the settings cell runs with.
func (c Config) Settings(cell Cell) sim.Settings {
	s := c.Base
	s.Lanes = []string{cell.Model}
	s.Corruption = sim.Corruption{Kind: c.Task, Seed: uint64(cell.Seed)}
	for _, k := range sim.Knobs {
		if k.Task != sim.NoTask {
			k.Set(&s, k.Default)
		}
	}
	sim.LevelKnob(c.Task).Set(&s, cell.Level)
	if p := ParamOf(cell.Model); p.k != nil {
		p.k.Set(&s, cell.Param)
	}
	return s
}

// Shard is the deterministic part i (0-based) of n: the cells whose index
// is i modulo n, so every shard gets every model and level.
func Shard(cells []Cell, i, n int) []Cell {
	var out []Cell
	for _, c := range cells {
		if c.Index%n == i {
			out = append(out, c)
		}
	}
	return out
}

// Result is a cell's outcome. Curve is the mean MSE over the cell's digits
// at t = 0 … steps; TStar (≥ 1) is the step of its lowest value, the first
// of equal ones; Escape is the first step after t* whose mean MSE exceeds
// the input's, −1 when none does within the run.
type Result struct {
	Cell
	N        int
	TStar    int
	MSETStar float64
	MSE0     float64
	Improves bool // t* repairs the input (sim.Improves)
	MSEEnd   float64
	Escape   int
	// Under masking, the mean over digits of the error on the masked
	// pixels at t* and at the input, and on the visible ones at t* (the
	// input's visible pixels are the clean ones: error 0). NaN under
	// noise, without a t*, or read from a table written before version 4.
	MaskedTStar, VisibleTStar, Masked0 float64
	Curve                              []float64
	Digits                             []sim.DigitBest // per digit (the window's representative digit)
}

// Env is what cells run on.
type Env struct {
	Data    *mnist.Data
	Cat     *sim.Catalogue
	Workers int // goroutines per cell (0: every core)
	// Remote, when set, runs the digits elsewhere, cut into parts (the
	// web build's workers); nil runs them here.
	Remote Remote
}

// RunCell runs cell's model on the first N test digits corrupted at the
// cell's level and seed, and summarises the mean MSE curve.
func (c Config) RunCell(ctx context.Context, env Env, cell Cell) (Result, error) {
	e, n, err := runMSE(ctx, env, c.Settings(cell), cell.Model, c.N, c.Steps, nil)
	if err != nil {
		return Result{}, err
	}
	mse := e.All
	T := len(mse) / n
	r := Result{Cell: cell, N: n, Curve: make([]float64, T), Escape: -1,
		MaskedTStar: math.NaN(), VisibleTStar: math.NaN(), Masked0: math.NaN()}
	// mean is the mean over the digits at step t, summed in digit order.
	mean := func(v []float64, t int) float64 {
		var s float64
		for _, x := range v[t*n : (t+1)*n] {
			s += x
		}
		return s / float64(n)
	}
	for t := range r.Curve {
		r.Curve[t] = mean(mse, t)
	}
	r.MSE0 = r.Curve[0]
	r.MSEEnd = r.Curve[T-1]
	b := sim.BestOf(T, func(t int) float64 { return r.Curve[t] })
	r.TStar, r.MSETStar, r.Improves = b.T, b.MSE, b.Improves
	if e.Masked != nil {
		r.Masked0 = mean(e.Masked, 0)
		if r.TStar > 0 {
			r.MaskedTStar, r.VisibleTStar = mean(e.Masked, r.TStar), mean(e.Visible, r.TStar)
		}
	}
	if r.TStar > 0 {
		for t := r.TStar + 1; t < T; t++ {
			if r.Curve[t] > r.MSE0 {
				r.Escape = t
				break
			}
		}
	}
	r.Digits = digitBests(env, mse, n)
	return r, nil
}

// runMSE runs model under s on the first n test digits for steps steps
// (fewer for the ViT) and returns every digit's errors at every step
// and the digits run. step, when not nil, is told of each image-step done
// (from the workers).
func runMSE(ctx context.Context, env Env, s sim.Settings, model string, n, steps int, step func()) (PartErrors, int, error) {
	e, err := errorsOf(ctx, env, s, model, n, steps, step)
	if err != nil {
		return PartErrors{}, 0, err
	}
	return e, e.N, nil
}

// digitBests are each digit's own t* ≥ 1, from mse [t][b].
func digitBests(env Env, mse []float64, n int) []sim.DigitBest {
	return sim.DigitBests(n, len(mse)/n, func(t, b int) float64 { return mse[t*n+b] },
		func(b int) int { return int(env.Data.Test.Labels[b]) })
}

// Band is a model's ensemble over test digits: the quartiles of the
// digits' MSE at every step (type 7, as reproduce's curve.csv) and each
// digit's own t*.
type Band struct {
	Model            string
	N                int
	Q25, Median, Q75 []float64
	Digits           []sim.DigitBest
	// Seeds, when not 0, says the band is over that many training seeds
	// (SeedBand: Q25 and Q75 are the lowest and highest seed's median).
	Seeds int
}

// Ensemble runs model under s (its corruption, seed and parameters) on the
// first n test digits for steps steps. step, when not nil, is told of each
// image-step done, from the workers.
func Ensemble(ctx context.Context, env Env, s sim.Settings, model string, n, steps int, step func()) (Band, error) {
	e, n, err := runMSE(ctx, env, s, model, n, steps, step)
	mse := e.All
	if err != nil {
		return Band{}, err
	}
	T := len(mse) / n
	b := Band{Model: model, N: n, Q25: make([]float64, T), Median: make([]float64, T), Q75: make([]float64, T), Digits: digitBests(env, mse, n)}
	col := make([]float64, 0, n)
	for t := 0; t < T; t++ {
		col = col[:0]
		for _, v := range mse[t*n : (t+1)*n] {
			if !math.IsNaN(v) {
				col = append(col, v)
			}
		}
		slices.Sort(col)
		b.Q25[t], b.Median[t], b.Q75[t] = sim.Quantile(col, 0.25), sim.Quantile(col, 0.5), sim.Quantile(col, 0.75)
	}
	return b, nil
}

// WithTStar is the first digit whose own t* is t, else the one whose t*
// is nearest (the lower t among equals); −1 for no digits.
func (b Band) WithTStar(t int) int {
	best, bd := -1, math.MaxInt
	for _, d := range b.Digits {
		dd := 2 * abs(d.TStar-t)
		if d.TStar > t {
			dd++ // prefer the lower t at equal distance
		}
		if dd < bd {
			best, bd = d.Index, dd
		}
	}
	return best
}

// Run runs cells in order, calling progress (if not nil) after each with
// the cells done. A cancelled context stops it between cells and inside
// one, returning ctx.Err().
func (c Config) Run(ctx context.Context, env Env, cells []Cell, progress func(done, total int)) ([]Result, error) {
	out := make([]Result, 0, len(cells))
	for k, cell := range cells {
		r, err := c.RunCell(ctx, env, cell)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
		if progress != nil {
			progress(k+1, len(cells))
		}
	}
	return out, nil
}

// Representative is the digit of the cell whose own t* is nearest the
// cell's, the lowest index among equals: the digit a click on the cell
// loads.
func (r Result) Representative() int {
	best, bd := 0, math.MaxInt
	for _, d := range r.Digits {
		if dd := abs(d.TStar - r.TStar); dd < bd {
			best, bd = d.Index, dd
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// SeedBand runs model (a bare self-attention) under s with each kept
// training seed's couplings (sim.KeptSeeds) on the first n test digits:
// its Median is, at every t, the median over the seeds of each seed's
// median over the digits, and Q25 and Q75 hold the lowest and the highest
// of them (the spread over training seeds, not over digits); its Digits
// are every seed's digits (their own t*, for the histogram).
func SeedBand(ctx context.Context, env Env, s sim.Settings, model string, seeds []sim.KeptSeed, n, steps int, step func()) (Band, error) {
	if len(seeds) == 0 {
		return Band{}, fmt.Errorf("%s: no kept training seeds (reproduce --train-seeds 0-4 trains and keeps them)", model)
	}
	var per []Band
	for _, ks := range seeds {
		cat := sim.NewCatalogue(env.Data.Train, sim.WeightFiles{model: ks.Path})
		b, err := Ensemble(ctx, Env{Data: env.Data, Cat: cat, Workers: env.Workers}, s, model, n, steps, step)
		if err != nil {
			return Band{}, fmt.Errorf("training seed %d (%s): %w", ks.Seed, ks.Path, err)
		}
		per = append(per, b)
	}
	T := len(per[0].Median)
	out := Band{Model: fmt.Sprintf("%s, %d training seeds", model, len(seeds)), N: per[0].N, Seeds: len(seeds),
		Q25: make([]float64, T), Median: make([]float64, T), Q75: make([]float64, T)}
	col := make([]float64, len(per))
	for t := range T {
		for k, b := range per {
			col[k] = b.Median[t]
		}
		slices.Sort(col)
		out.Q25[t], out.Median[t], out.Q75[t] = col[0], sim.Quantile(col, 0.5), col[len(col)-1]
	}
	for _, b := range per {
		out.Digits = append(out.Digits, b.Digits...)
	}
	return out, nil
}
