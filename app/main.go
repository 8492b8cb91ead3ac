// Command attractorlab is Attractor Lab: with no arguments it opens the
// window; subcommands run the headless tools (see `attractorlab help`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"

	// Before Fyne initialises: a locale it can parse (no error under LANG=C).
	_ "attractorlab/app/internal/posixlocale"
	"attractorlab/sim"
)

const usage = `Attractor Lab — self-attention as an attractor network

usage: attractorlab [command] [flags]

commands:
  (none), gui   open the window (embedded sample and pretrained weights);
                --lesson NAME|FILE presents a lesson, --link URL opens a link
                (File → Copy link makes one)
  data          fetch MNIST into the cache (--data DIR to import local files)
  reproduce     run a model (or --model all) on test digits; write curve.csv,
                mse.png and fig1.png; --fig2 writes the patch-variance figure
  sweep         run models over corruption level × λ, β or K × seeds: sweep.csv
                and basin maps; --shard i/n (or Slurm / Kubernetes indices)
                splits it across machines, 'sweep merge' joins the parts
  train         train the bare self-attention by pseudo-likelihood, or
                --model block|vit by backprop
  capacity      train the bare self-attention on 100, 1,000 and 10,000 images
                with the same updates and compare their transient memories
  phase         the training phase diagram: training images × λ × seeds,
                memorisation against generalisation; sharded like sweep,
                'phase merge' joins the parts
  dynamics      why a memory is transient: the leading eigenvalues of the
                step's Jacobian at chosen steps and the growth of the escape
                direction from t*, per digit; sharded like sweep,
                'dynamics merge' joins the parts
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
	// A new file only: a profile never replaces what is there.
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("ATTRACTORLAB_CPUPROFILE=%s exists: name a new file for the profile", path)
	}
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

// sayPortable tells, on start-up, that this binary runs the portable
// kernels and why (several times slower: a plain `go build ./app` lacks the
// SIMD experiment the Makefile sets) — except for help and version, which
// say it themselves or compute nothing, and in the browser, where the
// portable kernels are the only ones.
func sayPortable(w io.Writer, args []string) {
	if runtime.GOOS == "js" {
		return
	}
	if len(args) > 0 {
		switch args[0] {
		case "help", "-h", "--help", "version", "--version":
			return
		}
	}
	if text, fast := sim.Kernels(); !fast {
		fmt.Fprintln(w, "attractorlab: running the "+text)
	}
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
		return runGUI(ctx, args)
	case "data":
		return runData(ctx, args)
	case "reproduce":
		return runReproduce(ctx, args)
	case "train":
		return runTrain(ctx, args)
	case "capacity":
		return runCapacity(ctx, args)
	case "lesson":
		return runLesson(ctx, args)
	case "sweep":
		return runSweep(ctx, args)
	case "phase":
		return runPhase(ctx, args)
	case "dynamics":
		return runDynamics(ctx, args)
	case "worker":
		return runWorker(ctx, args)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	case "version", "--version":
		k, _ := sim.Kernels()
		fmt.Println("attractorlab", versionText())
		fmt.Println(k)
		return nil
	}
	return fmt.Errorf("%w %q\n\n%s", errUsage, cmd, usage)
}

// stopOnSignal returns a context cancelled by the first SIGINT (Ctrl-C) or
// SIGTERM (how Slurm, Kubernetes and systemd stop a job): the command then
// stops cleanly, removing its temporary files. A second signal exits at
// once.
func stopOnSignal() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s, ok := <-sigs
		if !ok {
			return
		}
		fmt.Fprintf(os.Stderr, "\nattractorlab: %s: stopping (send it again to quit at once)\n", signalError{s}.name())
		cancel(signalError{s})
		if s, ok = <-sigs; ok {
			os.Exit(signalError{s}.exitCode())
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(sigs)
		cancel(nil)
	}
}

// signalError is the cause of a context a signal cancelled.
type signalError struct{ sig os.Signal }

func (e signalError) Error() string { return "stopped by " + e.name() }

func (e signalError) name() string {
	switch e.sig {
	case os.Interrupt:
		return "SIGINT (Ctrl-C)"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return e.sig.String()
}

// exitCode is the shell's code for a command a signal stopped: 128 + its
// number (130 for SIGINT, 143 for SIGTERM).
func (e signalError) exitCode() int {
	if s, ok := e.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// usageError is a command line the flags refused; it was reported (with
// the flags' usage) and exits 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	ctx, stop := stopOnSignal()
	sayPortable(os.Stderr, os.Args[1:])
	err := profiled(func() error { return run(ctx, os.Args[1:]) })
	stop()
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	case errors.As(err, &ue):
		// The flag package printed the error and the usage already.
		os.Exit(2)
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		var se signalError
		if !errors.As(context.Cause(ctx), &se) {
			se = signalError{os.Interrupt}
		}
		if errors.Is(err, context.Canceled) && err.Error() != context.Canceled.Error() {
			fmt.Fprintf(os.Stderr, "attractorlab: %v; %v\n", se, err)
		} else {
			fmt.Fprintf(os.Stderr, "attractorlab: %v; nothing written\n", se)
		}
		os.Exit(se.exitCode())
	default:
		fmt.Fprintln(os.Stderr, "attractorlab:", err)
		os.Exit(1)
	}
}
