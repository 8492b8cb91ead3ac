package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"attractorlab/sim"
)

// parseFlags parses a command's flags. A refused command line has been
// reported by the flag package (the error, then the usage) and comes back
// as a usageError (exit status 2); -h comes back as flag.ErrHelp (exit 0).
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError{err}
}

func newFlags(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: attractorlab %s\n\nflags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// knobFlags defines a flag for each of sim.Knobs that want keeps, with its
// name, default and range from the knob, and returns what checks the
// flags' values (as given: float32 rounding would hide 1e-50) and writes
// them into settings, naming the first flag out of range.
func knobFlags(fs *flag.FlagSet, want func(*sim.Knob) bool) func(*sim.Settings) error {
	vals := map[*sim.Knob]*float64{}
	for _, k := range sim.Knobs {
		if want(k) {
			vals[k] = fs.Float64(k.Flag, k.Default, knobUsage(k))
		}
	}
	return func(s *sim.Settings) error {
		for _, k := range sim.Knobs {
			if v, ok := vals[k]; ok {
				if err := k.Check(*v, sim.ViaFlag); err != nil {
					return err
				}
				k.Set(s, *v)
			}
		}
		return nil
	}
}

// knobUsage is a knob's flag help: its name and range, and the models
// that read it when its name (a bare symbol: λ) does not say.
func knobUsage(k *sim.Knob) string {
	u := k.Usage()
	if fam := k.Families(); len(fam) > 0 && !strings.Contains(k.Name, " ") {
		u += " of the " + strings.Join(fam, " and ")
	}
	return u
}
