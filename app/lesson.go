package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"attractorlab/sim"
	"attractorlab/sim/lesson"
	"attractorlab/sim/mnist"
)

const lessonUsage = `usage:
  attractorlab lesson list          the shipped lessons, one per line: name, then title
  attractorlab lesson check FILE    check a lesson file; print its slides
`

// runLesson runs the lesson subcommands.
func runLesson(_ context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: lesson needs a subcommand\n\n%s", errUsage, lessonUsage)
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("lesson "+sub, flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	lim, err := lessonLimits()
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		if fs.NArg() != 0 {
			return fmt.Errorf("lesson list takes no arguments (got %q)", fs.Args())
		}
		ls, err := lesson.Shipped(lim)
		if err != nil {
			return err
		}
		for _, l := range ls {
			fmt.Printf("%-18s %s\n", l.Name, l.Title)
		}
		return nil
	case "check":
		if fs.NArg() != 1 {
			return fmt.Errorf("lesson check needs one FILE or shipped lesson name")
		}
		l, err := lesson.Load(fs.Arg(0), lim)
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
	}
	return fmt.Errorf("%w: lesson %q\n\n%s", errUsage, sub, lessonUsage)
}

// lessonLimits are the digits and models a lesson may use here.
func lessonLimits() (lesson.Limits, error) {
	data, err := mnist.LoadCached()
	if err != nil {
		return lesson.Limits{}, err
	}
	if data.Warning != "" {
		fmt.Fprintln(os.Stderr, "warning:", data.Warning)
	}
	return lesson.LimitsOf(data, sim.NewCatalogue(data.Train, sim.WeightFiles{})), nil
}
