package ui

import (
	"fmt"
	"math"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
	"gonum.org/v1/plot"

	"attractorlab/sim"
	"attractorlab/sim/figures"
)

// The state-space window (View → State space…): the stored digits as a
// cloud in the plane of their two principal components, the mean digit
// at its origin, and each model's trajectory as a path through it — the
// state passing near memories, then falling toward the global attractor —
// following the main window.
type spaceWin struct {
	m     *Main
	w     fyne.Window
	plot  *PlotView
	note  *widget.Label
	space *sim.StateSpace
	mem   *sim.Memories // the stored pictures space was computed from
	// drawnKey says what the plot shows (drawKey): a snapshot that would
	// draw the same paths does not draw them again.
	drawnKey string
	// ready, in tests, is told on the Fyne goroutine once the plane is
	// computed and drawn
	ready func()
}

// ShowStateSpace opens View → State space…; ready, when not nil, is told
// on Fyne's goroutine once the plane and the trajectories are drawn (what
// `make bench-commands` times).
func (m *Main) ShowStateSpace(ready func()) {
	if ready != nil {
		m.spaceReady = ready
	}
	m.showStateSpace()
}

func (m *Main) showStateSpace() {
	if m.space != nil {
		m.space.w.Show()
		m.space.w.RequestFocus()
		return
	}
	sw := &spaceWin{m: m, w: m.newWindow("State space — Attractor Lab"), plot: NewPlotView(), ready: m.spaceReady}
	sw.plot.HideT = true
	sw.plot.OnPoint = sw.load
	sw.note = widget.NewLabel("placing the stored digits in their plane…")
	sw.note.Wrapping = fyne.TextWrapWord
	m.fitWindow(sw.w, container.NewBorder(nil, sw.note, nil, nil, sw.plot), fyne.NewSize(900, 760))
	sw.w.Canvas().SetOnTypedKey(keyOnFyne(func(k *fyne.KeyEvent) {
		if !m.handleKey(k) {
			m.escCloses(k)
		}
	}))
	sw.w.SetOnClosed(func() { m.space = nil })
	m.space = sw
	sw.compute(m.source())
	sw.w.Show()
}

// compute places src's stored pictures in their plane, off Fyne's
// goroutine (in the page, in a worker when one is free: the projection
// held the page's thread beside the window's first paint), then draws the
// window (again when the main window's data set changed since).
func (sw *spaceWin) compute(src *sim.Source) {
	m := sw.m
	mem := src.Memories
	sw.mem, sw.space, sw.drawnKey = mem, nil, ""
	remote, name := m.deps.Space, src.Data.Name()
	if !offPage(src) {
		remote = nil // a folder of pictures is only this session's
	}
	var get func() (*sim.StateSpace, error)
	if remote != nil {
		get = func() (*sim.StateSpace, error) { return remote.StateSpace(m.ctx, name) }
	}
	go func() {
		s := mem.StateSpaceFrom(get)
		fyne.Do(func() {
			if sw.mem != mem {
				return // the data set changed meanwhile: its own computation draws
			}
			sw.space = s
			if m.snap != nil {
				sw.draw(m.snap)
			}
			if s.Warning != "" {
				m.Warn(s.Warning)
			}
			if m.OnApplied != nil {
				m.OnApplied() // what the window shows changed: the page publishes it
			}
			if sw.ready != nil {
				sw.ready()
			}
		})
	}()
}

// load loads, in the main window, the stored digit nearest the point
// (x, y) of the plane.
func (sw *spaceWin) load(x, y float64) {
	if sw.space == nil {
		return
	}
	best, bd := -1, math.Inf(1)
	for k, p := range sw.space.Points {
		if d := math.Hypot(p[0]-x, p[1]-y); d < bd {
			best, bd = k, d
		}
	}
	if best < 0 {
		return
	}
	sw.m.send(func(st *sim.Settings) { st.Split, st.Index, st.Own = sim.TrainSplit, best, nil })
	sw.m.setStatus(fmt.Sprintf("loaded stored digit %d (a %d), the point nearest the click in the state space", best, sw.space.Labels[best]))
}

// paths projects each model's recorded states.
func (sw *spaceWin) paths(sn *sim.Snapshot) []figures.Path {
	var out []figures.Path
	for _, l := range sn.Lanes {
		p := figures.Path{Name: l.Info.Name, Now: sn.T, Best: l.Best}
		for _, f := range l.Frames {
			p.Points = append(p.Points, sw.space.Project(f.Image))
		}
		out = append(out, p)
		if len(l.Branch) > 0 {
			// The pushed run, dashed, from the push (its square).
			b := figures.Path{Name: l.Info.Name + " pushed", Now: sn.T - l.Branch[0].T, Best: -1,
				Color: figures.ModelColor(l.Info.Name), Dashed: true}
			for _, f := range l.Branch {
				b.Points = append(b.Points, sw.space.Project(f.Image))
			}
			out = append(out, b)
		}
	}
	return out
}

// drawKey names what the state-space plot of sn shows: the step, and
// each lane's model, frames and pushed run (a lane's frames only grow, and
// a new digit or setting changes its first frame).
func drawKey(sn *sim.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", sn.T)
	for _, l := range sn.Lanes {
		fmt.Fprintf(&b, "|%s %d %d %d", l.Info.Name, len(l.Frames), len(l.Branch), l.Best)
		// The first and last states, by address and error: a new digit
		// or setting gives new frames.
		for _, fs := range [][]*sim.Frame{l.Frames, l.Branch} {
			if n := len(fs); n > 0 {
				fmt.Fprintf(&b, " %p %x %x", fs[0], math.Float64bits(fs[0].MSE), math.Float64bits(fs[n-1].MSE))
			}
		}
	}
	return b.String()
}

// draw shows the snapshot's trajectories (once the plane is there).
func (sw *spaceWin) draw(sn *sim.Snapshot) {
	if sn.Source != nil && sn.Source.Memories != sw.mem {
		// Another data set: its stored pictures, in their own plane.
		sw.note.SetText("placing the stored pictures in their plane…")
		sw.compute(sn.Source)
		return
	}
	if sw.space == nil {
		return
	}
	key := drawKey(sn)
	if key == sw.drawnKey {
		return // the same paths: a redraw of 10,000 digits for nothing
	}
	sw.drawnKey = key
	paths := sw.paths(sn)
	space := sw.space
	sw.plot.SetPlot(func() (*plot.Plot, error) { return figures.StateSpacePlot(space, paths) })
	sw.note.SetText(fmt.Sprintf("Each model's states t = 0 … %d as a path: a square at the input, a ring at its t*, a dot at t = %d; a pushed run dashed from its push. Click a point to load that stored digit. "+
		"The cloud is the %d stored digits; the red cross, the mean digit. The bare model's end states are shaped like it but brighter, so they lie off it in this plane.", figures.RunFrames(sn)-1, sn.T, len(space.Points)))
}
