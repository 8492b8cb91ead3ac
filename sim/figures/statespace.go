package figures

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"attractorlab/sim"
)

// DigitColors are the ten labels' colours in the state-space map: the
// palette's first six, then four more apart from them, every one seen on
// a light and a dark background (the palette's black is not).
var DigitColors = append(append([]color.RGBA{}, Palette[:6]...),
	color.RGBA{200, 200, 60, 255}, color.RGBA{140, 140, 140, 255}, color.RGBA{166, 86, 40, 255}, color.RGBA{120, 94, 240, 255})

// CloudColors are the stored digits' colours in the cloud and its legend:
// DigitColors mixed halfway with white, so that no stored digit has the
// colour of a model's path (the models take the palette's first six; a
// bare model's blue path ran through a cloud of the same blue 0s).
var CloudColors = func() []color.RGBA {
	out := make([]color.RGBA, len(DigitColors))
	for k, c := range DigitColors {
		out[k] = color.RGBA{R: uint8((int(c.R) + 255) / 2), G: uint8((int(c.G) + 255) / 2), B: uint8((int(c.B) + 255) / 2), A: 255}
	}
	return out
}()

// meanColor marks the mean digit: seen on both backgrounds, like no label.
var meanColor = color.RGBA{220, 40, 40, 255}

// Path is one model's trajectory in the state-space map: its states at
// t = 0 … projected, the step shown (Now) and its t* (Best, −1: none).
type Path struct {
	Name      string
	Points    [][2]float64
	Now, Best int
	// Color, when set, replaces the model's colour (ModelColor(Name)).
	Color color.Color
	// Dashed draws a pushed run (its square is the push).
	Dashed bool
}

// StateSpacePlot draws the stored digits as a faint cloud coloured by
// label, the mean digit at the origin, and each path as a line in its
// model's colour from a square at t = 0, with a ring at t* and a dot at
// the step shown.
func StateSpacePlot(s *sim.StateSpace, paths []Path) (*plot.Plot, error) {
	return stateSpacePlot("the state space: the stored digits' first two principal components", s, paths)
}

// DigitPathsPlot is trajectory-map.png of `reproduce`: model's runs of
// the first test digits as paths in the state space, each in its label's
// colour (a square at the input, a ring at its own t*, a dot at the last
// step).
func DigitPathsPlot(model string, s *sim.StateSpace, runs []sim.DigitPath) (*plot.Plot, error) {
	var paths []Path
	for _, r := range runs {
		paths = append(paths, Path{Name: fmt.Sprintf("test digit %d (a %d)", r.Index, r.Label), Points: r.Points,
			Now: len(r.Points) - 1, Best: r.TStar, Color: DigitColors[r.Label%10]})
	}
	return stateSpacePlot(fmt.Sprintf("%s: the first %d test digits' runs in the state space", model, len(runs)), s, paths)
}

func stateSpacePlot(title string, s *sim.StateSpace, paths []Path) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = fmt.Sprintf("PC 1 (%.1f%% of the variance)", 100*s.Share[0])
	p.Y.Label.Text = fmt.Sprintf("PC 2 (%.1f%%)", 100*s.Share[1])
	p.Y.Tick.Marker = DistinctTicks{}
	p.Legend.Top = true
	cl := &cloud{xys: make([]plotter.XYs, 10), colors: make([]color.NRGBA, 10), radius: vg.Points(1.1)}
	for k, pt := range s.Points {
		if l := s.Labels[k]; l < 10 {
			cl.xys[l] = append(cl.xys[l], plotter.XY{X: pt[0], Y: pt[1]})
		}
	}
	for l := range cl.xys {
		c := CloudColors[l]
		cl.colors[l] = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 110}
	}
	p.Add(cl)
	for l, xy := range cl.xys {
		if len(xy) == 0 {
			continue
		}
		key, _ := plotter.NewScatter(plotter.XYs{{}})
		key.GlyphStyle = draw.GlyphStyle{Color: CloudColors[l], Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
		p.Legend.Add(fmt.Sprintf("stored %d", l), key)
	}
	origin, _ := plotter.NewScatter(plotter.XYs{{X: 0, Y: 0}})
	origin.GlyphStyle = draw.GlyphStyle{Color: meanColor, Radius: vg.Points(7), Shape: draw.CrossGlyph{}}
	p.Add(origin)
	p.Legend.Add("the mean digit (origin)", origin)
	for _, path := range paths {
		if len(path.Points) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(path.Points))
		for k, pt := range path.Points {
			xy[k] = plotter.XY{X: pt[0], Y: pt[1]}
		}
		var col color.Color = ModelColor(path.Name)
		if path.Color != nil {
			col = path.Color
		}
		if len(xy) > 1 {
			l, err := plotter.NewLine(xy)
			if err != nil {
				return nil, err
			}
			l.Color, l.Width = col, vg.Points(2)
			if path.Dashed {
				l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			}
			p.Add(l)
			p.Legend.Add(path.Name, l)
		}
		mark := func(k int, shape draw.GlyphDrawer, r float64) {
			if k < 0 || k >= len(xy) {
				return
			}
			sc, _ := plotter.NewScatter(plotter.XYs{xy[k]})
			sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(r), Shape: shape}
			p.Add(sc)
		}
		mark(0, draw.BoxGlyph{}, 4)
		mark(path.Best, draw.RingGlyph{}, 7)
		mark(min(path.Now, len(xy)-1), draw.CircleGlyph{}, 5)
	}
	return p, nil
}
