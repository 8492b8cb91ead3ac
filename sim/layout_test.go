package sim

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// deps lists the packages pkg imports, directly or not.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		t.Skipf("go list %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestLayout: imports point app → ui → sim → models; models and sim never
// import Fyne; ui does not reach into models; assets imports nothing of
// the project (the sample generator lives in sim/mnist).
func TestLayout(t *testing.T) {
	for _, c := range []struct {
		pkg       string
		forbidden []string
	}{
		{"attractorlab/models", []string{"fyne.io/", "attractorlab/sim", "attractorlab/ui", "attractorlab/assets"}},
		{"attractorlab/sim", []string{"fyne.io/", "attractorlab/ui", "attractorlab/sim/figures"}},
		{"attractorlab/sim/mnist", []string{"fyne.io/", "attractorlab/ui", "attractorlab/sim\x00"}},
		{"attractorlab/sim/figures", []string{"fyne.io/", "attractorlab/ui"}},
		{"attractorlab/assets", []string{"attractorlab/sim", "attractorlab/models", "attractorlab/ui"}},
	} {
		for _, d := range deps(t, c.pkg) {
			for _, f := range c.forbidden {
				if strings.HasPrefix(d+"\x00", f) {
					t.Errorf("%s imports %s", c.pkg, d)
				}
			}
		}
	}
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", "attractorlab/ui").Output()
	if err != nil {
		t.Skipf("go list ui: %v", err)
	}
	if strings.Contains(string(out), "attractorlab/models") {
		t.Error("ui imports models directly: the engine publishes what the window needs")
	}
}

// TestStandsAlone: nothing in the repository cites files outside it.
func TestStandsAlone(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	outside := "../" + "shared" // not written whole, or this file would cite it
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "failed":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".go", ".md", ".py", ".sh", ".toml", "":
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), outside) || strings.Contains(string(b), "DESIGN"+".md") {
			t.Errorf("%s cites a file outside the repository", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
