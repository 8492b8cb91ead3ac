package sweep

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"attractorlab/sim"
)

// byWire is a Remote that runs each part here on its own goroutine, as a
// worker would: the part and its answer pass through their encoded forms.
type byWire struct {
	env   Env
	parts int
	runs  atomic.Int32
	fail  string // a part from this digit on fails with this message
}

func (r *byWire) Parts() int { return r.parts }

func (r *byWire) Errors(ctx context.Context, p Part, step func(int)) (PartErrors, error) {
	r.runs.Add(1)
	b, err := EncodePart(p)
	if err != nil {
		return PartErrors{}, err
	}
	q, err := DecodePart(b)
	if err != nil {
		return PartErrors{}, err
	}
	if r.fail != "" && q.From > 0 {
		return PartErrors{}, errors.New(r.fail)
	}
	env := Env{Data: r.env.Data, Cat: sim.NewCatalogue(r.env.Data.Train, sim.WeightFiles{})}
	e, err := q.Run(ctx, env, step)
	if err != nil {
		return PartErrors{}, err
	}
	if b, err = EncodeErrors(e); err != nil {
		return PartErrors{}, err
	}
	return DecodeErrors(b)
}

// sameBits compares float slices bit for bit (NaN equal to NaN).
func sameBits(t *testing.T, what string, a, b []float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d values against %d", what, len(a), len(b))
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("%s[%d]: %v against %v", what, i, a[i], b[i])
		}
	}
}

// TestPartsJoinToWhole: an ensemble and a sweep cell cut into parts run
// elsewhere (through the parts' wire form) give the same bits as run
// whole here, under both tasks and for a model trained in the session
// (whose couplings travel with the part).
func TestPartsJoinToWhole(t *testing.T) {
	env := testEnv(t)
	net, err := sim.LoadBSA(2, "")
	if err != nil {
		t.Fatal(err)
	}
	trained := *net
	trained.J = append([]float32(nil), net.J...)
	trained.J[5] += 0.01 // not the shipped couplings
	env.Cat.SetTrained(&trained)
	n, steps := 21, 6
	if testing.Short() {
		n, steps = 9, 3 // parts of 2, 2, 2 and 3 digits
	}
	for _, c := range []struct {
		model string
		corr  sim.Corruption
		short bool // run under -short too (the WebAssembly and race runs)
	}{{"bsa-p2", sim.DefaultMask, true}, {"bsa-p2", sim.DefaultNoise, false}, {"hopfield", sim.DefaultNoise, false}, {sim.TrainedName(2), sim.DefaultMask, true}} {
		if testing.Short() && !c.short {
			continue // the full run (make test-simd) has them; under Node they took 50 s
		}
		s := sim.PaperDemo()
		s.Corruption = c.corr
		s.Corruption.Seed = 3
		name := c.model + "/" + c.corr.Kind.String()
		var here atomic.Int64
		whole, err := Ensemble(context.Background(), env, s, c.model, n, steps, func() { here.Add(1) })
		if err != nil {
			t.Fatal(name, err)
		}
		r := &byWire{env: env, parts: 4}
		if c.model == sim.TrainedName(2) {
			r.env.Cat = env.Cat
		}
		remote := env
		remote.Remote = r
		var there atomic.Int64
		cut, err := Ensemble(context.Background(), remote, s, c.model, n, steps, func() { there.Add(1) })
		if err != nil {
			t.Fatal(name, err)
		}
		if r.runs.Load() != 4 {
			t.Fatalf("%s: %d parts ran, want 4", name, r.runs.Load())
		}
		if here.Load() != there.Load() || here.Load() != int64(n*(steps+1)) {
			t.Fatalf("%s: %d image-steps told here, %d by the parts, want %d", name, here.Load(), there.Load(), n*(steps+1))
		}
		sameBits(t, name+" median", whole.Median, cut.Median)
		sameBits(t, name+" Q25", whole.Q25, cut.Q25)
		sameBits(t, name+" Q75", whole.Q75, cut.Q75)
		if len(whole.Digits) != n || len(cut.Digits) != n {
			t.Fatalf("%s: %d and %d digits", name, len(whole.Digits), len(cut.Digits))
		}
		for k := range whole.Digits {
			if whole.Digits[k] != cut.Digits[k] {
				t.Fatalf("%s: digit %d: %+v against %+v", name, k, whole.Digits[k], cut.Digits[k])
			}
		}
		cfg := Config{Models: []string{c.model}, Task: c.corr.Kind, Levels: []float64{sim.LevelKnob(c.corr.Kind).Default}, N: n, Steps: steps, Seeds: 1, Base: s}
		cell := cfg.Cells()[0]
		a, err := cfg.RunCell(context.Background(), env, cell)
		if err != nil {
			t.Fatal(name, err)
		}
		b, err := cfg.RunCell(context.Background(), remote, cell)
		if err != nil {
			t.Fatal(name, err)
		}
		sameBits(t, name+" cell curve", a.Curve, b.Curve)
		sameBits(t, name+" cell masked", []float64{a.Masked0, a.MaskedTStar, a.VisibleTStar}, []float64{b.Masked0, b.MaskedTStar, b.VisibleTStar})
	}
}

// TestPartRefuses: a part beyond the test set, a trained model's couplings
// that are not its own, a failing part and wire bytes that are not a part
// are errors that say what is wrong.
func TestPartRefuses(t *testing.T) {
	env := testEnv(t)
	s := sim.PaperDemo()
	_, err := Part{Settings: s, Model: "bsa-p2", From: env.Data.Test.Len() - 1, N: 2, Steps: 1}.Run(context.Background(), env, nil)
	if err == nil || !strings.Contains(err.Error(), "the test set has") {
		t.Errorf("a part past the test set: %v", err)
	}
	net, err := sim.LoadBSA(4, "")
	if err != nil {
		t.Fatal(err)
	}
	var st bytes.Buffer
	if err := net.WriteBSA(&st); err != nil {
		t.Fatal(err)
	}
	_, err = Part{Settings: s, Model: sim.TrainedName(2), N: 1, Steps: 1, Trained: st.Bytes()}.Run(context.Background(), env, nil)
	if err == nil || !strings.Contains(err.Error(), "not "+sim.TrainedName(2)) {
		t.Errorf("P = 4 couplings sent as %s: %v", sim.TrainedName(2), err)
	}
	remote := env
	remote.Remote = &byWire{env: env, parts: 3, fail: "worker 2 ran out of memory"}
	_, err = Ensemble(context.Background(), remote, s, "bsa-p2", 9, 2, nil)
	if err == nil || err.Error() != "worker 2 ran out of memory" {
		t.Errorf("a failing part: %v, want its own message", err)
	}
	if _, err := DecodePart([]byte("not a part")); err == nil || !strings.Contains(err.Error(), "a population job's part") {
		t.Errorf("garbage as a part: %v", err)
	}
	bad, _ := EncodeErrors(PartErrors{N: 2, T: 3, All: make([]float64, 5)})
	if _, err := DecodeErrors(bad); err == nil || !strings.Contains(err.Error(), "5 errors for 2 digits × 3 steps") {
		t.Errorf("an answer of the wrong size: %v", err)
	}
}
