package ui

import (
	"image/color"

	"fyne.io/fyne/v2/theme"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// styleForTheme colours a plot for the current theme: transparent
// background, text and axes in the foreground colour, larger type.
func styleForTheme(p *plot.Plot) {
	fg := theme.Color(theme.ColorNameForeground)
	p.BackgroundColor = color.Transparent
	size := vg.Points(float64(theme.TextSize()) * 0.8)
	p.Title.TextStyle.Color = fg
	p.Title.TextStyle.Font.Size = size
	p.Legend.TextStyle.Color = fg
	p.Legend.TextStyle.Font.Size = size * 0.85
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Color = fg
		ax.Label.TextStyle.Color = fg
		ax.Label.TextStyle.Font.Size = size * 0.9
		ax.Tick.Color = fg
		ax.Tick.Label.Color = fg
		ax.Tick.Label.Font.Size = size * 0.8
	}
}
