package sim

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// MaxTrainSeeds bounds --train-seeds: each seed is a training run of the
// shipped recipe (about 1.5 minutes for P = 2 on this project's 2-core
// machine).
const MaxTrainSeeds = 20

// ParseSeedList reads a list of seeds: "0-4" (a range, both ends
// included), "0,3,7" or a mix ("0-2,9"), each 0 … 999; at most max
// seeds, none twice, a range not reversed. flag names the flag in errors.
func ParseSeedList(flag, s string, max int) ([]uint64, error) {
	allowed := fmt.Sprintf(`(allowed: seeds 0 … 999 as "0-4", "0,3,7" or "0-2,9"; at most %d, none twice)`, max)
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%s is empty %s", flag, allowed)
	}
	var out []uint64
	seen := map[uint64]bool{}
	num := func(p string) (uint64, error) {
		v, err := strconv.ParseUint(strings.TrimSpace(p), 10, 64)
		if err != nil || v > 999 {
			return 0, fmt.Errorf("%s = %q: %q is not a seed %s", flag, s, strings.TrimSpace(p), allowed)
		}
		return v, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi := part, part
		if a, b, ok := strings.Cut(part, "-"); ok {
			lo, hi = a, b
		}
		a, err := num(lo)
		if err != nil {
			return nil, err
		}
		b, err := num(hi)
		if err != nil {
			return nil, err
		}
		if b < a {
			return nil, fmt.Errorf("%s = %q: the range %s is reversed %s", flag, s, strings.TrimSpace(part), allowed)
		}
		if b-a >= uint64(max) {
			return nil, fmt.Errorf("%s = %q: %d seeds, more than %d %s", flag, s, b-a+1, max, allowed)
		}
		for v := a; v <= b; v++ {
			if seen[v] {
				return nil, fmt.Errorf("%s = %q: seed %d twice %s", flag, s, v, allowed)
			}
			seen[v] = true
			out = append(out, v)
		}
		if len(out) > max {
			return nil, fmt.Errorf("%s = %q: more than %d seeds %s", flag, s, max, allowed)
		}
	}
	return out, nil
}

// ShippedRecipe is the training that made the shipped bare self-attention
// of patch side p (docs/training.md) with another seed: every setting of
// `attractorlab train --patch P --epochs 200 --seed S`, without the
// per-epoch validation (it does not change the couplings).
func ShippedRecipe(p int, seed uint64) BSATraining {
	return BSATraining{Patch: p, Images: int(TrainImages.Default), Lambda: TrainLambda.Default, Attn: models.Softmax,
		Seed: seed, SkipVal: true, Config: models.DefaultTrainConfig()}
}

// recipeKey identifies a training run's result: its settings, seed and
// training digits. Two runs with the same key give the same couplings
// bit for bit (TrainBSA is deterministic).
func recipeKey(s BSATraining, train *mnist.Set) string {
	c := s.Config
	h := sha256.New()
	fmt.Fprintf(h, "bsa-train v1|P %d|d %d|images %d|lambda %g|attn %s|seed %d|epochs %d|batch %d|lr %g|wd %g|b1 %g|b2 %g|eps %g|halve %d|clip %g|allrows %v|",
		s.Patch, s.Dim(), s.Images, s.Lambda, s.Attn, s.Seed, c.Epochs, c.Batch, c.LR, c.WeightDecay, c.Beta1, c.Beta2, c.Eps, c.HalveEvery, c.Clip, c.AllRows)
	sh := SetHash(train)
	h.Write(sh[:])
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// SeedCache is where trained seeds are kept:
// os.UserCacheDir()/attractorlab/seeds.
func SeedCache() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "attractorlab", "seeds"), nil
}

// SeedPath is the file in dir that keeps the couplings of s trained on
// train.
func SeedPath(dir string, s BSATraining, train *mnist.Set) string {
	return filepath.Join(dir, fmt.Sprintf("bsa-p%d-seed%d-%s.safetensors", s.Patch, s.Seed, recipeKey(s, train)))
}

// TrainedSeed is one training seed's couplings: from the cache when a
// file there holds them, else trained now and kept. A kept file that
// does not read, or whose recorded recipe is not s's, is refused by name
// (Warning) and trained again; nothing half-written is left (temporary
// file, then rename).
type TrainedSeed struct {
	Model   *models.BSA
	Path    string // the file that keeps it ("" when it could not be kept)
	Cached  bool   // read from the cache, not trained now
	Warning string
}

// TrainSeed gives s's couplings, trained on train (dir "" keeps nothing).
func TrainSeed(ctx context.Context, train, test *mnist.Set, s BSATraining, dir string, onEpoch func(models.EpochStats)) (TrainedSeed, error) {
	key := recipeKey(s, train)
	var out TrainedSeed
	if dir != "" {
		out.Path = SeedPath(dir, s, train)
		m, err := models.LoadBSA(out.Path)
		switch {
		case err == nil && m.Meta["recipe_key"] == key && m.P == s.Patch:
			out.Model, out.Cached = m, true
			return out, nil
		case err == nil:
			out.Warning = fmt.Sprintf("the kept seed %s is refused (it records recipe %q, P=%d; this run is %q, P=%d): trained again",
				out.Path, m.Meta["recipe_key"], m.P, key, s.Patch)
		case !errors.Is(err, fs.ErrNotExist):
			out.Warning = fmt.Sprintf("the kept seed %s is refused (%v): trained again", out.Path, err)
		}
	}
	m, epochs, err := TrainBSA(ctx, train, test, s, func(st models.EpochStats, _ *models.BSA) {
		if onEpoch != nil {
			onEpoch(st)
		}
	})
	if err != nil {
		return out, err
	}
	if epochs != s.Config.Epochs || m == nil {
		return out, fmt.Errorf("training seed %d stopped after %d of %d epochs", s.Seed, epochs, s.Config.Epochs)
	}
	for _, w := range m.J {
		if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) {
			return out, fmt.Errorf("training seed %d: %w", s.Seed, models.ErrDiverged)
		}
	}
	m.Meta["recipe_key"] = key
	m.Meta["command"] = fmt.Sprintf("attractorlab train --patch %d --epochs %d --seed %d", s.Patch, s.Config.Epochs, s.Seed)
	m.Meta["epochs_done"] = fmt.Sprint(epochs)
	out.Model = m
	if out.Path != "" {
		if err := keepSeed(out.Path, m); err != nil {
			out.Warning = joinNote(out.Warning, fmt.Sprintf("the seed could not be kept in %s (%v)", out.Path, err))
			out.Path = ""
		}
	}
	return out, nil
}

// keepSeed writes m to path through a temporary file in its directory.
func keepSeed(path string, m *models.BSA) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	if err := m.WriteBSA(&b); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// MeanSD is the mean and the sample standard deviation (n − 1) of v; the
// deviation is NaN for fewer than two values.
func MeanSD(v []float64) (mean, sd float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, math.NaN()
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}

// KeptSeed is a training seed of the shipped recipe kept in the cache.
type KeptSeed struct {
	Seed uint64
	Path string
}

// KeptSeeds are the shipped recipe's training seeds of patch side p kept
// in dir (SeedCache) for the training digits train, in seed order: the
// files whose name the recipe and seed give (their content is checked
// when they are read).
func KeptSeeds(dir string, p int, train *mnist.Set) []KeptSeed {
	var out []KeptSeed
	if dir == "" {
		return nil
	}
	names, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("bsa-p%d-seed*-*.safetensors", p)))
	for _, name := range names {
		rest := strings.TrimPrefix(filepath.Base(name), fmt.Sprintf("bsa-p%d-seed", p))
		num, _, ok := strings.Cut(rest, "-")
		seed, err := strconv.ParseUint(num, 10, 64)
		if !ok || err != nil || seed > 999 {
			continue
		}
		if SeedPath(dir, ShippedRecipe(p, seed), train) == name {
			out = append(out, KeptSeed{Seed: seed, Path: name})
		}
	}
	slices.SortFunc(out, func(a, b KeptSeed) int { return cmp.Compare(a.Seed, b.Seed) })
	return out
}
