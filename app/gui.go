package main

import (
	"flag"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"attractorlab/assets"
	"attractorlab/sim"
	"attractorlab/ui"
)

func runGUI(args []string) error {
	fs := flag.NewFlagSet("gui", flag.ContinueOnError)
	weights := fs.String("weights", "", "bare self-attention weights (default: embedded P=2)")
	patch := fs.Int("patch", 2, "patch side of the embedded weights")
	if err := fs.Parse(args); err != nil {
		return err
	}
	data, err := sim.LoadData(sim.DataDir())
	if err != nil {
		return err
	}
	m, err := sim.LoadBSA(*patch, *weights)
	if err != nil {
		return fmt.Errorf("weights: %w", err)
	}
	a := app.NewWithID("org.attractorlab.app")
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.Icon))
	w := a.NewWindow("Attractor Lab")
	w.SetContent(ui.NewExplorer(data, m).View(w))
	w.Resize(fyne.NewSize(1100, 560))
	w.ShowAndRun()
	return nil
}
