package sim

import (
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

// Settings converts a scenario back, validating every field.
func (sc Scenario) Settings() (Settings, error) {
	var s Settings
	if sc.Version != 1 {
		return s, fmt.Errorf("version %d is not supported (want 1)", sc.Version)
	}
	switch sc.Split {
	case "test":
	case "train":
		s.Split = TrainSplit
	default:
		return s, fmt.Errorf("split %q (want test or train)", sc.Split)
	}
	k, err := ParseKind(sc.Corruption)
	if err != nil {
		return s, err
	}
	if sc.Fraction < 0 || sc.Fraction >= 1 || sc.Sigma2 < 0 || sc.Sigma2 > 100 {
		return s, fmt.Errorf("corruption level out of range (mask fraction %g, σ² %g)", sc.Fraction, sc.Sigma2)
	}
	if sc.Index < 0 || sc.T < 0 {
		return s, fmt.Errorf("negative index or t")
	}
	if len(sc.Models) == 0 || len(sc.Models) > 4 {
		return s, fmt.Errorf("%d models (want 1 to 4)", len(sc.Models))
	}
	s.Index = sc.Index
	s.Corruption = Corruption{Kind: k, Fraction: sc.Fraction, Sigma2: sc.Sigma2, Seed: sc.Seed}
	s.Toggled = sc.Toggled
	s.Lanes = sc.Models
	s.Dyn = models.Dynamics{Lambda: sc.Lambda, Gamma: sc.Gamma}
	switch sc.Attention {
	case "softmax":
	case "relu/seqlen":
		s.Dyn.Attn = models.ReluSeqlen
	default:
		return s, fmt.Errorf("attention %q (want softmax or relu/seqlen)", sc.Attention)
	}
	if err := s.Dyn.Validate(); err != nil {
		return s, err
	}
	s.Hop = HopfieldParams{Beta: sc.Beta, K: sc.K, Async: sc.Async}
	if sc.Beta == 0 && sc.K == 0 {
		s.Hop = DefaultHopfield()
	}
	if !(s.Hop.Beta > 0) || s.Hop.K < 1 || s.Hop.K > 1000 {
		return s, fmt.Errorf("hopfield parameters out of range (β %g, K %d)", s.Hop.Beta, s.Hop.K)
	}
	return s, nil
}

// ReadScenario decodes a scenario file, rejecting unknown fields.
func ReadScenario(r io.Reader, name string) (Settings, int, error) {
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
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
				strconv.Itoa(fr.Nearest), f(fr.NearCorr), strconv.Itoa(int(fr.NearLbl)), f(fr.CorrMean), f(pv)})
		}
	}
	cw.Flush()
	return cw.Error()
}
