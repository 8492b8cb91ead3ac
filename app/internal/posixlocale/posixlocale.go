// Package posixlocale gives Fyne a locale it can parse. Fyne reads the
// locale while its packages initialise and logs an error for the POSIX
// names "C", "C.UTF-8" and "POSIX" (common in containers and CI), before
// main can run. Imported for its side effect by the main package, this
// package initialises first (Go initialises ready packages in the order of
// their import paths, and "attractorlab/…" sorts before "fyne.io/…"): it
// replaces such values with the locale they stand for, American English.
package posixlocale

import (
	"os"
	"strings"
)

// Vars are the environment variables Fyne's locale lookup reads.
var Vars = []string{"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"}

// IsPOSIX reports whether v names the POSIX locale.
func IsPOSIX(v string) bool {
	return v == "C" || v == "POSIX" || strings.HasPrefix(v, "C.") || strings.HasPrefix(v, "POSIX.")
}

func init() {
	for _, k := range Vars {
		if IsPOSIX(os.Getenv(k)) {
			os.Setenv(k, "en_US.UTF-8")
		}
	}
}
