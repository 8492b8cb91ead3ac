//go:build js

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"syscall/js"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"attractorlab/sim"
	"attractorlab/sim/mnist"
	"attractorlab/sim/sweep"
	"attractorlab/sim/webwork"
	"attractorlab/ui"
)

// In the page Fyne's check that each of its calls comes from its own
// goroutine (run at every refresh, and more) reads the calling goroutine's
// stack to find its number: 2.3 ms of a step's work in a profile, and
// 90–105 ms of each turn of presentation mode, which refreshes every
// object. The page declares the app migrated to fyne.Do (Fyne's metadata
// migration "fyneDo"), which leaves the check out and keeps Fyne's
// synchronised caches. (Fyne's migrated_fynedo tag, which the page was
// once built with, also replaces those caches with plain maps, and the
// page crashed: docs/browser.md.) The desktop keeps the check, and its
// tests with it; so does a page whose test asks for it
// (window.attractorlabKeepFyneCheck, set before the app starts:
// TestWebPagePlayed), which says so in window.attractorlabFyneCheckKept.
func init() {
	if js.Global().Get("attractorlabKeepFyneCheck").Truthy() {
		js.Global().Set("attractorlabFyneCheckKept", true)
		return
	}
	fyneapp.SetMetadata(fyne.AppMetadata{ID: "org.attractorlab.app", Name: "Attractor Lab",
		Version: appVersion, Build: appBuild, Migrations: map[string]bool{"fyneDo": true}})
}

// pageMemoryLimit is the Go heap's soft limit in the page until its
// first collection; after each one the limit follows what it found live
// (pageLimitFor). The page's WebAssembly memory only grows, up to the
// heap's peak, and by default the collector lets the heap reach twice what
// is live: recording a run to t = 1,000 took the page from about 170 to
// 250 MB while what was live grew from about 80 to 105 MB. Under a limit
// the collector runs sooner instead.
//
// A fixed limit has a cost once more than it is live (the test's page
// after its links and lessons holds over 200 MB live): the collector then
// runs as often as Go's cap on its CPU share allows, about half of the
// page's one thread. The page therefore set the limit from what was live
// every two seconds, which still let a compare link, whose models and runs
// took what was live from 46 to 115 MB in a few seconds, run 49
// collections in 5.6 s; now it sets it after every collection
// (afterEachGC): 8. The workers keep a tighter limit of their own
// (workerLimitFor).
const pageMemoryLimit = 112 << 20

// pageLimitFor is the page's soft limit when live bytes were live at the
// last collection: half as much again as is live, at least 32 MiB more,
// and never under 64 MiB. The collector then runs about twice as often as
// Go's default, not all the time. About 47 MB are live after load, and
// the page's Go heap then holds about 87 MB (its peak while loading); a
// run recorded to t = 1,000 has about 58 MB live, so the limit keeps the
// heap near what loading left (at least 48 MiB more let it grow to 112 MiB,
// the page's memory by 26 MB).
func pageLimitFor(live uint64) int64 {
	return max(64<<20, int64(live)+max(32<<20, int64(live)/2))
}

// workerLimitFor is a worker's soft limit when live bytes were live at
// the last collection: 64 MiB, or a quarter as much again as is live (at
// least 16 MiB more) once that is more. A
// worker that records the look-ahead stays up beside the page, and its
// memory counts with the page's; its garbage is little (the frames it
// sends), so a collector running about four times as often as Go's
// default costs it little.
func workerLimitFor(live uint64) int64 {
	return max(64<<20, int64(live)+max(16<<20, int64(live)/4))
}

func init() {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		debug.SetMemoryLimit(workerLimitFor(0))
		afterEachGC(func() { followLive(workerLimitFor) })
		return
	}
	debug.SetMemoryLimit(pageMemoryLimit)
	afterEachGC(func() { followLive(pageLimitFor) })
}

// followLive sets the page's soft limit from what was live at the last
// collection (pageLimitFor), or a worker's (workerLimitFor), and never
// under what the runtime holds already: a WebAssembly memory never
// shrinks, so a limit under it would save nothing and only have the
// collector run more often. (After load the page holds about 80 MB with
// 46 MB live, and live + 32 MiB is about 80 MB: close. Ten → steps with
// the CPU throttled 4× ran one collection with this floor and without.)
func followLive(limitFor func(live uint64) int64) {
	ms := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(ms)
	held := int64(ms[1].Value.Uint64() - ms[2].Value.Uint64())
	debug.SetMemoryLimit(max(limitFor(ms[0].Value.Uint64()), held))
}

// goMemory is the page's Go memory for its test: what the collector found
// live at its last cycle and what the runtime holds, in bytes, and how many
// collections it has run and bytes it has allocated since the start.
func goMemory() any {
	ms := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(ms)
	return map[string]any{"live": float64(ms[0].Value.Uint64()), "total": float64(ms[1].Value.Uint64()),
		"cycles": float64(ms[2].Value.Uint64()), "allocs": float64(ms[3].Value.Uint64())}
}

// pageWorkers gives d the page's Web Workers, which run the population
// jobs, training, the engine's look-ahead and the State space window's
// projection (none when the page has no workers: they run on its thread).
func pageWorkers(d *ui.Deps) {
	if p := webwork.NewPool(); p != nil {
		d.Remote, d.Trainer, d.Ahead, d.Space = p, p, p, p
	}
}

// runWorker is `attractorlab worker`: the app as one of the page's Web
// Workers (assets/web/worker.js starts it). It loads the data sets as the
// window does (the embedded sample; Fashion-MNIST's, fetched through the
// page) and each model once, and runs the parts of population jobs the
// page sends it (webwork.Serve).
func runWorker(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("worker takes no arguments (got %q)", args[0])
	}
	home, err := mnist.LoadCached()
	if err != nil {
		return err
	}
	// Each message the worker sends carries its Go memory (worker.js), for
	// the page's account of its memory.
	js.Global().Get("attractorlab").Set("goMemory", js.FuncOf(func(js.Value, []js.Value) any { return goMemory() }))
	sources := map[string]webwork.Source{}
	var mu sync.Mutex // the warm-up and a job may ask at once
	return webwork.Serve(ctx, func(dataset string) (webwork.Source, error) {
		mu.Lock()
		defer mu.Unlock()
		name := mnist.DatasetOrMNIST(dataset)
		if src, ok := sources[name]; ok {
			return src, nil
		}
		var data *mnist.Data
		switch name {
		case home.Name():
			data = home
		case mnist.FashionName:
			if data, err = mnist.LoadFashionData(""); err != nil {
				return webwork.Source{}, fmt.Errorf("Fashion-MNIST cannot open in the worker: %w", err)
			}
		default:
			return webwork.Source{}, fmt.Errorf("the page's workers run MNIST and Fashion-MNIST, not %s", mnist.DatasetLabel(name))
		}
		src := webwork.Source{Env: sweep.Env{Data: data, Cat: sim.NewCatalogue(data.Train, sim.WeightFiles{}), Workers: 1},
			Train: data.Train, Test: data.Test}
		// Training on MNIST uses the recipe's 10,000 training digits (the
		// embedded sample), as the window does.
		if name == mnist.MNISTName {
			if src.Train, src.Test, err = mnist.Sample(); err != nil {
				return webwork.Source{}, err
			}
		}
		// Made once, on first use: the worker's warm-up and its first job
		// may ask at once (the search's preparation pauses for the page).
		src.Memories = sync.OnceValue(func() *sim.Memories { return sim.NewMemories(data.Train) })
		sources[name] = src
		return src, nil
	})
}

// pageAddress is the page the web build runs in: its whole address (a link
// to open when it is one) and the address without query or fragment (the
// base of the links File → Copy link makes).
func pageAddress() (href, base string, ok bool) {
	loc := js.Global().Get("location")
	if loc.IsUndefined() {
		return "", "", false
	}
	return loc.Get("href").String(), loc.Get("origin").String() + loc.Get("pathname").String(), true
}

// pagePhase puts what the start does next on the page's loading screen
// and lets the browser paint it (index.html's attractorlab.phase calls
// back after the next frame, or within 100 ms; at once in a hidden tab):
// the start keeps the page's one thread busy for seconds, and without a
// pause the screen would say the same thing throughout. It returns how
// long the pause took.
func pagePhase(what string) time.Duration {
	page := js.Global().Get("attractorlab")
	if page.IsUndefined() || page.Get("phase").IsUndefined() {
		return 0
	}
	t0 := time.Now()
	done := make(chan struct{})
	f := js.FuncOf(func(js.Value, []js.Value) any {
		close(done)
		return nil
	})
	page.Call("phase", what, f)
	<-done
	f.Release()
	return time.Since(t0)
}

// pageReady fills the window in (opening, on Fyne's goroutine), then tells
// the page the window is up: it takes its loading screen away and notes
// the time. From then on the page's attractorlab.shownJSON holds what the
// window shows (ui.Shown) — set as each snapshot is drawn, with shownAt
// its time, and looked at again every tenth of a second (the status line
// and dialogs change without a snapshot).
func pageReady(ctx context.Context, m *ui.Main, opening func(), hold chan struct{}) {
	page := js.Global().Get("attractorlab")
	if page.IsUndefined() {
		close(hold)
		fyne.DoAndWait(opening)
		return
	}
	perf := js.Global().Get("performance")
	page.Set("goMemory", js.FuncOf(func(js.Value, []js.Value) any { return goMemory() }))
	last := ""
	set := func(s ui.Shown) { // on Fyne's goroutine
		if b, err := json.Marshal(s); err == nil && string(b) != last {
			last = string(b)
			page.Set("shownJSON", last)
			page.Set("shownAt", perf.Call("now"))
		}
	}
	publish := func() { fyne.DoAndWait(func() { set(m.Shown()) }) }
	// One turn of Fyne's loop, not three: each waits for the loop, which
	// may be painting the whole window for the first time.
	fyne.DoAndWait(func() {
		opening()
		m.OnApplied = func() { set(m.Shown()) }
		set(m.Shown())
	})
	// A link to this page clicked while it is open changes only the
	// fragment (the browser does not reload): the window opens it. The
	// page as it was before (an address that is not a link) is kept, so
	// the browser's Back returns to it instead of reporting an address
	// that names nothing to open.
	before := map[string]string{} // address → the state it showed when a link replaced it
	js.Global().Call("addEventListener", "hashchange", js.FuncOf(func(_ js.Value, args []js.Value) any {
		href := js.Global().Get("location").Get("href").String()
		old := ""
		if len(args) > 0 && args[0].Get("oldURL").Type() == js.TypeString {
			old = args[0].Get("oldURL").String()
		}
		fyne.Do(func() {
			if old != "" && !sim.IsLink(old) {
				if st := m.StateLink(); st != "" {
					before[old] = st
				}
			}
			switch st, ok := before[href]; {
			case sim.IsLink(href):
				m.OpenLink(href)
			case ok:
				m.ReturnTo(st)
			}
		})
		return nil
	}))
	// The session is remembered as the desktop remembers it when its
	// window closes: a page is left (closed, reloaded, navigated away)
	// without closing the app, so it is saved then, into the browser's
	// local storage. The page's own thread is the app's: nothing else runs
	// while this does.
	save := js.FuncOf(func(js.Value, []js.Value) any {
		m.SavePreferences()
		return nil
	})
	js.Global().Call("addEventListener", "pagehide", save)
	if !page.Get("ready").IsUndefined() {
		page.Call("ready")
	}
	// The engine records the horizon once the first frame is painted
	// (the page notes its time), or after ten seconds (a page opened in a
	// background tab paints nothing until it is shown).
	held := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
			if hold != nil && (page.Get("firstFrame").Truthy() || time.Since(held) > 10*time.Second) {
				close(hold)
				hold = nil
			}
			publish()
		}
	}
}
