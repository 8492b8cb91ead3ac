package main

import "fmt"

// The version and build of FyneApp.toml ([Details]), which `fyne package`
// reads; a test keeps the two equal.
const (
	appVersion = "0.1.0"
	appBuild   = 1
)

// versionText is what Help → About shows.
func versionText() string { return fmt.Sprintf("%s (build %d)", appVersion, appBuild) }
