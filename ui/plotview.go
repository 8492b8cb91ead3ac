package ui

import (
	"image"
	"math"
	"sync"

	"attractorlab/sim"
	"attractorlab/sim/figures"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"gonum.org/v1/plot"
)

// PlotView shows a gonum plot rendered at the widget's pixel size and a
// vertical marker at the current t drawn on top, so moving t does not
// re-render the plot. A tap on the plot seeks to the t under the pointer.
type PlotView struct {
	widget.BaseWidget

	// Build makes the plot; it is called again after SetPlot or a resize.
	Build  func() (*plot.Plot, error)
	T      float64 // marker position (data x)
	TStar  float64 // second marker (t*), < 0 for none
	HideT  bool    // no t marker (plots that are not of the trajectory)
	OnSeek func(t int)
	// OnPoint, when set, is told the data point under a tap (instead of
	// OnSeek): plots whose two axes are both data, like the state space.
	OnPoint func(x, y float64)
	toData  func(px, py float64) (float64, float64)

	img      *canvas.Image
	marker   *canvas.Line
	star     *canvas.Line
	markerTx *canvas.Text // "t"
	starTx   *canvas.Text // "t*"
	msg      *canvas.Text // why there is no plot
	xpix     func(float64) float64
	top      float64
	bottom   float64
	scale    float32
	builtAt  fyne.Size
	stale    bool
	// queued: the plot waits in plotQueue to be drawn (the page; Fyne's
	// goroutine only).
	queued bool
}

// NewPlotView returns a view; call SetPlot to give it something to draw.
func NewPlotView() *PlotView {
	p := &PlotView{TStar: -1}
	p.ExtendBaseWidget(p)
	return p
}

// SetPlot replaces the plot (rendered on the next refresh).
func (p *PlotView) SetPlot(build func() (*plot.Plot, error)) {
	p.Build = build
	p.stale = true
	p.Refresh()
}

// CreateRenderer builds the objects once.
func (p *PlotView) CreateRenderer() fyne.WidgetRenderer {
	p.img = canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
	p.img.FillMode = canvas.ImageFillStretch
	// The picture is drawn at the painter's size (texturePixels); one of
	// another size is the last picture, stretched until the new one is
	// drawn (the page), which the GPU now stretches without smoothing for
	// a frame or two. With Fyne's default (smooth) the painter resampled
	// it in software at each upload: 23 ms of a presentation-mode toggle
	// in the page.
	p.img.ScaleMode = canvas.ImageScalePixels
	p.marker = canvas.NewLine(markerColor)
	p.marker.StrokeWidth = 2
	p.star = canvas.NewLine(starColor)
	p.star.StrokeWidth = 1.5
	p.markerTx = canvas.NewText("t", markerColor)
	p.starTx = canvas.NewText("t*", starColor)
	for _, tx := range []*canvas.Text{p.markerTx, p.starTx} {
		tx.TextStyle.Bold = true
	}
	p.msg = canvas.NewText("", theme.Color(theme.ColorNameDisabled))
	p.msg.Alignment = fyne.TextAlignCenter
	return &plotRenderer{p: p}
}

type plotRenderer struct{ p *PlotView }

func (r *plotRenderer) Layout(s fyne.Size) {
	p := r.p
	p.img.Resize(s)
	if s != p.builtAt {
		p.stale = true
	}
	r.render()
	r.place()
}

func (r *plotRenderer) render() {
	p := r.p
	if !p.drawable() {
		return
	}
	if deferPlots() {
		p.queue()
		return
	}
	r.draw()
}

// drawable reports whether the plot has a picture to draw: it is stale,
// has something to build, and room.
func (p *PlotView) drawable() bool {
	s := p.Size()
	return p.stale && p.Build != nil && s.Width >= 10 && s.Height >= 10
}

// draw builds the plot and draws its picture at the view's size.
func (r *plotRenderer) draw() {
	p := r.p
	s := p.Size()
	scale := float32(1)
	if c := fyne.CurrentApp(); c != nil {
		if d := c.Driver(); d != nil {
			if cv := d.CanvasForObject(p); cv != nil {
				scale = cv.Scale()
			}
		}
	}
	pl, err := p.Build()
	if err != nil || pl == nil {
		// Say why instead of leaving the last plot drawn.
		p.img.Image = image.NewRGBA(image.Rect(0, 0, 1, 1))
		p.xpix = nil
		p.msg.Text = "no plot"
		if err != nil {
			p.msg.Text = err.Error()
		}
		p.msg.Color = theme.Color(theme.ColorNameForeground)
		p.msg.TextSize = theme.TextSize()
		p.msg.Move(fyne.NewPos(0, s.Height/2-p.msg.MinSize().Height/2))
		p.msg.Resize(fyne.NewSize(s.Width, p.msg.MinSize().Height))
		p.msg.Show()
		p.builtAt, p.stale = s, false
		p.img.Refresh()
		p.msg.Refresh()
		return
	}
	p.msg.Hide()
	styleForTheme(pl)
	w, h := texturePixels(s.Width, scale), texturePixels(s.Height, scale)
	rd := figures.RenderMapped(pl, w, h, 96*float64(scale))
	p.img.Image = rd.Image
	p.xpix, p.top, p.bottom, p.scale, p.toData = rd.XPix, rd.Top, rd.Bottom, scale, rd.ToData
	p.builtAt = s
	p.stale = false
	p.img.Refresh()
}

// The markers' colours are figures.NowColor and BestColor, used by no
// curve and the same in exported plots; each is labelled at its top.
var markerColor, starColor = figures.NowColor, figures.BestColor

func (r *plotRenderer) place() {
	p := r.p
	if p.xpix == nil || p.queued && p.builtAt != p.Size() {
		// No plot, or the last one drawn at another size, its picture
		// stretched until the new one is drawn: no marker, which would
		// stand where that plot's axes put it.
		for _, o := range []fyne.CanvasObject{p.marker, p.star, p.markerTx, p.starTx} {
			o.Hide()
		}
		return
	}
	put := func(l *canvas.Line, tx *canvas.Text, t float64, right bool) {
		x := float32(p.xpix(t)) / p.scale
		p1, p2 := fyne.NewPos(x, float32(p.top)/p.scale), fyne.NewPos(x, float32(p.bottom)/p.scale)
		size := theme.CaptionTextSize()
		// Only what moved or changed is refreshed: a marker that stays
		// (t* while stepping) costs the page nothing each step.
		if l.Position1 != p1 || l.Position2 != p2 || !l.Visible() {
			l.Position1, l.Position2 = p1, p2
			l.Show()
			l.Refresh()
		}
		if tx.TextSize != size || !tx.Visible() {
			tx.TextSize = size
			tx.Show()
			tx.Refresh()
		}
		tx.Resize(tx.MinSize())
		w := tx.MinSize().Width
		tx.Move(fyne.NewPos(x+3, float32(p.top)/p.scale))
		if !right {
			tx.Move(fyne.NewPos(x-3-w, float32(p.top)/p.scale))
		}
	}
	// t* on the left of its line, t on the right, so both read when they meet.
	if p.HideT {
		p.marker.Hide()
		p.markerTx.Hide()
	} else {
		put(p.marker, p.markerTx, p.T, true)
	}
	if p.TStar >= 0 {
		put(p.star, p.starTx, p.TStar, false)
	} else {
		p.star.Hide()
		p.starTx.Hide()
	}
}

func (r *plotRenderer) MinSize() fyne.Size { return fyne.NewSize(140, 120) }
func (r *plotRenderer) Refresh() {
	r.render()
	r.place()
}
func (r *plotRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.p.img, r.p.star, r.p.marker, r.p.starTx, r.p.markerTx, r.p.msg}
}
func (r *plotRenderer) Destroy() {}

// Tapped seeks to the t under the pointer (or tells OnPoint the point).
func (p *PlotView) Tapped(e *fyne.PointEvent) {
	if p.OnPoint != nil && p.toData != nil {
		p.OnPoint(p.toData(float64(e.Position.X*p.scale), float64(e.Position.Y*p.scale)))
		return
	}
	if p.xpix == nil || p.OnSeek == nil {
		return
	}
	x := float64(e.Position.X * p.scale)
	// xpix is increasing: bisect for t.
	lo, hi := 0.0, 1e6
	for k := 0; k < 60; k++ {
		mid := (lo + hi) / 2
		if p.xpix(mid) < x {
			lo = mid
		} else {
			hi = mid
		}
	}
	p.OnSeek(int(lo + 0.5))
}

// texturePixels is how many pixels Fyne's painter gives an image v units
// long on a canvas of this scale (it rounds). A picture drawn to exactly
// that size is uploaded as it is; one a pixel off (int() truncated where
// the painter rounds up) was scaled again in software with a smooth
// kernel on every upload: blurred, and in the page 86 ms of the 1.3 s the
// page worked while a compare link recorded its look-ahead.
func texturePixels(v, scale float32) int {
	return int(math.Round(float64(v * scale)))
}

// deferPlots reports whether a plot is drawn in a task of its own (the
// page) rather than where it is asked for (a window, which has its own
// thread to draw on).
var deferPlots = inBrowser

// plotQueue holds the plots waiting to be drawn in the page. A plot takes
// gonum/plot tens of milliseconds there; drawn where it was asked for,
// every plot a snapshot changed was drawn in the one task of the page that
// also applied the snapshot and painted the window (the look-ahead's
// growth redrew the MSE and energy plots together four times a second;
// presentation mode all of them). Each is now drawn in a task of its own,
// after the page's turn; meanwhile the last picture stays, stretched to a
// new size.
var plotQueue struct {
	sync.Mutex
	list    []*PlotView
	running bool
}

// yieldTurn waits for the page's next turn (its test holds it).
var yieldTurn = sim.Yield

// queue puts p in plotQueue, once (Fyne's goroutine).
func (p *PlotView) queue() {
	if p.queued {
		return
	}
	p.queued = true
	plotQueue.Lock()
	defer plotQueue.Unlock()
	plotQueue.list = append(plotQueue.list, p)
	if !plotQueue.running {
		plotQueue.running = true
		go drawQueuedPlots()
	}
}

// drawQueuedPlots draws the queued plots, one in each of the page's tasks,
// until none is left.
func drawQueuedPlots() {
	for {
		plotQueue.Lock()
		if len(plotQueue.list) == 0 {
			plotQueue.running = false
			plotQueue.Unlock()
			return
		}
		p := plotQueue.list[0]
		plotQueue.list = plotQueue.list[1:]
		plotQueue.Unlock()
		yieldTurn()
		fyne.DoAndWait(func() {
			p.queued = false
			r := &plotRenderer{p: p}
			if p.drawable() {
				r.draw()
			}
			r.place()
		})
	}
}
