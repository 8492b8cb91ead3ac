package webtest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestWebPageThrottled measures the page as a slow laptop runs it:
// Chromium's CPU throttled (DevTools' Emulation.setCPUThrottlingRate, the
// factor ATTRACTORLAB_WEB_THROTTLE), it logs the first frame, ten → steps
// with the page's long tasks meanwhile, 30 s of a training run in its
// worker, and the first frame of a returning visit (a new Chromium on the
// same profile, the app and its compiled code from the browser's cache).
// It is a measurement, run by hand (docs/browser.md says how and
// what it gave); it checks only that the page works so slowed. make
// test-web leaves it out.
func TestWebPageThrottled(t *testing.T) {
	dir, rate := os.Getenv("ATTRACTORLAB_WEB"), os.Getenv("ATTRACTORLAB_WEB_THROTTLE")
	if dir == "" || rate == "" {
		t.Skip("ATTRACTORLAB_WEB (the built site) and ATTRACTORLAB_WEB_THROTTLE (e.g. 4) run it")
	}
	factor, err := strconv.ParseFloat(rate, 64)
	if err != nil || factor < 1 || factor > 20 {
		t.Fatalf("ATTRACTORLAB_WEB_THROTTLE=%q: a slowdown factor from 1 to 20", rate)
	}
	srv := serve(t, dir)
	profile := t.TempDir()
	ctx := newBrowser(t, chromedp.UserDataDir(profile))
	if _, err := chromedp.Call(ctx, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: factor}); err != nil {
		t.Fatal(err)
	}
	first := open(t, ctx, srv.URL+"/")
	t.Logf("CPU throttled %g×: first frame %.2f s after navigation", factor, first.Seconds())
	// The opening digit's look-ahead (100 steps): recorded by a worker
	// once one is up, by the page meanwhile.
	stop := watchLongTasks(t, ctx)
	began := time.Now()
	until(t, ctx, "the paper demo", func(s shown) bool { return s.Frames >= 100 && !s.Playing })
	long, gap := stop()
	t.Logf("CPU throttled %g×: the look-ahead (100 steps) recorded %.2f s after the first frame; the page's long tasks meanwhile (ms) %v; its longest gap between frames %.0f ms",
		factor, time.Since(began).Seconds(), long, gap)
	key(t, ctx, "0")
	until(t, ctx, "t = 0", func(s shown) bool { return s.T == 0 })
	stop = watchLongTasks(t, ctx)
	gcBefore := goCycles(t, ctx)
	var steps []time.Duration
	for k := 1; k <= 10; k++ {
		steps = append(steps, timed(t, ctx, func() { key(t, ctx, kb.ArrowRight) }, fmt.Sprintf("s.t === %d", k)))
	}
	long, gap = stop()
	t.Logf("CPU throttled %g×: → median %.0f ms %v; the page's long tasks (ms) %v; its longest gap between frames %.0f ms; the page's Go collected %.0f times meanwhile",
		factor, ms(median(steps)), steps, long, gap, goCycles(t, ctx)-gcBefore)
	if err := chromedp.Do(ctx, chromedp.KeyEvent("i", chromedp.KeyModifiers(chromedp.ModifierCtrl))); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, "the Training window", func(s shown) bool { return s.Training != nil })
	time.Sleep(2 * time.Second)
	stop = watchLongTasks(t, ctx)
	began = time.Now()
	key(t, ctx, kb.Enter)
	until(t, ctx, "running", func(s shown) bool { return s.Training != nil && s.Training.Running })
	time.Sleep(30 * time.Second)
	long, gap = stop()
	s := current(t, ctx)
	t.Logf("CPU throttled %g×, %.0f s of training in a worker (%d epochs finished): the page's long tasks (ms) %v; its longest gap between frames %.0f ms",
		factor, time.Since(began).Seconds(), s.Training.Epochs, long, gap)
	if !s.Training.Running {
		t.Fatalf("the training run ended: %q", s.Training.Status)
	}
	if err := chromedp.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	again := newBrowser(t, chromedp.UserDataDir(profile))
	if _, err := chromedp.Call(again, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: factor}); err != nil {
		t.Fatal(err)
	}
	first = open(t, again, srv.URL+"/")
	t.Logf("CPU throttled %g×, a returning visit: first frame %.2f s after navigation", factor, first.Seconds())
}

// goCycles is how many collections the page's Go has run since it started.
func goCycles(t *testing.T, ctx context.Context) float64 {
	t.Helper()
	g, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
		Cycles float64 `json:"cycles"`
	}](`attractorlab.goMemory()`))
	if err != nil {
		t.Fatal(err)
	}
	return g.Cycles
}
