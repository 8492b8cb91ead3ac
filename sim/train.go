package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

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
	Seed uint64 // embedding, initial couplings, shuffling
	Val  int    // test digits of the per-epoch validation (ValDigits)
	// SkipVal leaves out the per-epoch validation (Val is then not
	// used): runs measured after training, as the capacity experiment.
	SkipVal bool
	// ValWorkers runs the validation on this many goroutines (≤ 0: every
	// core); the live view leaves a core to the window with 1. Neither the
	// couplings nor the validation's value depend on it.
	ValWorkers int
	Config     models.TrainConfig
	// Batched, when set, is called after each update (epoch and batch
	// from 1) on the training goroutine with the couplings being trained:
	// a live view copies them there (CloneBSA), and may hold the run
	// (Pause) by not returning.
	Batched func(epoch, batch int, live *models.BSA)
	// Start, when set, is trained further (a copy: Start is not changed)
	// instead of new couplings drawn from Seed.
	Start *models.BSA
	// Validator, when set, is the per-epoch validation instead of
	// ValidateBSA on Val digits (unless SkipVal): a run in the page's
	// worker validates part of the digits and has the rest done elsewhere
	// (TrainJob.ValHere).
	Validator func(*models.BSA) float64
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
	if err := ValDigits.CheckInt(s.Val, ViaFlag); err != nil && !s.SkipVal {
		return err
	}
	if s.Attn != models.Softmax && s.Attn != models.ReluSeqlen {
		return fmt.Errorf("--attn = %d is out of range (allowed %s)", s.Attn, strings.Join(Attentions, ", "))
	}
	if s.D != 0 && s.Start == nil {
		// A new network: its d is checked here, before any work (a
		// network to train further has its d already).
		if err := models.CheckTrainBSADim(s.Patch, s.D); err != nil {
			return errors.New("--" + err.Error())
		}
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
	switch {
	case s.SkipVal:
	case s.Validator != nil:
		cfg.Validate = s.Validator
	default:
		cfg.Validate = func(m *models.BSA) float64 { return ValidateBSA(m, test, s.Val, 1, s.Attn, s.ValWorkers) }
	}
	if s.Batched != nil {
		inner := cfg.Batched
		cfg.Batched = func(epoch, batch int) {
			if inner != nil {
				inner(epoch, batch)
			}
			s.Batched(epoch, batch, m)
		}
	}
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
// mem (optional) gives the nearest stored digit and the mean digit. It
// steps the one image as the window's engine does (BSA.Step): the batched
// path (RunBSA) computes 16 images' lanes whatever their number, which
// for one image cost 16 times the work where its lanes are not vector
// instructions (the web build's portable kernels).
func RunDigit(ctx context.Context, m *models.BSA, dyn models.Dynamics, in *Corrupted, mem *Memories, steps int) (DigitRun, error) {
	r := DigitRun{MSE: make([]float64, steps+1), NearLabel: -1, MeanCorr: math.NaN(), NearCorr: math.NaN()}
	imgs := make([][]float32, steps+1)
	st, ws := BSAState(m, in), m.NewWorkspace(1)
	pred := make([]float32, models.Pixels)
	for t := 0; t <= steps; t++ {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		m.Decode(pred, st.X)
		imgs[t] = clamped(pred)
		r.MSE[t], _, _ = MSE(pred, in.Clean, in.Pixel)
		if t < steps {
			m.Step(ws, []*models.State{st}, dyn, nil, nil)
		}
		pause()
	}
	r.TStar, r.MSEStar = BestStep(steps+1, func(t int) float64 { return r.MSE[t] })
	r.Transient = IsTransient(r.MSEStar, r.MSE[0], r.MSE[steps])
	r.AtStar, r.Last = imgs[r.TStar], imgs[steps]
	if mem != nil {
		k, corr := mem.Search().NewTrail().Nearest(r.AtStar)
		r.NearLabel, r.NearCorr = int(mem.Set.Labels[k]), float64(corr)
		r.MeanCorr = Pearson(r.Last, mem.Mean)
	}
	return r, nil
}

// TrainingView is one re-run of the watched digit on a copy of the
// couplings during training, with the couplings' picture.
type TrainingView struct {
	Epoch, Batch int // the copy's place; Batch 0: the epoch's end
	Patch        int // the model's patch side
	Side         int // its tokens per row and column
	Run          DigitRun
	Norms        []float64 // CouplingNorms
	ByDistance   []float64 // LocalityByDistance
	Displacement []float64 // Locality: (2·Side−1)² means by 2-D displacement
	Err          error     // the re-run did not finish (the training ended)
}

// Watch is what a live view of a training run asks for: a digit to re-run
// (Input under Dyn, nearest memories from Mem) every Every at most
// during an epoch and at every epoch's end, and the run's progress. The
// callbacks are called on goroutines of the run, in order each.
type Watch struct {
	Input  *Corrupted
	Dyn    models.Dynamics
	Mem    *Memories
	Steps  int           // how far the digit is re-run
	Every  time.Duration // least time between two re-runs within an epoch (TrainViewEvery)
	Paused func() bool   // polled after each update: the run holds while it is true
	// OnEpoch gets each epoch's statistics; OnBatch each update's place;
	// OnView each re-run.
	OnEpoch func(models.EpochStats)
	OnBatch func(epoch, batch int)
	OnView  func(TrainingView)
	// OnReference gets the shipped model's run of the digit, when a run
	// sent elsewhere was asked for it (TrainJob.Reference).
	OnReference func(DigitRun)
}

// View re-runs w's digit with net and reads its couplings (Epoch and
// Batch left 0): what the live view shows of one copy, and of the
// shipped model before a run.
func (w Watch) View(ctx context.Context, net *models.BSA) TrainingView {
	v := TrainingView{Patch: net.P, Side: models.Side / net.P}
	v.Run, v.Err = RunDigit(ctx, net, w.Dyn, w.Input, w.Mem, w.Steps)
	v.Norms = CouplingNorms(net)
	v.ByDistance = LocalityByDistance(v.Norms, v.Side)
	v.Displacement = Locality(v.Norms, v.Side)
	return v
}

// TrainViewEvery is the least time between two re-runs of the watched
// digit within an epoch in the Training window (each is a pass of 100
// steps on one core).
const TrainViewEvery = 150 * time.Millisecond

// viewDuty spaces the re-runs within an epoch: the next starts no sooner
// than viewDuty times the last one's duration after it started.
const viewDuty = 5

// TrainWatched is TrainBSA with a live view: the same couplings, bit for
// bit (the view works on copies), with the digit re-run beside the
// training on one goroutine. Copies offered while a re-run is under way
// are dropped, except an epoch's end, which waits for it. It returns when
// the training and the last re-run have ended.
func TrainWatched(ctx context.Context, train, test *mnist.Set, s BSATraining, w Watch) (*models.BSA, int, error) {
	type copyAt struct {
		net          *models.BSA
		epoch, batch int
	}
	views := make(chan copyAt, 1)
	var spare *models.BSA // the batches' copy, reused (the viewer is done with it when not busy)
	var busy atomic.Bool
	var last time.Time    // on the training goroutine only
	var took atomic.Int64 // the last re-run's duration (ns)
	viewCtx, viewStop := context.WithCancel(ctx)
	defer viewStop()
	viewerDone := make(chan struct{})
	go func() {
		defer close(viewerDone)
		for c := range views {
			began := time.Now()
			v := w.View(viewCtx, c.net)
			took.Store(int64(time.Since(began)))
			v.Epoch, v.Batch = c.epoch, c.batch
			if w.OnView != nil {
				w.OnView(v)
			}
			busy.Store(false)
		}
	}()
	offer := func(net func() *models.BSA, epoch, batch int, wait bool) {
		if wait {
			for busy.Load() && viewCtx.Err() == nil {
				time.Sleep(2 * time.Millisecond)
			}
		} else if busy.Load() || time.Since(last) < max(w.Every, viewDuty*time.Duration(took.Load())) {
			// At most one core's fifth goes to re-runs: re-running the
			// digit as often as it could took 42% of the window's CPU,
			// and an epoch took 1.6 times as long as headless.
			return
		}
		busy.Store(true)
		last = time.Now()
		views <- copyAt{net(), epoch, batch}
	}
	s.ValWorkers = 1
	s.Batched = func(epoch, batch int, live *models.BSA) {
		for w.Paused != nil && w.Paused() && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		if w.OnBatch != nil {
			w.OnBatch(epoch, batch)
		}
		offer(func() *models.BSA {
			if spare == nil {
				spare = CloneBSA(live)
			} else {
				copy(spare.J, live.J)
			}
			return spare
		}, epoch, batch, false)
	}
	net, epochs, err := TrainBSA(ctx, train, test, s, func(st models.EpochStats, snap *models.BSA) {
		if w.OnEpoch != nil {
			w.OnEpoch(st)
		}
		offer(func() *models.BSA { return snap }, st.Epoch, 0, true)
	})
	close(views)
	<-viewerDone
	return net, epochs, err
}

// EpochStats and BSA are the models' types as the window sees them.
type (
	EpochStats = models.EpochStats
	BSA        = models.BSA
)

// TrainingForm is the Training window's form as typed: each field is
// read and checked here, where the training's ranges live, and refused by
// the field's name with its allowed range.
type TrainingForm struct {
	Patch       int    // 2 or 4
	FromShipped bool   // train the shipped bsa-pP further instead of random couplings
	Images      string // training images
	Lambda      string // λ of the loss
	D           string // embedding dimension; empty: 2·P² (or the shipped model's)
	Attn        string // softmax or relu/seqlen
	Epochs      string
	LR          string
	Seed        string
	// HalveEvery is how many epochs the learning rate keeps before it
	// halves ("" or the recipe's 10; 0: never). A lesson on a small set
	// (one update an epoch) sets it so its updates are not frozen early.
	HalveEvery string
	// Dataset is the data set it trains on (its name; "" or "mnist":
	// the embedded MNIST sample).
	Dataset string
}

// FirstUseEpochs is the Training window's epochs on a data set without
// shipped weights (Fashion-MNIST, a folder): the learning rate halves
// every 10 epochs, so 60 come near the recipe's 200. On Fashion-MNIST
// (docs/data.md) 60 epochs took 28 s (P = 2) and 51 s (P = 4) here and
// reached MSE(t*) 0.0997 and 0.1119 under noise, against 0.0990 and
// 0.1078 after 200.
const FirstUseEpochs = 60

// DefaultTrainingForm is the form as the window opens: the recipe of §5
// with 20 epochs.
func DefaultTrainingForm() TrainingForm {
	c := models.DefaultTrainConfig()
	return TrainingForm{Patch: 2, Images: fmt.Sprint(int(TrainImages.Default)), Lambda: strconv.FormatFloat(TrainLambda.Default, 'g', -1, 64),
		Attn: models.Softmax.String(), Epochs: "20", LR: strconv.FormatFloat(c.LR, 'g', -1, 64), Seed: "0"}
}

// trainFieldNames are the form's names of the train command's flags.
var trainFieldNames = strings.NewReplacer("--patch", "model P", "--lambda", "λ", "--images", "images", "--d ", "d ",
	"--epochs", "epochs", "--lr", "lr", "--seed", "seed", "--val", "validation digits", "--attn", "attention", "--halve-every", "halve every")

// Settings reads the form into a training run; cat gives the shipped
// couplings to start from (nil: the form is only checked, and a start from
// the shipped weights is taken as possible).
func (f TrainingForm) Settings(cat *Catalogue) (BSATraining, error) {
	s := BSATraining{Patch: f.Patch, Val: int(ValDigits.Default), Config: models.DefaultTrainConfig()}
	num := func(name, text, allowed string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not a number (allowed %s)", name, text, allowed)
		}
		return v, nil
	}
	whole := func(name, text, allowed string) (int, error) {
		v, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not a whole number (allowed %s)", name, text, allowed)
		}
		return v, nil
	}
	var err error
	if s.Images, err = whole("images", f.Images, TrainImages.Allowed()); err != nil {
		return s, err
	}
	if s.Lambda, err = num("λ", f.Lambda, TrainLambda.Allowed()); err != nil {
		return s, err
	}
	const dAllowed = "a whole number ≥ 1; empty: 2·P²"
	if strings.TrimSpace(f.D) != "" {
		if s.D, err = whole("d", f.D, dAllowed); err != nil {
			return s, err
		}
		if s.D < 1 {
			return s, fmt.Errorf("d = %d is out of range (allowed %s)", s.D, dAllowed)
		}
	}
	if s.Config.Epochs, err = whole("epochs", f.Epochs, fmt.Sprintf("%d … %d", models.MinEpochs, models.MaxEpochs)); err != nil {
		return s, err
	}
	if s.Config.LR, err = num("lr", f.LR, fmt.Sprintf("%g … %g", models.MinLR, models.MaxLR)); err != nil {
		return s, err
	}
	if s.Seed, err = strconv.ParseUint(strings.TrimSpace(f.Seed), 10, 64); err != nil {
		return s, fmt.Errorf("seed: %q is not a whole number ≥ 0", f.Seed)
	}
	if h := strings.TrimSpace(f.HalveEvery); h != "" {
		if s.Config.HalveEvery, err = whole("halve every", h, fmt.Sprintf("0 … %d epochs; 0: never", models.MaxHalveEvery)); err != nil {
			return s, err
		}
	}
	if s.Attn, err = ParseAttention(f.Attn); err != nil {
		return s, err
	}
	if f.FromShipped && cat != nil && (f.Patch == 2 || f.Patch == 4) {
		net, err := cat.Shipped(f.Patch)
		if err != nil {
			return s, err
		}
		if s.D != 0 && s.D != net.D {
			return s, fmt.Errorf("d = %d: the shipped %s has d = %d (leave d empty to train it further)", s.D, bsaName(f.Patch), net.D)
		}
		s.Start, s.D = net, net.D
	}
	if err := s.Check(); err != nil {
		return s, errors.New(trainFieldNames.Replace(err.Error()))
	}
	return s, nil
}

// Command is the train command line that trains the couplings the form
// trains (its --out left to the reader).
func (f TrainingForm) Command() string {
	c := fmt.Sprintf("attractorlab train --patch %d --images %s --lambda %s --attn %s --epochs %s --lr %s --seed %s",
		f.Patch, strings.TrimSpace(f.Images), strings.TrimSpace(f.Lambda), f.Attn, strings.TrimSpace(f.Epochs), strings.TrimSpace(f.LR), strings.TrimSpace(f.Seed))
	if d := strings.TrimSpace(f.D); d != "" {
		c += " --d " + d
	}
	if h := strings.TrimSpace(f.HalveEvery); h != "" && h != fmt.Sprint(models.DefaultTrainConfig().HalveEvery) {
		c += " --halve-every " + h
	}
	if f.FromShipped {
		c += " --from shipped"
	}
	if f.Dataset != "" && f.Dataset != mnist.MNISTName {
		c += " --dataset " + f.Dataset
	}
	return c
}

// InputForPatch is InputFor for a model with patch side p.
func (sn *Snapshot) InputForPatch(p int) (*Corrupted, error) {
	pt, err := models.NewPatches(p)
	if err != nil {
		return nil, err
	}
	return sn.InputFor(pt), nil
}

// Shipped is the shipped bare self-attention of patch side p (its
// couplings, shared: not to be changed).
func (c *Catalogue) Shipped(p int) (*BSA, error) {
	m, err := c.load(bsaName(p))
	if err != nil {
		return nil, err
	}
	bm, ok := m.(*BSAModel)
	if !ok {
		return nil, fmt.Errorf("%s is not a bare self-attention", bsaName(p))
	}
	return bm.M, nil
}
