package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"attractorlab/assets"
	"attractorlab/sim"
	"attractorlab/ui"
)

func runGUI(args []string) error {
	fs := flag.NewFlagSet("gui", flag.ContinueOnError)
	w2 := fs.String("weights-p2", "", "bare self-attention P=2 weights (default: embedded)")
	w4 := fs.String("weights-p4", "", "bare self-attention P=4 weights (default: embedded)")
	weights := fs.String("weights", "", "alias of --weights-p2")
	wBlock := fs.String("weights-block", "", "recycled block weights for both tasks (default: embedded block-mask and block-noise)")
	wViT := fs.String("weights-vit", "", "ViT weights for both tasks (default: embedded vit-mask and vit-noise)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *weights != "" && *w2 == "" {
		*w2 = *weights
	}
	start := time.Now()
	data, err := sim.LoadData(sim.DataDir())
	if err != nil {
		return err
	}
	var catalogue []sim.Model
	var problems []string
	for _, c := range []struct {
		p    int
		path string
	}{{2, *w2}, {4, *w4}} {
		m, err := sim.LoadBSA(c.p, c.path)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		catalogue = append(catalogue, &sim.BSAModel{M: m})
	}
	for _, c := range []struct{ name, path string }{{"block", *wBlock}, {"vit", *wViT}} {
		m, ps, err := sim.LoadTransformerModel(c.name, c.path)
		problems = append(problems, ps...)
		if err != nil {
			if len(ps) == 0 {
				problems = append(problems, err.Error())
			}
			continue
		}
		catalogue = append(catalogue, m)
	}
	if len(catalogue) == 0 {
		return fmt.Errorf("no model could be loaded: %v", problems)
	}
	catalogue = append(catalogue, &sim.HopfieldModel{Set: data.Train}, &sim.ClassicModel{Set: data.Train})
	a := app.NewWithID("org.attractorlab.app")
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.Icon))
	w := a.NewWindow("Attractor Lab")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	settings := sim.Settings{Corruption: sim.DefaultMask}
	if last := a.Preferences().String("last_scenario"); last != "" {
		if st, _, err := sim.ReadScenario(bytes.NewReader([]byte(last)), "saved session"); err == nil {
			settings = st
		}
	}
	deps := ui.Deps{Data: data, Memories: sim.NewMemories(data.Train), Models: catalogue}
	m := ui.NewMain(ctx, a, w, deps, settings)
	w.SetContent(m.Content())
	w.Resize(fyne.NewSize(1280, 800))
	w.SetOnClosed(func() {
		m.SavePreferences()
		cancel()
	})
	for _, p := range problems {
		m.Warn(p)
	}
	fmt.Printf("window ready %.2fs after start\n", time.Since(start).Seconds())
	w.ShowAndRun()
	return nil
}
