//go:build !js

package main

import (
	"context"
	"fmt"

	"attractorlab/sim"
	"attractorlab/sim/sweep"
	"attractorlab/ui"
)

// pageAddress: only the web build runs in a page (web_js.go).
func pageAddress() (href, base string, ok bool) { return "", "", false }

func pageReady(context.Context, *ui.Main, func(), chan struct{}) {}

// pageWorkers: the desktop runs population jobs and training on its own
// cores.
func pageWorkers() (sweep.Remote, sim.TrainRemote) { return nil, nil }

// runWorker: `attractorlab worker` is the web build's Web Worker
// (web_js.go); elsewhere it is not a command.
func runWorker(context.Context, []string) error {
	return fmt.Errorf("%w %q: it runs only inside the web build's page, as its Web Workers\n\n%s", errUsage, "worker", usage)
}
