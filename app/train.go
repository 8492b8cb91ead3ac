package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"attractorlab/models"
	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// attractorlab train: the bare self-attention by pseudo-likelihood, the
// block and the ViT by backpropagation.

// trainModel finds --model in args (default bsa) without parsing the rest.
func trainModel(args []string) string {
	for k, a := range args {
		a = strings.TrimLeft(a, "-")
		if v, ok := strings.CutPrefix(a, "model="); ok {
			return v
		}
		if a == "model" && k+1 < len(args) {
			return args[k+1]
		}
	}
	return "bsa"
}

// trainChecks runs the checks every train command makes before any work:
// no stray arguments, the --out file (writable, new unless --force), the
// trainer's settings and the number of validation digits.
func trainChecks(fs *flag.FlagSet, out string, force bool, check func() error, val, images int) (*outputs, error) {
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("train: unexpected argument %q", fs.Arg(0))
	}
	if out == "" {
		return nil, fmt.Errorf("train: --out FILE is required")
	}
	if err := check(); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	if err := sim.ValDigits.CheckInt(val, sim.ViaFlag); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	if err := sim.TrainImages.CheckInt(images, sim.ViaFlag); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	o, err := planOutputs("--out", force, out)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	return o, nil
}

// trainingData is the training subset and the test set (its first digits
// validate) of a data set: MNIST's embedded sample, or Fashion-MNIST's
// from its cache.
func trainingData(dataset string) (train, test *mnist.Set, err error) {
	switch dataset {
	case mnist.MNISTName:
		return mnist.Sample()
	case mnist.FashionName:
		d, err := mnist.LoadFashionData("")
		if err != nil {
			return nil, nil, err
		}
		return d.Train, d.Test, nil
	}
	if strings.HasPrefix(dataset, mnist.FolderPrefix) {
		d, err := loadData("", dataset)
		if err != nil {
			return nil, nil, err
		}
		return d.Train, d.Test, nil
	}
	return nil, nil, unknownDataset(dataset)
}

func runTrain(ctx context.Context, args []string) error {
	switch m := trainModel(args); m {
	case "bsa":
	case "block", "vit":
		return runTrainTransformer(ctx, m, args)
	default:
		return fmt.Errorf("train: unknown model %q (bsa, block or vit)", m)
	}
	fs := newFlags("train", "train [--model bsa] --patch 2|4 --out FILE [flags]\n       attractorlab train --model block|vit --task mask|noise --out FILE [flags]")
	fs.String("model", "bsa", "model: bsa, block or vit")
	patch := fs.Int("patch", 2, "patch side P (2 or 4)")
	d := fs.Int("d", 0, "embedding dimension (default 8 for P=2, 32 for P=4)")
	cfg := models.DefaultTrainConfig()
	fs.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "epochs")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "batch size")
	fs.Float64Var(&cfg.LR, "lr", cfg.LR, "AdamW learning rate")
	fs.IntVar(&cfg.HalveEvery, "halve-every", cfg.HalveEvery, "halve the learning rate every this many epochs (0: never)")
	seed := fs.Uint64("seed", 0, "seed for the embedding, the initial couplings and the shuffling")
	fs.BoolVar(&cfg.AllRows, "all-rows", false, "update every query row each batch (default: one random row per batch, the recipe of docs/maths.md §5)")
	val := fs.Int("val", int(sim.ValDigits.Default), "embedded test digits used for the validation masked-MSE: "+sim.ValDigits.Allowed())
	nImages := fs.Int("images", int(sim.TrainImages.Default), "embedded training images, balanced by class: "+sim.TrainImages.Allowed())
	lambda := fs.Float64("lambda", sim.TrainLambda.Default, "λ of the pseudo-likelihood loss (saved as lambda_train): "+sim.TrainLambda.Allowed())
	attn := fs.String("attn", "softmax", "attention whose energy is the loss (docs/maths.md §5): "+strings.Join(sim.Attentions, " or "))
	from := fs.String("from", "", "start from these couplings instead of random ones: shipped (the embedded bsa-pP) or a bare self-attention safetensors file")
	out := fs.String("out", "", "output safetensors file")
	force := fs.Bool("force", false, "overwrite --out if it exists")
	dataset := datasetFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	kind, err := sim.ParseAttention(*attn)
	if err != nil {
		return fmt.Errorf("train: --attn: %w", err)
	}
	o, err := trainChecks(fs, *out, *force, cfg.Check, *val, *nImages)
	if err != nil {
		return err
	}
	defer o.Abort()
	run := sim.BSATraining{Patch: *patch, D: *d, Images: *nImages, Lambda: *lambda, Attn: kind, Seed: *seed, Val: *val, Config: cfg}
	if err := run.Check(); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if *from != "" {
		path := *from
		if path == "shipped" {
			path = ""
		}
		start, err := sim.LoadBSA(*patch, path)
		if err != nil {
			return fmt.Errorf("train: --from: %w", err)
		}
		if *d != 0 && *d != start.D {
			return fmt.Errorf("train: --d = %d: the --from couplings have d = %d (leave --d out to train them further)", *d, start.D)
		}
		run.Start, run.D = start, start.D
	}
	train, test, err := trainingData(*dataset)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	fmt.Printf("training BSA P=%d d=%d on %d %s images, λ %g, %s, %d epochs, batch %d\n", *patch, run.Dim(), min(*nImages, train.Len()), mnist.DatasetLabel(*dataset), *lambda, kind, cfg.Epochs, cfg.Batch)
	start := time.Now()
	m, epochs, err := sim.TrainBSA(ctx, train, test, run, func(s models.EpochStats, _ *models.BSA) { fmt.Println(s) })
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("train: %w", err)
	}
	if epochs == 0 || m == nil {
		// Interrupted before an epoch finished: an untrained model is
		// not a result, and it must not replace one.
		return fmt.Errorf("train: stopped before the first epoch finished; %s not written: %w", *out, context.Canceled)
	}
	// Interrupted (Ctrl-C), the epochs done are saved whole (the couplings
	// as the last one left them); any other error saves nothing. The
	// command recorded is the one that remakes the file: with the epochs
	// done (the learning rate halves by epoch, so the first n epochs of a
	// longer run are an n-epoch run).
	m.Meta["command"] = "attractorlab train " + strings.Join(withEpochs(args, epochs), " ")
	m.Meta["epochs_done"] = fmt.Sprint(epochs)
	sim.RecordDataset(m.Meta, *dataset)
	if serr := o.Write(*out, m.WriteBSA); serr != nil {
		return serr
	}
	if serr := o.Commit(); serr != nil {
		return serr
	}
	fmt.Printf("wrote %s after %.0fs\n", *out, time.Since(start).Seconds())
	if err != nil {
		return fmt.Errorf("stopped after %d of %d epochs; %s written with them (its command says --epochs %d): %w", epochs, cfg.Epochs, *out, epochs, err)
	}
	return nil
}

// withEpochs is the command's arguments with --epochs set to n (replaced
// where given, in any of the flag package's spellings, else added).
func withEpochs(args []string, n int) []string {
	out := make([]string, 0, len(args)+2)
	set := false
	for k := 0; k < len(args); k++ {
		a := args[k]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "epochs" {
			out = append(out, fmt.Sprintf("--epochs=%d", n))
			set = true
			if !hasValue {
				k++ // its value
			}
			continue
		}
		out = append(out, a)
	}
	if !set {
		out = append(out, fmt.Sprintf("--epochs=%d", n))
	}
	return out
}

func runTrainTransformer(ctx context.Context, model string, args []string) error {
	fs := newFlags("train", "train --model block|vit --task mask|noise --out FILE [flags]")
	fs.String("model", model, "model: bsa, block or vit")
	task := fs.String("task", "mask", "corruption to undo: mask or noise")
	cfg := models.DefaultTransformerTrainConfig()
	fs.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "epochs")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "batch size")
	fs.Float64Var(&cfg.LR, "lr", cfg.LR, "AdamW learning rate")
	fs.Float64Var(&cfg.WeightDecay, "wd", cfg.WeightDecay, "AdamW weight decay")
	fs.BoolVar(&cfg.Cosine, "cosine", cfg.Cosine, "decay the learning rate to 0 along a half cosine (false: constant)")
	fs.IntVar(&cfg.Workers, "workers", 0, "goroutines (default: every core)")
	seed := fs.Uint64("seed", 0, "seed for the initial weights, the shuffling, τ and the corruptions")
	val := fs.Int("val", int(sim.ValDigits.Default), "embedded test digits used for the validation MSE: "+sim.ValDigits.Allowed())
	nImages := fs.Int("images", int(sim.TrainImages.Default), "embedded training images, balanced by class: "+sim.TrainImages.Allowed())
	out := fs.String("out", "", "output safetensors file")
	force := fs.Bool("force", false, "overwrite --out if it exists")
	dataset := datasetFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	kind, err := sim.ParseKind(*task)
	if err != nil {
		return fmt.Errorf("train: --task: %w", err)
	}
	tc := models.BlockConfig
	if model == "vit" {
		tc = models.ViTConfig
	}
	pt, err := models.NewPatches(tc.Patch)
	if err != nil {
		return err
	}
	train, test, err := trainingData(*dataset)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	// The configuration is filled (corruption, validation digits) before
	// it is checked, so the check sees what the trainer will run.
	corr := sim.DefaultMask
	if kind == sim.Noise {
		corr = sim.DefaultNoise
	}
	cfg.Seed = *seed
	cfg.Corrupt = sim.TrainCorrupter(corr, pt)
	if err := sim.ValDigits.CheckInt(*val, sim.ViaFlag); err == nil {
		vc := corr
		vc.Seed = 1
		cfg.ValInputs, cfg.ValClean = sim.CorruptFirst(test, *val, vc, pt)
	}
	o, err := trainChecks(fs, *out, *force, cfg.Check, *val, *nImages)
	if err != nil {
		return err
	}
	defer o.Abort()
	m, err := models.NewTransformer[float32](tc)
	if err != nil {
		return err
	}
	m.Init(*seed)
	m.Meta["command"] = "attractorlab train " + strings.Join(args, " ")
	m.Meta["pixel_gain"] = fmt.Sprint(mnist.PixelGain)
	sim.RecordDataset(m.Meta, *dataset)
	images := sim.TrainingImages(train, *nImages)
	m.Meta["train_images"] = fmt.Sprint(len(images))
	cfg.Progress = func(s models.TransformerEpoch) { fmt.Println(s) }
	fmt.Printf("training %s for %s on %d images, %d epochs, batch %d, lr %g (cosine %v), wd %g\n",
		model, kind, len(images), cfg.Epochs, cfg.Batch, cfg.LR, cfg.Cosine, cfg.WeightDecay)
	start := time.Now()
	tr := models.NewTransformerTrainer(m, cfg)
	err = tr.Train(ctx, images)
	if err != nil && ctx.Err() == nil {
		return err
	}
	if tr.Epochs() == 0 {
		// Interrupted before an epoch finished: an untrained model is
		// not a result, and it must not replace one.
		return fmt.Errorf("train: stopped before the first epoch finished; %s not written: %w", *out, context.Canceled)
	}
	m.Meta["epochs_done"] = fmt.Sprint(tr.Epochs())
	if err != nil {
		// The cosine schedule runs over every epoch asked for: the
		// command does not remake an interrupted run; the file says so.
		m.Meta["interrupted"] = fmt.Sprintf("after %d of %d epochs: the command trains all %d", tr.Epochs(), cfg.Epochs, cfg.Epochs)
	}
	if serr := o.Write(*out, func(w io.Writer) error { return m.WriteTransformer(w, model, kind.String()) }); serr != nil {
		return serr
	}
	if serr := o.Commit(); serr != nil {
		return serr
	}
	fmt.Printf("wrote %s after %.0fs\n", *out, time.Since(start).Seconds())
	if err != nil {
		return fmt.Errorf("stopped after %d of %d epochs; %s written with them (its metadata says so: interrupted, epochs_done): %w", tr.Epochs(), cfg.Epochs, *out, err)
	}
	return nil
}
