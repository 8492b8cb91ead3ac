package figures

import (
	"testing"

	"golang.org/x/image/font/gofont/goregular"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
)

// TestUseFont: a font given by the window becomes the plots' font; bytes
// that are not a font are refused by name.
func TestUseFont(t *testing.T) {
	old, oldLabels := plot.DefaultFont, plotter.DefaultFont
	defer func() { plot.DefaultFont, plotter.DefaultFont = old, oldLabels }()
	if err := UseFont("junk", []byte("not a font")); err == nil {
		t.Fatal("junk bytes accepted as a font")
	}
	// Any TrueType font will do (the window passes its theme's).
	if err := UseFont("test-font", goregular.TTF); err != nil {
		t.Fatal(err)
	}
	p := plot.New()
	if p.Title.TextStyle.Font.Typeface != font.Typeface("test-font") {
		t.Fatalf("title font %q", p.Title.TextStyle.Font.Typeface)
	}
	if _, err := CurvePlot(syntheticCurve(0)); err != nil {
		t.Fatal(err)
	}
}
