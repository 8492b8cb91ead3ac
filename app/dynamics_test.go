package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDynamicsRefuses: bad input is refused by flag with the allowed
// range, and nothing is written.
func TestDynamicsRefuses(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--at", "0"}, []string{"--at", "allowed 1 … 20"}},
		{[]string{"--at", "1,21"}, []string{"--at", "21", "allowed 1 … 20"}},
		{[]string{"--at", "1,x"}, []string{"--at", `"x"`, "t*"}},
		{[]string{"--at", "1,1"}, []string{"--at", "twice"}},
		{[]string{"--k", "0"}, []string{"--k", "1 … 200"}},
		{[]string{"--k", "20"}, []string{"--k", "past the recorded steps", "1 … --steps − 1 = 19"}},
		{[]string{"--k", "201", "--steps", "300"}, []string{"--k", "1 … 200"}},
		{[]string{"--model", "vit"}, []string{"--model", "vit", "different maps"}},
		{[]string{"--model", "hopfield-classic"}, []string{"hopfield-classic", "discrete"}},
		{[]string{"--model", "hopfield", "--lambda", "2"}, []string{"--lambda", "does not use it"}},
		{[]string{"--model", "bsa-p2", "--beta", "2"}, []string{"--beta", "does not use it"}},
		{[]string{"--n", "0"}, []string{"--n", "1 … 10000"}},
		{[]string{"--steps", "1001"}, []string{"--steps", "1 … 1000"}},
		{[]string{"--shard", "0/9"}, []string{"9 shards for 2 digits"}},
	} {
		args := append([]string{"dynamics", "--out", out, "--n", "2", "--steps", "20", "--at", "1,t*"}, c.args...)
		err := run(context.Background(), args)
		if err == nil {
			t.Errorf("accepted %v", c.args)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not say %q", c.args, err, w)
			}
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: --out was created", c.args)
		}
	}
}

// TestDynamicsShardsMerge: two shards run as the command runs them merge
// to the one-process run's table byte for byte, with the pictures.
func TestDynamicsShardsMerge(t *testing.T) {
	tmp := t.TempDir()
	base := []string{"dynamics", "--model", "bsa-p4", "--task", "mask", "--n", "3", "--steps", "8", "--at", "1,t*,8", "--k", "2"}
	if err := run(context.Background(), append(base, "--out", filepath.Join(tmp, "one"))); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"0/2", "1/2"} {
		if err := run(context.Background(), append(base, "--shard", s, "--out", filepath.Join(tmp, "parts"))); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(context.Background(), []string{"dynamics", "merge", filepath.Join(tmp, "parts", "shard-1-of-2"), filepath.Join(tmp, "parts", "shard-0-of-2"), "--out", filepath.Join(tmp, "merged")}); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(filepath.Join(tmp, "one", "dynamics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(tmp, "merged", "dynamics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) || len(a) == 0 {
		t.Fatalf("merged:\n%s\none process:\n%s", b, a)
	}
	for _, f := range []string{"spectra.png", "growth-escape.png", "dynamics.json"} {
		if _, err := os.Stat(filepath.Join(tmp, "merged", f)); err != nil {
			t.Fatal(err)
		}
	}
	// The merge refuses a part missing, and writes nothing.
	err = run(context.Background(), []string{"dynamics", "merge", filepath.Join(tmp, "parts", "shard-1-of-2"), "--out", filepath.Join(tmp, "m2")})
	if err == nil || !strings.Contains(err.Error(), "shard 0 of 2 missing") {
		t.Fatalf("a missing shard: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "m2")); err == nil {
		t.Fatal("a refused merge created --out")
	}
}
