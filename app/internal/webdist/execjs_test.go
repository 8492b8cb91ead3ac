package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestShortStringsUnderNode: the page's wasm_exec.js (Go's, with short
// strings kept) runs a program that hands JavaScript names at one
// address with other bytes, other lengths and characters beyond ASCII,
// constant names many times, and names whose memory the collector
// reuses; every name arrives as it was sent. Go's own wasm_exec.js runs
// it too (the program's checks hold there).
func TestShortStringsUnderNode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program for WebAssembly")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is needed (Debian's nodejs; make test-deps installs it)")
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	lib := filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm")
	orig, err := os.ReadFile(filepath.Join(lib, "wasm_exec.js"))
	if err != nil {
		t.Fatal(err)
	}
	patched, ok := withShortStrings(orig)
	if !ok {
		t.Fatalf("%s: its loadString is not the one execjs.go replaces (another Go?)", filepath.Join(lib, "wasm_exec.js"))
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "jsstrings.wasm")
	build := exec.Command("go", "build", "-o", prog, "./testdata/jsstrings")
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building testdata/jsstrings: %v\n%s", err, out)
	}
	runner, err := os.ReadFile(filepath.Join(lib, "wasm_exec_node.js"))
	if err != nil {
		t.Fatal(err)
	}
	for name, js := range map[string][]byte{"patched": patched, "go": orig} {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, b := range map[string][]byte{"wasm_exec.js": js, "wasm_exec_node.js": runner} {
			if err := os.WriteFile(filepath.Join(d, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, err := exec.Command(node, filepath.Join(d, "wasm_exec_node.js"), prog).CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "ok: ") {
			t.Fatalf("%s wasm_exec.js: %v\n%s", name, err, out)
		}
		t.Logf("%s wasm_exec.js: %s", name, strings.TrimSpace(string(out)))
	}
}

// TestWithShortStringsOnce: the replacement is made where Go's loadString
// is, once, and a wasm_exec.js without it is left as it was.
func TestWithShortStringsOnce(t *testing.T) {
	js := []byte("head\n" + execLoadString + "\ntail")
	got, ok := withShortStrings(js)
	if !ok || string(got) != "head\n"+shortStringsLoadString+"\ntail" {
		t.Fatalf("replaced %v: %s", ok, got)
	}
	other := []byte("head\nconst loadString = (a) => a;\ntail")
	if got, ok := withShortStrings(other); ok || string(got) != string(other) {
		t.Fatalf("another loadString: replaced %v", ok)
	}
}
