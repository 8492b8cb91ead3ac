package main

import (
	"errors"
	"flag"
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
	} {
		_, err := parseGUIFlags(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want …%s", c.args, err, c.want)
		}
	}
	if _, err := parseGUIFlags([]string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}
