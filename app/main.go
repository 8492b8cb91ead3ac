// Command attractorlab is Attractor Lab: with no arguments it opens the
// window; subcommands run the headless tools (see `attractorlab help`).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"

	// Before Fyne initialises: a locale it can parse (no error under LANG=C).
	_ "attractorlab/app/internal/posixlocale"
)

const usage = `Attractor Lab — self-attention as an attractor network

usage: attractorlab [command] [flags]

commands:
  (none), gui   open the window (embedded sample and pretrained weights);
                --lesson NAME|FILE presents a lesson
  data          fetch MNIST into the cache (--data DIR to import local files)
  reproduce     run a model (or --model all) on test digits; write curve.csv,
                mse.png and fig1.png; --fig2 writes the patch-variance figure
  sweep         run models over corruption level × λ, β or K × seeds: sweep.csv
                and basin maps; --shard i/n (or Slurm / Kubernetes indices)
                splits it across machines, 'sweep merge' joins the parts
  train         train the bare self-attention by pseudo-likelihood, or
                --model block|vit by backprop
  lesson        list: the shipped lessons; check FILE: check a lesson file;
                export NAME|FILE --out DIR: its slides as PNG and a handout
  version       print the version
  help          this text

Run 'attractorlab COMMAND -h' for a command's flags.
`

// profiled runs f, writing a CPU profile of it (for go tool pprof) to the
// file named by ATTRACTORLAB_CPUPROFILE when that is set.
func profiled(f func() error) error {
	path := os.Getenv("ATTRACTORLAB_CPUPROFILE")
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("ATTRACTORLAB_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return fmt.Errorf("ATTRACTORLAB_CPUPROFILE %s: %w", path, err)
	}
	err = f()
	pprof.StopCPUProfile()
	if cerr := out.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("ATTRACTORLAB_CPUPROFILE %s: %w", path, cerr)
	}
	return err
}

// errUsage is an unknown command.
var errUsage = errors.New("unknown command")

// run dispatches a command line (without the program name).
func run(ctx context.Context, args []string) error {
	cmd := "gui"
	if len(args) > 0 && (len(args[0]) == 0 || args[0][0] != '-' || args[0] == "-h" || args[0] == "--help" || args[0] == "--version") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "gui":
		return runGUI(args)
	case "data":
		return runData(ctx, args)
	case "reproduce":
		return runReproduce(ctx, args)
	case "train":
		return runTrain(ctx, args)
	case "lesson":
		return runLesson(ctx, args)
	case "sweep":
		return runSweep(ctx, args)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	case "version", "--version":
		fmt.Println("attractorlab", versionText())
		return nil
	}
	return fmt.Errorf("%w %q\n\n%s", errUsage, cmd, usage)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := profiled(func() error { return run(ctx, os.Args[1:]) })
	if errors.Is(err, errUsage) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "attractorlab: interrupted")
			os.Exit(130)
		}
		fmt.Fprintln(os.Stderr, "attractorlab:", err)
		os.Exit(1)
	}
}
