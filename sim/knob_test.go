package sim

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEveryKnobIsListed: every knob declared in sim (a package variable
// made of &Knob{…}) is in Knobs, once — a knob left out of the list would
// reach no flag, file, lesson, control or sweep.
func TestEveryKnobIsListed(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for k, v := range vs.Values {
					if u, ok := v.(*ast.UnaryExpr); ok && u.Op == token.AND {
						if cl, ok := u.X.(*ast.CompositeLit); ok {
							if id, ok := cl.Type.(*ast.Ident); ok && id.Name == "Knob" {
								declared = append(declared, vs.Names[k].Name)
							}
						}
					}
				}
			}
		}
	}
	byName := map[string]*Knob{"MaskFraction": MaskFraction, "NoiseSigma2": NoiseSigma2, "Lambda": Lambda,
		"Gamma": Gamma, "Beta": Beta, "StoredK": StoredK}
	if len(declared) != len(Knobs) {
		t.Errorf("%d knobs declared (%v), %d in Knobs", len(declared), declared, len(Knobs))
	}
	for _, name := range declared {
		k, ok := byName[name]
		if !ok {
			t.Errorf("knob %s is declared but this test does not know it: add it to byName", name)
			continue
		}
		if n := len(slices.DeleteFunc(slices.Clone(Knobs), func(o *Knob) bool { return o != k })); n != 1 {
			t.Errorf("knob %s is in Knobs %d times, want once", name, n)
		}
	}
	owner := map[string]*Knob{}
	for _, k := range Knobs {
		for _, n := range []string{k.Flag, k.Field} {
			if o, ok := owner[n]; n == "" || (ok && o != k) {
				t.Errorf("knob %q: flag %q and field %q must be set and each name one knob", k.Name, k.Flag, k.Field)
			}
			owner[n] = k
		}
		if k.at == nil || k.Symbol == "" {
			t.Errorf("knob %q has no value in Settings or no symbol", k.Name)
		}
	}
}

// otherValue is a value of k's range that is not its default.
func otherValue(k *Knob) float64 {
	if k.Default != k.Max {
		return k.Max
	}
	return k.Min
}

// TestEveryKnobGoesThroughScenarios: each knob, changed alone, is written
// to a scenario file and read back; a file without its field, or with
// its value out of range, is refused by the field's name; Validate
// refuses its value out of range by the flag's name.
func TestEveryKnobGoesThroughScenarios(t *testing.T) {
	for _, k := range Knobs {
		s := DefaultSettings()
		if got := k.Get(s); got != k.Default {
			t.Errorf("%s: default settings hold %v, want its default %v", k.Field, got, k.Default)
		}
		v := otherValue(k)
		k.Set(&s, v)
		var b bytes.Buffer
		if err := WriteScenario(&b, &Snapshot{Settings: s, T: 3}); err != nil {
			t.Fatal(err)
		}
		back, _, err := ReadScenario(bytes.NewReader(b.Bytes()), "s.json")
		if err != nil {
			t.Fatalf("%s: %v\n%s", k.Field, err, b.String())
		}
		if got := k.Get(back); got != v {
			t.Errorf("%s: wrote %v, read back %v", k.Field, v, got)
		}
		for _, o := range Knobs {
			if o != k && o.Get(back) != o.Default {
				t.Errorf("%s changed alone, yet %s reads back %v, not its default", k.Field, o.Field, o.Get(back))
			}
		}
		var m map[string]any
		json.Unmarshal(b.Bytes(), &m)
		for what, edit := range map[string]func(){
			"is missing":      func() { delete(m, k.Field) },
			"is out of range": func() { m[k.Field] = k.Max + 1 },
		} {
			saved := m[k.Field]
			edit()
			bad, _ := json.Marshal(m)
			m[k.Field] = saved
			if _, _, err := ReadScenario(bytes.NewReader(bad), "s.json"); err == nil ||
				!strings.Contains(err.Error(), "field "+k.Field) || !strings.Contains(err.Error(), what) {
				t.Errorf("%s %s: error %v, want one naming field %s", k.Field, what, err, k.Field)
			}
		}
		out := DefaultSettings()
		k.Set(&out, k.Max+1)
		if err := out.Validate(ViaFlag); err == nil || !strings.Contains(err.Error(), "--"+k.Flag) {
			t.Errorf("%s out of range: Validate says %v, want the flag --%s", k.Field, err, k.Flag)
		}
	}
}
