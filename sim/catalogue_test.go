package sim

import (
	"testing"

	"attractorlab/sim/mnist"
)

// A model the web build has not fetched yet is listed with the shape its
// weights give once loaded, and LoadAll leaves it for later.
func TestDeferredModelInfo(t *testing.T) {
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	loaded := NewCatalogue(data.Train, WeightFiles{})
	want := map[string]ModelInfo{}
	for _, info := range loaded.Available() {
		want[info.Name] = info
	}
	cat := NewCatalogue(data.Train, WeightFiles{})
	var asked []string
	cat.deferred = func(name string) bool {
		asked = append(asked, name)
		return name == "bsa-p2" || name == "bsa-p4" || name == "block" || name == "vit"
	}
	if _, err := cat.LoadAll(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bsa-p4", "block", "vit"} {
		if _, ok := cat.loaded[name]; ok {
			t.Fatalf("LoadAll fetched %s's deferred weights", name)
		}
	}
	if n := len(cat.Available()); n != len(want) {
		t.Fatalf("%d models before their weights came, %d loaded", n, len(want))
	}
	for _, info := range cat.Available() {
		if info != want[info.Name] {
			t.Errorf("%s before its weights came: %+v, loaded: %+v", info.Name, info, want[info.Name])
		}
	}
	for _, name := range []string{"bsa-p4", "vit"} {
		if _, err := cat.Model(name, DefaultSettings()); err != nil {
			t.Fatal(err)
		}
		if _, ok := cat.loaded[name]; !ok {
			t.Errorf("Model did not load %s", name)
		}
	}
	if len(asked) == 0 {
		t.Error("the catalogue never asked whether weights were deferred")
	}
}
