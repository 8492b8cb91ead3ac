package sweep

import (
	"fmt"
	"math"

	"attractorlab/sim/figures"
)

// Map is model's basin map over the sweep's grid: for each corruption
// level (columns) and parameter value (rows), the means over seeds of
// MSE(t*), t* and the escape step. The escape step's mean is over the seeds
// that escape within the run; a cell where none does is NaN (grey,
// "never"). Results of other models are ignored.
func Map(cfg Config, rs []Result, model string) figures.Basin {
	var ys []float64 // the rows: the grid's values, or the model's own
	for _, v := range cfg.values() {
		if cfg.Param == NoParam {
			v = ownParam(model, cfg.Base)
		}
		ys = append(ys, v)
	}
	nx, ny := len(cfg.Levels), len(ys)
	sum := func() [][]float64 {
		z := make([][]float64, ny)
		for r := range z {
			z[r] = make([]float64, nx)
		}
		return z
	}
	mse, ts, esc := sum(), sum(), sum()
	cnt, ecnt := sum(), sum()
	for _, r := range rs {
		if r.Model != model {
			continue
		}
		col, row := -1, -1
		for k, l := range cfg.Levels {
			if l == r.Level {
				col = k
			}
		}
		for k, v := range ys {
			if v == r.Param || math.IsNaN(v) && math.IsNaN(r.Param) {
				row = k
			}
		}
		if col < 0 || row < 0 {
			continue
		}
		mse[row][col] += r.MSETStar
		ts[row][col] += float64(r.TStar)
		cnt[row][col]++
		if r.Escape >= 0 {
			esc[row][col] += float64(r.Escape)
			ecnt[row][col]++
		}
	}
	for r := range mse {
		for c := range mse[r] {
			n := cnt[r][c]
			if n == 0 {
				mse[r][c], ts[r][c], esc[r][c] = math.NaN(), math.NaN(), math.NaN()
				continue
			}
			mse[r][c] /= n
			ts[r][c] /= n
			if ecnt[r][c] == 0 {
				esc[r][c] = math.NaN()
			} else {
				esc[r][c] /= ecnt[r][c]
			}
		}
	}
	p := ParamOf(model)
	ylabel := p.Symbol()
	if k := p.Knob(); k != nil {
		ylabel = k.Label()
	}
	for k := range ys { // a model without a parameter has one row
		if math.IsNaN(ys[k]) {
			ys[k] = 0
			ylabel = "(no parameter)"
		}
	}
	title := fmt.Sprintf("%s · %s · %d test digits × %d seed", model, cfg.Task, cfg.N, cfg.Seeds)
	if cfg.Seeds != 1 {
		title += "s"
	}
	return figures.Basin{
		Title:  title,
		XLabel: LevelRange(cfg.Task).Name,
		YLabel: ylabel,
		X:      cfg.Levels,
		Y:      ys,
		Panels: []figures.Heat{
			{Title: "MSE(t*)", Z: mse},
			{Title: "t*", Z: ts, Integer: true},
			{Title: "escape step", Z: esc, Integer: true, NaN: "never escapes"},
		},
	}
}
