package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// countingWidget records its refreshes in a shared log.
type countingWidget struct {
	widget.Label
	log *[]string
}

func (c *countingWidget) Refresh() { *c.log = append(*c.log, c.Text); c.Label.Refresh() }

// loggingLayout records when its container is laid out.
type loggingLayout struct {
	name string
	log  *[]string
}

func (l loggingLayout) Layout([]fyne.CanvasObject, fyne.Size) {
	*l.log = append(*l.log, "layout "+l.name)
}
func (l loggingLayout) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.NewSize(10, 10) }

// TestRefreshAllOnceEach: refreshAll refreshes every object in the tree
// (through containers and scrollers) once, and lays each container out
// after what it holds, as its recursive form did.
func TestRefreshAllOnceEach(t *testing.T) {
	test.NewTempApp(t)
	var log []string
	w := func(s string) *countingWidget {
		c := &countingWidget{log: &log}
		c.Text = s
		c.ExtendBaseWidget(c)
		return c
	}
	inner := container.New(loggingLayout{"inner", &log}, w("a"), w("b"))
	scroll := container.NewVScroll(container.New(loggingLayout{"scrolled", &log}, w("c")))
	root := container.New(loggingLayout{"root", &log}, inner, scroll, w("d"))
	log = nil
	refreshAll(root)
	want := []string{"a", "b", "layout inner", "c", "layout scrolled", "d", "layout root"}
	if len(log) != len(want) {
		t.Fatalf("refreshAll: %q, want %q", log, want)
	}
	for i := range want {
		if log[i] != want[i] {
			t.Fatalf("refreshAll: %q, want %q", log, want)
		}
	}
}
