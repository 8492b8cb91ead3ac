package sim

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

func smallTraining() BSATraining {
	cfg := models.DefaultTrainConfig()
	cfg.Epochs, cfg.Batch = 3, 50
	return BSATraining{Patch: 2, Images: 100, Lambda: 5, Seed: 1, Val: 10, Config: cfg}
}

// TestTrainBSACancelKeepsLastEpoch: cancelled during the second epoch, the
// run gives the couplings the first epoch ended with, bit for bit (not
// half of the second's updates), and says it finished one epoch.
func TestTrainBSACancelKeepsLastEpoch(t *testing.T) {
	train, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var first *models.BSA
	s := smallTraining()
	// Cancelled after the second epoch's first update: that update must
	// not count.
	s.Config.Batched = func(epoch, batch int) {
		if epoch == 2 && batch == 1 {
			cancel()
		}
	}
	m, epochs, err := TrainBSA(ctx, train, test, s, func(st models.EpochStats, snap *models.BSA) {
		if st.Epoch == 1 {
			first = snap
		}
	})
	if !errors.Is(err, context.Canceled) || epochs != 1 || first == nil || m == nil {
		t.Fatalf("epochs %d, model %v, err %v", epochs, m != nil, err)
	}
	for k := range m.J {
		if math.Float32bits(m.J[k]) != math.Float32bits(first.J[k]) {
			t.Fatalf("coupling %d: %g after the cancel, %g when epoch 1 ended", k, m.J[k], first.J[k])
		}
	}
	if m.Meta["epochs_done"] != "1" {
		t.Fatalf("epochs_done %q", m.Meta["epochs_done"])
	}
}

// TestTrainBSARefuses: a setting out of range is refused by its flag's
// name and range before any work.
func TestTrainBSARefuses(t *testing.T) {
	for _, c := range []struct {
		change func(*BSATraining)
		want   string
	}{
		{func(s *BSATraining) { s.Lambda = 0 }, "--lambda"},
		{func(s *BSATraining) { s.Lambda = math.NaN() }, "--lambda"},
		{func(s *BSATraining) { s.Images = 50 }, "--images"},
		{func(s *BSATraining) { s.Patch = 3 }, "--patch"},
		{func(s *BSATraining) { s.Val = 0 }, "--val"},
		{func(s *BSATraining) { s.Config.Epochs = 0 }, "epochs"},
	} {
		s := smallTraining()
		c.change(&s)
		m, _, err := TrainBSA(context.Background(), nil, nil, s, nil)
		if err == nil || m != nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a refusal naming %s", s, err, c.want)
		}
	}
}

// TestTrainedModelInCatalogue: a model trained here joins the catalogue
// under its own name and label (after the shipped ones), the engine runs
// it like the shipped model, and RunDigit — the training window's re-run
// of the main window's digit — gives the engine's MSE curve and t*.
func TestTrainedModelInCatalogue(t *testing.T) {
	data, mem, _ := benchData(t)
	cat := NewCatalogue(data.Train, WeightFiles{})
	if _, err := cat.Model("bsa-p2-trained", DefaultSettings()); err == nil || !strings.Contains(err.Error(), "Training…") {
		t.Fatalf("before training: %v", err)
	}
	shipped, err := LoadBSA(2, "")
	if err != nil {
		t.Fatal(err)
	}
	if name := cat.SetTrained(CloneBSA(shipped)); name != "bsa-p2-trained" {
		t.Fatalf("name %q", name)
	}
	av := cat.Available()
	last := av[len(av)-1]
	if last.Name != "bsa-p2-trained" || last.Label != "BSA P=2 (trained here)" {
		t.Fatalf("last available %+v", last)
	}
	set := PaperDemo()
	set.Lanes = []string{"bsa-p2-trained"}
	e := NewEngine(EngineConfig{Data: data, Memories: mem, Catalogue: cat, Settings: set, Synchronous: true})
	e.Settle()
	sn := e.Snapshot()
	if sn.Err != "" || len(sn.Lanes) != 1 || sn.Lanes[0].Info.Name != "bsa-p2-trained" {
		t.Fatalf("engine: err %q, lanes %d", sn.Err, len(sn.Lanes))
	}
	l := sn.Lanes[0]
	run, err := RunDigit(context.Background(), shipped, set.Dyn, sn.InputFor(shipped.Patches), mem, 100)
	if err != nil {
		t.Fatal(err)
	}
	for tt := 0; tt <= 100; tt++ {
		if d := math.Abs(run.MSE[tt] - l.Frames[tt].MSE); d > 1e-6 {
			t.Fatalf("t %d: RunDigit MSE %g, engine %g", tt, run.MSE[tt], l.Frames[tt].MSE)
		}
	}
	if run.TStar != l.Best || !run.Transient {
		t.Fatalf("t* %d (engine %d), transient %v", run.TStar, l.Best, run.Transient)
	}
	if run.NearLabel != int(l.Frames[l.Best].NearLbl) {
		t.Fatalf("nearest label at t*: %d, engine %d", run.NearLabel, l.Frames[l.Best].NearLbl)
	}
}

// TestTrainWatchedSameCouplings: the live view (the Training window's
// run) trains the couplings TrainBSA trains, bit for bit, and re-runs the
// digit at every epoch's end.
// watchedTraining is the small run the live-view tests watch: the
// embedded sample's sets, the memories, the settings, their couplings
// trained plainly, and the watched digit (test digit 0 under noise).
func watchedTraining(t *testing.T) (train, test *mnist.Set, mem *Memories, s BSATraining, plain *models.BSA, in *Corrupted) {
	t.Helper()
	train, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	data, mem, _ := benchData(t)
	s = smallTraining()
	if plain, _, err = TrainBSA(context.Background(), train, test, s, nil); err != nil {
		t.Fatal(err)
	}
	return train, test, mem, s, plain, DefaultNoise.Apply(data.Test.Clean(0, mnist.PixelGain), nil, 0)
}

func TestTrainWatchedSameCouplings(t *testing.T) {
	train, test, mem, s, plain, in := watchedTraining(t)
	var ends []int
	var batches int
	w := Watch{Input: in, Dyn: DefaultDynamics(), Mem: mem, Steps: 20,
		OnBatch: func(int, int) { batches++ },
		OnView: func(v TrainingView) {
			if v.Batch == 0 {
				ends = append(ends, v.Epoch)
			}
			if v.Err != nil || len(v.Run.MSE) != 21 || len(v.Norms) != 196*196 || len(v.ByDistance) != 13 || v.Side != 14 {
				t.Errorf("view at epoch %d batch %d: err %v, %d MSEs, %d norms, %d distances", v.Epoch, v.Batch, v.Err, len(v.Run.MSE), len(v.Norms), len(v.ByDistance))
			}
		}}
	watched, epochs, err := TrainWatched(context.Background(), train, test, s, w)
	if err != nil || epochs != 3 {
		t.Fatalf("epochs %d, err %v", epochs, err)
	}
	for k := range plain.J {
		if math.Float32bits(plain.J[k]) != math.Float32bits(watched.J[k]) {
			t.Fatalf("coupling %d: %g trained plainly, %g watched", k, plain.J[k], watched.J[k])
		}
	}
	if !slices.Equal(ends, []int{1, 2, 3}) || batches != 3*2 {
		t.Fatalf("views at the epochs' ends %v, %d batches told", ends, batches)
	}
}

// TestTrainingFormRefuses: the window's fields are read here and a bad one
// is refused by its name (not the flag's) with its range.
func TestTrainingFormRefuses(t *testing.T) {
	data, _, _ := benchData(t)
	cat := NewCatalogue(data.Train, WeightFiles{})
	if _, err := DefaultTrainingForm().Settings(cat); err != nil {
		t.Fatalf("the default form: %v", err)
	}
	for _, c := range []struct {
		edit func(*TrainingForm)
		want []string
	}{
		{func(f *TrainingForm) { f.Lambda = "11" }, []string{"λ = 11", TrainLambda.Allowed()}},
		{func(f *TrainingForm) { f.Lambda = "five" }, []string{"λ", "not a number", TrainLambda.Allowed()}},
		{func(f *TrainingForm) { f.Images = "50" }, []string{"images = 50", TrainImages.Allowed()}},
		{func(f *TrainingForm) { f.Epochs = "0" }, []string{"epochs = 0", "1 … 100000"}},
		{func(f *TrainingForm) { f.LR = "2" }, []string{"lr = 2"}},
		{func(f *TrainingForm) { f.D = "0" }, []string{"d = 0", "≥ 1"}},
		{func(f *TrainingForm) { f.Seed = "-1" }, []string{"seed", "≥ 0"}},
		{func(f *TrainingForm) { f.Attn = "tanh" }, []string{"tanh", "relu/seqlen"}},
		{func(f *TrainingForm) { f.FromShipped, f.D = true, "5" }, []string{"d = 5", "shipped bsa-p2 has d = 8"}},
	} {
		f := DefaultTrainingForm()
		c.edit(&f)
		_, err := f.Settings(cat)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %v, want it to say %q", f, err, w)
			}
		}
		if err != nil && strings.Contains(err.Error(), "--") {
			t.Errorf("%+v: %v names a flag, not the field", f, err)
		}
	}
	f := DefaultTrainingForm()
	f.FromShipped = true
	s, err := f.Settings(cat)
	if err != nil || s.Start == nil || s.D != 8 {
		t.Fatalf("from the shipped weights: %v, d %d", err, s.D)
	}
}
