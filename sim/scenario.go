package sim

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"attractorlab/models"
)

// Scenario is what File → Save writes and Open restores: the digit, the
// corruption with its seed and hand-toggled patches, the models, their
// parameters and the step shown.
type Scenario struct {
	Version    int      `json:"version"`
	Split      string   `json:"split"`
	Index      int      `json:"index"`
	Corruption string   `json:"corruption"`
	Fraction   float64  `json:"mask_fraction"`
	Sigma2     float64  `json:"noise_sigma2"`
	Seed       uint64   `json:"seed"`
	Toggled    []int    `json:"toggled_patches,omitempty"`
	Models     []string `json:"models"`
	Lambda     float32  `json:"lambda"`
	Gamma      float32  `json:"gamma"`
	Attention  string   `json:"attention"`
	Beta       float32  `json:"hopfield_beta"`
	K          int      `json:"hopfield_k"`
	Async      bool     `json:"hopfield_async"`
	T          int      `json:"t"`
}

// ScenarioOf captures a snapshot.
func ScenarioOf(sn *Snapshot) Scenario {
	s := sn.Settings
	return Scenario{Version: 1, Split: s.Split.String(), Index: s.Index, Corruption: s.Corruption.Kind.String(),
		Fraction: s.Corruption.Fraction, Sigma2: s.Corruption.Sigma2, Seed: s.Corruption.Seed,
		Toggled: s.Toggled, Models: s.Lanes, Lambda: s.Dyn.Lambda, Gamma: s.Dyn.Gamma,
		Attention: s.Dyn.Attn.String(), Beta: s.Hop.Beta, K: s.Hop.K, Async: s.Hop.Async, T: sn.T}
}

// scenarioFields are the fields a scenario must have (toggled_patches is
// optional).
var scenarioFields = []string{"version", "split", "index", "corruption", "mask_fraction", "noise_sigma2", "seed",
	"models", "lambda", "gamma", "attention", "hopfield_beta", "hopfield_k", "hopfield_async", "t"}

// Settings converts a scenario back, validating every field; an error
// names the field.
func (sc Scenario) Settings() (Settings, error) {
	var s Settings
	if sc.Version != 1 {
		return s, fmt.Errorf("field version = %d is not supported (want 1)", sc.Version)
	}
	split, err := ParseSplit(sc.Split)
	if err != nil {
		return s, fmt.Errorf("field split: %w", err)
	}
	k, err := ParseKind(sc.Corruption)
	if err != nil {
		return s, fmt.Errorf("field corruption: %w", err)
	}
	attn, err := ParseAttention(sc.Attention)
	if err != nil {
		return s, fmt.Errorf("field attention: %w", err)
	}
	if sc.T < 0 || sc.T > int(Steps.Max) {
		return s, fmt.Errorf("field t = %d is out of range (allowed 0 … %d)", sc.T, int(Steps.Max))
	}
	s = Settings{Split: split, Index: sc.Index,
		Corruption: Corruption{Kind: k, Fraction: sc.Fraction, Sigma2: sc.Sigma2, Seed: sc.Seed},
		Toggled:    sc.Toggled, Lanes: sc.Models,
		Dyn: models.Dynamics{Lambda: sc.Lambda, Gamma: sc.Gamma, Attn: attn},
		Hop: HopfieldParams{Beta: sc.Beta, K: sc.K, Async: sc.Async}}
	if err := s.Validate(ViaField); err != nil {
		return Settings{}, err
	}
	return s, nil
}

// ReadScenario decodes a scenario file, rejecting unknown and missing
// fields; errors name the file (name) and the field.
func ReadScenario(r io.Reader, name string) (Settings, int, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<20+1))
	if err != nil {
		return Settings{}, 0, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > 1<<20 {
		return Settings{}, 0, fmt.Errorf("%s: larger than 1 MB: not a scenario file", name)
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(b, &present); err != nil {
		return Settings{}, 0, fmt.Errorf("%s: not a scenario file: %w", name, err)
	}
	for _, f := range scenarioFields {
		if _, ok := present[f]; !ok {
			return Settings{}, 0, fmt.Errorf("%s: field %s is missing", name, f)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var sc Scenario
	if err := dec.Decode(&sc); err != nil {
		return Settings{}, 0, fmt.Errorf("%s: not a scenario file: %w", name, err)
	}
	s, err := sc.Settings()
	if err != nil {
		return Settings{}, 0, fmt.Errorf("%s: %w", name, err)
	}
	return s, sc.T, nil
}

// WriteScenario encodes a snapshot's scenario as indented JSON.
func WriteScenario(w io.Writer, sn *Snapshot) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ScenarioOf(sn))
}

// WriteTrajectoryCSV writes every recorded step of every lane.
func WriteTrajectoryCSV(w io.Writer, sn *Snapshot) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"model", "t", "mse", "mse_masked", "mse_unmasked", "energy", "nearest_train_index",
		"nearest_train_corr", "nearest_label", "corr_mean_digit", "mean_patch_variance"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for _, l := range sn.Lanes {
		for _, fr := range l.Frames {
			var pv float64
			for _, v := range fr.PatchVar {
				pv += v / float64(len(fr.PatchVar))
			}
			cw.Write([]string{l.Info.Name, strconv.Itoa(fr.T), f(fr.MSE), f(fr.MSEMask), f(fr.MSEOther), f(fr.Energy),
				strconv.Itoa(fr.NearIdx), f(fr.NearCorr), strconv.Itoa(int(fr.NearLbl)), f(fr.CorrMean), f(pv)})
		}
	}
	cw.Flush()
	return cw.Error()
}
