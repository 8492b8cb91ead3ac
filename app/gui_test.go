package main

import (
	"errors"
	"flag"
	"fyne.io/fyne/v2"
	"strings"
	"testing"

	"attractorlab/sim"
)

// TestGUIFlags: --link is read whole (a link holds ?, & and #), is one
// of --lesson and --link, and a link given without --link is refused
// rather than ignored.
func TestGUIFlags(t *testing.T) {
	link, err := sim.EncodeLink(sim.DefaultLinkBase, sim.PaperDemo(), 30)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{link, "https://example.org/lab/?utm=1&lesson=masking"} {
		opts, err := parseGUIFlags([]string{"--weights", "w.safetensors", "--link", l})
		if err != nil || opts.link != l || opts.lesson != "" || opts.files["bsa-p2"] != "w.safetensors" {
			t.Fatalf("--link %s: %+v, %v", l, opts, err)
		}
	}
	if opts, err := parseGUIFlags(nil); err != nil || opts.link != "" || opts.lesson != "" {
		t.Fatalf("no flags: %+v, %v", opts, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--lesson", "masking", "--link", link}, "--lesson and --link both say what the window opens on: give one"},
		{[]string{link}, "gui takes no arguments (got \"" + link[:20]},
		{[]string{"--link"}, "flag needs an argument: -link"},
		{[]string{"--dataset", "cifar"}, `--dataset "cifar" is not a data set here (allowed: mnist, fashion-mnist, or folder:NAME`},
	} {
		_, err := parseGUIFlags(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want …%s", c.args, err, c.want)
		}
	}
	if opts, err := parseGUIFlags([]string{"--dataset", "fashion-mnist"}); err != nil || opts.dataset != "fashion-mnist" {
		t.Errorf("--dataset fashion-mnist: %+v, %v", opts, err)
	}
	if _, err := parseGUIFlags([]string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

// TestOpeningSize: the window opens at 1280×800 where that fits, at nine
// tenths of a larger screen, and within a smaller one.
func TestOpeningSize(t *testing.T) {
	for _, c := range []struct{ area, want fyne.Size }{
		{fyne.NewSize(1280, 800), fyne.NewSize(1280, 760)},
		{fyne.NewSize(1366, 768), fyne.NewSize(1280, 728)},
		{fyne.NewSize(1440, 900), fyne.NewSize(1280, 800)},
		{fyne.NewSize(1920, 1080), fyne.NewSize(1728, 936)},
		{fyne.NewSize(2560, 1440), fyne.NewSize(2304, 1260)},
	} {
		if got := openingSize(c.area); got != c.want {
			t.Errorf("on a %v work area the window opens at %v, want %v", c.area, got, c.want)
		}
	}
}
