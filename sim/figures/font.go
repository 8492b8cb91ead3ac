package figures

import (
	"fmt"
	"sync"

	"golang.org/x/image/font/opentype"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
)

var fontMu sync.Mutex

// UseFont makes ttf (a TrueType or OpenType font) the font of every plot
// made afterwards. The window passes its theme's text font, so plots read
// like the controls beside them instead of in gonum's default serif. The
// command line keeps gonum's font (its golden images are drawn with it).
func UseFont(name string, ttf []byte) error {
	f, err := opentype.Parse(ttf)
	if err != nil {
		return fmt.Errorf("plot font %s: %w", name, err)
	}
	fontMu.Lock()
	defer fontMu.Unlock()
	fnt := font.Font{Typeface: font.Typeface(name)}
	font.DefaultCache.Add(font.Collection{{Font: fnt, Face: f}})
	plot.DefaultFont = fnt
	plotter.DefaultFont = fnt
	return nil
}
