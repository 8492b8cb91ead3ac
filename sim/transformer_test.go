package sim

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

func randomNet(t *testing.T, cfg models.TransformerConfig) *models.Transformer[float32] {
	t.Helper()
	m, err := models.NewTransformer[float32](cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Init(11)
	return m
}

// TestTransformerTrajectory steps the ViT adapter past its depth: it stops
// after 5 layers, each step's image is the generic model's, and the
// attention holds the head average then every head, rows summing to 1.
func TestTransformerTrajectory(t *testing.T) {
	_, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	vit := randomNet(t, models.ViTConfig)
	model := NewTransformerModel(vit, nil)
	info := model.Info()
	if info.Name != "vit" || info.MaxSteps != 5 || info.Tokens != 49 || info.Heads != 4 {
		t.Fatalf("info %+v", info)
	}
	in := DefaultMask.Apply(test.Clean(3, mnist.PixelGain), vit.Pt, 3)
	tr := model.Start(in)
	run := vit.Forward(in.Input, vit.Cfg.Applications(0))
	N := info.Tokens
	attn := make([]float32, N*N*(1+info.Heads))
	got, want := make([]float32, models.Pixels), make([]float32, models.Pixels)
	var last []float32
	for step := 0; step < 7; step++ {
		tr.Step(attn)
		tr.Decode(got)
		if step < 5 {
			run.Image(step, want)
			for q := range got {
				if math.Abs(float64(got[q]-want[q])) > 1e-4 {
					t.Fatalf("layer %d pixel %d: %g, generic model %g", step, q, got[q], want[q])
				}
			}
		} else {
			for q := range got {
				if got[q] != last[q] {
					t.Fatalf("the ViT moved after its last layer (step %d)", step)
				}
			}
		}
		last = append(last[:0], got...)
		for i := 0; i < N; i++ {
			for h := 0; h <= info.Heads; h++ {
				var s, mean float64
				for j := 0; j < N; j++ {
					s += float64(attn[h*N*N+i*N+j])
				}
				if math.Abs(s-1) > 1e-4 {
					t.Fatalf("step %d head block %d row %d sums to %g", step, h, i, s)
				}
				if h == 0 {
					for hh := 1; hh <= info.Heads; hh++ {
						mean += float64(attn[hh*N*N+i*N+5]) / float64(info.Heads)
					}
					if math.Abs(mean-float64(attn[i*N+5])) > 1e-5 {
						t.Fatalf("head average %g, mean of heads %g", attn[i*N+5], mean)
					}
				}
			}
		}
	}
	if !math.IsNaN(tr.Energy()) {
		t.Fatal("the transformer has no energy")
	}
}

// TestTransformerModelPicksTask: masked inputs go to the mask network,
// noisy ones to the noise network.
func TestTransformerModelPicksTask(t *testing.T) {
	mask, noise := randomNet(t, models.BlockConfig), randomNet(t, models.BlockConfig)
	noise.Init(99)
	m := NewTransformerModel(mask, noise)
	if m.Info().Name != "block" || m.Info().MaxSteps != 0 {
		t.Fatalf("info %+v", m.Info())
	}
	_, test, _ := mnist.Sample()
	for _, c := range []Corruption{DefaultMask, DefaultNoise} {
		in := c.Apply(test.Clean(0, mnist.PixelGain), mask.Pt, 0)
		want := mask
		if c.Kind == Noise {
			want = noise
		}
		img := make([]float32, models.Pixels)
		tr := m.Start(in)
		tr.Step(nil)
		tr.Decode(img)
		ref := make([]float32, models.Pixels)
		want.Forward(in.Input, []int{0}).Image(0, ref)
		for q := range img {
			if math.Abs(float64(img[q]-ref[q])) > 1e-4 {
				t.Fatalf("%s input did not run the %s network", c.Kind, c.Kind)
			}
		}
	}
}

// TestTransformerStartIsInput: t = 0 is the corrupted input (§8), not the
// output linear of the embedded input.
func TestTransformerStartIsInput(t *testing.T) {
	net := randomNet(t, models.BlockConfig)
	m := NewTransformerModel(net, nil)
	_, test, _ := mnist.Sample()
	in := DefaultNoise.Apply(test.Clean(2, mnist.PixelGain), net.Pt, 2)
	got := make([]float32, models.Pixels)
	m.Start(in).Decode(got)
	for q := range got {
		if got[q] != in.Input[q] {
			t.Fatalf("pixel %d at t = 0: %g, input %g", q, got[q], in.Input[q])
		}
	}
}

func TestCurveCSVRoundTrip(t *testing.T) {
	c := &Curve{Model: "x", Task: Noise, Rows: []Row{{T: 0, MSE: 0.1, MSEMasked: math.NaN(), MSEUnmasked: math.NaN(), Energy: -3, CorrClean: 0.5},
		{T: 1, MSE: 0.05, MSEMasked: math.NaN(), MSEUnmasked: math.NaN(), Energy: math.NaN(), LabelMatch: 1, CorrMean: 0.25}}}
	var buf bytes.Buffer
	if err := c.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCurveCSV(&buf, "curve.csv", "x", Noise)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != 2 || got.Rows[1].MSE != 0.05 || got.Rows[1].LabelMatch != 1 || !math.IsNaN(got.Rows[0].MSEMasked) || got.Rows[0].Energy != -3 {
		t.Fatalf("read back %+v", got.Rows)
	}
	for _, bad := range []string{"a,b\n1,2\n", "", "t,mse\n", strings.Join(CurveColumns, ",") + "\n0,1\n"} {
		if _, err := ReadCurveCSV(bytes.NewBufferString(bad), "bad.csv", "x", Mask); err == nil || !strings.Contains(err.Error(), "bad.csv") {
			t.Fatalf("%q gave %v", bad, err)
		}
	}
}

// TestQuantile: linear interpolation between order statistics (type 7).
func TestQuantile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 10}
	for _, c := range []struct{ p, want float64 }{{0, 1}, {0.25, 2}, {0.5, 3}, {0.75, 4}, {1, 10}, {0.9, 7.6}} {
		if got := Quantile(v, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Fatalf("Quantile(%v, %g) = %g, want %g", v, c.p, got, c.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) || Quantile([]float64{7}, 0.25) != 7 {
		t.Fatal("empty or single-value quantiles")
	}
}

// TestOldCurveCSV: a curve.csv written before the quartiles still reads,
// its quartiles NaN.
func TestOldCurveCSV(t *testing.T) {
	old := strings.Join(CurveColumns[:9], ",") + "\n0,0.1,NaN,0.1,-3,0.5,0.4,1,0.2\n"
	c, err := ReadCurveCSV(strings.NewReader(old), "old.csv", "x", Noise)
	if err != nil || len(c.Rows) != 1 || c.Rows[0].MSE != 0.1 || !math.IsNaN(c.Rows[0].MSEMedian) {
		t.Fatalf("old curve.csv: %+v, %v", c, err)
	}
}

// TestReproduceDigits: the quartiles and every digit's own t* agree with
// the per-digit curves they come from.
func TestReproduceDigits(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	m, err := LoadBSA(2, "")
	if err != nil {
		t.Fatal(err)
	}
	model := &BSAModel{M: m, Dyn: DefaultDynamics()}
	const n, steps = 9, 40
	c, err := Reproduce(context.Background(), data, NewMemories(data.Train), ReproduceConfig{Model: model, Corruption: DefaultNoise, N: n, Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Digits) != n {
		t.Fatalf("%d digits in tstar, want %d", len(c.Digits), n)
	}
	// The same digits run again, their MSE per step kept.
	pt := m.Patches
	mse := make([][]float64, steps+1)
	for t := range mse {
		mse[t] = make([]float64, n)
	}
	var inputs []*Corrupted
	for k := 0; k < n; k++ {
		inputs = append(inputs, DefaultNoise.Apply(data.Test.Clean(k, mnist.PixelGain), pt, k))
	}
	err = Run(context.Background(), model, inputs, steps, nil, func(tt, b int, pred []float32, _ float64) {
		mse[tt][b], _, _ = MSE(pred, inputs[b].Clean, inputs[b].Pixel)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range c.Digits {
		best, bm := 0, math.Inf(1)
		for tt := 1; tt <= steps; tt++ {
			if mse[tt][d.Index] < bm {
				best, bm = tt, mse[tt][d.Index]
			}
		}
		if d.TStar != best || d.MSETStar != bm || d.MSE0 != mse[0][d.Index] || d.Label != int(data.Test.Labels[d.Index]) {
			t.Fatalf("digit %+v; its own curve: t* %d, MSE %g, MSE(0) %g", d, best, bm, mse[0][d.Index])
		}
	}
	for _, r := range c.Rows {
		v := slices.Clone(mse[r.T])
		slices.Sort(v)
		if r.MSEMedian != v[n/2] || r.MSEQ25 != v[2] || r.MSEQ75 != v[6] { // n = 9: exact order statistics
			t.Fatalf("t = %d: quartiles %g %g %g, sorted MSEs %v", r.T, r.MSEQ25, r.MSEMedian, r.MSEQ75, v)
		}
	}
	var buf bytes.Buffer
	if err := c.WriteTStarCSV(&buf); err != nil || strings.Count(buf.String(), "\n") != n+1 || !strings.HasPrefix(buf.String(), "index,label,t_star,mse_t_star,mse_0,improves\n") {
		t.Fatalf("tstar.csv:\n%s (%v)", buf.String(), err)
	}
}

// perImage hides a model's batched path: Run steps it one image at a time.
type perImage struct{ Model }

// TestChunkedReproduceMatchesPerImage: reproduce's curve through the
// chunked engine equals the per-image one (its naive twin) to 1e-5, for
// masking and noise, over 100 steps.
func TestChunkedReproduceMatchesPerImage(t *testing.T) {
	n, steps := 20, 100
	if raceOn || underNode {
		// The race pass checks the crew's sharing, Node the WebAssembly
		// build; the numbers are checked on 20 × 100 natively.
		n, steps = 4, 20
	}
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	m, err := LoadBSA(2, "")
	if err != nil {
		t.Fatal(err)
	}
	mem := NewMemories(data.Train)
	for _, task := range []Corruption{DefaultMask, DefaultNoise} {
		model := &BSAModel{M: m, Dyn: DefaultDynamics()}
		cfg := ReproduceConfig{Model: model, Corruption: task, N: n, Steps: steps}
		a, err := Reproduce(context.Background(), data, mem, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Model = perImage{model}
		b, err := Reproduce(context.Background(), data, mem, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for k := range a.Rows {
			va, vb := a.Rows[k].values(), b.Rows[k].values()
			for j := range va {
				if math.IsNaN(va[j]) && math.IsNaN(vb[j]) {
					continue
				}
				if d := math.Abs(va[j]-vb[j]) / math.Max(math.Abs(vb[j]), 1e-9); !(d <= 1e-5) {
					t.Fatalf("%s, t = %d, %s: chunked %g, per image %g", task.Kind, k, CurveColumns[j], va[j], vb[j])
				}
			}
		}
	}
}
