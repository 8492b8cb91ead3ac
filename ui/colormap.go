package ui

import (
	"image/color"
	"math"
)

// viridisAnchors are 9 evenly spaced samples of matplotlib's viridis, a
// perceptually uniform sequential map readable in both themes and on
// projectors; viridis interpolates between them.
var viridisAnchors = [][3]float64{
	{68, 1, 84}, {71, 44, 122}, {59, 81, 139}, {44, 113, 142}, {33, 144, 141},
	{39, 173, 129}, {92, 200, 99}, {170, 220, 50}, {253, 231, 37},
}

var viridisLUT = func() [256]color.RGBA {
	var lut [256]color.RGBA
	n := len(viridisAnchors) - 1
	for k := range lut {
		x := float64(k) / 255 * float64(n)
		i := min(int(x), n-1)
		f := x - float64(i)
		a, b := viridisAnchors[i], viridisAnchors[i+1]
		lut[k] = color.RGBA{
			uint8(math.Round(a[0] + f*(b[0]-a[0]))),
			uint8(math.Round(a[1] + f*(b[1]-a[1]))),
			uint8(math.Round(a[2] + f*(b[2]-a[2]))),
			255,
		}
	}
	return lut
}()

// viridis maps v in [0,1] (clamped) to a colour.
func viridis(v float64) color.RGBA {
	if math.IsNaN(v) {
		return color.RGBA{128, 128, 128, 255}
	}
	return viridisLUT[int(math.Round(min(max(v, 0), 1)*255))]
}
