package main

import (
	"attractorlab/sim"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeCommands are the command lines README.md and the documents in
// docs/ show: the inline code spans that start with "attractorlab" and the
// lines of their code blocks that run it.
func readmeCommands(t *testing.T) []string {
	docs, _ := filepath.Glob("../docs/*.md")
	var b []byte
	for _, f := range append([]string{"../README.md"}, docs...) {
		d, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, d...), '\n')
	}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		s = strings.Join(strings.Fields(s), " ")
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	fenced := false
	var cont string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			l := strings.TrimSpace(line)
			if cont != "" {
				l = cont + " " + l
				cont = ""
			}
			if strings.HasSuffix(l, "\\") {
				cont = strings.TrimSuffix(l, "\\")
				continue
			}
			if strings.HasPrefix(l, "attractorlab ") || strings.HasPrefix(l, "./bin/attractorlab ") {
				add(strings.TrimPrefix(l, "./bin/"))
			}
			continue
		}
		for _, m := range regexp.MustCompile("`(attractorlab(?: [^`]*)?)`").FindAllStringSubmatch(line, -1) {
			add(m[1])
		}
	}
	return out
}

// TestREADMECommands runs every command README.md shows, end to end, as a
// person would type it, made small (3 digits, 3 steps, 1 epoch on 100
// images) and writing into a temporary directory. A command README gains
// must be given its run here: the test fails on any it does not know.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command")
	}
	tmp := t.TempDir()
	p := func(s string) string { return filepath.Join(tmp, s) }
	// The Fashion-MNIST commands run on a small converted package.
	fakeFashion(t)
	// The folder commands on a folder of the sample's digits.
	digitFolder(t, p("shapes"), 12)
	// --train-seeds trains by a shortened recipe here (the shipped one
	// takes minutes a seed; TestReproduceTrainSeeds does the same).
	oldRecipe := seedRecipe
	seedRecipe = func(p int, seed uint64) sim.BSATraining {
		s := oldRecipe(p, seed)
		s.Images, s.Config.Epochs, s.Config.Batch = 100, 1, 50
		return s
	}
	defer func() { seedRecipe = oldRecipe }()
	small := []string{"--n", "3", "--steps", "3"}
	fast := []string{"--epochs", "1", "--images", "100", "--val", "10", "--batch", "50"}
	with := func(args []string, extra ...[]string) []string {
		out := append([]string{}, args...)
		for _, e := range extra {
			out = append(out, e...)
		}
		return out
	}
	// Each README command → the runs that show it works ("window" and
	// "network" runs are covered elsewhere: the window by .ci/e2e.sh under
	// Xvfb, the download by sim/mnist's tests against a local server).
	runs := map[string][][]string{
		"attractorlab":                                               {},
		"attractorlab version":                                       {{"version"}},
		"attractorlab lesson list":                                   {{"lesson", "list"}},
		"attractorlab lesson check FILE":                             {{"lesson", "check", "../assets/lessons/2-masking.json"}},
		"attractorlab --lesson masking":                              {{"lesson", "check", "masking"}},
		"attractorlab --lesson NAME\\|FILE":                          {{"lesson", "check", "transient-memory"}, {"lesson", "check", "../assets/lessons/4-three-models.json"}},
		"attractorlab --link URL":                                    {},
		"attractorlab data":                                          {},
		"attractorlab data [--data DIR]":                             {},
		"attractorlab data --dataset fashion-mnist [--package FILE]": {},
		"attractorlab data --dataset fashion-mnist":                  {},
		// The window on Fashion-MNIST or a folder: its flag by
		// TestGUIFlags and TestFolderCommands, the window by ui's
		// TestDatasetPicker.
		"attractorlab --dataset fashion-mnist": {},
		"attractorlab --dataset folder:shapes": {},
		"attractorlab train --dataset fashion-mnist --patch P --epochs E": {
			with([]string{"train", "--dataset", "fashion-mnist", "--patch", "2", "--out", p("first-use.safetensors")}, fast),
		},
		// docs/results.md's Fashion-MNIST sample table: re-run and held by
		// TestFashionSampleResults.
		"attractorlab reproduce --dataset fashion-mnist --model all --task mask|noise --n 200": {},
		"attractorlab data --dataset FOLDER":                                                   {{"data", "--dataset", p("shapes")}},
		"attractorlab data --dataset shapes":                                                   {{"data", "--dataset", p("shapes")}},
		"attractorlab train --dataset folder:shapes --patch 2 --out bsa-p2-shapes.safetensors": {
			with([]string{"train", "--dataset", "folder:shapes", "--patch", "2", "--out", p("bsa-p2-shapes.safetensors")}, fast),
		},
		"attractorlab reproduce --dataset folder:shapes --model bsa --patch 2 --task noise --weights bsa-p2-shapes.safetensors --out shapes-p2-noise": {
			with([]string{"reproduce", "--dataset", "folder:shapes", "--model", "bsa", "--patch", "2", "--task", "noise", "--weights", p("bsa-p2-shapes.safetensors"), "--out", p("shapes-p2-noise")}, small),
		},
		"attractorlab train --dataset fashion-mnist --patch 2 --epochs 200 --out bsa-p2-fashion.safetensors": {
			with([]string{"train", "--dataset", "fashion-mnist", "--patch", "2", "--out", p("r-bsa-p2-fashion.safetensors")}, fast),
		},
		"attractorlab train --dataset fashion-mnist --patch 4 --epochs 200 --out bsa-p4-fashion.safetensors": {
			with([]string{"train", "--dataset", "fashion-mnist", "--patch", "4", "--out", p("r-bsa-p4-fashion.safetensors")}, fast),
		},
		"attractorlab train --dataset fashion-mnist --model block --task noise --out block-noise-fashion.safetensors": {
			with([]string{"train", "--dataset", "fashion-mnist", "--model", "block", "--task", "noise", "--out", p("r-block-noise-fashion.safetensors")}, fast),
		},
		"attractorlab train --dataset fashion-mnist --model vit --task mask --out vit-mask-fashion.safetensors": {
			with([]string{"train", "--dataset", "fashion-mnist", "--model", "vit", "--task", "mask", "--out", p("r-vit-mask-fashion.safetensors")}, fast),
		},
		"attractorlab reproduce --dataset fashion-mnist --model bsa --patch 2 --task noise --n 1000 --weights bsa-p2-fashion.safetensors --out fashion/p2-noise": {
			with([]string{"train", "--dataset", "fashion-mnist", "--patch", "2", "--out", p("r2-bsa-p2-fashion.safetensors")}, fast),
			with([]string{"reproduce", "--dataset", "fashion-mnist", "--model", "bsa", "--patch", "2", "--task", "noise", "--weights", p("r2-bsa-p2-fashion.safetensors"), "--out", p("fashion-r2")}, small),
		},
		"attractorlab reproduce --dataset fashion-mnist --model bsa --patch 2 --task noise --n 1000 --out fashion/p2-noise-mnist-weights": {
			with([]string{"reproduce", "--dataset", "fashion-mnist", "--model", "bsa", "--patch", "2", "--task", "noise", "--out", p("fashion-mnistw")}, small),
		},
		"attractorlab reproduce --dataset fashion-mnist --model hopfield --task mask --n 1000 --out fashion/hopfield-mask": {
			with([]string{"reproduce", "--dataset", "fashion-mnist", "--model", "hopfield", "--task", "mask", "--out", p("fashion-hop")}, small),
		},
		"attractorlab train --dataset fashion-mnist --patch 2 --out bsa-p2-fashion.safetensors": {
			with([]string{"train", "--dataset", "fashion-mnist", "--patch", "2", "--out", p("bsa-p2-fashion.safetensors")}, fast),
		},
		"attractorlab reproduce --dataset fashion-mnist --model bsa --patch 2 --task noise --weights bsa-p2-fashion.safetensors --out fashion/p2-noise": {
			with([]string{"train", "--dataset", "fashion-mnist", "--patch", "2", "--out", p("bsa-p2-fashion-r.safetensors")}, fast),
			with([]string{"reproduce", "--dataset", "fashion-mnist", "--model", "bsa", "--patch", "2", "--task", "noise", "--weights", p("bsa-p2-fashion-r.safetensors"), "--out", p("fashion-p2-noise")}, small),
		},
		"attractorlab gui [--weights-p2 F] [--weights-p4 F] [--weights-block F] [--weights-vit F]": {},
		"attractorlab reproduce --model all --task noise --out results/noise":                      {with([]string{"reproduce", "--model", "all", "--task", "noise", "--out", p("results-noise")}, small)},
		"attractorlab capacity":                   {{"capacity", "--out", p("cap0"), "--images", "100", "--updates", "2", "--halve-every", "1", "--n", "5"}},
		"attractorlab reproduce --fig2 --out DIR": {with([]string{"reproduce", "--fig2", "--out", p("fig2")}, small)},
		"attractorlab reproduce --model all --task mask\\|noise --out DIR": {
			with([]string{"reproduce", "--model", "all", "--task", "mask", "--out", p("all-mask")}, small),
			with([]string{"reproduce", "--model", "all", "--task", "noise", "--out", p("all-noise")}, small),
		},
		"attractorlab reproduce --model block\\|vit\\|hopfield\\|hopfield-classic ...": {
			with([]string{"reproduce", "--model", "block", "--out", p("r-block")}, small),
			with([]string{"reproduce", "--model", "vit", "--out", p("r-vit")}, small),
			with([]string{"reproduce", "--model", "hopfield", "--beta", "2", "--out", p("r-hop")}, small),
			with([]string{"reproduce", "--model", "hopfield-classic", "--k", "20", "--async", "--out", p("r-hopc")}, small),
		},
		"attractorlab reproduce --model bsa --patch 2 --n 1000": {{"reproduce", "--model", "bsa", "--patch", "2", "--n", "3", "--steps", "3", "--out", p("r-bsa")}},
		"attractorlab reproduce --model bsa --patch 2\\|4 --task mask\\|noise --n 1000 --steps 100 --seed 0 [--weights F] --out DIR [--force]": {
			{"reproduce", "--model", "bsa", "--patch", "2", "--task", "mask", "--n", "3", "--steps", "3", "--seed", "0", "--out", p("r-2m")},
			{"reproduce", "--model", "bsa", "--patch", "4", "--task", "noise", "--n", "3", "--steps", "3", "--seed", "0", "--out", p("r-4n")},
			{"reproduce", "--model", "bsa", "--patch", "4", "--task", "noise", "--n", "3", "--steps", "3", "--seed", "1", "--out", p("r-4n"), "--force"},
		},
		"attractorlab sweep --model M[,M…] --task mask\\|noise --levels L1,L2,… [--lambda\\|--beta\\|--k V1,V2,…] --n 200 --steps 100 --seeds 1 [--weights F] --out DIR [--force]": {
			with([]string{"sweep", "--model", "bsa-p2", "--task", "mask", "--levels", "0.2,0.5", "--lambda", "1,5", "--seeds", "1", "--out", p("sw-l")}, small),
			with([]string{"sweep", "--model", "hopfield", "--task", "noise", "--levels", "0.5", "--beta", "1,4", "--out", p("sw-b")}, small),
			with([]string{"sweep", "--model", "hopfield-classic", "--task", "noise", "--levels", "0.5", "--k", "10,20", "--out", p("sw-k")}, small),
		},
		"attractorlab sweep --model bsa-p2 --task noise": {with([]string{"sweep", "--model", "bsa-p2", "--task", "noise", "--levels", "0,0.5,1", "--out", p("sw")}, small)},
		"attractorlab sweep":                             {},
		"attractorlab sweep ... --shard i/n": {
			with([]string{"sweep", "--model", "bsa-p2", "--task", "noise", "--levels", "0.3,1", "--shard", "0/2", "--out", p("parts")}, small),
			with([]string{"sweep", "--model", "bsa-p2", "--task", "noise", "--levels", "0.3,1", "--shard", "1/2", "--out", p("parts")}, small),
		},
		"attractorlab sweep merge DIR/shard-* --out DIR2": {{"sweep", "merge", p("parts/shard-0-of-2"), p("parts/shard-1-of-2"), "--out", p("merged")}},
		"attractorlab sweep merge DIR… --out DIR":         {{"sweep", "merge", p("parts/shard-0-of-2"), p("parts/shard-1-of-2"), "--out", p("merged2")}},
		"attractorlab phase --images 100,1000,10000 --lambda 1,5 --seeds 0-1 [--updates 2000 --halve-every 400 --n 200 --steps 100 --sigma2 0.7 --patch 2 --shard i/n] --out DIR [--force]": {
			{"phase", "--images", "100,200", "--lambda", "1,5", "--seeds", "0", "--updates", "2", "--halve-every", "1", "--n", "3", "--steps", "3", "--sigma2", "0.7", "--patch", "2", "--shard", "0/2", "--out", p("ph")},
			{"phase", "--images", "100,200", "--lambda", "1,5", "--seeds", "0", "--updates", "2", "--halve-every", "1", "--n", "3", "--steps", "3", "--shard", "1/2", "--out", p("ph")},
		},
		"attractorlab reproduce --model bsa --patch 2 --task noise --train-seeds 0-4 --seeds 3": {
			{"reproduce", "--model", "bsa", "--patch", "2", "--task", "noise", "--train-seeds", "0-1", "--seeds", "2", "--n", "3", "--steps", "3", "--out", p("ts")},
		},
		"attractorlab phase --images 100,1000,10000 --lambda 1,5 --seeds 0-1 --updates 2000": {
			{"phase", "--images", "100,1000", "--lambda", "1,5", "--seeds", "0-1", "--updates", "2", "--n", "3", "--steps", "3", "--out", p("ph2")},
		},
		"attractorlab dynamics --model bsa-p2\\|bsa-p4\\|block\\|hopfield --task mask\\|noise --n 200 --at 1,t*,100,1000 --k 10 [--steps S --seed 0 --lambda --gamma --sigma2 --mask --attn --weights F --shard i/n] --out DIR [--force]": {
			{"dynamics", "--model", "bsa-p2", "--task", "noise", "--n", "2", "--at", "1,t*,4", "--k", "2", "--steps", "5", "--seed", "0", "--lambda", "1", "--gamma", "0.5", "--sigma2", "0.7", "--attn", "softmax", "--shard", "0/2", "--out", p("dyn")},
			{"dynamics", "--model", "bsa-p2", "--task", "noise", "--n", "2", "--at", "1,t*,4", "--k", "2", "--steps", "5", "--shard", "1/2", "--out", p("dyn")},
			{"dynamics", "--model", "bsa-p4", "--task", "mask", "--n", "2", "--at", "1,t*", "--k", "2", "--steps", "5", "--mask", "0.3", "--out", p("dyn4"), "--force"},
			{"dynamics", "--model", "block", "--task", "mask", "--n", "1", "--at", "1,t*", "--k", "2", "--steps", "4", "--out", p("dynb")},
		},
		"attractorlab dynamics --model block --task noise --n 100 --at 1,t*,100,1000 --k 10 --out dyn/block-noise": {
			{"dynamics", "--model", "block", "--task", "noise", "--n", "1", "--at", "1,t*,4", "--k", "2", "--steps", "5", "--out", p("rd-block-noise")},
		},
		"attractorlab dynamics --model block --task mask --n 100 --at 1,t*,100,1000 --k 10 --out dyn/block-mask": {
			{"dynamics", "--model", "block", "--task", "mask", "--n", "1", "--at", "1,t*,4", "--k", "2", "--steps", "5", "--out", p("rd-block-mask")},
		},
		"attractorlab dynamics --model bsa-p2 --task noise --n 200 --at 1,t*,100,1000 --k 10 --out dyn/p2-noise": {
			{"dynamics", "--model", "bsa-p2", "--task", "noise", "--n", "2", "--at", "1,t*,6", "--k", "2", "--steps", "6", "--out", p("rd-p2-noise")},
		},
		"attractorlab dynamics --model bsa-p2 --task mask --n 200 --at 1,t*,100,1000 --k 10 --out dyn/p2-mask": {
			{"dynamics", "--model", "bsa-p2", "--task", "mask", "--n", "2", "--at", "1,t*,6", "--k", "2", "--steps", "6", "--out", p("rd-p2-mask")},
		},
		"attractorlab dynamics --model bsa-p4 --task noise --n 200 --at 1,t*,100,1000 --k 10 --out dyn/p4-noise": {
			{"dynamics", "--model", "bsa-p4", "--task", "noise", "--n", "2", "--at", "1,t*,6", "--k", "2", "--steps", "6", "--out", p("rd-p4-noise")},
		},
		"attractorlab dynamics --model bsa-p4 --task mask --n 200 --at 1,t*,100,1000 --k 10 --out dyn/p4-mask": {
			{"dynamics", "--model", "bsa-p4", "--task", "mask", "--n", "2", "--at", "1,t*,6", "--k", "2", "--steps", "6", "--out", p("rd-p4-mask")},
		},
		"attractorlab dynamics --model hopfield --task noise --n 200 --at 1,t*,100 --steps 100 --k 10 --out dyn/hopfield-noise": {
			{"dynamics", "--model", "hopfield", "--task", "noise", "--n", "2", "--at", "1,t*,4", "--steps", "5", "--k", "2", "--out", p("rd-hop")},
		},
		"attractorlab dynamics merge DIR/shard-* --out DIR2": {{"dynamics", "merge", p("dyn/shard-0-of-2"), p("dyn/shard-1-of-2"), "--out", p("dyn-all")}},
		"attractorlab phase":                              {{"phase", "--images", "100", "--lambda", "1", "--seeds", "0-1", "--updates", "2", "--n", "3", "--steps", "3", "--out", p("ph1")}},
		"attractorlab phase merge DIR/shard-* --out DIR2": {{"phase", "merge", p("ph/shard-0-of-2"), p("ph/shard-1-of-2"), "--out", p("ph-all")}},
		"attractorlab train --patch 2\\|4 --out FILE [--epochs 200 --seed 0 --batch 256 --lr 5e-4 --d D --lambda 5 --images 10000 --attn softmax\\|relu/seqlen --from shipped\\|FILE --force]": {
			with([]string{"train", "--patch", "2", "--out", p("t2.safetensors"), "--seed", "0", "--lr", "5e-4", "--d", "8", "--lambda", "5", "--attn", "relu/seqlen"}, fast),
			with([]string{"train", "--patch", "2", "--out", p("t2f.safetensors"), "--from", "shipped"}, fast),
			with([]string{"train", "--patch", "2", "--out", p("t2g.safetensors"), "--from", p("t2.safetensors"), "--attn", "softmax"}, fast),
			with([]string{"train", "--patch", "4", "--out", p("t4.safetensors")}, fast),
			with([]string{"train", "--patch", "4", "--out", p("t4.safetensors"), "--force"}, fast),
		},
		"attractorlab capacity --out DIR [--images 100,1000,10000 --updates 8000 --halve-every 400 --n 200 --sigma2 0.7 --seed 0]": {
			{"capacity", "--out", p("cap"), "--images", "100,1000", "--updates", "4", "--halve-every", "2", "--n", "20", "--sigma2", "0.7", "--seed", "0"},
		},
		"attractorlab train --model block\\|vit --task mask\\|noise --out FILE [--epochs 20 --seed 0 --batch 256 --lr 1e-3 --wd 0.01 --cosine=true --force]": {
			with([]string{"train", "--model", "block", "--task", "mask", "--out", p("tb.safetensors"), "--seed", "0", "--lr", "1e-3", "--wd", "0.01", "--cosine=true"}, fast),
			with([]string{"train", "--model", "vit", "--task", "noise", "--out", p("tv.safetensors")}, fast),
		},
	}
	for _, c := range readmeCommands(t) {
		t.Run(c, func(t *testing.T) {
			rs, ok := runs[c]
			if !ok && strings.HasPrefix(c, "attractorlab train ") && strings.Contains(c, "--out assets/weights/") {
				// The code block's training lines, as written but for
				// their size and where they write.
				args := strings.Fields(c)[1:]
				for k := 1; k < len(args); k++ {
					switch args[k-1] {
					case "--out":
						args[k] = p(filepath.Base(args[k]))
					case "--epochs":
						args[k] = "1"
					}
				}
				rs, ok = [][]string{with(args, []string{"--images", "100", "--val", "10", "--batch", "50"})}, true
			}
			if !ok && strings.Contains(c, "$") {
				t.Skipf("a cluster job's line (its variables are the scheduler's): %s", c)
			}
			if !ok {
				t.Fatalf("README shows %q but this test has no run for it: add one", c)
			}
			if len(rs) == 0 {
				t.Skip("the window or the network: covered by .ci/e2e.sh and sim/mnist's tests")
			}
			for _, args := range rs {
				if err := run(context.Background(), args); err != nil {
					t.Fatalf("%v: %v", args, err)
				}
			}
		})
	}
}
