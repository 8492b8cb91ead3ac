package sim

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"attractorlab/sim/mnist"
)

func testEngine(t testing.TB, sync bool, onSnap func(*Snapshot)) *Engine {
	t.Helper()
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	cat := NewCatalogue(data.Train, WeightFiles{})
	return NewEngine(EngineConfig{Data: data, Memories: NewMemories(data.Train), Catalogue: cat, Horizon: 30, MaxT: 60,
		Settings: DefaultSettings(), Synchronous: sync, OnSnap: onSnap})
}

func TestEngineSynchronous(t *testing.T) {
	e := testEngine(t, true, nil)
	e.Settle()
	sn := e.Snapshot()
	if len(sn.Lanes) != 1 || sn.Lanes[0].Info.Name != "bsa-p2" {
		t.Fatalf("lanes %+v", sn.Lanes)
	}
	l := sn.Lanes[0]
	if len(l.Frames) != 31 {
		t.Fatalf("recorded %d frames, want the horizon 0..30", len(l.Frames))
	}
	// The frames agree with a direct run of the same corrupted input
	// (RunBSA steps a chunk of images together, the engine one image: the
	// same sums in another order).
	m := e.s.lanes[0].model.(*BSAModel).M
	in := e.s.lanes[0].in
	RunBSA(context.Background(), m, DefaultDynamics(), []*Corrupted{in}, 30, nil, func(tt, _ int, pred []float32, energy float64) {
		f := l.Frames[tt]
		for q := range pred {
			if math.Abs(float64(pred[q]-f.Image[q])) > 1e-5 {
				t.Fatalf("t=%d: engine frame differs from RunBSA at pixel %d: %g vs %g", tt, q, f.Image[q], pred[q])
			}
		}
		if math.Abs(energy-f.Energy) > 1e-6*math.Abs(energy) {
			t.Fatalf("t=%d: energy %g, RunBSA %g", tt, f.Energy, energy)
		}
	})
	e.Seek(1)
	if l.Attn != nil || len(e.Snapshot().Lanes[0].Attn) != 196*196 {
		t.Fatal("attention: nil at t=0, N×N after")
	}
	// Attention rows sum to 1 (softmax).
	var s float64
	e.Seek(3)
	for _, a := range e.Snapshot().Lanes[0].Attn[5*196 : 6*196] {
		s += float64(a)
	}
	if math.Abs(s-1) > 1e-4 {
		t.Fatalf("attention row sums to %g", s)
	}
	e.SeekBest()
	if got := e.Snapshot().T; got != l.Best || l.Best < 1 {
		t.Fatalf("SeekBest went to %d, t* = %d", got, l.Best)
	}
	e.Step()
	e.Step()
	e.Back()
	if got := e.Snapshot().T; got != l.Best+1 {
		t.Fatalf("after step, step, back: t = %d, want %d", got, l.Best+1)
	}
	e.Seek(1000)
	if got := e.Snapshot().T; got != 60 {
		t.Fatalf("seek past the end: t = %d, want MaxT 60", got)
	}
	e.Reset()
	if e.Snapshot().T != 0 {
		t.Fatal("reset did not go to t = 0")
	}
	// Toggling a patch changes the mask, and toggling it back restores it.
	before := e.Snapshot().PixelMask
	e.TogglePatch(0)
	after := e.Snapshot().PixelMask
	if before[0] == after[0] {
		t.Fatal("toggling patch 0 did not change pixel 0")
	}
	e.TogglePatch(0)
	if e.Snapshot().PixelMask[0] != before[0] {
		t.Fatal("toggling twice did not restore")
	}
	// Compare: P=2 and P=4 in lockstep share the mask, drawn on the 4×4 grid.
	e.Update(func(s *Settings) { s.Lanes = []string{"bsa-p2", "bsa-p4"} })
	sn = e.Snapshot()
	if len(sn.Lanes) != 2 || sn.MaskGrid != 4 {
		t.Fatalf("compare: %d lanes, grid %d", len(sn.Lanes), sn.MaskGrid)
	}
	n := 0
	for _, m := range sn.PixelMask {
		if m {
			n++
		}
	}
	if n != 14*16 { // ⌊0.3·49⌋ patches of 16 pixels
		t.Fatalf("%d masked pixels, want %d", n, 14*16)
	}
	// Invalid changes are refused with a reason naming the setting and the
	// session stays as it was: nothing is clamped or replaced.
	before = e.Snapshot().PixelMask
	prev := e.Snapshot().Settings
	for _, c := range []struct {
		name string
		f    func(*Settings)
		want string
	}{
		{"index", func(s *Settings) { s.Index = 5000 }, "digit 5000 is out of range"},
		{"negative index", func(s *Settings) { s.Index = -1 }, "negative"},
		{"mask fraction", func(s *Settings) { s.Corruption.Fraction = 2 }, "mask fraction = 2 is out of range (allowed 0 … 0.9)"},
		{"σ²", func(s *Settings) { s.Corruption.Sigma2 = -1 }, "noise variance σ² = -1 is out of range"},
		{"λ NaN", func(s *Settings) { s.Dyn.Lambda = float32(math.NaN()) }, "λ = NaN is out of range"},
		{"β", func(s *Settings) { s.Hop.Beta = -1 }, "β = -1 is out of range"},
		{"K", func(s *Settings) { s.Hop.K = 100000 }, "K (stored digits) = 100000 is out of range (allowed 1 … 1000)"},
		{"model", func(s *Settings) { s.Lanes = []string{"gpt"} }, `model "gpt" is not one of`},
		{"five lanes", func(s *Settings) { s.Lanes = []string{"bsa-p2", "bsa-p4", "block", "vit", "hopfield"} }, "5 models chosen"},
	} {
		e.Update(c.f)
		sn := e.Snapshot()
		if !strings.Contains(sn.Err, c.want) {
			t.Errorf("%s: err %q, want it to contain %q", c.name, sn.Err, c.want)
		}
		if !reflect.DeepEqual(sn.Settings, prev) || !slices.Equal(sn.PixelMask, before) {
			t.Errorf("%s: the refused change altered the session: %+v", c.name, sn.Settings)
		}
	}
	// Hand-masking every patch is refused once two would be left.
	for i := 0; i < 49; i++ {
		if !e.Snapshot().PixelMask[(i/7)*4*28+(i%7)*4] {
			e.TogglePatch(i)
		}
	}
	n = 0
	for _, m := range e.Snapshot().PixelMask {
		if !m {
			n++
		}
	}
	if n < MinVisible*16 || !strings.Contains(e.Snapshot().Err, "must stay unmasked") {
		t.Fatalf("%d unmasked pixels after masking every patch by hand (err %q)", n, e.Snapshot().Err)
	}
	// Dropping lanes drops their frames (the slice is not reused).
	e.Update(func(s *Settings) { s.Lanes = []string{"bsa-p2", "bsa-p4", "block", "vit"}; s.Toggled = nil })
	e.Update(func(s *Settings) { s.Lanes = []string{"bsa-p2"} })
	if len(e.s.lanes) != 1 || cap(e.s.lanes) != 1 {
		t.Fatalf("after 4 → 1 lanes: len %d cap %d (dropped lanes still reachable)", len(e.s.lanes), cap(e.s.lanes))
	}
}

// TestEngineConcurrent drives the goroutine engine with commands
// interleaved with playback, then cancels it while playing (run with -race).
func TestEngineConcurrent(t *testing.T) {
	var mu sync.Mutex
	var snaps []*Snapshot
	start := time.Now()
	e := testEngine(t, false, func(s *Snapshot) {
		mu.Lock()
		snaps = append(snaps, s)
		mu.Unlock()
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	e.SetSpeed(240)
	e.Play()
	for k := 0; k < 20; k++ {
		switch k % 5 {
		case 0:
			e.Step()
			e.Play()
		case 1:
			e.Update(func(s *Settings) { s.Index = k })
		case 2:
			e.TogglePatch(k)
		case 3:
			e.Back()
			e.Play()
		case 4:
			e.Update(func(s *Settings) { s.Corruption = DefaultNoise })
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("engine did not stop after cancel while playing")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(snaps) < 2 {
		t.Fatalf("%d snapshots published", len(snaps))
	}
	// Snapshots are immutable: reading all of them races with nothing.
	for k, s := range snaps {
		if k > 0 && s.Seq <= snaps[k-1].Seq {
			t.Fatal("snapshot sequence not increasing")
		}
		for _, l := range s.Lanes {
			_ = l.At(s.T).Image[0]
		}
	}
	// Throttled to MaxFPS: the count is bounded by the elapsed time.
	if limit := int(time.Since(start).Seconds()*MaxFPS) + 2; len(snaps) > limit {
		t.Fatalf("%d snapshots in %v: more than %d a second", len(snaps), time.Since(start), MaxFPS)
	}
}

// TestAnswer: the readout names t* only when a step beats the input, and
// says so when nothing needs repairing.
func TestAnswer(t *testing.T) {
	lane := func(mse ...float64) Lane {
		l := Lane{}
		for k, v := range mse {
			l.Frames = append(l.Frames, &Frame{T: k, Measures: Measures{MSE: v}})
		}
		l.Best, l.BestMSE = best(l.Frames)
		return l
	}
	for _, c := range []struct {
		name   string
		l      Lane
		repair bool
		want   string
	}{
		{"dip", lane(0.11, 0.09, 0.06, 0.08), false, "t* = 2 (MSE 0.0600; input 0.1100)"},
		{"worse", lane(0.0408, 0.0469, 0.05), false, "no step improves on the input (MSE 0.0408); best step 1 (MSE 0.0469)"},
		{"clean", lane(0, 0, 0.01), true, "nothing to repair"},
		{"gamma 0", lane(0.10959522828130032, 0.10959522736199886, 0.10959522736199886), false, "no step improves on the input (MSE 0.1096); best step 1"},
	} {
		if got := c.l.Answer(c.repair); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	s := PaperDemo()
	if s.NothingToRepair() || s.Corruption.Kind != Noise || s.Corruption.Sigma2 != 0.7 || s.Validate(ViaName) != nil {
		t.Fatalf("paper demo %+v", s)
	}
	s.Corruption.Sigma2 = 0
	m := DefaultSettings()
	m.Corruption.Fraction = 0
	if !s.NothingToRepair() || !m.NothingToRepair() {
		t.Fatal("σ² 0 and 0% masked leave nothing to repair")
	}
}

// TestPaperDemoShowsTransient: the first window's settings show a dip: t*
// in the middle of the horizon, well below the input, and a later rise.
func TestPaperDemoShowsTransient(t *testing.T) {
	e := testEngine(t, true, nil)
	e.Restore(PaperDemo(), 0)
	e.Settle()
	e.ShowBest()
	sn := e.Snapshot()
	if sn.T != sn.Lanes[0].Best {
		t.Fatalf("shown t = %d, t* = %d", sn.T, sn.Lanes[0].Best)
	}
	e.Seek(60) // the test engine's last step
	l := e.Snapshot().Lanes[0]
	if l.Best < 5 || l.BestMSE > 0.7*l.Frames[0].MSE || l.Frames[60].MSE < 1.3*l.BestMSE {
		t.Fatalf("t = %d, t* = %d, MSE input %.4f, t* %.4f, last %.4f", sn.T, l.Best, l.Frames[0].MSE, l.BestMSE, l.Frames[len(l.Frames)-1].MSE)
	}
}

// TestCue: a lesson's cue sets the scenario, shows from, and plays to the
// target, stopping there; t* marks wait for the horizon.
func TestCue(t *testing.T) {
	e := testEngine(t, true, nil)
	set := PaperDemo()
	set.Index = 3
	e.Cue(&set, Mark{T: 2}, Mark{T: 9}, 20)
	sn := e.Snapshot()
	if sn.Settings.Index != 3 || sn.T != 9 || sn.Playing {
		t.Fatalf("after cue 2→9: index %d, t %d, playing %v", sn.Settings.Index, sn.T, sn.Playing)
	}
	e.Cue(nil, Mark{Best: true}, Mark{Best: true}, 0)
	if sn = e.Snapshot(); sn.T != sn.Lanes[0].Best || sn.T < 1 {
		t.Fatalf("cue to t*: t %d, t* %d", sn.T, sn.Lanes[0].Best)
	}
	// A refused scenario changes nothing, not even t.
	bad := set
	bad.Index = 1 << 30
	before := sn.T
	e.Cue(&bad, Mark{T: 0}, Mark{T: 0}, 0)
	if sn = e.Snapshot(); sn.Err == "" || sn.Settings.Index != 3 || sn.T != before {
		t.Fatalf("refused cue: err %q, index %d, t %d (was %d)", sn.Err, sn.Settings.Index, sn.T, before)
	}
}

// TestCuePlays: in the running engine a cue plays at its speed and stops at
// its target; a command given meanwhile cancels it.
func TestCuePlays(t *testing.T) {
	var mu sync.Mutex
	var last *Snapshot
	e := testEngine(t, false, func(s *Snapshot) { mu.Lock(); last = s; mu.Unlock() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.Run(ctx)
	wait := func(ok func(*Snapshot) bool, what string) *Snapshot {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			mu.Lock()
			s := last
			mu.Unlock()
			if s != nil && ok(s) {
				return s
			}
		}
		t.Fatal("timed out waiting for " + what)
		return nil
	}
	set := PaperDemo()
	e.Cue(&set, Mark{T: 0}, Mark{Best: true}, 120)
	sn := wait(func(s *Snapshot) bool { return !s.Playing && s.T > 0 && len(s.Lanes[0].Frames) > 30 }, "the cue to stop")
	if sn.T != sn.Lanes[0].Best {
		t.Fatalf("cue 0→t* stopped at %d, t* = %d", sn.T, sn.Lanes[0].Best)
	}
	e.Cue(nil, Mark{T: 0}, Mark{T: 60}, 2)
	wait(func(s *Snapshot) bool { return s.Playing }, "playing")
	e.Reset()
	sn = wait(func(s *Snapshot) bool { return !s.Playing }, "reset to stop the cue")
	if sn.T != 0 {
		t.Fatalf("reset during a cue: t = %d", sn.T)
	}
}

// TestCueTicket: snapshots say which cue they show and whether it is done.
func TestCueTicket(t *testing.T) {
	e := testEngine(t, true, nil)
	set := PaperDemo()
	a := e.Cue(&set, Mark{T: 0}, Mark{T: 5}, 30)
	b := e.Cue(nil, Mark{T: 5}, Mark{T: 5}, 0)
	if sn := e.Snapshot(); b <= a || sn.Cue != b || !sn.CueDone {
		t.Fatalf("tickets %d then %d; snapshot shows cue %d, done %v", a, b, sn.Cue, sn.CueDone)
	}
}

// TestEngineHold: a held engine records no horizon in the background (it
// still answers commands: a step is taken), and records it once the hold
// is let go.
func TestEngineHold(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var last *Snapshot
	hold := make(chan struct{})
	e := NewEngine(EngineConfig{Data: data, Memories: NewMemories(data.Train), Catalogue: NewCatalogue(data.Train, WeightFiles{}),
		Horizon: 30, MaxT: 60, Settings: DefaultSettings(), Hold: hold,
		OnSnap: func(sn *Snapshot) { mu.Lock(); last = sn; mu.Unlock() }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.Run(ctx)
	frames := func() (int, int, int) {
		mu.Lock()
		defer mu.Unlock()
		if last == nil {
			return -1, -1, -1
		}
		return len(last.Lanes[0].Frames), last.T, last.Unrecorded
	}
	e.Step()
	time.Sleep(300 * time.Millisecond) // the horizon's 30 steps take a few ms
	if n, tt, un := frames(); n != 2 || tt != 1 || un != 29 {
		t.Fatalf("held: %d frames recorded, t = %d, %d of the look-ahead unrecorded; want the step only (2 frames, t = 1, 29)", n, tt, un)
	}
	close(hold)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if n, _, un := frames(); n == 31 && un == 0 {
			break
		}
		if time.Now().After(deadline) {
			n, _, un := frames()
			t.Fatalf("let go: %d frames recorded after a minute (%d unrecorded), want the horizon (31: t = 0 … 30)", n, un)
		}
	}
}
