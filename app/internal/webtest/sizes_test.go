package webtest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestDocumentedSizes: docs/browser.md's download sizes are the built
// site's (files.json), within 1 % or 0.1 MB: a build that grows or
// shrinks the page fails here until the page's documentation says so.
func TestDocumentedSizes(t *testing.T) {
	dir := builtSite(t)
	var files struct {
		Wasm struct {
			GZ int `json:"gz"`
			BR int `json:"br"`
		} `json:"wasm"`
		Weights       map[string]int `json:"weights"`
		Preload       []string       `json:"preload"`
		FirstVisit    int            `json:"first_visit"`
		FirstVisitBr  int            `json:"first_visit_br"`
		BeforeStart   int            `json:"before_start"`
		BeforeStartBr int            `json:"before_start_br"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "files.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &files); err != nil {
		t.Fatal(err)
	}
	if len(files.Preload) != 1 {
		t.Fatalf("files.json preloads %v: the documentation names one opening model", files.Preload)
	}
	doc, err := os.ReadFile("../../../docs/browser.md")
	if err != nil {
		t.Fatal(err)
	}
	const form = `downloads %.1f MB with gzip (the app %.1f MB, the opening model's weights %.1f MB)`
	mb := func(n int) float64 { return float64(n) / 1e6 }
	want := fmt.Sprintf(form, mb(files.FirstVisit), mb(files.Wasm.GZ), mb(files.Weights[files.Preload[0]]))
	re := regexp.MustCompile(`downloads\s+([0-9.]+)\s+MB\s+with\s+gzip\s+\(the\s+app\s+([0-9.]+)\s+MB,\s+the\s+opening\s+model's\s+weights\s+([0-9.]+)\s+MB\)`)
	m := re.FindSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/browser.md does not say what a first visit downloads; write: %q", want)
	}
	for k, got := range []int{files.FirstVisit, files.Wasm.GZ, files.Weights[files.Preload[0]]} {
		v, _ := strconv.ParseFloat(string(m[k+1]), 64)
		if d := math.Abs(v - mb(got)); d > max(0.1, 0.01*mb(got)) {
			t.Fatalf("docs/browser.md: %q is out of date; the built site: %q", m[0], want)
		}
	}
	// What the page waits for before it starts the app (the first
	// frame's), with either copy, and the whole first visit with Brotli.
	checks := []struct {
		form, re string
		got      []int
	}{
		{`the page downloads %.1f MB with gzip (the app %.1f MB)`,
			`the page downloads ([0-9.]+) MB with gzip\s+\(the\s+app\s+([0-9.]+) MB\)`,
			[]int{files.BeforeStart, files.Wasm.GZ}},
		{`%.1f MB where the server sends the app's Brotli copy (the app %.1f MB)`,
			`([0-9.]+) MB where the server\s+sends\s+the\s+app's\s+Brotli\s+copy\s+\(the\s+app\s+([0-9.]+) MB\)`,
			[]int{files.BeforeStartBr, files.Wasm.BR}},
		{`or %.1f MB with the Brotli copy`,
			`or\s+([0-9.]+)\s+MB\s+with\s+the\s+Brotli\s+copy`,
			[]int{files.FirstVisitBr}},
	}
	for _, c := range checks {
		args := make([]any, len(c.got))
		for k, n := range c.got {
			args[k] = mb(n)
		}
		want := fmt.Sprintf(c.form, args...)
		m := regexp.MustCompile(c.re).FindSubmatch(doc)
		if m == nil {
			t.Fatalf("docs/browser.md does not say what the page downloads; write: %q", want)
		}
		for k, got := range c.got {
			v, _ := strconv.ParseFloat(string(m[k+1]), 64)
			if d := math.Abs(v - mb(got)); d > max(0.1, 0.01*mb(got)) {
				t.Fatalf("docs/browser.md: %q is out of date; the built site: %q", m[0], want)
			}
		}
	}
}
