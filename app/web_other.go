//go:build !js

package main

import (
	"context"
	"fmt"
	"time"

	"attractorlab/ui"
)

// pageAddress: only the web build runs in a page (web_js.go).
func pageAddress() (href, base string, ok bool) { return "", "", false }

func pageReady(context.Context, *ui.Main, func(), chan struct{}) {}

// pagePhase: only the page has a loading screen to tell the start's parts.
func pagePhase(string) time.Duration { return 0 }

// pageWorkers: the desktop runs population jobs and training on its own
// cores.
func pageWorkers(*ui.Deps) {}

// runWorker: `attractorlab worker` is the web build's Web Worker
// (web_js.go); elsewhere it is not a command.
func runWorker(context.Context, []string) error {
	return fmt.Errorf("%w %q: it runs only inside the web build's page, as its Web Workers\n\n%s", errUsage, "worker", usage)
}
