package lesson

import (
	"fmt"
	"strconv"

	"attractorlab/sim"
)

// Fill replaces the placeholders of text by the numbers of a snapshot at
// its step: {name} reads the first model, {name:model} the named one.
// Numbers print as the window prints them (MSE to 4 decimals,
// correlations to 2).
func Fill(text string, sn *sim.Snapshot) string {
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		mm := placeholder.FindStringSubmatch(m)
		v, ok := value(sn, mm[1], mm[2])
		if !ok {
			return m // Parse refuses what no model could answer
		}
		return v
	})
}

// value is one placeholder's text, or false when the snapshot has no such
// model.
func value(sn *sim.Snapshot, name, model string) (string, bool) {
	if len(sn.Lanes) == 0 {
		return "", false
	}
	l := &sn.Lanes[0]
	if model == "" && len(sn.Settings.Lanes) > 0 {
		// The first model chosen, which is not the first lane while its
		// weights are being fetched (the page) or when it failed to load:
		// its numbers wait for it.
		model = sn.Settings.Lanes[0]
	}
	if model != "" {
		l = nil
		for k := range sn.Lanes {
			if sn.Lanes[k].Info.Name == model {
				l = &sn.Lanes[k]
			}
		}
		if l == nil {
			return "", false
		}
	}
	f := l.At(sn.T)
	if f == nil || len(l.Frames) == 0 {
		return "", false
	}
	switch name {
	case "t_star":
		return strconv.Itoa(l.Best), true
	case "mse_t_star":
		return fmt.Sprintf("%.4f", l.BestMSE), true
	case "mse_input":
		return fmt.Sprintf("%.4f", l.Frames[0].MSE), true
	case "mse_now":
		return fmt.Sprintf("%.4f", f.MSE), true
	case "nearest_label":
		return strconv.Itoa(int(f.NearLbl)), true
	case "nearest_corr":
		return fmt.Sprintf("%.2f", f.NearCorr), true
	case "corr_mean_digit":
		return fmt.Sprintf("%.2f", f.CorrMean), true
	}
	return "", false
}
