package main

import "fyne.io/fyne/v2"

// openingSize is the main window's size on a screen whose work area (the
// screen less its panels, in the window's units) is area: 1280×800 where
// that fits with room for the title bar; on a larger screen nine tenths
// of it (1728×936 on a 1920×1080 one), so that the figures and, in
// presentation mode, the type grow with it; on a smaller one the work
// area less the title bar.
func openingSize(area fyne.Size) fyne.Size {
	const title = 40 // the window manager's title bar and borders, about
	base := fyne.NewSize(1280, 800)
	if area.Width >= 1.25*base.Width && area.Height >= 1.25*base.Height {
		return fyne.NewSize(0.9*area.Width, 0.9*(area.Height-title))
	}
	return fyne.NewSize(min(base.Width, area.Width), min(base.Height, area.Height-title))
}
