// Command gensample writes the embedded sample (assets/sample) from the
// real MNIST files: the seeded 10,000-image training subset (1,000 per
// class) and the first 100 test digits of every class, as gzipped IDX, and
// the training subset's state-space plane (train-plane.bin), so that no run
// computes it again.
//
//	go generate ./sim/mnist   (or: go run ./sim/mnist/internal/gensample -mnist DIR -out assets/sample)
//	go run ./sim/mnist/internal/gensample -plane -out assets/sample   (the plane alone, from the embedded subset)
//	go run ./sim/mnist/internal/gensample -fashion -out assets/fashion   (Fashion-MNIST's, from its cache)
package main

import (
	"attractorlab/sim"
	"attractorlab/sim/mnist"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("mnist", "", "directory with the four MNIST IDX files (default: the cache filled by `attractorlab data`)")
	out := flag.String("out", "sample", "output directory")
	planeOnly := flag.Bool("plane", false, "write only the plane of the embedded training subset (no MNIST needed)")
	fashion := flag.Bool("fashion", false, "write the Fashion-MNIST sample from its cache (attractorlab data --dataset fashion-mnist) instead")
	flag.Parse()
	if *planeOnly {
		train, _, err := mnist.Sample()
		if err != nil {
			fail(err)
		}
		if err := writePlane(*out, train); err != nil {
			fail(err)
		}
		return
	}
	var m *mnist.MNIST
	var err error
	if *fashion {
		cache, cerr := mnist.FashionCache()
		if cerr != nil {
			fail(cerr)
		}
		m, err = mnist.LoadFashion(cache)
	} else {
		if *dir == "" {
			*dir = mnist.DataDir()
		}
		if *dir == "" {
			fail(fmt.Errorf("no MNIST files: run `attractorlab data` first or pass -mnist DIR"))
		}
		m, err = mnist.LoadMNIST(*dir)
	}
	if err != nil {
		fail(err)
	}
	train := m.Train.Pick(mnist.SubsetIndices(m.Train.Labels, mnist.SubsetPerClass, mnist.SubsetSeed))
	test := m.Test.Pick(mnist.FirstPerClass(m.Test.Labels, mnist.TestPerClass))
	for name, s := range map[string]*mnist.Set{"train": train, "test": test} {
		im, lb, ix := mnist.SampleIDX(s)
		for part, x := range map[string]*mnist.IDX{"images": im, "labels": lb, "index": ix} {
			p := filepath.Join(*out, name+"-"+part+".idx.gz")
			if err := write(p, x); err != nil {
				fail(err)
			}
		}
		fmt.Printf("%s: %d digits\n", name, s.Len())
	}
	if err := writePlane(*out, train); err != nil {
		fail(err)
	}
}

// writePlane computes the training subset's state-space plane and writes
// it beside the subset.
func writePlane(out string, train *mnist.Set) error {
	b, err := sim.ComputePlane(train).MarshalBinary()
	if err != nil {
		return err
	}
	p := filepath.Join(out, filepath.Base(sim.EmbeddedPlane))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: the plane of %d digits\n", p, train.Len())
	return nil
}

func write(p string, x *mnist.IDX) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err := mnist.WriteIDX(io.Writer(zw), x); err != nil {
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
