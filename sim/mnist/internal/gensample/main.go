// Command gensample writes the embedded sample of assets/sample from the
// real MNIST files: the seeded 10,000-image training subset (1,000 per
// class) and the first 100 test digits of every class, as gzipped IDX.
//
//	go run ./internal/gensample -mnist DIR -out sample
package main

import (
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"attractorlab/sim"
)

func main() {
	dir := flag.String("mnist", "", "directory with the four MNIST IDX files (default: the cache filled by `attractorlab data`)")
	out := flag.String("out", "sample", "output directory")
	flag.Parse()
	if *dir == "" {
		*dir = sim.DataDir()
	}
	if *dir == "" {
		fail(fmt.Errorf("no MNIST files: run `attractorlab data` first or pass -mnist DIR"))
	}
	m, err := sim.LoadMNIST(*dir)
	if err != nil {
		fail(err)
	}
	train := m.Train.Pick(sim.SubsetIndices(m.Train.Labels, sim.SubsetPerClass, sim.SubsetSeed))
	test := m.Test.Pick(sim.FirstPerClass(m.Test.Labels, sim.TestPerClass))
	for name, s := range map[string]*sim.Set{"train": train, "test": test} {
		im, lb, ix := sim.SampleIDX(s)
		for part, x := range map[string]*sim.IDX{"images": im, "labels": lb, "index": ix} {
			p := filepath.Join(*out, name+"-"+part+".idx.gz")
			if err := write(p, x); err != nil {
				fail(err)
			}
		}
		fmt.Printf("%s: %d digits\n", name, s.Len())
	}
}

func write(p string, x *sim.IDX) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err := sim.WriteIDX(io.Writer(zw), x); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gensample:", err)
	os.Exit(1)
}
