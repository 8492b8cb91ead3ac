package models

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestParallel: every k runs exactly once, on worker k mod W with
// W = min(workers, n) (workers ≤ 0: every core), in increasing k within a
// worker.
func TestParallel(t *testing.T) {
	cores := runtime.GOMAXPROCS(0)
	cases := []struct{ n, workers, w int }{
		{0, 4, 0},
		{1, 4, 1},
		{5, 1, 1},
		{5, 2, 2},
		{7, 3, 3},
		{3, 8, 3},
		{100, 7, 7},
		{50, 0, min(cores, 50)},
		{50, -3, min(cores, 50)},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("n=%d,workers=%d", tc.n, tc.workers), func(t *testing.T) {
			count := make([]atomic.Int32, tc.n)
			worker := make([]int, tc.n)
			seen := make([][]int, max(tc.workers, cores, 1)) // per worker, in call order
			var mu sync.Mutex
			err := Parallel(context.Background(), tc.n, tc.workers, func(wk, k int) {
				count[k].Add(1)
				worker[k] = wk
				mu.Lock()
				seen[wk] = append(seen[wk], k)
				mu.Unlock()
			})
			if err != nil {
				t.Fatal(err)
			}
			for k := range count {
				if c := count[k].Load(); c != 1 {
					t.Fatalf("item %d ran %d times", k, c)
				}
				if worker[k] != k%tc.w {
					t.Fatalf("item %d ran on worker %d, want %d", k, worker[k], k%tc.w)
				}
			}
			used := 0
			for wk, ks := range seen {
				if len(ks) > 0 {
					used++
				}
				for q := 1; q < len(ks); q++ {
					if ks[q] <= ks[q-1] {
						t.Fatalf("worker %d ran %v: not in increasing order", wk, ks)
					}
				}
			}
			if used != tc.w {
				t.Fatalf("%d workers used, want %d", used, tc.w)
			}
		})
	}
}

// TestParallelCancel: a cancelled context stops handing out items, the
// error is context.Canceled, and nothing runs after Parallel returns.
func TestParallelCancel(t *testing.T) {
	cases := []struct {
		name     string
		workers  int
		cancelAt int // cancel while running this item; −1: before the call
	}{
		{"before, one worker", 1, -1},
		{"before, four workers", 4, -1},
		{"during, one worker", 1, 10},
		{"during, three workers", 3, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelAt < 0 {
				cancel()
			}
			var ran, after, late atomic.Int32
			var cancelled, returned atomic.Bool
			const n = 100000
			err := Parallel(ctx, n, tc.workers, func(_, k int) {
				if returned.Load() {
					late.Add(1)
				}
				if cancelled.Load() {
					after.Add(1)
				}
				ran.Add(1)
				if k == tc.cancelAt {
					cancel()
					cancelled.Store(true)
				}
			})
			returned.Store(true)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if r := ran.Load(); tc.cancelAt < 0 && r != 0 || r == n {
				t.Fatalf("%d of %d items ran", r, n)
			}
			// Only items already handed out (one per other worker) may
			// start after the cancel.
			if a := after.Load(); a > int32(tc.workers-1) {
				t.Fatalf("%d items started after the cancel with %d workers", a, tc.workers)
			}
			runtime.Gosched()
			if late.Load() != 0 {
				t.Fatal("items ran after Parallel returned")
			}
		})
	}
	t.Run("nil context", func(t *testing.T) {
		called := false
		//lint:ignore SA1012 a nil context is what is tested
		if err := Parallel(nil, 3, 2, func(_, _ int) { called = true }); err == nil || called {
			t.Fatalf("nil context: err %v, called %v", err, called)
		}
	})
}
