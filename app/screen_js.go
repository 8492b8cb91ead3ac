//go:build js

package main

import "fyne.io/fyne/v2"

// workArea: in the page the window is the canvas the page gives it.
func workArea(fyne.Window) (fyne.Size, bool) { return fyne.Size{}, false }
