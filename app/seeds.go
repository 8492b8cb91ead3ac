package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"attractorlab/models"
	"attractorlab/sim"
	"attractorlab/sim/figures"
	"attractorlab/sim/mnist"
)

// seedRun is one (training seed, corruption seed) run of reproduce
// --train-seeds.
type seedRun struct {
	train, corrupt uint64
	s              sim.Summary
	// pv is Fig. 2's measure under masking: the mean within-patch
	// variance of the masked patches at the best step (NaN under noise).
	pv float64
}

// seedColumns are seeds.csv's columns: a row per run.
var seedColumns = []string{"model", "task", "train_seed", "corruption_seed", "n", "steps", "t_star", "improves", "mse_t_star", "mse_0", "mse_end", "corr_mean_digit_end", "patch_variance_best", "weights"}

// seedSummaryColumns are seeds-summary.csv's: a row per measure and
// source of spread.
var seedSummaryColumns = []string{"model", "task", "measure", "over", "count", "mean", "sd"}

// runTrainSeeds is reproduce --train-seeds: the bare self-attention of
// patch side p trained by the shipped recipe with each training seed
// (kept in the seed cache, reused by later runs), each run on the same
// digits with each corruption seed; the spread over training seeds and
// over corruption seeds reported apart.
func runTrainSeeds(ctx context.Context, r *reproduceRun, o *outputs, dir string, p int, trainSeeds, corruptSeeds []uint64) error {
	train, test, err := mnist.Sample()
	if err != nil {
		return err
	}
	cache, err := sim.SeedCache()
	if err != nil {
		cache = ""
		fmt.Fprintf(os.Stderr, "warning: no cache directory (%v): the trained seeds are not kept\n", err)
	}
	var runs []seedRun
	weights := map[uint64]string{}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	clean := "" // the clean digits' own within-patch variance (masking)
	for _, ts := range trainSeeds {
		recipe := seedRecipe(p, ts)
		start := time.Now()
		fmt.Fprintf(os.Stderr, "training seed %d: bsa-p%d by the shipped recipe (%d epochs)…\n", ts, p, recipe.Config.Epochs)
		got, err := sim.TrainSeed(ctx, train, test, recipe, cache, func(st models.EpochStats) {
			fmt.Fprintf(os.Stderr, "\r  epoch %d/%d, %.0f s", st.Epoch, recipe.Config.Epochs, time.Since(start).Seconds())
		})
		if err != nil {
			return fmt.Errorf("reproduce: --train-seeds: %w", err)
		}
		if got.Warning != "" {
			fmt.Fprintln(os.Stderr, "\nwarning:", got.Warning)
		}
		if got.Cached {
			fmt.Fprintf(os.Stderr, "training seed %d: kept in %s\n", ts, got.Path)
		} else {
			fmt.Fprintf(os.Stderr, "\ntraining seed %d: trained in %.1f s, kept in %s\n", ts, time.Since(start).Seconds(), got.Path)
		}
		weights[ts] = got.Path
		name := r.cat.SetTrained(got.Model)
		for _, cs := range corruptSeeds {
			r.settings.Corruption.Seed = cs
			masked := r.settings.Corruption.Kind == sim.Mask
			c, _, el, err := r.curve(name, masked, false)
			if err != nil {
				return err
			}
			c.Model = fmt.Sprintf("bsa-p%d (training seed %d, corruption seed %d)", p, ts, cs)
			printCurve(c, el, min(r.n, r.data.Test.Len()))
			x := seedRun{train: ts, corrupt: cs, s: c.Summary(), pv: math.NaN()}
			if masked && x.s.T >= 1 && x.s.T < len(c.PatchVar) && len(c.PatchVar[x.s.T]) > 0 {
				x.pv = figures.Fig2Set{Values: c.PatchVar[x.s.T]}.Mean()
				if clean == "" {
					clean = f(figures.Fig2Set{Values: c.CleanVar}.Mean())
				}
			}
			runs = append(runs, x)
		}
	}
	model, task, n := fmt.Sprintf("bsa-p%d", p), r.settings.Corruption.Kind.String(), min(r.n, r.data.Test.Len())
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return f(v)
	}
	if err := o.Write(filepath.Join(dir, "seeds.csv"), func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write(seedColumns)
		for _, x := range runs {
			cw.Write([]string{model, task, strconv.FormatUint(x.train, 10), strconv.FormatUint(x.corrupt, 10), strconv.Itoa(n), strconv.Itoa(r.steps),
				strconv.Itoa(x.s.T), strconv.FormatBool(x.s.Improves), f(x.s.MSE), f(x.s.Input), f(x.s.End), f(x.s.CorrMeanEnd), num(x.pv), weights[x.train]})
		}
		cw.Flush()
		return cw.Error()
	}); err != nil {
		return err
	}
	rows := seedSpread(runs, trainSeeds, corruptSeeds)
	fmt.Printf("\n%s, %s, %d digits × %d steps: mean ± sd over %d training seeds (each averaged over the %d corruption seeds) and over %d corruption seeds (each averaged over the training seeds)\n",
		model, task, n, r.steps, len(trainSeeds), len(corruptSeeds), len(corruptSeeds))
	for _, x := range rows {
		fmt.Printf("  %-22s over %-16s %.5g ± %.2g\n", x.measure, x.over, x.mean, x.sd)
	}
	if clean != "" {
		fmt.Printf("  the clean digits' own within-patch variance of the same patches: %s\n", clean)
	}
	if err := o.Write(filepath.Join(dir, "seeds-summary.csv"), func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write(seedSummaryColumns)
		for _, x := range rows {
			cw.Write([]string{model, task, x.measure, x.over, strconv.Itoa(x.count), f(x.mean), f(x.sd)})
		}
		cw.Flush()
		return cw.Error()
	}); err != nil {
		return err
	}
	return o.Commit()
}

// seedRecipe is the training of a training seed: the shipped recipe (tests
// shorten it).
var seedRecipe = sim.ShippedRecipe

// spreadRow is one measure's mean ± sd over one source of spread.
type spreadRow struct {
	measure, over string
	count         int
	mean, sd      float64
}

// seedSpread is each measure's mean ± sd over the training seeds (each
// seed's value averaged over the corruption seeds first) and over the
// corruption seeds (averaged over the training seeds first), and the
// share of runs whose best step beats the input.
func seedSpread(runs []seedRun, trainSeeds, corruptSeeds []uint64) []spreadRow {
	measures := []struct {
		name string
		get  func(seedRun) float64
	}{
		{"t_star", func(x seedRun) float64 { return float64(x.s.T) }},
		{"mse_t_star", func(x seedRun) float64 { return x.s.MSE }},
		{"mse_0", func(x seedRun) float64 { return x.s.Input }},
		{"mse_end", func(x seedRun) float64 { return x.s.End }},
		{"corr_mean_digit_end", func(x seedRun) float64 { return x.s.CorrMeanEnd }},
		{"improves", func(x seedRun) float64 {
			if x.s.Improves {
				return 1
			}
			return 0
		}},
		{"patch_variance_best", func(x seedRun) float64 { return x.pv }},
	}
	var out []spreadRow
	for _, m := range measures {
		for _, over := range []string{"training seeds", "corruption seeds"} {
			keys := trainSeeds
			if over == "corruption seeds" {
				keys = corruptSeeds
			}
			var vals []float64
			for _, k := range keys {
				var sum float64
				var cnt int
				for _, x := range runs {
					if (over == "training seeds" && x.train == k) || (over == "corruption seeds" && x.corrupt == k) {
						if v := m.get(x); !math.IsNaN(v) {
							sum += v
							cnt++
						}
					}
				}
				if cnt > 0 {
					vals = append(vals, sum/float64(cnt))
				}
			}
			if len(vals) == 0 {
				continue // a measure the task has not (Fig. 2's under noise)
			}
			mean, sd := sim.MeanSD(vals)
			out = append(out, spreadRow{measure: m.name, over: over, count: len(vals), mean: mean, sd: sd})
		}
	}
	return out
}
