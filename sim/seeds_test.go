package sim

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"attractorlab/sim/mnist"
)

func TestParseSeedList(t *testing.T) {
	for in, want := range map[string][]uint64{"0-4": {0, 1, 2, 3, 4}, "0,3,7": {0, 3, 7}, "0-2, 9": {0, 1, 2, 9}, "5": {5}, "999": {999}} {
		got, err := ParseSeedList("--train-seeds", in, MaxTrainSeeds)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{"": "is empty", " ": "is empty", "4-1": "reversed", "a": "is not a seed", "0-x": "is not a seed",
		"-1": "is not a seed", "1000": "is not a seed", "0-20": "21 seeds, more than 20", "0,0": "seed 0 twice", "0-3,2": "seed 2 twice",
		"0-9,10-19,20": "more than 20", "1.5": "is not a seed", "0,,1": "is not a seed"} {
		_, err := ParseSeedList("--train-seeds", in, MaxTrainSeeds)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--train-seeds") || !strings.Contains(err.Error(), "allowed") {
			t.Errorf("%q: %v, want an error naming --train-seeds, %q and the allowed values", in, err, want)
		}
	}
}

// TestTrainSeedKept: a training seed is trained once and kept; the next
// run reads it (the same couplings, bit for bit); a damaged or foreign
// kept file is refused by name and trained again; nothing half-written
// is left beside it.
func TestTrainSeedKept(t *testing.T) {
	train, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := ShippedRecipe(2, 3)
	s.Images, s.Config.Epochs, s.Config.Batch = 100, 1, 50
	first, err := TrainSeed(context.Background(), train, test, s, dir, nil)
	if err != nil || first.Cached || first.Warning != "" || first.Path == "" {
		t.Fatalf("first: %+v %v", first, err)
	}
	again, err := TrainSeed(context.Background(), train, test, s, dir, nil)
	if err != nil || !again.Cached || !slices.Equal(again.Model.J, first.Model.J) {
		t.Fatalf("second run: cached %v, same couplings %v, %v", again.Cached, err == nil && slices.Equal(again.Model.J, first.Model.J), err)
	}
	// Another seed is another file.
	other := s
	other.Seed = 4
	if SeedPath(dir, other, train) == first.Path {
		t.Fatal("two seeds share a cache file")
	}
	// Damaged: refused by name, trained again, the same couplings.
	b, _ := os.ReadFile(first.Path)
	os.WriteFile(first.Path, b[:len(b)/2], 0o644)
	redo, err := TrainSeed(context.Background(), train, test, s, dir, nil)
	if err != nil || redo.Cached || !strings.Contains(redo.Warning, first.Path) || !slices.Equal(redo.Model.J, first.Model.J) {
		t.Fatalf("damaged: cached %v, warning %q, %v", redo.Cached, redo.Warning, err)
	}
	// Foreign: another recipe's file under this name.
	os.WriteFile(first.Path, mustWrite(t, other, train, test), 0o644)
	redo, err = TrainSeed(context.Background(), train, test, s, dir, nil)
	if err != nil || redo.Cached || !strings.Contains(redo.Warning, "is refused") || !slices.Equal(redo.Model.J, first.Model.J) {
		t.Fatalf("foreign: cached %v, warning %q, %v", redo.Cached, redo.Warning, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || filepath.Join(dir, ents[0].Name()) != first.Path {
		t.Fatalf("the cache holds %v", ents)
	}
}

// mustWrite is s trained and written as a safetensors file.
func mustWrite(t *testing.T, s BSATraining, train, test *mnist.Set) []byte {
	t.Helper()
	got, err := TrainSeed(context.Background(), train, test, s, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := got.Model.WriteBSA(&b); err != nil {
		t.Fatal(err)
	}
	return []byte(b.String())
}

func TestMeanSD(t *testing.T) {
	m, sd := MeanSD([]float64{1, 2, 3, 4})
	if m != 2.5 || sd < 1.2909 || sd > 1.2910 {
		t.Fatalf("mean %v sd %v", m, sd)
	}
	if m, sd := MeanSD([]float64{7}); m != 7 || !math.IsNaN(sd) {
		t.Fatalf("one value: %v ± %v, want 7 ± NaN", m, sd)
	}
}
