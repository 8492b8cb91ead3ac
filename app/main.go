// Command attractorlab is Attractor Lab: with no arguments it opens the
// window; subcommands run the headless tools (see `attractorlab help`).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
)

const usage = `Attractor Lab — self-attention as an attractor network

usage: attractorlab [command] [flags]

commands:
  (none), gui   open the window (embedded sample and pretrained weights)
  data          fetch MNIST into the cache (--data DIR to import local files)
  reproduce     run a model (or --model all) on test digits; write curve.csv,
                mse.png and fig1.png; --fig2 writes the patch-variance figure
  train         train the bare self-attention by pseudo-likelihood, or
                --model block|vit by backprop
  help          this text

Run 'attractorlab COMMAND -h' for a command's flags.
`

func main() {
	args := os.Args[1:]
	cmd := "gui"
	if len(args) > 0 && (len(args[0]) == 0 || args[0][0] != '-') {
		cmd, args = args[0], args[1:]
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch cmd {
	case "gui":
		err = runGUI(args)
	case "data":
		err = runData(ctx, args)
	case "reproduce":
		err = runReproduce(ctx, args)
	case "train":
		err = runTrain(ctx, args)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n\n%s", cmd, usage)
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
