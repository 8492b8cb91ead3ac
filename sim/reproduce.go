package sim

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// CurveColumns are the columns of curve.csv, in order.
var CurveColumns = []string{"t", "mse", "mse_masked", "mse_unmasked", "energy", "corr_clean",
	"nearest_train_corr", "nearest_label_match", "corr_mean_digit", "mse_q25", "mse_median", "mse_q75"}

// curveColumnsV1 is the header curve.csv had before the quartiles.
var curveColumnsV1 = CurveColumns[:9]

// TStarColumns are the columns of tstar.csv, a row per digit.
// improves (a later column: older files lack it, and a reader derives it
// from the two errors) says whether the digit's best step repairs its
// input (Improves).
var TStarColumns = []string{"index", "label", "t_star", "mse_t_star", "mse_0", "improves"}

// Row is one step of a curve: means over images (§8), and the quartiles
// of the images' MSE.
type Row struct {
	T                                   int
	MSE, MSEMasked, MSEUnmasked, Energy float64
	CorrClean, NearestCorr, LabelMatch  float64
	CorrMean                            float64
	MSEQ25, MSEMedian, MSEQ75           float64
}

func (r Row) values() []float64 {
	return []float64{float64(r.T), r.MSE, r.MSEMasked, r.MSEUnmasked, r.Energy, r.CorrClean, r.NearestCorr, r.LabelMatch, r.CorrMean,
		r.MSEQ25, r.MSEMedian, r.MSEQ75}
}

// DigitBest is one digit's own transient memory: its best step t* ≥ 1
// (the first of equal ones), the MSE there and its input's MSE.
type DigitBest struct {
	Index, Label int
	TStar        int
	MSETStar     float64
	MSE0         float64
}

// Quantile is the p-quantile of sorted values by linear interpolation
// between order statistics (the "type 7" rule of R and NumPy): position
// p·(n−1). NaN for no values.
func Quantile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := p * float64(n-1)
	lo := int(math.Floor(h))
	hi := min(lo+1, n-1)
	return sorted[lo] + (h-float64(lo))*(sorted[hi]-sorted[lo])
}

// WriteTStarCSV writes tstar.csv: a row per digit, in digit order.
func (c *Curve) WriteTStarCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(TStarColumns)
	for _, d := range c.Digits {
		cw.Write([]string{strconv.Itoa(d.Index), strconv.Itoa(d.Label), strconv.Itoa(d.TStar),
			strconv.FormatFloat(d.MSETStar, 'g', 8, 64), strconv.FormatFloat(d.MSE0, 'g', 8, 64),
			strconv.FormatBool(d.TStar >= 1 && Improves(d.MSETStar, d.MSE0))})
	}
	cw.Flush()
	return cw.Error()
}

// Curve is a mean trajectory.
type Curve struct {
	Model string
	Task  Kind
	Rows  []Row
	// PatchVar[t] holds the within-patch variance of every masked patch
	// (P = 4 grid) of every image at step t, when asked for (Fig. 2).
	PatchVar [][]float64
	// CleanVar is the same quantity for the clean digits' masked patches:
	// the reference a reconstruction's texture can be compared with.
	CleanVar []float64
	// RawVar[t] is PatchVar[t] without clamping the predictions, and
	// Outside[t] the fraction of those patches' pixels outside [0,1].
	RawVar  [][]float64
	Outside []float64
	// Digits holds every digit's own t* (tstar.csv), in digit order.
	Digits []DigitBest
}

// BestStep is t* of a curve of T steps given by at: the step t ≥ 1 with
// the lowest value, the first of equal ones, NaN values left out; 0 and
// NaN when no step has a value. It is the one rule for t*: the window,
// reproduce, sweeps, ensembles, training, capacity and lessons all find
// their best step here (TestOneTStar), and name it t* only when it
// improves on the input (BestOf, Improves).
func BestStep(T int, at func(t int) float64) (int, float64) {
	bt, bv := 0, math.NaN()
	for t := 1; t < T; t++ {
		if v := at(t); bt == 0 && !math.IsNaN(v) || v < bv {
			bt, bv = t, v
		}
	}
	return bt, bv
}

// Best is a curve's best step beside its input, as every table shows it.
type Best struct {
	T        int     // the best step (BestStep); 0 when no step t ≥ 1 has a value
	MSE      float64 // the MSE there
	Input    float64 // the MSE at t = 0: the corrupted input's
	Improves bool    // T ≥ 1 and MSE repairs Input (Improves): only then is T named t*
}

// BestOf is BestStep with the input's error and the verdict.
func BestOf(T int, at func(t int) float64) Best {
	b := Best{Input: math.NaN(), MSE: math.NaN()}
	if T > 0 {
		b.Input = at(0)
	}
	b.T, b.MSE = BestStep(T, at)
	b.Improves = b.T >= 1 && Improves(b.MSE, b.Input)
	return b
}

// TStarText is the t* a table prints: the step when it improves on the
// input, else "none".
func (b Best) TStarText() string {
	if !b.Improves {
		return "none"
	}
	return strconv.Itoa(b.T)
}

// String says the result by the window's rule: "t* = 29: 0.0690 against
// the input's 0.1127", or "none: best t = 1, 0.0496 against the input's
// 0.0422" when no step improves on the input.
func (b Best) String() string {
	switch {
	case b.T < 1:
		return fmt.Sprintf("none: no step after the input (input %.4f)", b.Input)
	case !b.Improves:
		return fmt.Sprintf("none: best t = %d, %.4f against the input's %.4f", b.T, b.MSE, b.Input)
	}
	return fmt.Sprintf("t* = %d: %.4f against the input's %.4f", b.T, b.MSE, b.Input)
}

// Short is String for a legend: "t* = 29, 0.0690; input 0.1127" or "no
// t*: best t = 1, 0.0491; input 0.0422".
func (b Best) Short() string {
	switch {
	case b.T < 1:
		return fmt.Sprintf("no step; input %.4f", b.Input)
	case !b.Improves:
		return fmt.Sprintf("no t*: best t = %d, %.4f; input %.4f", b.T, b.MSE, b.Input)
	}
	return fmt.Sprintf("t* = %d, %.4f; input %.4f", b.T, b.MSE, b.Input)
}

// DigitBests are the n digits' own t* (BestStep of each digit's MSE), with
// their MSE at t = 0; mse(t, b) is digit b's MSE at step t < T.
func DigitBests(n, T int, mse func(t, b int) float64, label func(b int) int) []DigitBest {
	out := make([]DigitBest, n)
	for b := range out {
		d := DigitBest{Index: b, Label: label(b), MSE0: mse(0, b)}
		d.TStar, d.MSETStar = BestStep(T, func(t int) float64 { return mse(t, b) })
		out[b] = d
	}
	return out
}

// Best returns the mean curve's best step t ≥ 1 and its MSE (BestStep, §8).
func (c *Curve) Best() (int, float64) {
	return BestStep(len(c.Rows), func(t int) float64 { return c.Rows[t].MSE })
}

// Summary is the mean curve's best step beside its input (BestOf), and
// under masking the error on the masked pixels and on the visible ones,
// at the input and at that step (NaN under noise): where a model gains
// and where it loses.
type Summary struct {
	Best
	MaskedIn, MaskedAt   float64
	VisibleIn, VisibleAt float64
	End                  float64 // the MSE at the last step
	CorrMeanEnd          float64 // the last step's correlation with the average digit
}

// Summary summarises the curve.
func (c *Curve) Summary() Summary {
	b := BestOf(len(c.Rows), func(t int) float64 { return c.Rows[t].MSE })
	s := Summary{Best: b, MaskedIn: math.NaN(), MaskedAt: math.NaN(), VisibleIn: math.NaN(), VisibleAt: math.NaN(),
		End: math.NaN(), CorrMeanEnd: math.NaN()}
	if len(c.Rows) == 0 {
		return s
	}
	last := c.Rows[len(c.Rows)-1]
	s.End, s.CorrMeanEnd = last.MSE, last.CorrMean
	if c.Task == Mask {
		s.MaskedIn, s.VisibleIn = c.Rows[0].MSEMasked, c.Rows[0].MSEUnmasked
		if b.T >= 1 {
			s.MaskedAt, s.VisibleAt = c.Rows[b.T].MSEMasked, c.Rows[b.T].MSEUnmasked
		}
	}
	return s
}

// SummaryColumns are the columns of summary.csv (reproduce): one row per
// model and task.
var SummaryColumns = []string{"model", "task", "n", "steps", "t_star", "improves", "mse_t_star", "mse_0",
	"mse_masked_t_star", "mse_masked_0", "mse_visible_t_star", "mse_visible_0", "mse_end", "corr_mean_digit_end"}

// SummaryRecord is the curve's summary.csv row; n is its digits.
func (c *Curve) SummaryRecord(n int) []string {
	s := c.Summary()
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	return []string{c.Model, c.Task.String(), strconv.Itoa(n), strconv.Itoa(len(c.Rows) - 1), strconv.Itoa(s.T),
		strconv.FormatBool(s.Improves), f(s.MSE), f(s.Input), f(s.MaskedAt), f(s.MaskedIn), f(s.VisibleAt), f(s.VisibleIn),
		f(s.End), f(s.CorrMeanEnd)}
}

// WriteCSV writes the curve with a header row.
func (c *Curve) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(CurveColumns)
	for _, r := range c.Rows {
		rec := make([]string, 0, len(CurveColumns))
		for k, v := range r.values() {
			if k == 0 {
				rec = append(rec, strconv.Itoa(r.T))
				continue
			}
			rec = append(rec, strconv.FormatFloat(v, 'g', 8, 64))
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// ReproduceConfig is one `reproduce` run of a model from the catalogue.
type ReproduceConfig struct {
	Model      Model
	Corruption Corruption
	N, Steps   int
	Workers    int
	Progress   func(done, total int) // image-steps measured of n·(steps+1); called from the workers
	// PatchVar records the within-patch variances of masked patches at
	// every t (masking only).
	PatchVar bool
	// Visit, when set, is handed every image's state at every t (its
	// prediction, clamped to [0, 1], and its measures; called from the
	// workers, never twice for one (t, b)): what a side output such as
	// the trajectory map draws, without running the model again.
	Visit func(t, b int, pred []float32, m *Measures)
}

// Reproduce runs the model on the first N test digits and averages the
// metrics of §8 over images for every t.
func Reproduce(ctx context.Context, data *mnist.Data, mem *Memories, cfg ReproduceConfig) (*Curve, error) {
	n := min(cfg.N, data.Test.Len())
	if n <= 0 {
		return nil, fmt.Errorf("reproduce: no test digits")
	}
	info := cfg.Model.Info()
	if info.MaxSteps > 0 {
		cfg.Steps = min(cfg.Steps, info.MaxSteps)
	}
	pt, err := models.NewPatches(info.MaskGrid())
	if err != nil {
		return nil, err
	}
	inputs := make([]*Corrupted, n)
	for k := range inputs {
		inputs[k] = cfg.Corruption.Apply(data.Test.Clean(k, mnist.PixelGain), pt, k)
	}
	T := cfg.Steps + 1
	var pv [][][]float64 // [t][b]
	var cv [][]float64   // [b]
	var rv [][][]float64 // [t][b], unclamped
	var outside [][]int  // [t][b]
	if cfg.PatchVar && cfg.Corruption.Kind == Mask {
		cv = make([][]float64, n)
		rv = make([][][]float64, T)
		outside = make([][]int, T)
		for t := range rv {
			rv[t] = make([][]float64, n)
			outside[t] = make([]int, n)
		}
		pv = make([][][]float64, T)
		for t := range pv {
			pv[t] = make([][]float64, n)
		}
	}
	crew := models.NewCrew(cfg.Workers)
	ms := make([]Measures, T*n) // [t][b]
	var bufs sync.Map           // b → [][]float32, the image's predictions per t
	var pool sync.Pool          // recycled prediction buffers
	var done atomic.Int64
	visit := func(t, b int, pred []float32, energy float64) {
		if cfg.Progress != nil {
			defer func() { cfg.Progress(int(done.Add(1)), n*T) }()
		}
		in := inputs[b]
		ms[t*n+b] = measure(pred, in.Clean, in.Pixel, energy, mem)
		if cfg.Visit != nil {
			cfg.Visit(t, b, pred, &ms[t*n+b])
		}
		if pv != nil {
			pv[t][b] = PatchVariance(nil, pred, pt.Index, pt.A, in.Masked)
			rv[t][b], outside[t][b] = PatchVarianceRaw(nil, pred, pt.Index, pt.A, in.Masked)
			if t == 0 {
				cv[b] = PatchVariance(nil, in.Clean, pt.Index, pt.A, in.Masked)
			}
		}
		var ps [][]float32
		if t == 0 {
			if x := pool.Get(); x != nil {
				ps = *x.(*[][]float32)
			} else {
				ps = make([][]float32, T)
				for k := range ps {
					ps[k] = make([]float32, models.Pixels)
				}
			}
			bufs.Store(b, ps)
		} else {
			x, _ := bufs.Load(b)
			ps = x.([][]float32)
		}
		copy(ps[t], pred)
		if t == cfg.Steps {
			bufs.Delete(b)
			defer pool.Put(&ps)
			idx := make([]int, T)
			corr := make([]float32, T)
			// The states are searched in parts by idle workers too: the
			// last trajectories would otherwise be searched on one core.
			crew.Split(T, func(t0, t1 int) {
				mem.Search().Nearest(ps[t0:t1], idx[t0:t1], corr[t0:t1])
			})
			for tt := range ps {
				ms[tt*n+b].setNearest(mem, idx[tt], corr[tt])
			}
		}
	}
	if err := Run(ctx, cfg.Model, inputs, cfg.Steps, crew, visit); err != nil {
		return nil, err
	}
	c := &Curve{Model: info.Name, Task: cfg.Corruption.Kind, Rows: make([]Row, T)}
	if pv != nil {
		for _, v := range cv {
			c.CleanVar = append(c.CleanVar, v...)
		}
		c.PatchVar = make([][]float64, T)
		c.RawVar = make([][]float64, T)
		c.Outside = make([]float64, T)
		for t := range pv {
			out := 0
			for b, v := range pv[t] {
				c.PatchVar[t] = append(c.PatchVar[t], v...)
				c.RawVar[t] = append(c.RawVar[t], rv[t][b]...)
				out += outside[t][b]
			}
			c.Outside[t] = float64(out) / float64(max(1, len(c.PatchVar[t])*pt.A))
		}
	}
	for t := range c.Rows {
		// The means over images of each measure (NaN where no image has
		// it: the masked pixels' error under noise).
		var sum, cnt [8]float64
		for b := 0; b < n; b++ {
			m := &ms[t*n+b]
			match := 0.0
			if int(m.NearLbl) == int(data.Test.Labels[b]) {
				match = 1
			}
			for k, v := range [8]float64{m.MSE, m.MSEMask, m.MSEOther, m.Energy, m.CorrClean, m.NearCorr, match, m.CorrMean} {
				if !math.IsNaN(v) {
					sum[k] += v
					cnt[k]++
				}
			}
		}
		mean := func(k int) float64 {
			if cnt[k] == 0 {
				return math.NaN()
			}
			return sum[k] / cnt[k]
		}
		c.Rows[t] = Row{T: t, MSE: mean(0), MSEMasked: mean(1), MSEUnmasked: mean(2), Energy: mean(3),
			CorrClean: mean(4), NearestCorr: mean(5), LabelMatch: mean(6), CorrMean: mean(7)}
		mses := make([]float64, 0, n)
		for b := 0; b < n; b++ {
			if v := ms[t*n+b].MSE; !math.IsNaN(v) {
				mses = append(mses, v)
			}
		}
		slices.Sort(mses)
		c.Rows[t].MSEQ25, c.Rows[t].MSEMedian, c.Rows[t].MSEQ75 = Quantile(mses, 0.25), Quantile(mses, 0.5), Quantile(mses, 0.75)
	}
	c.Digits = DigitBests(n, T, func(t, b int) float64 { return ms[t*n+b].MSE }, func(b int) int { return int(data.Test.Labels[b]) })
	return c, nil
}

// ReadCurveCSV reads a curve.csv written by WriteCSV (file names it in errors).
func ReadCurveCSV(r io.Reader, file, model string, task Kind) (*Curve, error) {
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: empty: not a curve.csv", file)
	}
	head := strings.Join(recs[0], ",")
	cols := len(CurveColumns)
	if head == strings.Join(curveColumnsV1, ",") {
		cols = len(curveColumnsV1) // written before the quartiles: they read as NaN
	} else if head != strings.Join(CurveColumns, ",") {
		return nil, fmt.Errorf("%s: not a curve.csv (header %q)", file, head)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("%s: a header and no rows: not a curve.csv", file)
	}
	c := &Curve{Model: model, Task: task}
	for k, rec := range recs[1:] {
		v := [12]float64{9: math.NaN(), 10: math.NaN(), 11: math.NaN()}
		if len(rec) != cols {
			return nil, fmt.Errorf("%s: row %d has %d columns, want %d", file, k+2, len(rec), cols)
		}
		for j, s := range rec {
			if v[j], err = strconv.ParseFloat(s, 64); err != nil {
				return nil, fmt.Errorf("%s: row %d column %s: %w", file, k+2, CurveColumns[j], err)
			}
		}
		c.Rows = append(c.Rows, Row{T: int(v[0]), MSE: v[1], MSEMasked: v[2], MSEUnmasked: v[3], Energy: v[4],
			CorrClean: v[5], NearestCorr: v[6], LabelMatch: v[7], CorrMean: v[8], MSEQ25: v[9], MSEMedian: v[10], MSEQ75: v[11]})
	}
	return c, nil
}
