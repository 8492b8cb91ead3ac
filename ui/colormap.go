package ui

import (
	"attractorlab/sim/figures"
	"image/color"
)

// viridis maps v in [0,1] (clamped) to a colour, NaN to grey: the plots'
// map (figures.Viridis), so heatmaps and basin maps read alike.
func viridis(v float64) color.RGBA { return figures.Viridis(v) }
