package main

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"attractorlab/sim"
)

// TestVersionMatchesFyneApp: the About dialog says what FyneApp.toml says.
func TestVersionMatchesFyneApp(t *testing.T) {
	b, err := os.ReadFile("../FyneApp.toml")
	if err != nil {
		t.Fatal(err)
	}
	v := regexp.MustCompile(`(?m)^Version = "([^"]+)"`).FindSubmatch(b)
	n := regexp.MustCompile(`(?m)^Build = (\d+)`).FindSubmatch(b)
	if v == nil || n == nil {
		t.Fatal("FyneApp.toml has no Version or Build")
	}
	if build, _ := strconv.Atoi(string(n[1])); string(v[1]) != appVersion || build != appBuild {
		t.Fatalf("FyneApp.toml says %s build %s; the app says %s build %d", v[1], n[1], appVersion, appBuild)
	}
}

// TestSayPortable: a binary on the portable kernels says so, and why, when
// it starts a command (not for help or version, which compute nothing);
// one on the AVX-512 kernels says nothing.
func TestSayPortable(t *testing.T) {
	text, fast := sim.Kernels()
	for _, args := range [][]string{nil, {"reproduce", "--model", "bsa"}, {"train"}, {"version"}, {"help"}} {
		var buf bytes.Buffer
		sayPortable(&buf, args)
		quiet := fast || (len(args) > 0 && (args[0] == "version" || args[0] == "help"))
		if got := buf.String(); quiet && got != "" || !quiet && !strings.Contains(got, "portable Go kernels") {
			t.Errorf("%v: said %q (kernels: %s)", args, got, text)
		}
	}
	if !fast && !strings.Contains(text, "GOEXPERIMENT=simd") && !strings.Contains(text, "no AVX-512") {
		t.Errorf("the portable kernels' reason is missing: %q", text)
	}
}
