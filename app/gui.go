package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"attractorlab/assets"
	"attractorlab/sim"
	"attractorlab/sim/lesson"
	"attractorlab/sim/mnist"
	"attractorlab/ui"
)

func runGUI(ctx context.Context, args []string) error {
	fs := newFlags("gui", "[gui] [--lesson NAME|FILE] [--weights-p2 FILE] …")
	w2 := fs.String("weights-p2", "", "bare self-attention P=2 weights (default: embedded)")
	w4 := fs.String("weights-p4", "", "bare self-attention P=4 weights (default: embedded)")
	weights := fs.String("weights", "", "alias of --weights-p2")
	wBlock := fs.String("weights-block", "", "recycled block weights for both tasks (default: embedded block-mask and block-noise)")
	wViT := fs.String("weights-vit", "", "ViT weights for both tasks (default: embedded vit-mask and vit-noise)")
	lessonArg := fs.String("lesson", "", "start a lesson: a shipped lesson's name (attractorlab lesson list) or a lesson file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *weights != "" && *w2 == "" {
		*w2 = *weights
	}
	start := time.Now()
	data, err := mnist.LoadCached()
	if err != nil {
		return err
	}
	files := sim.WeightFiles{BSA2: *w2, BSA4: *w4, Block: *wBlock, ViT: *wViT}
	cat := sim.NewCatalogue(data.Train, files)
	problems, err := cat.LoadAll()
	if err != nil {
		return err
	}
	if data.Warning != "" {
		problems = append(problems, data.Warning)
	}
	var les *lesson.Lesson
	if *lessonArg != "" {
		// A bad lesson stops here, before any window opens.
		if les, err = lesson.Load(*lessonArg, lessonLimitsWith(data, cat, files)); err != nil {
			return fmt.Errorf("--lesson: %w", err)
		}
	}
	a := app.NewWithID("org.attractorlab.app")
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.Icon))
	w := a.NewWindow("Attractor Lab")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The first window opens on the phenomenon (the paper demo at t*); later
	// ones where the last session left off.
	settings, demo := sim.PaperDemo(), true
	if st, ok, problem := savedSession(a.Preferences().String("last_scenario"), cat); ok {
		settings, demo = st, false
	} else if problem != "" {
		problems = append(problems, problem)
	}
	deps := ui.Deps{Data: data, Memories: sim.NewMemories(data.Train), Catalogue: cat, Version: versionText()}
	m := ui.NewMain(ctx, a, w, deps, settings)
	m.OnLesson = func(s string) { fmt.Println(s) }
	w.SetContent(m.Content())
	w.Resize(fyne.NewSize(1280, 800))
	w.SetOnClosed(func() {
		m.SavePreferences()
		cancel()
	})
	// Quit (the menu, Ctrl+Q) and SIGINT/SIGTERM (which Fyne's driver
	// turns into Quit) stop the app without closing the window: the
	// session is saved then too, before Fyne writes the preferences.
	a.Lifecycle().SetOnStopped(func() {
		m.SavePreferences()
		cancel()
	})
	for _, p := range problems {
		m.Warn(p)
	}
	switch {
	case les != nil:
		m.StartLesson(les)
	case demo:
		m.Engine.ShowBest()
	}
	fmt.Printf("window ready %.2fs after start\n", time.Since(start).Seconds())
	w.ShowAndRun()
	return nil
}

// savedSession reads the session the window saved (its preference
// "last_scenario"), checked as a scenario file is: a session saved by
// another version, or edited, is set aside with a warning (problem).
func savedSession(last string, cat *sim.Catalogue) (st sim.Settings, ok bool, problem string) {
	if last == "" {
		return st, false, ""
	}
	st, _, err := cat.ReadScenario(strings.NewReader(last), "saved session")
	if err != nil {
		return st, false, err.Error() + ": opened the paper demo instead"
	}
	return st, true, ""
}
