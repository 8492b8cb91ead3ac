package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"attractorlab/models"
)

// A push is an edit of the state at a step t, made while a run is under
// way (docs/maths.md §2, "A push mid-run"): patches erased, noise added to
// patches, or a kick of noise everywhere. The trajectory branches there:
// the run without the push stays as it was, and the pushed run is a fresh
// run of the same model started from the edited picture, its steps
// numbered on from t. Pushes are settings: scenario files keep them and
// replay them exactly.

// PushKind is what a push does to the state.
type PushKind int

const (
	// Erase sets the pixels of the chosen patches to 0 and hands them to
	// the model as masked tokens (the first step's masking rules, §4).
	Erase PushKind = iota
	// Spray adds Gaussian noise of variance σ² to the pixels of the chosen
	// patches.
	Spray
	// Kick adds Gaussian noise of variance σ² to every pixel.
	Kick
)

// PushKinds are the kinds' names, in the order of PushKind.
var PushKinds = []string{"erase", "noise", "kick"}

func (k PushKind) String() string {
	if k >= 0 && int(k) < len(PushKinds) {
		return PushKinds[k]
	}
	return fmt.Sprintf("push kind %d", int(k))
}

// ParsePushKind reads "erase", "noise" or "kick".
func ParsePushKind(s string) (PushKind, error) {
	if k := slices.Index(PushKinds, s); k >= 0 {
		return PushKind(k), nil
	}
	return 0, fmt.Errorf("push kind %q is not one of %s", s, strings.Join(PushKinds, ", "))
}

// Push is one edit of the state at step T.
type Push struct {
	T       int
	Kind    PushKind
	Patches []int   // patches of the mask grid (Erase, Spray); none for a Kick
	Sigma2  float64 // the noise's variance (Spray, Kick)
	Seed    uint64  // the noise's stream (Spray, Kick)
}

// PushSigma2 is the variance of a push's noise, and MaxPushes how many
// pushes one run takes.
var (
	PushSigma2 = Range{Name: "push noise variance σ²", Field: "sigma2", Min: 0.01, Max: 4, Default: 0.5, Step: 0.05}
	MaxPushes  = 32
)

// Apply edits img (a picture of the state, 784 pixels) on the mask grid
// grid and returns the edited picture and, for an erase, the erased
// pixels (nil otherwise). img is not modified. The noise is drawn from the
// push's own stream (PCG(Seed, T)), pixel by pixel in row order, so the
// same push on the same picture always gives the same picture.
func (p Push) Apply(img []float32, grid *models.Patches) (out []float32, erased []bool) {
	out = slices.Clone(img)
	region := make([]bool, models.Pixels)
	if p.Kind == Kick {
		for q := range region {
			region[q] = true
		}
	} else {
		grid.MarkPixels(region, p.Patches...)
	}
	switch p.Kind {
	case Erase:
		for q, in := range region {
			if in {
				out[q] = 0
			}
		}
		return out, region
	default:
		rng := rand.New(rand.NewPCG(p.Seed, uint64(p.T)))
		sigma := math.Sqrt(p.Sigma2)
		for q, in := range region {
			if in {
				out[q] = float32(float64(out[q]) + sigma*rng.NormFloat64())
			}
		}
		return out, nil
	}
}

// pushedInput is the input of a run started from picture img edited by
// the pushes ps (all at one step), for a model with tokens pt (nil: a
// pixel-level model): the erased pixels are masked, and tokens all of
// whose pixels are erased are masked tokens.
func pushedInput(clean, img []float32, ps []Push, grid, pt *models.Patches) *Corrupted {
	var erased []bool
	for _, p := range ps {
		var e []bool
		img, e = p.Apply(img, grid)
		if e != nil {
			if erased == nil {
				erased = make([]bool, models.Pixels)
			}
			for q, on := range e {
				erased[q] = erased[q] || on
			}
		}
	}
	in := &Corrupted{Clean: clean, Input: img, Pixel: erased}
	if erased != nil && pt != nil {
		in.Masked = tokensFromPixels(pt, erased)
		if !slices.Contains(in.Masked, true) {
			in.Masked = nil // no whole token erased: no masking rules
		}
	}
	return in
}

// checkPushes refuses pushes that are not in step order, of an unknown
// kind, with patches outside the mask grid of side grid (0: any grid, as
// checkToggled), an erase or a spray without patches, a kick with patches,
// or noise outside PushSigma2; errors name the field as via says.
func checkPushes(ps []Push, grid int, maxT int, via Via) error {
	what := "push"
	if via == ViaField {
		what = "field pushes: push"
	}
	if len(ps) > MaxPushes {
		return fmt.Errorf("%s: %d pushes (allowed at most %d)", strings.TrimSuffix(what, ": push"), len(ps), MaxPushes)
	}
	for k, p := range ps {
		name := fmt.Sprintf("%s %d", what, k+1)
		if p.T < 0 || p.T > maxT {
			return fmt.Errorf("%s: t = %d is out of range (allowed 0 … %d)", name, p.T, maxT)
		}
		if k > 0 && p.T < ps[k-1].T {
			return fmt.Errorf("%s: t = %d comes before the push before it (t = %d): pushes are listed in step order", name, p.T, ps[k-1].T)
		}
		switch p.Kind {
		case Erase, Spray:
			if len(p.Patches) == 0 {
				return fmt.Errorf("%s: %s names no patch", name, p.Kind)
			}
			if err := checkToggled(p.Patches, grid, via); err != nil {
				return fmt.Errorf("%s: %s", name, strings.TrimPrefix(strings.TrimPrefix(err.Error(), "field toggled_patches: "), "hand-masked "))
			}
			// An erase leaves the state, as a mask leaves the input, at
			// least MinVisible tokens to attend to (§4); the patches
			// are distinct (checkToggled).
			if side := models.Side / max(grid, 1); p.Kind == Erase && grid > 0 && len(p.Patches) > side*side-MinVisible {
				return fmt.Errorf("%s: erases %d of the %d patches: at least %d must stay visible (allowed 1 … %d patches)", name, len(p.Patches), side*side, MinVisible, side*side-MinVisible)
			}
		case Kick:
			if len(p.Patches) > 0 {
				return fmt.Errorf("%s: a kick acts on every pixel and names no patches (%d given)", name, len(p.Patches))
			}
		default:
			return fmt.Errorf("%s: kind %d is not one of %s", name, int(p.Kind), strings.Join(PushKinds, ", "))
		}
		if p.Kind != Erase {
			if err := PushSigma2.Check(p.Sigma2, ViaName); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return nil
}

// clonePushes copies pushes deeply (their patch lists too).
func clonePushes(ps []Push) []Push {
	if ps == nil {
		return nil
	}
	out := slices.Clone(ps)
	for k := range out {
		out[k].Patches = slices.Clone(out[k].Patches)
	}
	return out
}

// Describe is a push in words: "kick σ² 0.5 at t = 30".
func (p Push) Describe() string {
	switch p.Kind {
	case Erase:
		return fmt.Sprintf("erase %d %s at t = %d", len(p.Patches), plural(len(p.Patches), "patch", "patches"), p.T)
	case Spray:
		return fmt.Sprintf("noise σ² %g on %d %s at t = %d", p.Sigma2, len(p.Patches), plural(len(p.Patches), "patch", "patches"), p.T)
	}
	return fmt.Sprintf("kick σ² %g at t = %d", p.Sigma2, p.T)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
