package main

import (
	"errors"
	"flag"
	"fmt"
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
