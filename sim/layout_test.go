package sim

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// docSection is the text of docs/architecture.md's section headed title.
func docSection(t *testing.T, title string) string {
	t.Helper()
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	sec := string(doc)
	i := strings.Index(sec, "## "+title+"\n")
	if i < 0 {
		t.Fatalf("docs/architecture.md has no %q", "## "+title)
	}
	sec = sec[i+3:]
	if j := strings.Index(sec, "\n## "); j >= 0 {
		sec = sec[:j]
	}
	return sec
}

// stringLiterals calls found for each string literal in the Go files of
// app/, ui/ and sim/ outside tests, with the file's path from the
// repository's root.
func stringLiterals(t *testing.T, found func(rel, v string)) {
	for _, root := range []string{"app", "ui", "sim"} {
		filepath.WalkDir(filepath.Join("..", root), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel := filepath.ToSlash(strings.TrimPrefix(path, ".."+string(filepath.Separator)))
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil {
						found(rel, v)
					}
				}
				return true
			})
			return nil
		})
	}
}

var goFile = regexp.MustCompile("`((?:app|ui|sim)/[a-z0-9_/]+\\.go)`")

// TestModelNamesLiveInTheRegistry keeps docs/architecture.md's "Adding a
// model" true: a model's name (a string literal equal to one of
// ModelNames) is written only in sim/registry.go and the files that
// section lists, nowhere else in app/, ui/ or sim/ outside tests.
func TestModelNamesLiveInTheRegistry(t *testing.T) {
	allowed := map[string]bool{}
	for _, m := range goFile.FindAllStringSubmatch(docSection(t, "Adding a model"), -1) {
		allowed[m[1]] = true
	}
	if !allowed["sim/registry.go"] {
		t.Fatalf("the section names no sim/registry.go: %v", allowed)
	}
	names := map[string]bool{}
	for _, n := range ModelNames {
		names[n] = true
	}
	stringLiterals(t, func(rel, v string) {
		if names[v] && !allowed[rel] {
			t.Errorf("%s writes the model name %q: a model's name belongs in its registry row (sim/registry.go) or a file docs/architecture.md lists under \"Adding a model\"", rel, v)
		}
	})
}

// TestSettingNamesLiveInSettings keeps docs/architecture.md's "Adding a
// setting" true: a knob's flag or field name (a string literal equal to
// one) is written only in sim/settings.go and sim/registry.go, or in a
// file the section's list allows that word in (where it names something
// else: "mask" the task).
func TestSettingNamesLiveInSettings(t *testing.T) {
	sec := docSection(t, "Adding a setting")
	allowed := map[string]map[string]bool{"sim/settings.go": nil, "sim/registry.go": nil}
	word := regexp.MustCompile("`([a-z0-9_]+)`")
	for _, line := range strings.Split(sec, "\n") {
		files := goFile.FindAllStringSubmatch(line, -1)
		if !strings.HasPrefix(line, "- ") || len(files) == 0 {
			continue
		}
		for _, f := range files {
			if allowed[f[1]] == nil {
				allowed[f[1]] = map[string]bool{}
			}
			for _, w := range word.FindAllStringSubmatch(line, -1) {
				allowed[f[1]][w[1]] = true
			}
		}
	}
	names := map[string]bool{}
	for _, k := range Knobs {
		names[k.Flag], names[k.Field] = true, true
	}
	stringLiterals(t, func(rel, v string) {
		if !names[v] {
			return
		}
		if words, ok := allowed[rel]; ok && (words == nil || words[v]) {
			return
		}
		t.Errorf("%s writes the setting name %q: a knob's flag and field belong in sim/settings.go (use its Knob), or a line of docs/architecture.md's \"Adding a setting\" allows %q in %s", rel, v, v, rel)
	})
}
