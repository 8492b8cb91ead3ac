package figures

import (
	"image/color"
	"math"

	"gonum.org/v1/plot/palette"
)

// viridisAnchors are 9 evenly spaced samples of matplotlib's viridis, a
// perceptually uniform sequential map readable in both themes, on
// projectors and by colour-blind readers; Viridis interpolates them.
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

// NaNColor is the grey of a value that does not exist.
var NaNColor = color.RGBA{128, 128, 128, 255}

// Viridis maps v in [0,1] (clamped) to a colour, NaN to NaNColor.
func Viridis(v float64) color.RGBA {
	if math.IsNaN(v) {
		return NaNColor
	}
	return viridisLUT[int(math.Round(min(max(v, 0), 1)*255))]
}

// viridisPalette is Viridis as a gonum palette of 256 colours.
type viridisPalette struct{}

func (viridisPalette) Colors() []color.Color {
	out := make([]color.Color, len(viridisLUT))
	for k, c := range viridisLUT {
		out[k] = c
	}
	return out
}

var _ palette.Palette = viridisPalette{}

// viridisMap is Viridis as a gonum colour map over [lo, hi] (the colour
// bars of basin maps).
type viridisMap struct {
	lo, hi, alpha float64
}

var _ palette.ColorMap = (*viridisMap)(nil)

func (m *viridisMap) At(v float64) (color.Color, error) {
	if math.IsNaN(v) {
		return NaNColor, nil
	}
	if m.hi == m.lo {
		return Viridis(0.5), nil
	}
	return Viridis((v - m.lo) / (m.hi - m.lo)), nil
}
func (m *viridisMap) Max() float64       { return m.hi }
func (m *viridisMap) Min() float64       { return m.lo }
func (m *viridisMap) SetMax(v float64)   { m.hi = v }
func (m *viridisMap) SetMin(v float64)   { m.lo = v }
func (m *viridisMap) Alpha() float64     { return 1 }
func (m *viridisMap) SetAlpha(a float64) { m.alpha = a }
func (m *viridisMap) Palette(n int) palette.Palette {
	return viridisPalette{}
}
