package dynamics

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"runtime"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"attractorlab/models"
	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

func testEnv(t testing.TB) Env {
	t.Helper()
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	return Env{Data: data, Cat: sim.NewCatalogue(data.Train, sim.WeightFiles{})}
}

// realState is the shipped P = 2 model's state at step t on test digit 0
// under the default noise, and its float64 step.
func realState(t testing.TB, env Env, t0 int) (Stepper, []float64) {
	t.Helper()
	sys, in := realSystem(t, env, sim.ShippedName(2))
	st, err := sys.Trajectory(context.Background(), in, t0)
	if err != nil {
		t.Fatal(err)
	}
	return sys.Stepper(), st[t0]
}

// realSystem is model's system and test digit 0 under the default noise.
func realSystem(t testing.TB, env Env, model string) (*System, *sim.Corrupted) {
	t.Helper()
	s := sim.DefaultSettings()
	s.Corruption.Kind = sim.Noise
	m, err := env.Cat.Model(model, s)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := SystemOf(m, s.Corruption.Kind)
	if err != nil {
		t.Fatal(err)
	}
	return sys, s.Corruption.Apply(env.Data.Test.Clean(0, mnist.PixelGain), sys.Patches, 0)
}

// TestSpectrumMatchesDense: at a real state (the shipped P = 2 model,
// digit 0 under noise, t = 26 near its t*), the Arnoldi iteration's 10
// leading eigenvalues agree with gonum's dense eigendecomposition of the
// whole 1,568 × 1,568 Jacobian (built column by column from JVPs) to 1e-6.
func TestSpectrumMatchesDense(t *testing.T) {
	if testing.Short() {
		t.Skip("the dense 1,568 × 1,568 eigendecomposition takes 10 s")
	}
	env := testEnv(t)
	f, x := realState(t, env, 26)
	sp, err := SpectrumAt(context.Background(), f, x, 26, nil)
	if err != nil || !sp.Converged {
		t.Fatalf("spectrum: %v (converged %v)", err, sp.Converged)
	}
	n := f.Size()
	l := f.Linearise(x)
	jac := mat.NewDense(n, n, nil)
	e, col := make([]float64, n), make([]float64, n)
	for c := 0; c < n; c++ {
		e[c] = 1
		l.JVP(e, col)
		e[c] = 0
		for r := 0; r < n; r++ {
			jac.Set(r, c, col[r])
		}
	}
	var eg mat.Eigen
	if !eg.Factorize(jac, mat.EigenNone) {
		t.Fatal("dense eigendecomposition failed")
	}
	vals := eg.Values(nil)
	all := make([]models.Eig, len(vals))
	for k, v := range vals {
		all[k] = models.Eig{Value: v}
	}
	models.SortEigs(all)
	for k := 0; k < Eigs; k++ {
		if d := cmplx.Abs(sp.Eigs[k].Value - all[k].Value); d > 1e-6 {
			t.Errorf("eigenvalue %d: Arnoldi %v, dense %v (|Δ| %g)", k, sp.Eigs[k].Value, all[k].Value, d)
		}
	}
	// The renormalisation's normal direction is the spectrum's 0.
	if m := cmplx.Abs(all[len(all)-1].Value); m > 1e-9 {
		t.Errorf("smallest |λ| = %g, want 0 (the output lies on the mean-norm-1 surface)", m)
	}
}

// TestEscapeAndPush: from a real state near t*, the escape direction's
// growth is the k-step Jacobian's largest (no random direction grows
// more, and ‖DF_k v‖ is the value returned), and the push test's
// separation after k steps divided by ε converges to the linear
// prediction as ε → 0: the relative gap shrinks about tenfold with ε.
func TestEscapeAndPush(t *testing.T) {
	if raceOn || runtime.GOOS == "js" {
		t.Skip("single-goroutine float64 numerics: the portable and SIMD passes check them natively")
	}
	env := testEnv(t)
	f, x := realState(t, env, 26)
	ctx := context.Background()
	ch, err := NewChain(ctx, f, x, 10)
	if err != nil {
		t.Fatal(err)
	}
	es, err := EscapeFrom(ctx, ch, 26, 2, nil)
	if err != nil || !es.Converged {
		t.Fatalf("escape: %v (converged %v)", err, es.Converged)
	}
	if !(es.Growth[0] >= es.Growth[1]) {
		t.Fatalf("growths %v not in descending order", es.Growth)
	}
	out := make([]float64, f.Size())
	ch.Apply(es.Dirs[0], out)
	if g := nrm(out); math.Abs(g-es.Growth[0]) > 1e-8*es.Growth[0] {
		t.Fatalf("‖DF_k v‖ = %.12g, growth %.12g", g, es.Growth[0])
	}
	for s := uint64(0); s < 5; s++ {
		ch.Apply(RandomDirection(f.Size(), s), out)
		if nrm(out) > es.Growth[0]*(1+1e-9) {
			t.Fatalf("random direction %d grows %g, more than the escape direction's %g", s, nrm(out), es.Growth[0])
		}
	}
	for _, dir := range [][]float64{es.Dirs[0], RandomDirection(f.Size(), 9)} {
		var gaps []float64
		for _, eps := range []float64{1e-3, 1e-4, 1e-5} {
			p, err := Push(ctx, ch, dir, eps)
			if err != nil {
				t.Fatal(err)
			}
			k := len(p.Real) - 1
			gaps = append(gaps, math.Abs(p.Real[k]-p.Predicted[k])/p.Predicted[k])
		}
		if !(gaps[1] < gaps[0]/5 && gaps[2] < gaps[1]/5 && gaps[2] < 1e-3) {
			t.Errorf("separation/prediction − 1 at ε = 1e-3, 1e-4, 1e-5: %v (want first-order convergence)", gaps)
		}
	}
	if _, err := Push(ctx, ch, es.Dirs[0], 2); err == nil || !strings.Contains(err.Error(), "ε") {
		t.Fatalf("ε = 2: %v", err)
	}
}

// TestSystemOf: the models without a map say why; the bare models and
// the modern Hopfield network have one.
func TestSystemOf(t *testing.T) {
	env := testEnv(t)
	for _, c := range []struct{ model, want string }{
		{"vit", "layers are different maps"},
		{"hopfield-classic", "discrete"},
	} {
		m, err := env.Cat.Model(c.model, sim.DefaultSettings())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := SystemOf(m, sim.Noise); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.model) {
			t.Errorf("%s: %v, want one saying %q", c.model, err, c.want)
		}
	}
	for _, name := range []string{"bsa-p2", "bsa-p4", "hopfield", "block"} {
		m, err := env.Cat.Model(name, sim.DefaultSettings())
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range []sim.Kind{sim.Mask, sim.Noise} {
			if _, err := SystemOf(m, task); err != nil {
				t.Errorf("%s %v: %v", name, task, err)
			}
		}
	}
}

// TestBlockSystem: the recycled block's recorded states are the float64
// block's trajectory (each its step of the one before, to float32
// rounding) on the network trained for the task; the pictures are the
// window's (the input at t = 0, the decoder after), and a direction's
// picture is the decoder's derivative.
func TestBlockSystem(t *testing.T) {
	env := testEnv(t)
	ctx := context.Background()
	for _, task := range []sim.Kind{sim.Mask, sim.Noise} {
		s := sim.DefaultSettings()
		s.Corruption.Kind = task
		m, err := env.Cat.Model("block", s)
		if err != nil {
			t.Fatal(err)
		}
		sys, err := SystemOf(m, task)
		if err != nil {
			t.Fatal(err)
		}
		in := s.Corruption.Apply(env.Data.Test.Clean(0, mnist.PixelGain), sys.Patches, 0)
		st, imgs, err := sys.Run(ctx, in, 4)
		if err != nil {
			t.Fatal(err)
		}
		if len(st) != 5 || len(st[0]) != sys.Stepper().Size() || sys.Stepper().Size() != 49*64 {
			t.Fatalf("%v: %d states of %d numbers", task, len(st), len(st[0]))
		}
		for k := 0; k < 4; k++ {
			if d := dist(sys.Stepper().Linearise(st[k]).Next(), st[k+1]); d > 1e-4*nrm(st[k+1]) {
				t.Fatalf("%v step %d: the float64 block is %g from the recorded state (norm %g)", task, k, d, nrm(st[k+1]))
			}
		}
		// The window's own run of the model gives the same pictures.
		tr := m.Start(in)
		want := make([]float32, 784)
		for k := range imgs {
			tr.Decode(want)
			for q := range want {
				if math.Abs(float64(want[q]-imgs[k][q])) > 1e-6 {
					t.Fatalf("%v t = %d pixel %d: system's picture %v, the model's %v", task, k, q, imgs[k][q], want[q])
				}
			}
			if k > 0 {
				got := sys.Decode(st[k])
				for q := range got {
					if math.Abs(float64(got[q]-want[q])) > 1e-4 {
						t.Fatalf("%v t = %d pixel %d: Decode %v, the model's %v", task, k, q, got[q], want[q])
					}
				}
			}
			tr.Step(nil)
		}
		sp, err := SpectrumAt(ctx, sys.Stepper(), st[3], 3, nil)
		if err != nil || !sp.Converged || len(sp.Eigs) != Eigs {
			t.Fatalf("%v: spectrum %v %v", task, sp, err)
		}
	}
}

// TestHopfieldSystem: the modern Hopfield network's recorded states are
// its trajectory's (each the float64 step of the one before, to float32
// rounding), its Jacobian is symmetric with real eigenvalues, and its
// pictures are the directions themselves.
func TestHopfieldSystem(t *testing.T) {
	env := testEnv(t)
	sys, in := realSystem(t, env, "hopfield")
	ctx := context.Background()
	st, err := sys.Trajectory(ctx, in, 3)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 3; k++ {
		if d := dist(sys.Stepper().Linearise(st[k]).Next(), st[k+1]); d > 1e-4*nrm(st[k+1]) {
			t.Fatalf("step %d: the float64 step is %g from the recorded state", k, d)
		}
	}
	sp, err := SpectrumAt(ctx, sys.Stepper(), st[1], 1, nil)
	if err != nil || !sp.Converged {
		t.Fatalf("%v (converged %v)", err, sp.Converged)
	}
	for _, e := range sp.Eigs {
		if math.Abs(imag(e.Value)) > 1e-9 || real(e.Value) < -1e-9 {
			t.Fatalf("eigenvalue %v of a positive semi-definite Jacobian", e.Value)
		}
	}
	v := RandomDirection(sys.Stepper().Size(), 1)
	if p := sys.Picture(st[1], v); dist(p, v) != 0 {
		t.Fatal("the Hopfield picture is not the direction")
	}
}

// TestConfigRefuses: --at, --k and the steps out of range, by flag.
func TestConfigRefuses(t *testing.T) {
	for _, c := range []struct{ at, want string }{
		{"0", "out of range (allowed 1 … 100"}, {"101", "out of range"}, {"x", "not a step"}, {"1,1", "twice"}, {"t*,t*", "twice"}, {"", "not a step"},
	} {
		if _, err := ParseSteps(c.at, 100); err == nil || !strings.Contains(err.Error(), "--at") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--at %q: %v", c.at, err)
		}
	}
	good := Config{Model: "bsa-p2", Settings: sim.DefaultSettings(), N: 5, Steps: 20, At: []Step{{T: 1}, {TStar: true}}, K: 10}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.K = 0 }, "--k"}, {func(c *Config) { c.K = 20 }, "past the recorded steps"},
		{func(c *Config) { c.K = MaxK + 1 }, "--k"}, {func(c *Config) { c.At = []Step{{T: 21}} }, "beyond the run"},
		{func(c *Config) { c.N = 0 }, "--n"}, {func(c *Config) { c.Steps = 1001 }, "--steps"},
	} {
		cfg := good
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", cfg, err, c.want)
		}
	}
}

// TestShardsMerge: a run split into 3 shards merges to the table of the
// run in one process, byte for byte; bad parts are refused by name.
func TestShardsMerge(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("minutes under Node: the portable pass runs it natively")
	}
	env := testEnv(t)
	s := sim.DefaultSettings()
	s.Corruption.Kind = sim.Mask
	cfg := Config{Model: "bsa-p2", Settings: s, N: 5, Steps: 12, At: []Step{{T: 1}, {TStar: true}, {T: 12}}, K: 3}
	if raceOn { // the workers share the run's states: smaller, still parallel
		cfg.N, cfg.Steps, cfg.At, cfg.K = 3, 6, []Step{{T: 1}, {TStar: true}}, 2
	}
	ctx := context.Background()
	whole, err := cfg.Run(ctx, env, 0, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	WriteCSV(&want, cfg.At, cfg.K, whole)
	var parts []Part
	for i := 2; i >= 0; i-- {
		ds, err := cfg.Run(ctx, env, i, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		var tb, mb bytes.Buffer
		WriteCSV(&tb, cfg.At, cfg.K, ds)
		m := NewManifest(cfg, cfg.N, "data", "", i, 3)
		m.CSV = Checksum(tb.Bytes())
		WriteManifest(&mb, m)
		parts = append(parts, Part{Dir: "p" + string(rune('0'+i)), Manifest: mb.Bytes(), Table: tb.Bytes()})
	}
	man, c2, ds, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	WriteCSV(&got, c2.At, c2.K, ds)
	if got.String() != want.String() || man.Shards != 1 || man.Digits != cfg.N {
		t.Fatalf("merged:\n%s\none process:\n%s", got.String(), want.String())
	}
	// Read back, the whole table writes the same bytes.
	back, err := ReadCSV(want.Bytes(), "d.csv", cfg.At, cfg.K, cfg.Steps)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	WriteCSV(&again, cfg.At, cfg.K, back)
	if again.String() != want.String() {
		t.Fatalf("round trip:\n%s\n%s", again.String(), want.String())
	}
	for _, c := range []struct {
		parts func() []Part
		want  string
	}{
		{func() []Part { return parts[:2] }, "shard 0 of 3 missing"},
		{func() []Part { return append(parts[:3:3], parts[0]) }, "given twice"},
		{func() []Part {
			p := append([]Part(nil), parts...)
			p[0].Table = bytes.Replace(p[0].Table, []byte(",true,"), []byte(",false,"), 1)
			return p
		}, "checksum"},
		{func() []Part {
			p := append([]Part(nil), parts...)
			p[1].Manifest = bytes.Replace(p[1].Manifest, []byte(fmt.Sprintf(`"horizon": %d`, cfg.K)), []byte(fmt.Sprintf(`"horizon": %d`, cfg.K+1)), 1)
			return p
		}, "another run"},
	} {
		if _, _, _, err := Merge(c.parts()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	// A row out of range is refused by file, line and column.
	bad := strings.Replace(want.String(), "\n0,", "\n0,", 1)
	lines := strings.Split(bad, "\n")
	f := strings.Split(lines[1], ",")
	f[14] = "-1"
	lines[1] = strings.Join(f, ",")
	if _, err := ReadCSV([]byte(strings.Join(lines, "\n")), "d.csv", cfg.At, cfg.K, cfg.Steps); err == nil || !strings.Contains(err.Error(), "d.csv line 2: spectral_radius") {
		t.Fatalf("a negative radius: %v", err)
	}
}

// TestSummaryCorrelations: Pearson and Spearman on known data.
func TestSummaryCorrelations(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	if r := pearson(x, []float64{2, 4, 6, 8, 10}); math.Abs(r-1) > 1e-12 {
		t.Fatalf("pearson of a line: %v", r)
	}
	if r := pearson(ranks(x), ranks([]float64{1, 8, 27, 64, 125})); math.Abs(r-1) > 1e-12 {
		t.Fatalf("spearman of a monotone curve: %v", r)
	}
	rk := ranks([]float64{3, 1, 3, 2})
	if !sort.Float64sAreSorted([]float64{rk[1], rk[3], rk[0]}) || rk[0] != 3.5 || rk[2] != 3.5 {
		t.Fatalf("ranks with a tie: %v", rk)
	}
	if !math.IsNaN(pearson([]float64{1, 2}, []float64{1, 2})) {
		t.Fatal("two points give a correlation")
	}
}

// TestBlockDrifts pins docs/results.md's finding on the shipped block: it
// has no fixed point. Late in a run (digit 0 under noise) the state moves
// by the same amount every step (‖F(X) − X‖ about 21 at t = 100 and at
// t = 200, so the step relative to the state halves), and the Jacobian's
// leading eigenvalue lies just outside the unit circle, nearer 1 the
// later: about 1 + 0.5/t.
func TestBlockDrifts(t *testing.T) {
	if raceOn {
		t.Skip("numerics on one goroutine: checked without the race detector")
	}
	env := testEnv(t)
	sys, in := realSystem(t, env, "block")
	ctx := context.Background()
	st, err := sys.Trajectory(ctx, in, 200)
	if err != nil {
		t.Fatal(err)
	}
	f := sys.Stepper()
	var res, rad [2]float64
	for k, at := range []int{100, 200} {
		res[k] = dist(f.Linearise(st[at]).Next(), st[at])
		sp, err := SpectrumAt(ctx, f, st[at], at, nil)
		if err != nil {
			t.Fatal(err)
		}
		rad[k] = sp.Radius
		t.Logf("t = %d: ‖F(X) − X‖ = %.3f, ‖X‖ = %.0f, spectral radius %.5f (converged %v)", at, res[k], nrm(st[at]), sp.Radius, sp.Converged)
	}
	if res[0] < 15 || res[0] > 30 || math.Abs(res[1]/res[0]-1) > 0.05 {
		t.Errorf("‖F(X) − X‖ = %.3f at t = 100 and %.3f at 200: want the same step of about 21", res[0], res[1])
	}
	for k, at := range []float64{100, 200} {
		if want := 1 + 0.5/at; rad[k] <= 1 || math.Abs(rad[k]-want) > 0.3*(want-1) {
			t.Errorf("t = %v: spectral radius %.5f, want just above 1, about %.5f", at, rad[k], want)
		}
	}
}
