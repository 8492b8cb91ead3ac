package models

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// TestCrewRun: every item runs once, on worker k mod W in increasing k,
// as Parallel's; with the items' Splits handed to the idle workers, every
// index of every Split is covered exactly once, and some Split is cut when
// the items are uneven (one long item at the end).
func TestCrewRun(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 2}, {1, 2}, {5, 1}, {5, 2}, {7, 3}, {13, 2}, {3, 8}} {
		t.Run(fmt.Sprintf("n=%d,workers=%d", tc.n, tc.workers), func(t *testing.T) {
			crew := NewCrew(tc.workers)
			w := max(1, min(tc.workers, tc.n))
			const steps, width = 40, 64
			var mu sync.Mutex
			seen := make([][]int, w)
			hits := make([][]atomic.Int32, tc.n) // [item][step·width + i]
			var cut atomic.Int32
			err := crew.Run(context.Background(), tc.n, func(wk, k int) {
				if k%w != wk {
					t.Errorf("item %d on worker %d, want %d", k, wk, k%w)
				}
				mu.Lock()
				seen[wk] = append(seen[wk], k)
				mu.Unlock()
				hits[k] = make([]atomic.Int32, steps*width)
				// The last item is long: the others run out of items
				// while it steps, and take parts of its Splits.
				reps := 1
				if k == tc.n-1 {
					reps = steps
				}
				for s := range reps {
					crew.Split(width, func(i0, i1 int) {
						if i0 > 0 || i1 < width {
							cut.Add(1)
						}
						var x float64
						for i := i0; i < i1; i++ {
							hits[k][s*width+i].Add(1)
							for q := range 2000 {
								x += math.Sqrt(float64(q + i))
							}
						}
						sinkBits.Store(math.Float64bits(x))
					})
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			for k := range hits {
				reps := 1
				if k == tc.n-1 {
					reps = steps
				}
				for s := range reps {
					for i := range width {
						if c := hits[k][s*width+i].Load(); c != 1 {
							t.Fatalf("item %d split %d index %d ran %d times", k, s, i, c)
						}
					}
				}
			}
			for wk, ks := range seen {
				if !slices.IsSorted(ks) {
					t.Fatalf("worker %d ran %v", wk, ks)
				}
			}
			if w > 1 && tc.n > w && cut.Load() == 0 {
				t.Fatal("no Split was ever cut although workers sat idle")
			}
		})
	}
}

var sinkBits atomic.Uint64 // keeps the busy work from being optimised away

// TestCrewSplitNil: a nil crew or one whose workers are all busy runs the
// whole range on the caller, once.
func TestCrewSplitNil(t *testing.T) {
	for _, crew := range []*Crew{nil, NewCrew(4)} {
		var calls [][2]int
		crew.Split(10, func(i0, i1 int) { calls = append(calls, [2]int{i0, i1}) })
		if len(calls) != 1 || calls[0] != [2]int{0, 10} {
			t.Fatalf("calls %v, want one of [0,10)", calls)
		}
		crew.Split(0, func(i0, i1 int) { t.Fatal("called for an empty range") })
	}
	if got := (*Crew)(nil).Workers(); got != 1 {
		t.Fatalf("nil crew has %d workers, want 1", got)
	}
}

// TestCrewCancel: once the context is cancelled no worker starts another
// item (one already past its check may still run), and Run returns
// context.Canceled.
func TestCrewCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled atomic.Bool
	var after atomic.Int32
	err := NewCrew(2).Run(ctx, 1000, func(_, k int) {
		if cancelled.Load() {
			after.Add(1)
		}
		if k == 3 {
			cancel()
			cancelled.Store(true)
		}
	})
	if err != context.Canceled {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if a := after.Load(); a > 1 {
		t.Fatalf("%d items started after the cancel", a)
	}
	called := false
	//lint:ignore SA1012 a nil context is what is tested
	if err := NewCrew(2).Run(nil, 3, func(int, int) { called = true }); err == nil || called {
		t.Fatal("a nil context was accepted")
	}
}

// TestChunkerSplitSameBits: a step whose query rows run in parts, on other
// goroutines and in any order, gives the same states and energies bit for
// bit as the whole step on one goroutine (softmax and ReLU, first-step
// masks, P = 2 and P = 4).
func TestChunkerSplitSameBits(t *testing.T) {
	for _, tc := range []struct {
		p, d int
		attn AttnKind
	}{{2, 8, Softmax}, {2, 8, ReluSeqlen}, {4, 32, Softmax}} {
		m, err := NewBSA(tc.p, tc.d, 5)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(tc.d), 9))
		var a, b []*State
		for k, img := range randomImages(11, uint64(tc.p)) {
			var mask []bool
			if k%2 == 0 {
				mask = make([]bool, m.N)
				for i := range mask {
					mask[i] = rng.IntN(4) == 0
				}
			}
			a = append(a, m.NewState(img, mask))
			b = append(b, m.NewState(img, mask))
		}
		whole := m.NewChunker()
		split := whole.Twin()
		// Cut [0, n) at random points and run the parts on goroutines in
		// reverse order.
		split.Split = func(n int, f func(i0, i1 int)) {
			cuts := []int{0, n}
			for range rng.IntN(5) {
				cuts = append(cuts, rng.IntN(n+1))
			}
			slices.Sort(cuts)
			var wg sync.WaitGroup
			for q := len(cuts) - 2; q >= 0; q-- {
				wg.Go(func() { f(cuts[q], cuts[q+1]) })
			}
			wg.Wait()
		}
		dy := Dynamics{Lambda: 1.7, Gamma: 0.5, Attn: tc.attn}
		ea, eb := make([]float64, len(a)), make([]float64, len(b))
		whole.Load(a)
		split.Load(b)
		for step := range 4 {
			whole.Step(dy, ea)
			split.Step(dy, eb)
			whole.Store(a)
			split.Store(b)
			for k := range a {
				if math.Float64bits(ea[k]) != math.Float64bits(eb[k]) {
					t.Fatalf("P=%d %v step %d image %d: energy %v split, %v whole", tc.p, tc.attn, step, k, eb[k], ea[k])
				}
				for q := range a[k].X {
					if math.Float32bits(a[k].X[q]) != math.Float32bits(b[k].X[q]) {
						t.Fatalf("P=%d %v step %d image %d: state differs at %d", tc.p, tc.attn, step, k, q)
					}
				}
			}
		}
		whole.Energy(dy, ea)
		split.Energy(dy, eb)
		for k := range ea {
			if math.Float64bits(ea[k]) != math.Float64bits(eb[k]) {
				t.Fatalf("P=%d %v: final energy differs for image %d", tc.p, tc.attn, k)
			}
		}
	}
}
