package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"attractorlab/sim"
	"attractorlab/sim/lesson"
	"attractorlab/sim/mnist"
	"attractorlab/ui"
)

const lessonUsage = `usage:
  attractorlab lesson list          the shipped lessons, one per line: name, then title
  attractorlab lesson check FILE    check a lesson file; print its slides
  attractorlab lesson export FILE|NAME --out DIR [--size 1920x1080] [--theme light|dark] [--force]
                                    render every slide as presentation mode shows it (no display needed)
                                    to DIR/slide-NN.png (a question slide adds slide-NN-answer.png)
                                    and DIR/handout.md
`

// runLesson runs the lesson subcommands.
func runLesson(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: lesson needs a subcommand\n\n%s", errUsage, lessonUsage)
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help", "help":
		// Help asked for: the usage, exit 0 (it said "unknown command").
		fmt.Print("usage: attractorlab lesson list | check FILE | export FILE|NAME --out DIR\n\n" + strings.TrimPrefix(lessonUsage, "usage:\n"))
		return nil
	}
	fs := flag.NewFlagSet("lesson "+sub, flag.ContinueOnError)
	var out, size, themeName *string
	var force *bool
	if sub == "export" {
		out = fs.String("out", "", "output directory (created)")
		size = fs.String("size", "1920x1080", "image size WIDTHxHEIGHT, "+sizeRange)
		themeName = fs.String("theme", "light", "light or dark")
		force = fs.Bool("force", false, "replace files already in --out")
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	lim, data, cat, err := lessonLimits()
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		if len(pos) != 0 {
			return fmt.Errorf("lesson list takes no arguments (got %q)", pos)
		}
		ls, err := lesson.Shipped(lim)
		for _, l := range ls {
			fmt.Printf("%-18s %s\n", l.Name, l.Title)
		}
		if err != nil {
			// The lessons that cannot run here are named; the others run.
			fmt.Fprintln(os.Stderr, "warning:", err)
		}
		return nil
	case "check":
		if len(pos) != 1 {
			return fmt.Errorf("lesson check needs one FILE or shipped lesson name")
		}
		l, err := lesson.Load(pos[0], lim)
		if err != nil {
			return err
		}
		fmt.Printf("%s: %q, %d slides\n", l.Name, l.Title, len(l.Slides))
		for k, s := range l.Slides {
			q := ""
			if s.Question != "" {
				q = " (asks a question)"
			}
			fmt.Fprintf(os.Stdout, "  %2d  %s%s\n", k+1, s.Title, q)
		}
		return nil
	case "export":
		if len(pos) != 1 {
			return fmt.Errorf("lesson export needs one FILE or shipped lesson name\n\n%s", lessonUsage)
		}
		w, h, err := parseSize(*size)
		if err != nil {
			return err
		}
		th, ok := map[string]string{"light": "Light", "dark": "Dark"}[strings.ToLower(*themeName)]
		if !ok {
			return fmt.Errorf("--theme %q: allowed light or dark", *themeName)
		}
		if *out == "" {
			return fmt.Errorf("lesson export: --out DIR is required")
		}
		l, err := lesson.Load(pos[0], lim)
		if err != nil {
			return err
		}
		return exportLesson(ctx, l, data, cat, *out, w, h, th, *force)
	}
	return fmt.Errorf("%w: lesson %q\n\n%s", errUsage, sub, lessonUsage)
}

// parseInterspersed parses flags that may come after the positional
// arguments (lesson export NAME --out DIR) and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

const sizeRange = "width 640 … 7680 and height 400 … 4320"

// parseSize reads --size WIDTHxHEIGHT.
func parseSize(s string) (int, int, error) {
	ws, hs, ok := strings.Cut(strings.ToLower(s), "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("--size %q: want WIDTHxHEIGHT, e.g. 1920x1080", s)
	}
	if w < 640 || w > 7680 || h < 400 || h > 4320 {
		return 0, 0, fmt.Errorf("--size = %dx%d is out of range (allowed %s)", w, h, sizeRange)
	}
	return w, h, nil
}

// shotName is a slide picture's file name.
func shotName(slide int, revealed bool) string {
	if revealed {
		return fmt.Sprintf("slide-%02d-answer.png", slide+1)
	}
	return fmt.Sprintf("slide-%02d.png", slide+1)
}

// exportLesson writes every slide's picture and the handout; nothing is
// written unless all of it is (outputs), and a cancelled ctx (Ctrl-C,
// SIGTERM) stops it between slides, leaving nothing behind.
func exportLesson(ctx context.Context, l *lesson.Lesson, data *mnist.Data, cat *sim.Catalogue, dir string, w, h int, themeName string, force bool) error {
	var paths []string
	for k, s := range l.Slides {
		paths = append(paths, filepath.Join(dir, shotName(k, false)))
		if s.Question != "" {
			paths = append(paths, filepath.Join(dir, shotName(k, true)))
		}
	}
	handout := filepath.Join(dir, "handout.md")
	o, err := planOutputs("--out", force, append(paths, handout)...)
	if err != nil {
		return fmt.Errorf("lesson export: %w", err)
	}
	defer o.Abort()
	deps := ui.Deps{Data: data, Memories: sim.NewMemories(data.Train), Catalogue: cat, Version: versionText(),
		Sources: openSources(data, sim.WeightFiles{})}
	var md strings.Builder
	fmt.Fprintf(&md, "# %s\n\nA lesson of Attractor Lab %s (`attractorlab --lesson %s` runs it live).\n"+
		"Every number below was read from the models as they ran.\n", l.Title, versionText(), l.Name)
	err = ui.LessonShotsContext(ctx, deps, l, w, h, themeName, func(s ui.Shot) error {
		name := shotName(s.Slide, s.Revealed)
		if err := o.Write(filepath.Join(dir, name), func(wr io.Writer) error { return png.Encode(wr, s.Image) }); err != nil {
			return err
		}
		sl := l.Slides[s.Slide]
		if !s.Revealed {
			fmt.Fprintf(&md, "\n## %d. %s\n", s.Slide+1, sl.Title)
		} else {
			fmt.Fprintf(&md, "\n### The answer\n")
		}
		fmt.Fprintf(&md, "\n![slide %d%s](%s)\n\n", s.Slide+1, map[bool]string{true: ", answer"}[s.Revealed], name)
		text := s.Text
		if s.Revealed {
			text = lesson.Fill(sl.Answer, s.Snapshot)
		}
		md.WriteString(strings.ReplaceAll(text, "\n", "\n\n") + "\n")
		if f := sl.Train; f != nil && !s.Revealed {
			start := "random couplings"
			if f.FromShipped {
				start = "the shipped weights"
			}
			fmt.Fprintf(&md, "\n*In the window this slide trains the bare self-attention live (P = %d from %s, %s images, %s epochs, seed %s); "+
				"`%s` makes the same couplings. The picture shows the shipped model.*\n",
				f.Patch, start, f.Images, f.Epochs, f.Seed, f.Command())
		}
		fmt.Fprintf(os.Stderr, "%s  (t = %d)\n", name, s.Snapshot.T)
		return nil
	})
	var se *ui.SizeError
	if errors.As(err, &se) {
		return fmt.Errorf("lesson export: --size = %w", err)
	}
	if err != nil {
		return fmt.Errorf("lesson export: %w", err)
	}
	if err := o.Write(handout, func(wr io.Writer) error { _, err := io.WriteString(wr, md.String()); return err }); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lesson export: %w", err)
	}
	if err := o.Commit(); err != nil {
		return err
	}
	fmt.Printf("wrote %d slide images and %s\n", len(paths), handout)
	return nil
}

// lessonLimits are the digits and models a lesson may use here, with the
// data and the catalogue they were read from (its models loaded).
func lessonLimits() (lesson.Limits, *mnist.Data, *sim.Catalogue, error) {
	data, err := mnist.LoadCached()
	if err != nil {
		return lesson.Limits{}, nil, nil, err
	}
	if data.Warning != "" {
		fmt.Fprintln(os.Stderr, "warning:", data.Warning)
	}
	cat := sim.NewCatalogue(data.Train, sim.WeightFiles{})
	return lesson.LimitsOf(data, cat), data, cat, nil
}

// lessonLimitsWith are the limits of data and cat, whose weights came from
// files: a model whose file does not load is refused naming its flag.
func lessonLimitsWith(data *mnist.Data, cat *sim.Catalogue, files sim.WeightFiles) lesson.Limits {
	lim := lesson.LimitsOf(data, cat)
	model := lim.Model
	lim.Model = func(name string) (sim.ModelInfo, error) {
		info, err := model(name)
		if err == nil {
			return info, nil
		}
		if sp, ok := sim.Spec(name); ok && files[name] != "" {
			err = fmt.Errorf("its weights (--%s) did not load: %w", sp.WeightsFlag, err)
		}
		return info, err
	}
	return lim
}
