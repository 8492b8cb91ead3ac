package ui

import (
	"math"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// TestPlotImageFitsTexture: a plot is drawn at the pixel size Fyne's
// painter gives its image (the size rounded), so it is uploaded as drawn
// and never scaled again in software. Sizes whose fraction is .5 or more
// were drawn a pixel short (truncated).
func TestPlotImageFitsTexture(t *testing.T) {
	test.NewTempApp(t)
	p := NewPlotView()
	p.SetPlot(lineBuilder(nil))
	test.TempWidgetRenderer(t, p)
	for _, s := range []fyne.Size{{Width: 300, Height: 200}, {Width: 300.6, Height: 200.5}, {Width: 301.4, Height: 199.7}} {
		p.Resize(s) // lays the plot out: drawn at this size
		b := p.img.Image.Bounds()
		want := [2]int{int(math.Round(float64(s.Width))), int(math.Round(float64(s.Height)))}
		if got := [2]int{b.Dx(), b.Dy()}; got != want {
			t.Errorf("a plot of %v on a canvas of scale 1 drawn %v px, the painter's texture %v", s, got, want)
		}
	}
}

// TestPlotsDrawnInTheirOwnTask: in the page a plot is not drawn where it
// is asked for but queued, once however often it is asked, and drawn after
// the page's turn; its markers wait for it when the last picture was of
// another size.
func TestPlotsDrawnInTheirOwnTask(t *testing.T) {
	test.NewTempApp(t)
	wasDefer, wasYield := deferPlots, yieldTurn
	turn := make(chan struct{})
	deferPlots = func() bool { return true }
	yieldTurn = func() { <-turn }
	t.Cleanup(func() { deferPlots, yieldTurn = wasDefer, wasYield })
	built := 0
	p := NewPlotView()
	p.T = 5
	p.SetPlot(lineBuilder(&built))
	test.TempWidgetRenderer(t, p)
	p.Resize(fyne.NewSize(300, 200))
	p.Refresh()
	p.Resize(fyne.NewSize(320, 200))
	plotQueue.Lock()
	waiting := len(plotQueue.list)
	plotQueue.Unlock()
	if built != 0 || !p.queued || waiting != 0 && waiting != 1 || p.marker.Visible() {
		t.Fatalf("asked three times before the page's turn: built %d times, queued %v, %d waiting, the marker shown %v; want 0, true, at most 1, false",
			built, p.queued, waiting, p.marker.Visible())
	}
	close(turn)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		plotQueue.Lock()
		done := !plotQueue.running
		plotQueue.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the queued plot was not drawn within a minute")
		}
	}
	if b := p.img.Image.Bounds(); built != 1 || b.Dx() != 320 || b.Dy() != 200 || p.queued || !p.marker.Visible() {
		t.Fatalf("after the page's turn: built %d times, a picture of %v, queued %v, the marker shown %v; want 1, 320×200, false, true",
			built, b, p.queued, p.marker.Visible())
	}
}

// lineBuilder builds a plot of one line, counting its builds in *built
// (when not nil).
func lineBuilder(built *int) func() (*plot.Plot, error) {
	return func() (*plot.Plot, error) {
		if built != nil {
			*built++
		}
		pl := plot.New()
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 1}, {X: 10, Y: 0.5}})
		if err != nil {
			return nil, err
		}
		pl.Add(l)
		return pl, nil
	}
}
