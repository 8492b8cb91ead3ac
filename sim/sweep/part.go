package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"attractorlab/models"
	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// A Part is a slice of a population job: model under Settings on the test
// digits From … From+N−1 for Steps steps (fewer for a model with a step
// limit). Every digit's run depends only on its own index (its seeded
// corruption), so a job cut into parts and joined gives the same bits as
// the job run whole (TestPartsJoinToWhole).
type Part struct {
	Settings       sim.Settings
	Model          string
	From, N, Steps int
	// Trained holds the couplings (a safetensors file) of a model trained
	// in this session (sim.TrainedNames), which only this session has;
	// nil for the shipped models, which a remote side loads itself.
	Trained []byte
}

// PartErrors are a part's digits' errors at every step, [t][b] for its N
// digits: the MSE over all pixels and, under masking, over the masked and
// the visible ones (nil under noise).
type PartErrors struct {
	N, T                 int
	All, Masked, Visible []float64
}

// A Remote runs parts elsewhere: the web build's Web Workers, so that the
// page's one thread only draws. Parts is how many run at once; Errors runs
// one, telling step of the image-steps done as they are.
type Remote interface {
	Parts() int
	Errors(ctx context.Context, p Part, step func(n int)) (PartErrors, error)
}

// Run runs the part here, on env's data and models.
func (p Part) Run(ctx context.Context, env Env, step func(n int)) (PartErrors, error) {
	cat := env.Cat
	if p.Trained != nil {
		net, err := models.ParseBSA(p.Trained, "the trained model "+p.Model)
		if err != nil {
			return PartErrors{}, err
		}
		cat = sim.NewCatalogue(env.Data.Train, nil)
		if got := cat.SetTrained(net); got != p.Model {
			return PartErrors{}, fmt.Errorf("the trained couplings sent are %s's, not %s's", got, p.Model)
		}
	}
	m, err := cat.Model(p.Model, p.Settings)
	if err != nil {
		return PartErrors{}, err
	}
	info := m.Info()
	steps := p.Steps
	if info.MaxSteps > 0 {
		steps = min(steps, info.MaxSteps)
	}
	pt, err := models.NewPatches(info.MaskGrid())
	if err != nil {
		return PartErrors{}, err
	}
	if p.From < 0 || p.N < 0 || p.From+p.N > env.Data.Test.Len() {
		return PartErrors{}, fmt.Errorf("digits %d to %d: the test set has %d", p.From, p.From+p.N-1, env.Data.Test.Len())
	}
	n, s := p.N, p.Settings
	inputs := make([]*sim.Corrupted, n)
	for k := range inputs {
		inputs[k] = s.Corruption.Apply(env.Data.Test.Clean(p.From+k, mnist.PixelGain), pt, p.From+k)
	}
	e := PartErrors{N: n, T: steps + 1, All: make([]float64, (steps+1)*n)}
	if s.Corruption.Kind == sim.Mask {
		e.Masked, e.Visible = make([]float64, (steps+1)*n), make([]float64, (steps+1)*n)
	}
	err = sim.Run(ctx, m, inputs, steps, models.NewCrew(env.Workers), func(t, b int, pred []float32, _ float64) {
		in := inputs[b]
		all, masked, visible := sim.MSE(pred, in.Clean, in.Pixel)
		e.All[t*n+b] = all
		if e.Masked != nil {
			e.Masked[t*n+b], e.Visible[t*n+b] = masked, visible
		}
		if step != nil {
			step(1)
		}
	})
	if err != nil {
		return PartErrors{}, err
	}
	return e, nil
}

// errorsOf runs model under s on the first n test digits for steps steps:
// here, or cut into env.Remote's parts run at once and joined.
func errorsOf(ctx context.Context, env Env, s sim.Settings, model string, n, steps int, step func()) (PartErrors, error) {
	n = min(n, env.Data.Test.Len())
	tell := func(k int) {
		if step != nil {
			for range k {
				step()
			}
		}
	}
	whole := Part{Settings: s, Model: model, From: 0, N: n, Steps: steps}
	if env.Remote == nil || env.Remote.Parts() < 1 || n == 0 {
		return whole.Run(ctx, env, tell)
	}
	if slices.Contains(sim.TrainedNames, model) {
		net, ok := env.Cat.Trained(model)
		if !ok {
			return PartErrors{}, fmt.Errorf("model %s has not been trained in this session: Training… (Ctrl+I) trains it", model)
		}
		var b bytes.Buffer
		if err := net.WriteBSA(&b); err != nil {
			return PartErrors{}, err
		}
		whole.Trained = b.Bytes()
	}
	k := min(env.Remote.Parts(), n)
	parts := make([]PartErrors, k)
	errs := make([]error, k)
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range k {
		p := whole
		p.From, p.N = i*n/k, (i+1)*n/k-i*n/k
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i], errs[i] = env.Remote.Errors(ctx, p, func(d int) {
				mu.Lock()
				defer mu.Unlock()
				tell(d)
			})
			if errs[i] != nil {
				cancel() // the others' work is wasted: stop them
			}
		}()
	}
	wg.Wait()
	if err := parent.Err(); err != nil {
		return PartErrors{}, err
	}
	// The part that failed first says why; the others were stopped.
	for _, cancelled := range []bool{false, true} {
		for _, err := range errs {
			if err != nil && errors.Is(err, context.Canceled) == cancelled {
				return PartErrors{}, err
			}
		}
	}
	return JoinParts(parts)
}

// JoinParts joins consecutive parts' errors into the whole job's, [t][b]
// over all their digits in order.
func JoinParts(parts []PartErrors) (PartErrors, error) {
	if len(parts) == 0 {
		return PartErrors{}, fmt.Errorf("no parts to join")
	}
	out := PartErrors{T: parts[0].T}
	for _, p := range parts {
		if p.T != out.T {
			return PartErrors{}, fmt.Errorf("parts of %d and %d steps cannot be joined", out.T-1, p.T-1)
		}
		out.N += p.N
	}
	masked := parts[0].Masked != nil
	join := func(get func(PartErrors) []float64) []float64 {
		v := make([]float64, 0, out.N*out.T)
		for t := range out.T {
			for _, p := range parts {
				v = append(v, get(p)[t*p.N:(t+1)*p.N]...)
			}
		}
		return v
	}
	out.All = join(func(p PartErrors) []float64 { return p.All })
	if masked {
		out.Masked = join(func(p PartErrors) []float64 { return p.Masked })
		out.Visible = join(func(p PartErrors) []float64 { return p.Visible })
	}
	return out, nil
}

// EncodePart and DecodePart are a part's form between the page and a
// worker (sim.EncodeWire).
func EncodePart(p Part) ([]byte, error) { return sim.EncodeWire(p) }

// DecodePart reads what EncodePart wrote.
func DecodePart(b []byte) (Part, error) {
	return sim.DecodeWire[Part](b, "a population job's part")
}

// EncodeErrors and DecodeErrors are a part's answer's form.
func EncodeErrors(e PartErrors) ([]byte, error) { return sim.EncodeWire(e) }

// DecodeErrors reads what EncodeErrors wrote, checking its sizes.
func DecodeErrors(b []byte) (PartErrors, error) {
	e, err := sim.DecodeWire[PartErrors](b, "a population job's answer")
	if err != nil {
		return PartErrors{}, err
	}
	if len(e.All) != e.N*e.T || e.Masked != nil && (len(e.Masked) != len(e.All) || len(e.Visible) != len(e.All)) {
		return PartErrors{}, fmt.Errorf("a population job's answer: %d errors for %d digits × %d steps", len(e.All), e.N, e.T)
	}
	return e, nil
}
