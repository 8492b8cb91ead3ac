package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"attractorlab/models"
	"attractorlab/models/infile"
)

// ScenarioVersion is the version of the scenario file (and of the links
// that carry one) this code writes. It goes up by one whenever a field is
// added or a field's meaning or default changes; every version before it
// is still read, with the meaning it had: a field a version did not write
// takes the value that version used (Knob.Since, Knob.Earlier). The files
// and links in testdata/compat, written by each released version, are
// read by TestCompatCorpus to the state they were written with.
const ScenarioVersion = 2

// MaxScenarioSize is the largest scenario file read (a scenario is under
// 1 KB; the saved session is one).
const MaxScenarioSize = 1 * infile.MB

// Scenario is what File → Save writes and Open restores: the digit, the
// corruption with its seed and hand-toggled patches, the models, their
// parameters and the step shown. Its numeric settings are Knobs: each
// is the field its Knob names (Range.Field), kept in Values.
type Scenario struct {
	Version    int      `json:"version"`
	Split      string   `json:"split"`
	Index      int      `json:"index"`
	Corruption string   `json:"corruption"`
	Seed       uint64   `json:"seed"`
	Toggled    []int    `json:"toggled_patches,omitempty"`
	Models     []string `json:"models"`
	Attention  string   `json:"attention"`
	Async      bool     `json:"hopfield_async"`
	T          int      `json:"t"`
	// Own is a person's own digit, base64 of its 784 bytes (row by row,
	// 0 black … 255 white); without it the digit is split and index.
	Own string `json:"own_digit,omitempty"`
	// Pushes are edits of the state mid-run, in step order.
	Pushes []ScenarioPush `json:"pushes,omitempty"`
	// Dataset is the data set split and index pick from ("mnist",
	// "fashion-mnist"); without it (every version-1 file) MNIST.
	Dataset string `json:"dataset,omitempty"`
	// Values are the knobs' values by field name ("mask_fraction": 0.3),
	// written after the fields above.
	Values map[string]float64 `json:"-"`
}

// scenarioFixed is Scenario without its methods, for encoding/json.
type scenarioFixed Scenario

// MarshalJSON writes the fields, then every knob's value in Knobs' order.
func (sc Scenario) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(scenarioFixed(sc))
	if err != nil {
		return nil, err
	}
	b = b[:len(b)-1] // the closing brace
	for _, k := range Knobs {
		v, ok := sc.Values[k.Field]
		if !ok {
			return nil, fmt.Errorf("scenario: field %s has no value", k.Field)
		}
		vb, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("scenario: field %s: %w", k.Field, err)
		}
		b = fmt.Appendf(b, ",%q:%s", k.Field, vb)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads the fields present in b over sc (as encoding/json
// does for a struct): the knobs' fields into Values, the others into the
// struct, refusing a field neither has.
func (sc *Scenario) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	rest := make(map[string]json.RawMessage, len(m))
	for name, raw := range m {
		k, ok := KnobOfField(name)
		if !ok {
			rest[name] = raw
			continue
		}
		// Valid JSON that is not a number (a string, a list) does not
		// parse; a number too large for a float64 is out of range.
		v, err := strconv.ParseFloat(string(raw), 64)
		if errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("field %s = %s is out of range (allowed %s)", name, raw, k.Allowed())
		}
		if err != nil {
			return fmt.Errorf("field %s: want a number (allowed %s)", name, k.Allowed())
		}
		if sc.Values == nil {
			sc.Values = map[string]float64{}
		}
		sc.Values[name] = v
	}
	rb, err := json.Marshal(rest)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(rb))
	dec.DisallowUnknownFields()
	return dec.Decode((*scenarioFixed)(sc))
}

// ScenarioPush is a Push in a scenario file.
type ScenarioPush struct {
	T       int     `json:"t"`
	Kind    string  `json:"kind"`              // erase, noise or kick
	Patches []int   `json:"patches,omitempty"` // of the mask grid (erase, noise)
	Sigma2  float64 `json:"sigma2,omitempty"`  // noise, kick
	Seed    uint64  `json:"seed"`
}

// scenarioPushes are pushes as a scenario file writes them.
func scenarioPushes(ps []Push) []ScenarioPush {
	var out []ScenarioPush
	for _, p := range ps {
		sp := ScenarioPush{T: p.T, Kind: p.Kind.String(), Patches: slices.Clone(p.Patches), Seed: p.Seed}
		if p.Kind != Erase {
			sp.Sigma2 = p.Sigma2
		}
		out = append(out, sp)
	}
	return out
}

// settingsPushes reads a scenario file's pushes; an error names the push.
func settingsPushes(sps []ScenarioPush) ([]Push, error) {
	var out []Push
	for k, sp := range sps {
		kind, err := ParsePushKind(sp.Kind)
		if err != nil {
			return nil, fmt.Errorf("field pushes: push %d: %w", k+1, err)
		}
		if kind == Erase && sp.Sigma2 != 0 {
			return nil, fmt.Errorf("field pushes: push %d: an erase sets its patches to 0 and takes no sigma2 (given %g): use kind \"noise\" to add noise", k+1, sp.Sigma2)
		}
		out = append(out, Push{T: sp.T, Kind: kind, Patches: slices.Clone(sp.Patches), Sigma2: sp.Sigma2, Seed: sp.Seed})
	}
	return out, nil
}

// ScenarioOf captures a snapshot.
func ScenarioOf(sn *Snapshot) Scenario {
	s := sn.Settings
	values := make(map[string]float64, len(Knobs))
	for _, k := range Knobs {
		values[k.Field] = k.Get(s)
	}
	return Scenario{Version: ScenarioVersion, Split: s.Split.String(), Index: s.Index, Corruption: s.Corruption.Kind.String(),
		Seed: s.Corruption.Seed, Toggled: s.Toggled, Models: s.Lanes,
		Attention: s.Dyn.Attn.String(), Async: s.Hop.Async, T: sn.T,
		Own: encodeOwn(s.Own), Pushes: scenarioPushes(s.Pushes), Dataset: s.Dataset, Values: values}
}

// encodeOwn is a digit's bytes in base64 ("" for none).
func encodeOwn(own []uint8) string {
	if own == nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(own)
}

// A scenario file's own fields, which it must and may have; it must have
// every knob's field too.
var (
	scenarioRequired = []string{"version", "split", "index", "corruption", "seed", "models", "attention", "hopfield_async", "t"}
	scenarioOptional = []string{"toggled_patches", "own_digit", "pushes", "dataset"}
)

// requiredFields are the fields a scenario file must have.
func requiredFields() []string {
	out := slices.Clone(scenarioRequired)
	for _, k := range Knobs {
		out = append(out, k.Field)
	}
	return out
}

// since is the scenario version that first wrote knob k's field.
func (k *Knob) since() int { return max(1, k.Since) }

// ScenarioFields are every field of a scenario file: those it must have,
// then those it may.
func ScenarioFields() []string { return append(requiredFields(), scenarioOptional...) }

// Settings converts a scenario back, validating every field; an error
// names the field.
func (sc Scenario) Settings() (Settings, error) {
	var s Settings
	if err := checkScenarioVersion(sc.Version); err != nil {
		return s, err
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
	var own []uint8
	if sc.Own != "" {
		if own, err = base64.StdEncoding.DecodeString(sc.Own); err != nil || len(own) != models.Pixels {
			return s, fmt.Errorf("field own_digit: not a digit (want base64 of %d bytes, 28×28)", models.Pixels)
		}
	}
	pushes, err := settingsPushes(sc.Pushes)
	if err != nil {
		return s, err
	}
	if sc.Version < 2 && sc.Dataset != "" {
		return s, fmt.Errorf("field dataset: version %d files have none (it came in version 2)", sc.Version)
	}
	if err := checkDataset(sc.Dataset, ViaField); err != nil {
		return s, err
	}
	s = Settings{Split: split, Index: sc.Index, Own: own, Pushes: pushes, Dataset: canonicalDataset(sc.Dataset),
		Corruption: Corruption{Kind: k, Seed: sc.Seed},
		Toggled:    sc.Toggled, Lanes: sc.Models,
		Dyn: models.Dynamics{Attn: attn},
		Hop: HopfieldParams{Async: sc.Async}}
	for _, kn := range Knobs {
		v, ok := sc.Values[kn.Field]
		if !ok && sc.Version < kn.since() {
			// Written before the knob was: the value that version used.
			v, ok = kn.Earlier, true
		}
		if !ok {
			return Settings{}, fmt.Errorf("field %s is missing", kn.Field)
		}
		// A value is checked before it is set: an int or float32 field
		// would not hold what is out of its range.
		if err := kn.Check(v, ViaField); err != nil {
			return Settings{}, err
		}
		kn.Set(&s, v)
	}
	if err := s.Validate(ViaField); err != nil {
		return Settings{}, err
	}
	return s, nil
}

// ReadScenario decodes a scenario file, rejecting unknown and missing
// fields; errors name the file (name) and the field. Without the models
// at hand it can check hand-masked patches only against the finest grid
// there is (28×28 one-pixel patches): Catalogue.ReadScenario checks them
// against the grid the scenario's models draw their mask on.
func ReadScenario(r io.Reader, name string) (Settings, int, error) {
	s, t, err := readScenario(r, name)
	if err != nil {
		return Settings{}, 0, err
	}
	if err := checkToggled(s.Toggled, 0, ViaField); err != nil {
		return Settings{}, 0, fmt.Errorf("%s: %w", name, err)
	}
	return s, t, nil
}

// readScenario is ReadScenario without the check of the hand-masked
// patches.
func readScenario(r io.Reader, name string) (Settings, int, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxScenarioSize+1))
	if err != nil {
		return Settings{}, 0, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > MaxScenarioSize {
		return Settings{}, 0, fmt.Errorf("%s: larger than the limit of %s for a scenario file", name, infile.Bytes(MaxScenarioSize))
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(b, &present); err != nil {
		return Settings{}, 0, fmt.Errorf("%s: not a scenario file: %w", name, err)
	}
	var version int
	if raw, ok := present["version"]; !ok {
		return Settings{}, 0, fmt.Errorf("%s: field version is missing", name)
	} else if err := json.Unmarshal(raw, &version); err != nil {
		return Settings{}, 0, fmt.Errorf("%s: field version = %s: want a whole number (allowed 1 … %d)", name, shortRaw(raw), ScenarioVersion)
	}
	if err := checkScenarioVersion(version); err != nil {
		return Settings{}, 0, fmt.Errorf("%s: %w", name, err)
	}
	for _, f := range requiredFields() {
		if _, ok := present[f]; ok {
			continue
		}
		if k, isKnob := KnobOfField(f); isKnob && version < k.since() {
			continue // written before this knob was: Settings fills it in
		}
		return Settings{}, 0, fmt.Errorf("%s: field %s is missing", name, f)
	}
	if raw, ok := present["pushes"]; ok {
		// Each push on its own, so an error names the push and its field.
		if err := checkPushFields(raw); err != nil {
			return Settings{}, 0, fmt.Errorf("%s: %w", name, err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var sc Scenario
	if err := dec.Decode(&sc); err != nil {
		if msg := fieldError(err, ""); msg != "" {
			return Settings{}, 0, fmt.Errorf("%s: %s", name, msg)
		}
		return Settings{}, 0, fmt.Errorf("%s: not a scenario file: %w", name, err)
	}
	s, err := sc.Settings()
	if err != nil {
		return Settings{}, 0, fmt.Errorf("%s: %w", name, err)
	}
	return s, sc.T, nil
}

// pushFields are a push's fields in a scenario file (ScenarioPush's tags).
var pushFields = func() []string {
	var out []string
	ty := reflect.TypeFor[ScenarioPush]()
	for i := range ty.NumField() {
		name, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}()

// checkPushFields decodes a scenario file's pushes one by one, so that a
// wrong value or an unknown field is named with its push ("field pushes:
// push 2: seed = -1 is out of range …"), where the decoder's message
// named a Go type.
func checkPushFields(raw json.RawMessage) error {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return errors.New("field pushes: wrong type: want a list of pushes")
	}
	for k, r := range list {
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		var p ScenarioPush
		if err := dec.Decode(&p); err != nil {
			if msg := fieldError(err, fmt.Sprintf("field pushes: push %d: ", k+1)); msg != "" {
				return errors.New(msg)
			}
			return fmt.Errorf("field pushes: push %d: wrong type: want an object with %s", k+1, strings.Join(pushFields, ", "))
		}
	}
	return nil
}

// fieldError words a JSON decoding error by the field it is about (with
// prefix, "" at the top): a number out of a field's range, a value of the
// wrong type, an unknown field. "" when err is none of these.
func fieldError(err error, prefix string) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		field := ute.Field
		if i := strings.LastIndex(field, "."); i >= 0 {
			field = field[i+1:]
		}
		if prefix == "" {
			prefix = "field "
		}
		num, isNum := strings.CutPrefix(ute.Value, "number ")
		switch k := ute.Type.Kind(); {
		case isNum && k == reflect.Uint64:
			return fmt.Sprintf("%s%s = %s is out of range (allowed 0 … %d)", prefix, field, num, uint64(math.MaxUint64))
		case isNum && field == "t":
			return fmt.Sprintf("%s%s = %s is out of range (allowed 0 … %d)", prefix, field, num, int(Steps.Max))
		case isNum && (k == reflect.Int || k == reflect.Int64):
			return fmt.Sprintf("%s%s = %s: want a whole number", prefix, field, num)
		default:
			return fmt.Sprintf("%s%s: wrong type (%s): want %s", prefix, field, ute.Value, kindWord(k))
		}
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if prefix == "" {
			return "unknown field " + f
		}
		return fmt.Sprintf("%sunknown field %s (a push has %s)", prefix, f, strings.Join(pushFields, ", "))
	}
	return ""
}

// kindWord names a Go kind as a scenario file's value.
func kindWord(k reflect.Kind) string {
	switch k {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a whole number"
}

// checkScenarioVersion refuses a version this code does not read: none
// before 1, and none newer than its own (a file from a later release).
func checkScenarioVersion(v int) error {
	switch {
	case v < 1:
		return fmt.Errorf("field version = %d is out of range (allowed 1 … %d)", v, ScenarioVersion)
	case v > ScenarioVersion:
		return fmt.Errorf("field version = %d: written by a newer Attractor Lab (this one reads versions 1 … %d); update it to open this", v, ScenarioVersion)
	}
	return nil
}

// shortRaw is a JSON value for a message, cut to 40 characters.
func shortRaw(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

// ReadScenarioFile reads a scenario file a person named (a regular file of
// at most MaxScenarioSize) as ReadScenario does, then checks it against
// the models at hand (Catalogue.CheckScenario).
func (c *Catalogue) ReadScenarioFile(path string) (Settings, int, error) {
	b, err := infile.ReadAll(path, "scenario", MaxScenarioSize)
	if err != nil {
		return Settings{}, 0, err
	}
	return c.ReadScenario(bytes.NewReader(b), path)
}

// ReadScenario is ReadScenario checked against the models at hand: every
// model must be available here, and the hand-masked patches must be
// patches of the grid those models draw their mask on (CheckMask).
func (c *Catalogue) ReadScenario(r io.Reader, name string) (Settings, int, error) {
	s, t, err := readScenario(r, name)
	if err != nil {
		return Settings{}, 0, err
	}
	if err := c.CheckScenario(s, ViaField); err != nil {
		return Settings{}, 0, fmt.Errorf("%s: %w", name, err)
	}
	return s, t, nil
}

// CheckScenario refuses settings whose models are not available here or
// whose hand-masked patches the models' mask grid does not take.
func (c *Catalogue) CheckScenario(s Settings, via Via) error {
	for _, l := range s.Lanes {
		if err := c.Usable(l, s); err != nil {
			return fmt.Errorf("model %s is not available here: %w", l, err)
		}
	}
	return s.CheckMask(c.MaskGrid(s.Lanes), via)
}

// MaskGrid is the patch side the mask of models lanes is drawn on (see
// MaskGrid); models that are not available count as having no tokens.
func (c *Catalogue) MaskGrid(lanes []string) int {
	var sides []int
	for _, name := range lanes {
		if info, err := c.Info(name); err == nil {
			sides = append(sides, info.Patch)
		}
	}
	return MaskGrid(sides...)
}

// MaskGrid is the patch side a mask and its hand-masked patches are drawn
// on for models whose tokens are patches of the given sides: the coarsest,
// so that every model sees the same corrupted pixels; 2 when no model has
// patch tokens (0: a pixel-level model).
func MaskGrid(sides ...int) int {
	g := 0
	for _, p := range sides {
		g = max(g, p)
	}
	if g == 0 {
		g = 2
	}
	return g
}

// CheckMask refuses hand-masked patches (Toggled) that are not patches of
// the mask grid of side grid, that are listed twice, or that leave fewer
// than MinVisible patches unmasked, and pushes whose patches are not
// patches of that grid; errors name the setting as via says.
func (s Settings) CheckMask(grid int, via Via) error {
	if err := checkToggled(s.Toggled, grid, via); err != nil {
		return err
	}
	if err := checkPushes(s.Pushes, grid, int(Steps.Max), via); err != nil {
		return err
	}
	if s.Corruption.Kind != Mask {
		return nil
	}
	pt, err := models.NewPatches(grid)
	if err != nil {
		return err
	}
	masked := toggledMask(s, pt, make([]float32, models.Pixels))
	visible := 0
	for _, m := range masked {
		if !m {
			visible++
		}
	}
	if visible < MinVisible {
		what := "hand-masked patches"
		if via == ViaField {
			what = "field toggled_patches"
		}
		return fmt.Errorf("%s: at least %d patches must stay unmasked (attention needs keys); %d do", what, MinVisible, visible)
	}
	return nil
}

// toggledMask is the seeded mask of s's digit (clean) on grid with the
// hand-toggled patches flipped; the toggled patches must have been checked
// (checkToggled).
func toggledMask(s Settings, grid *models.Patches, clean []float32) []bool {
	masked := s.Corruption.Apply(clean, grid, s.NoiseImage()).Masked
	for _, i := range s.Toggled {
		masked[i] = !masked[i]
	}
	return masked
}

// checkToggled refuses patch numbers outside the grid of side grid and
// numbers listed twice; grid 0 is any grid (the finest has a patch per
// pixel).
func checkToggled(toggled []int, grid int, via Via) error {
	what := "hand-masked patch"
	if via == ViaField {
		what = "field toggled_patches: patch"
	}
	if grid < 0 || (grid > 0 && models.Side%grid != 0) {
		return fmt.Errorf("mask grid of %d-pixel patches does not divide the %d-pixel image", grid, models.Side)
	}
	side := models.Side / max(grid, 1)
	n := side * side
	seen := make([]bool, n)
	for _, i := range toggled {
		if i < 0 || i >= n {
			if grid == 0 {
				return fmt.Errorf("%s %d is out of range (allowed 0 … %d on the finest grid; the models' grid may take fewer)", what, i, n-1)
			}
			return fmt.Errorf("%s %d is out of range (allowed 0 … %d: the models' mask grid has %d×%d patches of %d×%d pixels)",
				what, i, n-1, side, side, grid, grid)
		}
		if seen[i] {
			return fmt.Errorf("%s %d is listed twice", what, i)
		}
		seen[i] = true
	}
	return nil
}

// WriteScenario encodes a snapshot's scenario as indented JSON.
func WriteScenario(w io.Writer, sn *Snapshot) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ScenarioOf(sn))
}

// WriteTrajectoryCSV writes every recorded step of every lane, then of
// every pushed run.
func WriteTrajectoryCSV(w io.Writer, sn *Snapshot) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"model", "t", "mse", "mse_masked", "mse_unmasked", "energy", "nearest_train_index",
		"nearest_train_corr", "nearest_label", "corr_mean_digit", "mean_patch_variance"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	rows := func(name string, frames []*Frame) {
		for _, fr := range frames {
			var pv float64
			for _, v := range fr.PatchVar {
				pv += v / float64(len(fr.PatchVar))
			}
			cw.Write([]string{name, strconv.Itoa(fr.T), f(fr.MSE), f(fr.MSEMask), f(fr.MSEOther), f(fr.Energy),
				strconv.Itoa(fr.NearIdx), f(fr.NearCorr), strconv.Itoa(int(fr.NearLbl)), f(fr.CorrMean), f(pv)})
		}
	}
	for _, l := range sn.Lanes {
		rows(l.Info.Name, l.Frames)
	}
	// The pushed runs after the runs, named "MODEL pushed".
	for _, l := range sn.Lanes {
		rows(l.Info.Name+" pushed", l.Branch)
	}
	cw.Flush()
	return cw.Error()
}
