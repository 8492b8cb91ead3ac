package dynamics

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"attractorlab/sim"
)

// StepSummary is an asked step over the digits.
type StepSummary struct {
	At                   Step
	Digits               int
	Contracting          int     // digits whose every leading |λ| < 1 (and converged)
	Radius, RadiusSD     float64 // mean and sd of the spectral radius
	Unstable             float64 // mean count of leading |λ| > 1
	Growing              int     // digits with at least one leading |λ| > 1 (a saddle: the others shrink)
	StepSize, StepSizeSD float64
	NotConverged         int
	MeanT                float64 // the mean step (t* differs by digit)
	TMin, TMax           int
}

// Summary is a dynamics run's answer over its digits.
type Summary struct {
	Steps []StepSummary
	// Escaped digits leave (their MSE exceeds the input's after t*)
	// within the run; Corr and Rank are the Pearson and Spearman
	// correlations over them of log(growth) with the time to escape
	// (escape − t*).
	Digits, Escaped  int
	Corr, Rank       float64
	Growth, GrowthSD float64 // mean and sd of the k-step growth at t*
	Residual         float64 // median fixed-point residual at the last step
	// PeakLead is the median of t* − the step where the run moves most
	// (positive: the peak comes before t*), PeakQ1, PeakQ3 its quartiles.
	PeakLead, PeakQ1, PeakQ3 float64
}

// Summarise sums the digits up.
func Summarise(at []Step, ds []Digit) Summary {
	s := Summary{Digits: len(ds)}
	for a, st := range at {
		ss := StepSummary{At: st, Digits: len(ds), TMin: math.MaxInt}
		var rad, step []float64
		var unst, tsum float64
		for _, d := range ds {
			sp := d.Spectra[a]
			rad = append(rad, sp.Radius)
			step = append(step, sp.StepSize)
			unst += float64(sp.Unstable)
			tsum += float64(sp.T)
			ss.TMin, ss.TMax = min(ss.TMin, sp.T), max(ss.TMax, sp.T)
			if !sp.Converged {
				ss.NotConverged++
			}
			if sp.Unstable == 0 && sp.Converged {
				ss.Contracting++
			}
			if sp.Unstable > 0 {
				ss.Growing++
			}
		}
		if len(ds) > 0 {
			ss.Radius, ss.RadiusSD = sim.MeanSD(rad)
			ss.StepSize, ss.StepSizeSD = sim.MeanSD(step)
			ss.Unstable = unst / float64(len(ds))
			ss.MeanT = tsum / float64(len(ds))
		}
		s.Steps = append(s.Steps, ss)
	}
	var lg, esc, gr, res, lead []float64
	for _, d := range ds {
		gr = append(gr, d.Growth)
		lead = append(lead, float64(d.Best.T-d.PeakStep))
		res = append(res, d.Residual)
		if d.Escape >= 0 {
			lg = append(lg, math.Log(d.Growth))
			esc = append(esc, float64(d.Escape-d.Best.T))
		}
	}
	s.Escaped = len(esc)
	s.Corr, s.Rank = pearson(lg, esc), pearson(ranks(lg), ranks(esc))
	if len(gr) > 0 {
		s.Growth, s.GrowthSD = sim.MeanSD(gr)
		sort.Float64s(res)
		s.Residual = quantile(res, 0.5)
		sort.Float64s(lead)
		s.PeakQ1, s.PeakLead, s.PeakQ3 = quantile(lead, 0.25), quantile(lead, 0.5), quantile(lead, 0.75)
	}
	return s
}

// quantile is the q-quantile of sorted values, linearly interpolated
// (type 7).
func quantile(v []float64, q float64) float64 {
	h := q * float64(len(v)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[lo] + (h-float64(lo))*(v[lo+1]-v[lo])
}

// pearson is the correlation of x and y (NaN with fewer than 3 pairs or
// no spread).
func pearson(x, y []float64) float64 {
	n := len(x)
	if n < 3 {
		return math.NaN()
	}
	mx, _ := sim.MeanSD(x)
	my, _ := sim.MeanSD(y)
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// ranks are the values' ranks (ties share their mean rank).
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

// Paragraph says the answer in words, with the numbers.
func (s Summary) Paragraph(model string, k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %d digits. ", model, s.Digits)
	for _, st := range s.Steps {
		where := fmt.Sprintf("t = %d", st.At.T)
		if st.At.TStar {
			where = fmt.Sprintf("t* (t = %d … %d, mean %.1f)", st.TMin, st.TMax, st.MeanT)
		}
		fmt.Fprintf(&b, "At %s: spectral radius %.4f ± %.4f, %.1f of the %d leading eigenvalues outside the unit circle on average; every one inside for %d of %d digits (%.0f%%), at least one outside (a saddle: other directions shrink) for %d; step size ‖X(t+1) − X(t)‖/‖X(t)‖ %.4f ± %.4f",
			where, st.Radius, st.RadiusSD, st.Unstable, Eigs, st.Contracting, st.Digits, 100*float64(st.Contracting)/float64(max(st.Digits, 1)), st.Growing, st.StepSize, st.StepSizeSD)
		if st.NotConverged > 0 {
			fmt.Fprintf(&b, " (%d spectra not converged to the tolerance)", st.NotConverged)
		}
		b.WriteString(". ")
	}
	fmt.Fprintf(&b, "From t*, the perturbation that grows most by t* + %d grows %.3f ± %.3f times. ", k, s.Growth, s.GrowthSD)
	fmt.Fprintf(&b, "%d of %d digits escape (their MSE exceeds the input's after t*) within the run", s.Escaped, s.Digits)
	if !math.IsNaN(s.Corr) {
		fmt.Fprintf(&b, "; over them, log growth and the time to escape correlate %.2f (Pearson), %.2f (Spearman)", s.Corr, s.Rank)
	}
	where := fmt.Sprintf("%.0f steps before t*", s.PeakLead)
	switch {
	case s.PeakLead < 0:
		where = fmt.Sprintf("%.0f steps after t*", -s.PeakLead)
	case s.PeakLead == 0:
		where = "at t*"
	}
	fmt.Fprintf(&b, ". The run moves most (its largest step) %s (median; t* minus that step's quartiles %.0f … %.0f). The fixed-point residual ‖F(X) − X‖ at the last step: median %.3g.", where, s.PeakQ1, s.PeakQ3, s.Residual)
	return b.String()
}
