package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// BSATraining is a pseudo-likelihood training run of the bare
// self-attention (docs/maths.md §5) on the embedded training subset: what
// `attractorlab train` runs, and what the window will run live. The same
// settings give the same couplings, bit for bit, wherever they run.
type BSATraining struct {
	Patch  int     // 2 or 4
	D      int     // embedding dimension (0: 2·P²)
	Images int     // training images, balanced by class (TrainImages)
	Lambda float64 // λ of the loss (TrainLambda), kept as lambda_train
	// Attn is the attention whose energy the loss is (§5): softmax (the
	// pseudo-likelihood) or relu/seqlen; kept as train_attention, and the
	// per-epoch validation runs with it.
	Attn models.AttnKind
	Seed   uint64  // embedding, initial couplings, shuffling
	Val    int     // test digits of the per-epoch validation (ValDigits)
	Config models.TrainConfig
	// Start, when set, is trained further (a copy: Start is not changed)
	// instead of new couplings drawn from Seed.
	Start *models.BSA
}

// Dim is the embedding dimension the run uses: D, or 2·P² when D is 0.
func (s BSATraining) Dim() int {
	if s.D == 0 {
		return 2 * s.Patch * s.Patch
	}
	return s.D
}

// Check refuses settings out of range, naming the flag and the range.
func (s BSATraining) Check() error {
	if s.Patch != 2 && s.Patch != 4 {
		return fmt.Errorf("--patch = %d is out of range (allowed 2 or 4)", s.Patch)
	}
	if err := TrainLambda.Check(s.Lambda, ViaFlag); err != nil {
		return err
	}
	if err := TrainImages.CheckInt(s.Images, ViaFlag); err != nil {
		return err
	}
	if err := ValDigits.CheckInt(s.Val, ViaFlag); err != nil {
		return err
	}
	if s.Attn != models.Softmax && s.Attn != models.ReluSeqlen {
		return fmt.Errorf("--attn = %d is out of range (allowed %s)", s.Attn, strings.Join(Attentions, ", "))
	}
	return s.Config.Check()
}

// TrainBSA runs s on train (its first Images, balanced by class),
// validating each epoch on the first Val digits of test; onEpoch, when
// set, gets each epoch's statistics and a copy of the couplings as they
// are at its end. It returns the model after the last finished epoch and
// how many epochs finished. Cancelled (ctx) mid-epoch, the model is the
// last finished epoch's, never half an epoch's (nil when none finished),
// with ctx's error; diverged, it is nil with the error (models.ErrDiverged):
// its couplings are not to be used.
func TrainBSA(ctx context.Context, train, test *mnist.Set, s BSATraining, onEpoch func(models.EpochStats, *models.BSA)) (*models.BSA, int, error) {
	if err := s.Check(); err != nil {
		return nil, 0, err
	}
	var m *models.BSA
	if s.Start != nil {
		m = CloneBSA(s.Start)
	} else {
		var err error
		if m, err = models.NewBSA(s.Patch, s.Dim(), s.Seed); err != nil {
			return nil, 0, fmt.Errorf("--d: %w", err)
		}
	}
	m.LambdaTrain = float32(s.Lambda)
	m.Meta["pixel_gain"] = fmt.Sprint(mnist.PixelGain)
	images := TrainingImages(train, s.Images)
	m.Meta["train_images"] = fmt.Sprint(len(images))
	m.Meta["train_attention"] = s.Attn.String()
	cfg := s.Config
	cfg.Seed, cfg.Attn = s.Seed, s.Attn
	cfg.Validate = func(m *models.BSA) float64 { return ValidateBSA(m, test, s.Val, 1, s.Attn) }
	var last *models.BSA
	cfg.Progress = func(st models.EpochStats) {
		last = CloneBSA(m)
		if onEpoch != nil {
			onEpoch(st, CloneBSA(m))
		}
	}
	tr := models.NewTrainer(m, cfg)
	err := tr.Train(ctx, images)
	if err == nil {
		last = m
	}
	if last != nil {
		last.Meta["epochs_done"] = fmt.Sprint(tr.Epochs())
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return nil, tr.Epochs(), err
	}
	return last, tr.Epochs(), err
}

// TrainingImages is the first n images of each class of train, balanced
// (at most all of them), as pixel vectors with the gain applied: what the
// trainers learn from.
func TrainingImages(train *mnist.Set, n int) [][]float32 {
	idx := train.Balanced(min(n, train.Len()))
	images := make([][]float32, len(idx))
	for k, i := range idx {
		images[k] = train.Clean(i, mnist.PixelGain)
	}
	return images
}

// CloneBSA copies a model's couplings and metadata (the embedding, which
// training never changes, is shared).
func CloneBSA(m *models.BSA) *models.BSA {
	c := *m
	c.J = append([]float32(nil), m.J...)
	c.Meta = map[string]string{}
	for k, v := range m.Meta {
		c.Meta[k] = v
	}
	return &c
}

// DigitRun is one corrupted digit run by a bare self-attention for a
// number of steps: what the training window re-runs, with the couplings
// as they are, to show a transient memory forming.
type DigitRun struct {
	MSE     []float64 // at t = 0 … steps (all pixels, §8)
	TStar   int       // the step ≥ 1 of the lowest MSE (BestStep)
	MSEStar float64
	// Transient: the state at t* repairs the input (Improves), and the
	// error rises again after it (the last step's MSE is above MSE(t*)).
	Transient bool
	AtStar    []float32 // the decoded state at t*
	Last      []float32 // … and at the last step
	NearLabel int       // label of the stored digit nearest the state at t* (−1 without memories)
	NearCorr  float64   // its correlation
	MeanCorr  float64   // the last state's correlation with the mean training digit (NaN without memories)
}

// RunDigit runs in with m under dyn for steps steps on one goroutine;
// mem (optional) gives the nearest stored digit and the mean digit.
func RunDigit(ctx context.Context, m *models.BSA, dyn models.Dynamics, in *Corrupted, mem *Memories, steps int) (DigitRun, error) {
	r := DigitRun{MSE: make([]float64, steps+1), NearLabel: -1, MeanCorr: math.NaN(), NearCorr: math.NaN()}
	imgs := make([][]float32, steps+1)
	err := RunBSA(ctx, m, dyn, []*Corrupted{in}, steps, models.NewCrew(1), func(t, _ int, pred []float32, _ float64) {
		img := make([]float32, len(pred))
		for q, v := range pred {
			img[q] = min(max(v, 0), 1)
		}
		imgs[t] = img
		r.MSE[t], _, _ = MSE(img, in.Clean, in.Pixel)
	})
	if err != nil {
		return r, err
	}
	r.TStar, r.MSEStar = BestStep(steps+1, func(t int) float64 { return r.MSE[t] })
	r.Transient = Improves(r.MSEStar, r.MSE[0]) && r.MSE[steps] > r.MSEStar
	r.AtStar, r.Last = imgs[r.TStar], imgs[steps]
	if mem != nil {
		k, corr := mem.Search().NewTrail().Nearest(r.AtStar)
		r.NearLabel, r.NearCorr = int(mem.Set.Labels[k]), float64(corr)
		r.MeanCorr = Pearson(r.Last, mem.Mean)
	}
	return r, nil
}
