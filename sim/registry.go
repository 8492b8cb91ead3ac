package sim

import (
	"fmt"
	"image/color"
	"slices"
	"strings"

	"attractorlab/models"
)

// ModelSpec is one row of the model registry: everything the app knows
// of a model beside its numerics (its Model and Trajectory types). The
// catalogue loads and binds models through it, the command line checks
// and names their flags and weights files by it, sweeps read the
// parameter they vary from it, the plots its colour and kind of energy.
// A new model is a file with its Model and one row in Registry
// (docs/architecture.md, "Adding a model").
type ModelSpec struct {
	Name   string // short id: keys 1–6 in its row's order, reproduce's directory, scenario files
	Family string // what it is, in messages: "bare self-attention"
	// Flags are the command-line flags of its own parameters (the
	// settings it reads when bound); a flag no chosen model reads is
	// refused (CheckModelFlags).
	Flags []string
	// Sweep is the flag of the parameter a sweep varies for it ("" none).
	Sweep string
	// Energy is the kind of energy its plot shows ("" none).
	Energy string
	// Color is its colour in every plot, legend, table and frame.
	Color color.RGBA
	// WeightsFlag is the window's flag naming a weights file to use
	// instead of the shipped one ("" : it has no weights file; the
	// Hopfield networks store the training digits).
	WeightsFlag string
	// Shipped are its embedded weights files (assets/weights), which the
	// web build fetches when the model is first run.
	Shipped []string
	// load makes the unbound network from file (a weights file given, or
	// "" for the shipped one); warnings are problems it loaded despite.
	load func(c *Catalogue, file string) (m Model, warnings []string, err error)
	// bind returns m bound to the settings' parameters for it (nil: it
	// has none).
	bind func(m Model, s Settings) Model
	// describe is its info without its weights, when the web build has
	// not fetched them yet (nil: it needs no weights).
	describe func() (ModelInfo, bool)
}

// The kinds of energy the plots name.
const (
	PseudoLikelihood = "negative pseudo-likelihood"
	HopfieldEnergy   = "Hopfield"
)

// Registry is the catalogue's models, one row each, in menu order.
var Registry = []ModelSpec{
	bsaSpec(2, color.RGBA{0, 114, 178, 255}),                                             // blue
	bsaSpec(4, color.RGBA{230, 159, 0, 255}),                                             // orange
	transformerSpec("block", "recycled transformer block", color.RGBA{0, 158, 115, 255}), // green
	transformerSpec("vit", "ViT", color.RGBA{204, 121, 167, 255}),                        // purple
	{
		Name: "hopfield", Family: "modern Hopfield network", Flags: []string{"beta"}, Sweep: "beta",
		Energy: HopfieldEnergy, Color: color.RGBA{86, 180, 233, 255}, // sky
		load: func(c *Catalogue, _ string) (Model, []string, error) {
			return &HopfieldModel{net: &modernNet{set: c.train}, Beta: float32(Beta.Default)}, nil, nil
		},
		bind: func(m Model, s Settings) Model {
			return &HopfieldModel{net: m.(*HopfieldModel).net, Beta: s.Hop.Beta}
		},
	},
	{
		Name: "hopfield-classic", Family: "classical Hopfield network", Flags: []string{"k", "async"}, Sweep: "k",
		Energy: HopfieldEnergy, Color: color.RGBA{213, 94, 0, 255}, // vermillion
		load: func(c *Catalogue, _ string) (Model, []string, error) {
			return &ClassicModel{net: &classicNets{set: c.train}, K: int(StoredK.Default)}, nil, nil
		},
		bind: func(m Model, s Settings) Model {
			return &ClassicModel{net: m.(*ClassicModel).net, K: s.Hop.K, Async: s.Hop.Async, Seed: s.Corruption.Seed}
		},
	},
}

// bsaSpec is the bare self-attention of patch side p.
func bsaSpec(p int, c color.RGBA) ModelSpec {
	return ModelSpec{
		Name: bsaName(p), Family: "bare self-attention", Flags: []string{"lambda", "gamma", "attn"}, Sweep: "lambda",
		Energy: PseudoLikelihood, Color: c, WeightsFlag: fmt.Sprintf("weights-p%d", p), Shipped: []string{bsaName(p) + ".safetensors"},
		load: func(_ *Catalogue, file string) (Model, []string, error) {
			net, err := LoadBSA(p, file)
			if err != nil {
				return nil, nil, err
			}
			return &BSAModel{M: net, Dyn: DefaultDynamics()}, nil, nil
		},
		bind: func(m Model, s Settings) Model {
			b := m.(*BSAModel)
			return &BSAModel{M: b.M, Dyn: s.Dyn, name: b.name, label: b.label}
		},
		describe: func() (ModelInfo, bool) {
			side := models.Side / p
			return ModelInfo{Name: bsaName(p), Label: bsaLabel(p), Patch: p, Tokens: side * side, HasEnergy: true}, true
		},
	}
}

// transformerSpec is the recycled block or the ViT: no parameters, a
// weights file for both tasks.
func transformerSpec(name, family string, c color.RGBA) ModelSpec {
	return ModelSpec{
		Name: name, Family: family, Color: c, WeightsFlag: "weights-" + name,
		Shipped: []string{name + "-mask.safetensors", name + "-noise.safetensors"},
		load: func(_ *Catalogue, file string) (Model, []string, error) {
			m, problems, err := LoadTransformerModel(name, file)
			if err != nil {
				return nil, problems, err
			}
			return m, problems, nil
		},
		describe: func() (ModelInfo, bool) {
			file := name + "-mask.safetensors"
			head, err := shippedHead(file)
			if err != nil {
				return ModelInfo{}, false
			}
			cfg, err := models.TransformerConfigOfHeader(head, "embedded "+file)
			if err != nil {
				return ModelInfo{}, false
			}
			return transformerInfo(name, cfg), true
		},
	}
}

// ModelNames are the registry's names in menu order (keys 1–6 in the
// window, `reproduce --model all`'s order and directory names).
var ModelNames = func() []string {
	var out []string
	for _, s := range Registry {
		out = append(out, s.Name)
	}
	return out
}()

// Spec is the registry's row of model name; a model trained in the
// window (TrainedNames) has its shipped twin's row under its own name.
func Spec(name string) (ModelSpec, bool) {
	base := name
	if slices.Contains(TrainedNames, name) {
		base = strings.TrimSuffix(name, "-trained")
	}
	for _, s := range Registry {
		if s.Name == base {
			if base != name {
				s.Name, s.WeightsFlag, s.Shipped, s.load, s.describe = name, "", nil, nil, nil
			}
			return s, true
		}
	}
	return ModelSpec{}, false
}
