package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"attractorlab/models"
)

// This file owns every setting a user can choose: its default (the paper's
// value where the paper has one), its allowed range, and the names it goes
// by in the window, on the command line and in scenario files. The window's
// sliders, the CLI flags, the scenario reader and the engine all read these
// values; nothing else writes a default or a bound.

// Range is a numeric setting: its names, bounds and default.
type Range struct {
	Name     string  // what a person calls it: "mask fraction"
	Flag     string  // command-line flag, without dashes ("" when there is none)
	Field    string  // scenario-file field ("" when there is none)
	Min, Max float64 // allowed, inclusive
	Default  float64 // the paper's value, or the app's when the paper has none
	Step     float64 // slider step in the window (0: not a slider)
	Integer  bool    // only whole numbers
	Log      bool    // the window's slider moves in log10 of the value
}

// A Knob is a numeric setting of a run: its Range and where Settings
// keeps its value. Every knob is listed in Knobs; the
// scenario file, lesson slides, the flags of reproduce and sweep, the
// window's sidebar, sweeps and Settings.Validate all go through Knobs, so
// a new setting is a field in Settings and one knob here
// (docs/architecture.md, "Adding a setting").
type Knob struct {
	Range
	// Symbol is its short name on axes and in the window: "λ".
	Symbol string
	// Task is the corruption whose level it is (the mask fraction, the
	// noise variance), or NoTask for a model's parameter; which models read
	// a parameter is the registry's (ModelSpec.Flags).
	Task Kind
	// Values are the values a new basin map or sweep tries.
	Values []float64
	// Since is the scenario-file version (ScenarioVersion) that first
	// wrote this knob's field (0 counts as 1); Earlier is the value the
	// versions before it used, which a file of those versions, lacking the
	// field, is read with. A new knob takes the next version, so a file or
	// link written before it opens with the meaning it had.
	Since   int
	Earlier float64
	// at points to the value in s: a *float64, *float32 or *int.
	at func(s *Settings) any
}

// NoTask marks a knob that is not a corruption's level.
const NoTask Kind = -1

// Knobs are every knob, in the window's and the scenario file's order. A
// knob not listed here is nowhere (TestEveryKnobIsListed).
var Knobs = []*Knob{MaskFraction, NoiseSigma2, Lambda, Gamma, Beta, StoredK}

// The settings (docs/maths.md §2, §4, §7).
var (
	MaskFraction = &Knob{Range: Range{Name: "mask fraction", Flag: "mask", Field: "mask_fraction",
		Min: 0, Max: 0.9, Default: 0.3, Step: 0.05}, Symbol: "masked fraction", Task: Mask,
		Values: []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9},
		at:     func(s *Settings) any { return &s.Corruption.Fraction }}
	NoiseSigma2 = &Knob{Range: Range{Name: "noise variance σ²", Flag: "sigma2", Field: "noise_sigma2",
		Min: 0, Max: 4, Default: 0.7, Step: 0.05}, Symbol: "σ²", Task: Noise,
		Values: []float64{0.1, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 4},
		at:     func(s *Settings) any { return &s.Corruption.Sigma2 }}
	Lambda = &Knob{Range: Range{Name: "λ", Flag: "lambda", Field: "lambda",
		Min: 0.1, Max: 10, Default: float64(models.DefaultDynamics().Lambda), Step: 0.1}, Symbol: "λ", Task: NoTask,
		Values: []float64{0.25, 0.5, 1, 2, 4},
		at:     func(s *Settings) any { return &s.Dyn.Lambda }}
	Gamma = &Knob{Range: Range{Name: "γ", Flag: "gamma", Field: "gamma",
		Min: 0, Max: 2, Default: float64(models.DefaultDynamics().Gamma), Step: 0.05}, Symbol: "γ", Task: NoTask,
		at: func(s *Settings) any { return &s.Dyn.Gamma }}
	Beta = &Knob{Range: Range{Name: "modern Hopfield β", Flag: "beta", Field: "hopfield_beta",
		Min: 0.01, Max: 100, Default: 1, Step: 0.05, Log: true}, Symbol: "β", Task: NoTask,
		Values: []float64{0.05, 0.2, 1, 5, 20},
		at:     func(s *Settings) any { return &s.Hop.Beta }}
	StoredK = &Knob{Range: Range{Name: "classical Hopfield K (stored digits)", Flag: "k", Field: "hopfield_k",
		Min: 1, Max: 1000, Default: 10, Integer: true}, Symbol: "K", Task: NoTask,
		Values: []float64{1, 3, 10, 30, 100},
		at:     func(s *Settings) any { return &s.Hop.K }}
)

// Get is the knob's value in s. A float32 setting is given as the
// shortest decimal that reads back as it (0.1, not 0.10000000149), so it
// prints and compares as it was written.
func (k *Knob) Get(s Settings) float64 {
	switch v := k.at(&s).(type) {
	case *float64:
		return *v
	case *float32:
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(*v), 'g', -1, 32), 64)
		return f
	case *int:
		return float64(*v)
	}
	panic("sim: knob " + k.Name + " points to a value of no numeric type")
}

// Set writes v into s; v must have been checked (Check).
func (k *Knob) Set(s *Settings, v float64) {
	switch p := k.at(s).(type) {
	case *float64:
		*p = v
	case *float32:
		*p = float32(v)
	case *int:
		*p = int(v)
	default:
		panic("sim: knob " + k.Name + " points to a value of no numeric type")
	}
}

// Label is the knob's symbol with what its name explains in brackets:
// "K (stored digits)", "λ".
func (k *Knob) Label() string {
	if _, why, ok := strings.Cut(k.Name, " ("); ok {
		return k.Symbol + " (" + why
	}
	return k.Symbol
}

// KnobOfField is the knob a scenario-file field names.
func KnobOfField(field string) (*Knob, bool) {
	for _, k := range Knobs {
		if k.Field == field {
			return k, true
		}
	}
	return nil, false
}

// KnobFields is every knob's value in s by its scenario field: what sweep
// and dynamics manifests keep under "settings".
func KnobFields(s Settings) map[string]float64 {
	m := make(map[string]float64, len(Knobs))
	for _, k := range Knobs {
		m[k.Field] = k.Get(s)
	}
	return m
}

// SetKnobFields sets every knob of s from fields (KnobFields' map),
// refusing a name that is not a knob's field, a knob missing and a value
// out of its range, each by its field.
func SetKnobFields(s *Settings, fields map[string]float64) error {
	for name := range fields {
		if _, ok := KnobOfField(name); !ok {
			return fmt.Errorf("%q is not a setting", name)
		}
	}
	for _, k := range Knobs {
		v, ok := fields[k.Field]
		if !ok {
			return fmt.Errorf("%s is missing", k.Field)
		}
		if err := k.Check(v, ViaField); err != nil {
			return err
		}
		k.Set(s, v)
	}
	return nil
}

// LevelKnob is the knob of a corruption's level: the mask fraction or the
// noise variance.
func LevelKnob(task Kind) *Knob {
	for _, k := range Knobs {
		if k.Task == task {
			return k
		}
	}
	panic(fmt.Sprintf("sim: no knob is the level of corruption kind %d", task))
}

// ParamKnobs are the knobs of the models' parameters (not a corruption's
// level), in Knobs' order.
func ParamKnobs() []*Knob {
	var out []*Knob
	for _, k := range Knobs {
		if k.Task == NoTask {
			out = append(out, k)
		}
	}
	return out
}

// Families are the families of the registry's models that read knob k
// (its Flag is in their Flags), in registry order; none for a level.
func (k *Knob) Families() []string {
	var out []string
	for _, sp := range Registry {
		if slices.Contains(sp.Flags, k.Flag) && !slices.Contains(out, sp.Family) {
			out = append(out, sp.Family)
		}
	}
	return out
}

// Other ranges: of runs, batches and training, not of Settings.
var (
	// Steps bounds a recorded or reproduced trajectory: 10,000 steps of
	// 1,000 digits already take hours.
	Steps = Range{Name: "steps", Flag: "steps", Field: "t", Min: 1, Max: 1000, Default: 100, Integer: true}
	// Digits is how many test digits a run averages over.
	Digits = Range{Name: "test digits", Flag: "n", Min: 1, Max: 10000, Default: 1000, Integer: true}
	// WorkerCount is the goroutines of a batch run (0: every core).
	WorkerCount = Range{Name: "workers", Flag: "workers", Min: 0, Max: 1024, Default: 0, Integer: true}
	// The bare self-attention's pseudo-likelihood training (§5): its λ
	// (the couplings' temperature in the training loss; each file keeps
	// its own as lambda_train), how many of the embedded training images
	// it learns from (balanced by class: a capacity experiment) and how
	// many test digits validate each epoch.
	TrainLambda = Range{Name: "training λ", Flag: "lambda", Min: 0.1, Max: 10, Default: float64(models.DefaultLambdaTrain)}
	TrainImages = Range{Name: "training images", Flag: "images", Min: 100, Max: 10000, Default: 10000, Integer: true}
	ValDigits   = Range{Name: "validation digits", Flag: "val", Min: 1, Max: 1000, Default: 200, Integer: true}
	// MaxLanes is how many models the window compares at once.
	MaxLanes = 4
	// MinVisible is how many tokens a mask must leave visible: attention
	// needs at least two keys on the first step of a masking run (§4).
	MinVisible = 2
)

// Allowed prints the range as "0 … 0.9".
func (r Range) Allowed() string {
	return fmt.Sprintf("%s … %s", strconv.FormatFloat(r.Min, 'g', -1, 64), strconv.FormatFloat(r.Max, 'g', -1, 64))
}

// Usage is the help text of the range's flag.
func (r Range) Usage() string {
	return fmt.Sprintf("%s (%s)", r.Name, r.Allowed())
}

// Via says which of a setting's names an error should use.
type Via int

const (
	ViaName  Via = iota // the window: "mask fraction"
	ViaFlag             // the command line: "--mask"
	ViaField            // a scenario file: field "mask_fraction"
)

// RangeError is a value outside its range.
type RangeError struct {
	R     Range
	Value float64
	Via   Via
}

func (e *RangeError) Error() string {
	name := e.R.Name
	switch {
	case e.Via == ViaFlag && e.R.Flag != "":
		name = "--" + e.R.Flag
	case e.Via == ViaField && e.R.Field != "":
		name = "field " + e.R.Field
	}
	what := "is out of range"
	if e.R.Integer && e.Value != math.Trunc(e.Value) {
		what = "is not a whole number"
	}
	return fmt.Sprintf("%s = %s %s (allowed %s)", name, strconv.FormatFloat(e.Value, 'g', -1, 64), what, e.R.Allowed())
}

// Check refuses v outside the range (NaN included), naming it as via says.
func (r Range) Check(v float64, via Via) error {
	if !(v >= r.Min && v <= r.Max) || (r.Integer && v != math.Trunc(v)) {
		return &RangeError{R: r, Value: v, Via: via}
	}
	return nil
}

// CheckInt is Check for an integer setting.
func (r Range) CheckInt(v int, via Via) error { return r.Check(float64(v), via) }

// Split selects the training subset or the test digits.
type Split int

const (
	TestSplit Split = iota
	TrainSplit
)

func (s Split) String() string {
	if s == TrainSplit {
		return "train"
	}
	return "test"
}

// Splits are the split names in menu order.
var Splits = []string{"test", "train"}

// ParseSplit reads "test" or "train".
func ParseSplit(s string) (Split, error) {
	switch s {
	case "test":
		return TestSplit, nil
	case "train":
		return TrainSplit, nil
	}
	return 0, fmt.Errorf("split %q is not one of %s", s, strings.Join(Splits, ", "))
}

// Tasks are the corruption names in menu order.
var Tasks = []string{"mask", "noise"}

// ParseKind reads "mask" or "noise".
func ParseKind(s string) (Kind, error) {
	switch s {
	case "mask":
		return Mask, nil
	case "noise":
		return Noise, nil
	}
	return 0, fmt.Errorf("task %q is not one of %s", s, strings.Join(Tasks, ", "))
}

// Attentions are the attention kinds of the bare self-attention, as
// models.AttnKind names them.
var Attentions = []string{models.Softmax.String(), models.ReluSeqlen.String()}

// ParseAttention reads "softmax" or "relu/seqlen" ("relu" for short).
func ParseAttention(s string) (models.AttnKind, error) {
	switch s {
	case models.Softmax.String():
		return models.Softmax, nil
	case models.ReluSeqlen.String(), "relu":
		return models.ReluSeqlen, nil
	}
	return 0, fmt.Errorf("attention %q is not one of %s", s, strings.Join(Attentions, ", "))
}

// HopfieldParams are the comparators' settings (§7).
type HopfieldParams struct {
	Beta  float32 // modern network's inverse temperature
	K     int     // classical network: stored digits (one per class, cycling)
	Async bool    // classical network: asynchronous sweeps instead of synchronous updates
}

// Settings are what a user chooses; a scenario file stores them.
type Settings struct {
	Split      Split
	Index      int
	Corruption Corruption
	// Toggled lists patches (on the mask grid) the user flipped by hand
	// after the seeded mask was drawn.
	Toggled []int
	Lanes   []string // model names, 1 to MaxLanes
	Dyn     models.Dynamics
	Hop     HopfieldParams
	// Own, when set, is a person's own digit (28×28 bytes as MNIST's,
	// PrepareDigit): the clean reference instead of the digit Split and
	// Index name. It has no label.
	Own []uint8
	// Pushes are edits of the state mid-run, in step order (push.go).
	Pushes []Push
	// Dataset is the data set Split and Index pick from and the Hopfield
	// networks store: "" for MNIST, else one of mnist.Datasets.
	Dataset string
}

// DefaultMask and DefaultNoise are the paper's two tasks.
var (
	DefaultMask  = knobDefaults().Corruption
	DefaultNoise = Corruption{Kind: Noise, Fraction: DefaultMask.Fraction, Sigma2: DefaultMask.Sigma2}
)

// DefaultDynamics are the bare self-attention's evaluation settings (§4).
func DefaultDynamics() models.Dynamics { return knobDefaults().Dyn }

// DefaultHopfield: β = 1, K = 10, synchronous. At β = 1 the modern
// network retrieves one stored digit within a step or two (mean top weight
// 1.00 on masked test digits); near β = 1/√784 it blends them all into
// an average digit instead.
func DefaultHopfield() HopfieldParams { return knobDefaults().Hop }

// DefaultSettings start on test digit 0 under masking, with the bare
// self-attention P=2 and the paper's parameters.
func DefaultSettings() Settings {
	s := knobDefaults()
	s.Lanes = []string{ModelNames[0]}
	return s
}

// knobDefaults are settings of no model with every knob at its default.
func knobDefaults() Settings {
	s := Settings{Corruption: Corruption{Kind: Mask}, Dyn: models.Dynamics{Attn: models.Softmax}}
	for _, k := range Knobs {
		k.Set(&s, k.Default)
	}
	return s
}

// DemoDigit is the test digit the first window shows: digit 12 of the
// test split (MNIST t10k #12, a 9, in both the full set and the embedded
// sample). Under noise (σ² 0.7, seed 0) the bare self-attention P=2 takes
// its MSE from 0.110 down to 0.058 at t* = 30, then up to 0.159 by t = 100:
// the transient memory and the fall toward the global attractor in one
// curve.
const DemoDigit = 12

// PaperDemo are the settings of the first window and the "Paper demo"
// action: a noisy digit under the bare self-attention with the paper's
// parameters.
func PaperDemo() Settings {
	s := DefaultSettings()
	s.Index = DemoDigit
	s.Corruption = DefaultNoise
	return s
}

// NothingToRepair reports whether the corrupted input is the clean digit:
// no pixel masked (by the fraction or by hand), or noise of variance 0.
func (s Settings) NothingToRepair() bool {
	c := s.Corruption
	if c.Kind == Noise {
		return c.Sigma2 == 0
	}
	// A blank own digit masked is still the blank digit.
	return (c.Fraction == 0 && len(s.Toggled) == 0) || (s.Own != nil && !slices.ContainsFunc(s.Own, func(b uint8) bool { return b != 0 }))
}

// Validate checks every setting against its range and every name against
// the catalogue's, naming the first one that is wrong as via says. Ranges
// that depend on the data (the digit index) are the engine's to check.
func (s Settings) Validate(via Via) error {
	c := s.Corruption
	if c.Kind != Mask && c.Kind != Noise {
		return fmt.Errorf("corruption kind %d is not one of %s", c.Kind, strings.Join(Tasks, ", "))
	}
	for _, k := range Knobs {
		if err := k.Check(k.Get(s), via); err != nil {
			return err
		}
	}
	if s.Dyn.Attn != models.Softmax && s.Dyn.Attn != models.ReluSeqlen {
		return fmt.Errorf("attention kind %d is not one of %s", s.Dyn.Attn, strings.Join(Attentions, ", "))
	}
	if s.Split != TestSplit && s.Split != TrainSplit {
		return fmt.Errorf("split %d is not one of %s", s.Split, strings.Join(Splits, ", "))
	}
	if s.Index < 0 {
		return fmt.Errorf("digit index %d is negative", s.Index)
	}
	if err := checkDataset(s.Dataset, via); err != nil {
		return err
	}
	if s.Own != nil && len(s.Own) != models.Pixels {
		return fmt.Errorf("own digit has %d values (allowed %d: 28×28)", len(s.Own), models.Pixels)
	}
	if err := checkPushes(s.Pushes, 0, int(Steps.Max), via); err != nil {
		return err
	}
	if len(s.Lanes) < 1 || len(s.Lanes) > MaxLanes {
		return fmt.Errorf("%d models chosen (allowed 1 … %d)", len(s.Lanes), MaxLanes)
	}
	for k, name := range s.Lanes {
		if _, err := ParseModel(name); err != nil {
			return err
		}
		for _, other := range s.Lanes[:k] {
			if other == name {
				return fmt.Errorf("model %s is chosen twice", name)
			}
		}
	}
	return nil
}

// Kernels describes the numerical kernels this binary runs: "AVX-512
// kernels"; in a build without the SIMD experiment on an AVX-512 CPU, the
// assembly ones and what they leave portable; else "portable Go kernels:
// " and why (a purego or non-amd64 build, a CPU without AVX-512). fast is
// false for the portable ones only.
func Kernels() (text string, fast bool) {
	name, why := models.Kernels()
	switch name {
	case "avx512":
		return "AVX-512 kernels", true
	case "avx512-asm":
		return "AVX-512 assembly kernels: " + why, true
	}
	return "portable Go kernels: " + why, false
}
