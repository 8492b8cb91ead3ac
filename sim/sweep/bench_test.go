package sweep

import (
	"context"
	"testing"
	"time"

	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// BenchmarkEnsembleWhilePlaying is the window's ensemble: 1,000 test digits
// × 100 steps of the bare model under noise on every core, while the
// engine plays at 60 steps/s and is sent a command (another digit) every
// 250 ms (a person clicking) or every 20 ms (a person holding a key). It
// reports the ensemble's seconds and how long commands took to show up in
// a published snapshot (mean and worst). Each command costs the engine its
// 100-step horizon, so at 50 commands/s the engine takes most of a core.
func BenchmarkEnsembleWhilePlaying(b *testing.B) {
	for _, every := range []time.Duration{250 * time.Millisecond, 20 * time.Millisecond} {
		b.Run("command-every-"+every.String(), func(b *testing.B) { ensembleWhilePlaying(b, every) })
	}
}

func ensembleWhilePlaying(b *testing.B, every time.Duration) {
	data, err := mnist.LoadData("")
	if err != nil {
		b.Fatal(err)
	}
	cat := sim.NewCatalogue(data.Train, sim.WeightFiles{})
	seen := make(chan *sim.Snapshot, 1024)
	e := sim.NewEngine(sim.EngineConfig{Data: data, Memories: sim.NewMemories(data.Train), Catalogue: cat, Settings: sim.DefaultSettings(),
		OnSnap: func(s *sim.Snapshot) {
			select {
			case seen <- s:
			default:
			}
		}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.Run(ctx)
	e.SetSpeed(60)
	e.Play()
	set := sim.DefaultSettings()
	set.Corruption = sim.DefaultNoise
	env := Env{Data: data, Cat: cat}
	var worst, total time.Duration
	var secs float64
	cmds := 0
	for b.Loop() {
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := Ensemble(context.Background(), env, set, "bsa-p2", 1000, 100, nil)
			done <- err
		}()
	wait:
		for k := 0; ; k++ {
			select {
			case err := <-done:
				if err != nil {
					b.Fatal(err)
				}
				break wait
			case <-time.After(every):
			}
			idx := (cmds % 900) + 1
			cmds++
			t0 := time.Now()
			e.Update(func(s *sim.Settings) { s.Index = idx })
			for s := range seen {
				if s.Settings.Index == idx {
					break
				}
			}
			d := time.Since(t0)
			total += d
			worst = max(worst, d)
			e.Play()
		}
		secs += time.Since(start).Seconds()
	}
	b.ReportMetric(secs/float64(b.N), "s/ensemble")
	b.ReportMetric(float64(total.Microseconds())/float64(max(1, cmds))/1000, "ms/command")
	b.ReportMetric(float64(worst.Microseconds())/1000, "ms-worst")
}

// BenchmarkEnsemble is the window's ensemble alone: 1,000 test digits ×
// 100 steps of the bare model under noise on every core.
func BenchmarkEnsemble(b *testing.B) {
	data, err := mnist.LoadData("")
	if err != nil {
		b.Fatal(err)
	}
	set := sim.DefaultSettings()
	set.Corruption = sim.DefaultNoise
	env := Env{Data: data, Cat: sim.NewCatalogue(data.Train, sim.WeightFiles{})}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Ensemble(context.Background(), env, set, "bsa-p2", 1000, 100, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000*101)/b.Elapsed().Seconds(), "image-steps/s")
}

// BenchmarkEnsemblePart is one Web Worker's share of the page's default
// ensemble (50 digits over two workers): the first 25 embedded test
// digits × 100 steps of bsa-p2 under the paper demo's noise, on one
// goroutine's worth of work. Under Node (GOOS=js GOARCH=wasm) it is what
// a worker computes; natively with -tags purego and -cpu 1, the desktop's
// portable build on one core.
func BenchmarkEnsemblePart(b *testing.B) {
	train, test, err := mnist.Sample()
	if err != nil {
		b.Fatal(err)
	}
	set := sim.PaperDemo()
	set.Toggled = nil
	env := Env{Data: &mnist.Data{Train: train, Test: test}, Cat: sim.NewCatalogue(train, sim.WeightFiles{})}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Ensemble(context.Background(), env, set, "bsa-p2", 25, 100, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*25*101)/b.Elapsed().Seconds(), "image-steps/s")
}
