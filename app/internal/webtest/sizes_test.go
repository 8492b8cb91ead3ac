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
		Weights      map[string]int `json:"weights"`
		Preload      []string       `json:"preload"`
		FirstVisit   int            `json:"first_visit"`
		FirstVisitBr int            `json:"first_visit_br"`
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
	re := regexp.MustCompile(`downloads ([0-9.]+) MB with gzip\s+\(the app ([0-9.]+) MB, the opening\s+model's weights ([0-9.]+) MB\)`)
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
	const formBr = `%.1f MB where the server sends the app's Brotli copy (the app %.1f MB)`
	wantBr := fmt.Sprintf(formBr, mb(files.FirstVisitBr), mb(files.Wasm.BR))
	re = regexp.MustCompile(`([0-9.]+) MB where the server\s+sends\s+the\s+app's\s+Brotli\s+copy\s+\(the\s+app\s+([0-9.]+) MB\)`)
	if m = re.FindSubmatch(doc); m == nil {
		t.Fatalf("docs/browser.md does not say what a first visit downloads with Brotli; write: %q", wantBr)
	}
	for k, got := range []int{files.FirstVisitBr, files.Wasm.BR} {
		v, _ := strconv.ParseFloat(string(m[k+1]), 64)
		if d := math.Abs(v - mb(got)); d > max(0.1, 0.01*mb(got)) {
			t.Fatalf("docs/browser.md: %q is out of date; the built site: %q", m[0], wantBr)
		}
	}
}
