package sim

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"attractorlab/models"
)

// freshRun is what the engine's pushed run must equal, made here without
// the engine's branch code: a run of model m started from picture img with
// the patches erase of the mask grid (side grid) set to 0 (their pixels
// masked, and the model's tokens all of whose pixels are erased masked).
func freshRun(m Model, clean, img []float32, erase []int, grid int) Trajectory {
	g, _ := models.NewPatches(grid)
	in := &Corrupted{Clean: clean, Input: slices.Clone(img)}
	if len(erase) > 0 {
		in.Pixel = make([]bool, models.Pixels)
		for _, i := range erase {
			for a := 0; a < g.A; a++ {
				q := g.Index[i*g.A+a]
				in.Input[q], in.Pixel[q] = 0, true
			}
		}
		if p := m.Info().Patch; p > 0 {
			pt, _ := models.NewPatches(p)
			in.Masked = make([]bool, pt.N)
			any := false
			for i := range in.Masked {
				all := true
				for a := 0; a < pt.A; a++ {
					all = all && in.Pixel[pt.Index[i*pt.A+a]]
				}
				in.Masked[i], any = all, any || all
			}
			if !any {
				in.Masked = nil
			}
		}
	}
	return m.Start(in)
}

// decoded is a trajectory's picture as a frame shows it (clamped).
func decoded(tr Trajectory) []float32 {
	img := make([]float32, models.Pixels)
	tr.Decode(img)
	return clamped(img)
}

// TestPushBranchIsFreshRun: the pushed run equals, bit for bit, a fresh
// run of the same model started from the edited state — at the first
// push from the run's own state, at a second push (a kick) from the
// pushed run's — and the run without the pushes stays as it was.
func TestPushBranchIsFreshRun(t *testing.T) {
	for _, c := range []struct {
		lanes []string
		erase []int // central patches of the lanes' mask grid
	}{{[]string{"bsa-p2", "bsa-p4", "block", "vit"}, []int{17, 24, 25}}, {[]string{"hopfield", "hopfield-classic"}, []int{91, 92, 105, 106}}} {
		lanes, erase := c.lanes, c.erase
		e := testEngine(t, true, nil)
		e.Restore(func() Settings {
			s := DefaultSettings()
			s.Index, s.Corruption, s.Lanes = 7, DefaultNoise, lanes
			return s
		}(), 0)
		e.Settle()
		before := e.Snapshot()
		if before.Err != "" {
			t.Fatal(before.Err)
		}
		e.AddPush(Push{T: 4, Kind: Erase, Patches: erase})
		e.AddPush(Push{T: 12, Kind: Kick, Sigma2: 0.5})
		e.Settle()
		sn := e.Snapshot()
		if sn.Err != "" {
			t.Fatal(sn.Err)
		}
		kick := sn.Settings.Pushes[1]
		for k, l := range sn.Lanes {
			name := l.Info.Name
			// The run without pushes is untouched: the same frames.
			if len(l.Frames) != len(before.Lanes[k].Frames) || l.Frames[len(l.Frames)-1] != before.Lanes[k].Frames[len(l.Frames)-1] {
				t.Fatalf("%s: the run without the pushes was made again", name)
			}
			if len(l.Branch) == 0 || l.Branch[0].T != 4 {
				t.Fatalf("%s: the pushed run starts at %v, want t = 4", name, l.Branch)
			}
			m, err := e.s.cfg.Catalogue.Model(name, sn.Settings)
			if err != nil {
				t.Fatal(err)
			}
			tr := freshRun(m, sn.Clean, l.At(4).Image, erase, sn.MaskGrid)
			steps := 0
			for _, f := range l.Branch {
				if f.T == 12 {
					// The kick: the fresh run's state at 12, then noise
					// of σ² 0.5 from the push's own stream.
					if m.Info().MaxSteps == 0 || steps < m.Info().MaxSteps {
						tr.Step(nil)
					}
					img := decoded(tr)
					rng := rand.New(rand.NewPCG(kick.Seed, 12))
					for q := range img {
						img[q] = float32(float64(img[q]) + math.Sqrt(0.5)*rng.NormFloat64())
					}
					tr, steps = freshRun(m, sn.Clean, img, nil, sn.MaskGrid), 0
				} else if f.T > 4 {
					if m.Info().MaxSteps == 0 || steps < m.Info().MaxSteps {
						tr.Step(nil)
						steps++
					}
				}
				want := decoded(tr)
				if !slices.Equal(f.Image, want) {
					t.Fatalf("%s: the pushed run at t = %d differs from the fresh run started from the edited state", name, f.T)
				}
				if m.Info().HasEnergy {
					if en := tr.Energy(); en != f.Energy {
						t.Fatalf("%s: energy at t = %d is %g, the fresh run's %g", name, f.T, f.Energy, en)
					}
				}
				mse, _, _ := MSE(want, sn.Clean, sn.PixelMask)
				if mse != f.MSE {
					t.Fatalf("%s: MSE at t = %d is %g, want %g", name, f.T, f.MSE, mse)
				}
			}
			if last := l.Branch[len(l.Branch)-1].T; last < 12 {
				t.Fatalf("%s: the pushed run stops at t = %d, before the kick", name, last)
			}
			// The erase took: the erased pixels are 0 at t = 4.
			if f := l.BranchAt(4); f.MSE == l.At(4).MSE {
				t.Fatalf("%s: the erase changed nothing", name)
			}
		}
	}
}

// TestPushUndo: Undo takes back the push made last, whatever its step;
// Clear takes back all; a new digit drops them; the runs without pushes
// are never made again.
func TestPushUndo(t *testing.T) {
	e := testEngine(t, true, nil)
	e.Settle()
	run := e.Snapshot().Lanes[0].Frames[5]
	e.AddPush(Push{T: 20, Kind: Kick, Sigma2: 0.3})
	e.AddPush(Push{T: 10, Kind: Spray, Patches: []int{40, 41}, Sigma2: 1})
	sn := e.Snapshot()
	if got := pushSteps(sn); got != "10 20" {
		t.Fatalf("pushes at %s, want in step order 10 20", got)
	}
	if sn.Lanes[0].Frames[5] != run {
		t.Fatal("a push made the run without it again")
	}
	e.UndoPush()
	if got := pushSteps(e.Snapshot()); got != "20" {
		t.Fatalf("after undo the pushes are at %q, want the one at 20 (the one at 10 came last)", got)
	}
	e.AddPush(Push{T: 5, Kind: Erase, Patches: []int{1}})
	e.ClearPushes()
	sn = e.Snapshot()
	if len(sn.Settings.Pushes) != 0 || sn.Lanes[0].Branch != nil {
		t.Fatalf("after clear: %d pushes, pushed run %v", len(sn.Settings.Pushes), sn.Lanes[0].Branch != nil)
	}
	e.AddPush(Push{T: 5, Kind: Erase, Patches: []int{1}})
	e.Update(func(s *Settings) { s.Index = 3 })
	if sn := e.Snapshot(); len(sn.Settings.Pushes) != 0 || sn.Lanes[0].Branch != nil {
		t.Fatal("another digit kept the pushes of the one before")
	}
	// Refused pushes leave the session as it was and say why.
	for _, c := range []struct {
		p    Push
		want string
	}{
		{Push{T: 5, Kind: Erase}, "names no patch"},
		{Push{T: 5, Kind: Erase, Patches: []int{400}}, "patch 400 is out of range"},
		{Push{T: 5, Kind: Kick, Sigma2: 9}, "push noise variance σ² = 9 is out of range"},
		{Push{T: 5, Kind: Kick, Sigma2: math.NaN()}, "push noise variance σ² = NaN is out of range"},
		{Push{T: 61, Kind: Kick, Sigma2: 1}, "t = 61 is out of range (allowed 0 … 60)"},
		{Push{T: 5, Kind: Kick, Sigma2: 1, Patches: []int{2}}, "names no patches"},
		{Push{T: 5, Kind: 7, Sigma2: 1}, "kind 7 is not one of erase, noise, kick"},
	} {
		e.AddPush(c.p)
		sn := e.Snapshot()
		if !strings.Contains(sn.Err, c.want) || len(sn.Settings.Pushes) != 0 {
			t.Errorf("push %+v: error %q, %d pushes; want %q and none", c.p, sn.Err, len(sn.Settings.Pushes), c.want)
		}
	}
}

func pushSteps(sn *Snapshot) string {
	var s []string
	for _, p := range sn.Settings.Pushes {
		s = append(s, strconv.Itoa(p.T))
	}
	return strings.Join(s, " ")
}

// TestPushScenarioRoundTrip: a scenario with a drawn digit and pushes,
// written and read back, replays the pushed run exactly.
func TestPushScenarioRoundTrip(t *testing.T) {
	e := testEngine(t, true, nil)
	own := make([]uint8, models.Pixels)
	for r := 4; r < 24; r++ {
		own[r*28+13], own[r*28+14] = 255, 200
	}
	e.Restore(func() Settings {
		s := DefaultSettings()
		s.Own, s.Corruption = own, DefaultNoise
		return s
	}(), 0)
	e.AddPush(Push{T: 8, Kind: Spray, Patches: []int{50, 51, 52}, Sigma2: 0.8})
	e.AddPush(Push{T: 15, Kind: Erase, Patches: []int{100, 101}})
	e.AddPush(Push{T: 15, Kind: Kick, Sigma2: 0.2})
	e.Seek(25)
	e.Settle()
	sn := e.Snapshot()
	var buf bytes.Buffer
	if err := WriteScenario(&buf, sn); err != nil {
		t.Fatal(err)
	}
	set, tt, err := e.s.cfg.Catalogue.ReadScenario(bytes.NewReader(buf.Bytes()), "pushed.json")
	if err != nil {
		t.Fatal(err)
	}
	f := testEngine(t, true, nil)
	f.Restore(set, tt)
	f.Settle()
	back := f.Snapshot()
	if back.T != 25 || len(back.Settings.Pushes) != 3 || !bytes.Equal(back.Settings.Own, own) {
		t.Fatalf("read back t = %d, %d pushes, own digit kept %v", back.T, len(back.Settings.Pushes), bytes.Equal(back.Settings.Own, own))
	}
	var csvOut bytes.Buffer
	if err := WriteTrajectoryCSV(&csvOut, sn); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(csvOut.String(), "\nbsa-p2 pushed,"); n != len(sn.Lanes[0].Branch) || n == 0 {
		t.Fatalf("the CSV has %d rows of the pushed run, want %d", n, len(sn.Lanes[0].Branch))
	}
	a, b := sn.Lanes[0].Branch, back.Lanes[0].Branch
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("pushed runs of %d and %d steps", len(a), len(b))
	}
	for k := range a {
		if !slices.Equal(a[k].Image, b[k].Image) || a[k].Energy != b[k].Energy {
			t.Fatalf("the replayed pushed run differs at t = %d", a[k].T)
		}
	}
}

// TestPushScenarioRefused: a scenario file's bad push is refused by field
// and push, with the allowed values.
func TestPushScenarioRefused(t *testing.T) {
	e := testEngine(t, true, nil)
	var buf bytes.Buffer
	if err := WriteScenario(&buf, e.Snapshot()); err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(strings.TrimSpace(buf.String()), "}")
	for _, c := range []struct{ pushes, want string }{
		{`[{"t": 5, "kind": "shove", "seed": 1}]`, `field pushes: push 1: push kind "shove" is not one of erase, noise, kick`},
		{`[{"t": 9, "kind": "kick", "sigma2": 1, "seed": 1}, {"t": 5, "kind": "kick", "sigma2": 1, "seed": 2}]`, "field pushes: push 2: t = 5 comes before"},
		{`[{"t": 5, "kind": "erase", "patches": [196], "seed": 1}]`, "field pushes: push 1: patch 196 is out of range (allowed 0 … 195"},
		{`[{"t": 5, "kind": "noise", "patches": [1], "seed": 1}]`, "field pushes: push 1: push noise variance σ² = 0 is out of range (allowed 0.01 … 4)"},
		{`[{"t": 1001, "kind": "kick", "sigma2": 1, "seed": 1}]`, "field pushes: push 1: t = 1001 is out of range (allowed 0 … 1000)"},
		{`[{"t": 5, "kind": "kick", "sigma2": 1, "seed": 1, "force": 2}]`, `unknown field "force"`},
	} {
		doc := base + `, "pushes": ` + c.pushes + "}"
		_, _, err := e.s.cfg.Catalogue.ReadScenario(strings.NewReader(doc), "bad.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "bad.json: ") {
			t.Errorf("%s: error %v, want %q", c.pushes, err, c.want)
		}
	}
}

// An erase must leave at least MinVisible patches (as a hand-made mask
// must); an erase in a scenario file takes no sigma2 (it was ignored).
func TestEraseLeavesTokensAndTakesNoNoise(t *testing.T) {
	all := make([]int, 196)
	for k := range all {
		all[k] = k
	}
	err := checkPushes([]Push{{T: 3, Kind: Erase, Patches: all}}, 2, 100, ViaName)
	if err == nil || !strings.Contains(err.Error(), "push 1: erases 196 of the 196 patches: at least 2 must stay visible (allowed 1 … 194 patches)") {
		t.Errorf("erasing every patch: %v", err)
	}
	if err := checkPushes([]Push{{T: 3, Kind: Erase, Patches: all[:194]}}, 2, 100, ViaName); err != nil {
		t.Errorf("erasing 194 of 196: %v", err)
	}
	// A spray may cover them all: noise leaves every token there.
	if err := checkPushes([]Push{{T: 3, Kind: Spray, Patches: all, Sigma2: 0.5}}, 2, 100, ViaName); err != nil {
		t.Errorf("noise on every patch: %v", err)
	}
	var b bytes.Buffer
	st := DefaultSettings()
	st.Pushes = []Push{{T: 2, Kind: Erase, Patches: []int{4}}}
	if err := WriteScenario(&b, &Snapshot{Settings: st, T: 2}); err != nil {
		t.Fatal(err)
	}
	js := strings.Replace(b.String(), `"kind": "erase",`, `"kind": "erase", "sigma2": 0.7,`, 1)
	if _, _, err := ReadScenario(strings.NewReader(js), "push.json"); err == nil || !strings.Contains(err.Error(), `push.json: field pushes: push 1: an erase sets its patches to 0 and takes no sigma2 (given 0.7)`) {
		t.Errorf("an erase with sigma2: %v", err)
	}
}
