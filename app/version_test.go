package main

import (
	"os"
	"regexp"
	"strconv"
	"testing"
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
