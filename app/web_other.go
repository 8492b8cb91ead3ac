//go:build !js

package main

import (
	"context"

	"attractorlab/ui"
)

// pageAddress: only the web build runs in a page (web_js.go).
func pageAddress() (href, base string, ok bool) { return "", "", false }

func pageReady(context.Context, *ui.Main, func()) {}
