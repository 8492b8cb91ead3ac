package ui

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"attractorlab/sim"
	"attractorlab/sim/figures"
	"attractorlab/sim/mnist"
)

func titledPanel(title *Lines, o fyne.CanvasObject) fyne.CanvasObject {
	return container.NewBorder(title, nil, nil, nil, o)
}

// readoutLead is how many runes the readout's head "t = %-4d " has: the
// readout (tLabel) draws them apart from the rest of its line, which does
// not change while stepping (Lines.Lead).
const readoutLead = len("t = 0000 ")

// setText changes a label's text only when it differs: a label measures
// and shapes its text again on every SetText, and snapshots arrive up to
// 60 times a second.
func setText(l *widget.Label, s string) {
	if l.Text != s {
		l.SetText(s)
	}
}

func newTitle(s string) *Lines {
	l := NewLines(s, fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	l.Truncation = fyne.TextTruncateEllipsis
	return l
}

// layoutCenter arranges the panels for n lanes: images on top (clean,
// input, one state per lane, nearest memory), analysis below (attention
// per lane, MSE, energy for a single model, variance histogram).
func (m *Main) layoutCenter(n int) {
	m.answers, m.answersWidth = nil, 0
	m.states = m.states[:0]
	m.patterns = map[int]*PatternsView{}
	m.stateTitles = m.stateTitles[:0]
	m.heat = m.heat[:0]
	m.heatTitles = m.heatTitles[:0]
	m.cleanTitle = newTitle("clean\n")
	top := []fyne.CanvasObject{
		titledPanel(m.cleanTitle, m.clean),
		titledPanel(newTitle("input\nt = 0"), m.input),
	}
	var bottom []fyne.CanvasObject
	for k := 0; k < n; k++ {
		v := NewPixelView()
		k := k
		v.OnTapped = func(i int) { m.selectQuery(k, i) }
		v.OnHover = func(q int) { m.hoverState(k, q) }
		title := newTitle("")
		// Its text changes every step and is short ("bsa-p2", "t 33 ·
		// MSE 0.0595"): no truncation, which shapes the text again and
		// again to find where to cut, and drawn from kept characters.
		title.Truncation = fyne.TextTruncateOff
		title.Glyphs = true
		m.states = append(m.states, v)
		m.stateTitles = append(m.stateTitles, title)
		top = append(top, titledPanel(title, v))
		if n == 1 && pushedPanel(m.snap) {
			// One model alone: its pushed run beside it.
			top = append(top, titledPanel(m.pushedTitle, m.pushedView))
		}
		h := NewHeatmap()
		h.OnTapped = func(row int) { m.selectQuery(k, row) }
		h.OnHover = func(r, c int) { m.hoverHeat(k, r, c) }
		ht := newTitle("")
		m.heat = append(m.heat, h)
		m.heatTitles = append(m.heatTitles, ht)
		info := m.lanes(k)
		switch {
		case info.Patterns > 0:
			set := m.source().Memories.Set
			pv := NewPatternsView(set, 8, 4)
			if n > 1 {
				pv = NewPatternsView(set, 4, 2)
			}
			m.patterns[k] = pv
			bottom = append(bottom, titledPanel(ht, pv))
		case info.Tokens == 0:
			bottom = append(bottom, titledPanel(ht, hint("no attention: Hebbian couplings W, update sgn(Wξ)")))
		default:
			bottom = append(bottom, titledPanel(ht, h))
		}
	}
	tip := newInfoTip(nearestTip)
	tip.Hover = m.setStatus
	top = append(top, container.NewBorder(container.NewBorder(nil, nil, nil, tip, newTitle("nearest\nmemory")),
		m.nearestLbl, nil, nil, m.nearest))
	if m.presentation {
		m.layoutFocus(n, top)
		return
	}
	m.mseLegend = container.NewGridWithColumns(2)
	m.energyNote = canvas.NewText("○ t = 0: masked keys left out", figures.ReferenceColor)
	m.energyNote.TextSize = theme.CaptionTextSize()
	m.energyNote.Hide()
	plots := []fyne.CanvasObject{container.NewBorder(nil, m.mseLegend, nil, nil, m.msePlot),
		container.NewBorder(nil, m.energyNote, nil, nil, m.energyPlot), m.hist}
	if n == 1 {
		m.center.Objects = []fyne.CanvasObject{container.New(equalRows{},
			container.NewGridWithColumns(len(top), top...),
			container.NewGridWithColumns(len(bottom)+len(plots), append(bottom, plots...)...))}
	} else {
		// Compare: a row of attention beside the answer of every model,
		// then the plots, each model a line.
		// The table and the maps share the row half and half; the
		// table's columns are as wide as what they hold needs.
		m.answers = container.New(answerLayout{})
		table := container.NewBorder(newTitle("each model's answer"), nil, nil, nil, container.NewVScroll(m.answers))
		m.center.Objects = []fyne.CanvasObject{container.New(equalRows{},
			container.NewGridWithColumns(len(top), top...),
			container.NewGridWithColumns(2, container.NewGridWithColumns(len(bottom), bottom...), table),
			container.NewGridWithColumns(len(plots), plots...))}
	}
	m.center.Refresh()
	m.lastPlotKey = ""
}

// waitingText stands for a model whose weights the page is fetching.
const waitingText = "fetching the model's weights: its steps follow"

// layoutFocus is presentation mode's arrangement, made to be read from
// the back of a lecture hall on a 1280×800 projector with one to four
// models: the images in a row (the clean digit, the input, one state per
// model; the nearest memory beside a single model), then one large MSE
// plot, with each model's t* marked, beside the table of every model's
// answer. The attention maps, the energy and the histogram stay outside
// presentation mode.
func (m *Main) layoutFocus(n int, top []fyne.CanvasObject) {
	imgs := top
	if n > 1 {
		imgs = top[:len(top)-1] // the table names each model's nearest memory
	}
	// The legend in one row when it fits (a line per model and the
	// input's; a single model's all, masked and unmasked pixels).
	m.mseLegend = container.NewGridWithColumns(min(n+1, 4))
	if n == 1 {
		m.mseLegend = container.NewGridWithColumns(4)
	}
	var lower fyne.CanvasObject = container.NewBorder(nil, m.mseLegend, nil, nil, m.msePlot)
	if n > 1 {
		// No scrolling: every row is in sight, sized to what it holds.
		m.answers = container.New(answerLayout{})
		table := container.NewBorder(newTitle("each model's answer"), nil, nil, nil, m.answers)
		lower = container.New(plotAndTable{answers: m.answers}, lower, table)
	}
	m.center.Objects = []fyne.CanvasObject{container.New(focusRows{cols: len(imgs)},
		container.NewGridWithColumns(len(imgs), imgs...), lower)}
	m.center.Refresh()
	m.lastPlotKey = ""
}

// focusRows lays out presentation mode's two rows: the images (as tall as
// a square image and its title need, so no more than their width) and the
// plot below, which is given at least focusPlotHeight when the images can
// shrink to make room.
type focusRows struct{ cols int }

// focusPlotHeight is the height presentation mode keeps for the MSE plot,
// its legend and the table when it can.
const focusPlotHeight = 330

func (f focusRows) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	if len(objs) != 2 {
		return
	}
	pad := theme.Padding()
	top, lower := objs[0], objs[1]
	title := top.MinSize().Height - pixelViewMin // the titles (and captions) above and below an image
	cell := (s.Width - pad*float32(max(f.cols-1, 0))) / float32(max(f.cols, 1))
	h := min(title+cell, s.Height-pad-max(lower.MinSize().Height, focusPlotHeight))
	h = max(h, top.MinSize().Height)
	top.Move(fyne.NewPos(0, 0))
	top.Resize(fyne.NewSize(s.Width, h))
	lower.Move(fyne.NewPos(0, h+pad))
	lower.Resize(fyne.NewSize(s.Width, max(s.Height-h-pad, 0)))
}

func (f focusRows) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var sz fyne.Size
	for _, o := range objs {
		sz.Width = max(sz.Width, o.MinSize().Width)
		sz.Height += o.MinSize().Height
	}
	sz.Height += theme.Padding() * float32(max(len(objs)-1, 0))
	return sz
}

// plotAndTable lays out the plot and, on its right, the table at the width
// its columns need (at most focusTableShare of the row); the plot takes
// the rest.
type plotAndTable struct{ answers *fyne.Container }

func (p plotAndTable) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	if len(objs) != 2 {
		return
	}
	pad := theme.Padding()
	tw := min(max(sum(answerNatural(p.answers.Objects)), objs[1].MinSize().Width), s.Width*focusTableShare)
	objs[0].Move(fyne.NewPos(0, 0))
	objs[0].Resize(fyne.NewSize(s.Width-tw-pad, s.Height))
	objs[1].Move(fyne.NewPos(s.Width-tw, 0))
	objs[1].Resize(fyne.NewSize(tw, s.Height))
}

// focusTableShare is the most of the row the table takes beside the plot:
// enough for two long names (hopfield-classic) each led by its colour,
// "not yet" and a nearest memory at presentation's type size on 1280 px.
const focusTableShare = 0.56

func (p plotAndTable) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var sz fyne.Size
	for _, o := range objs {
		sz.Width += o.MinSize().Width
		sz.Height = max(sz.Height, o.MinSize().Height)
	}
	return sz.AddWidthHeight(theme.Padding(), 0)
}

func sum(v []float32) float32 {
	var t float32
	for _, x := range v {
		t += x
	}
	return t
}

func (m *Main) selectQuery(lane, i int) {
	if info := m.lanes(lane); i < 0 || i >= info.Tokens {
		// No such patch on this model (a pixel model has none): nothing
		// is selected.
		m.query = -1
	} else if m.query == i && m.lane == lane {
		m.query = -1
	} else {
		m.query, m.lane = i, lane
	}
	m.redrawImages()
	if m.snap != nil {
		m.drawText(m.snap)
	}
}

// redrawImages paints the image panels from the current snapshot.
func (m *Main) redrawImages() {
	sn := m.snap
	if sn == nil {
		return
	}
	grid := 0
	if m.showGrid {
		grid = sn.MaskGrid
	}
	m.clean.Pixels, m.clean.Grid = sn.Clean, grid
	m.clean.Refresh()
	m.input.Pixels, m.input.Mask, m.input.Grid = sn.Input, sn.PixelMask, sn.MaskGrid
	if !m.showGrid && sn.PixelMask == nil {
		m.input.Grid = 0
	}
	m.input.Refresh()
	// Shared colour scale across lanes for the attention maps.
	var hi float32
	for k, l := range sn.Lanes {
		if f := l.At(sn.T); f != nil && k < len(m.heat) && l.Info.Tokens > 0 {
			for _, v := range m.shownAttention(l, f) {
				hi = max(hi, v)
			}
		}
	}
	if hi == 0 {
		hi = 1
	}
	for k, l := range sn.Lanes {
		if k >= len(m.states) {
			break
		}
		f := l.At(sn.T)
		if b := l.BranchAt(sn.T); b != nil && len(sn.Lanes) > 1 && !m.unpushed {
			f = b // side by side, a model's panel shows its pushed run (Ctrl+J: the run as it was)
		}
		attn := m.shownAttention(l, f)
		v := m.states[k]
		v.Pixels, v.Mask = f.Image, sn.PixelMask
		v.Grid = 0
		if m.showGrid || m.query >= 0 {
			v.Grid = l.Info.Patch
		}
		v.Overlay, v.Selected, v.Frame = nil, -1, nil
		if len(sn.Lanes) > 1 {
			v.Frame = figures.ModelColor(l.Info.Name) // its lines' colour
		}
		if m.query >= 0 && k == m.lane && l.AttnOf(f) != nil && m.query < l.Info.Tokens {
			v.Overlay, v.OverlayLo, v.OverlayHi = attentionOverlay(attn, l.Grid, m.query)
			v.Selected = m.query
		}
		v.Refresh()
		h := m.heat[k]
		h.Values, h.Rows, h.Cols, h.Hi = attn, l.Info.Tokens, l.Info.Tokens, hi
		h.Scale, h.Block = m.attnScale, gridSide(l.Info.Tokens)
		h.Selected = -1
		if k == m.lane {
			h.Selected = m.query
		}
		if l.AttnOf(f) == nil {
			h.Values = nil
			h.Rows = 0
		}
		h.Refresh()
		if pv := m.patterns[k]; pv != nil {
			if sn.Source != nil {
				pv.set = sn.Source.Memories.Set // the data set's stored pictures
			}
			pv.SetWeights(l.AttnOf(f))
		}
	}
	if len(sn.Lanes) == 1 && pushedPanel(sn) {
		l := sn.Lanes[0]
		pv := m.pushedView
		pv.Pixels, pv.Mask, pv.Grid = nil, nil, 0
		if b := l.BranchAt(sn.T); b != nil {
			pv.Pixels = b.Image
			if m.showGrid {
				pv.Grid = l.Info.Patch
			}
			if sn.T == b.T && pushAt(sn, sn.T) {
				pv.Mask = pushMask(sn, sn.T) // the patches pushed at this step
			}
		}
		pv.Refresh()
	}
	if len(sn.Lanes) > 0 {
		f := sn.Lanes[min(m.lane, len(sn.Lanes)-1)].At(sn.T)
		if mem := m.source().Memories; mem != nil && f.Nearest < mem.Set.Len() {
			m.nearest.Pixels = mem.Set.Clean(f.Nearest, mnist.PixelGain)
			m.nearest.Refresh()
		}
	}
}

// attentionOverlay paints row q of an attention matrix onto the pixels of
// each key patch, on the row's own colour scale: its smallest weight lo at
// 0, its largest hi at 1 (a P=2 row spreads over 196 patches, so on the
// maps' scale every patch would look alike).
func attentionOverlay(attn []float32, pt *sim.Grid, q int) (out []float32, lo, hi float32) {
	if pt == nil || len(attn) < (q+1)*pt.N {
		return nil, 0, 0
	}
	row := attn[q*pt.N : (q+1)*pt.N]
	lo, hi = row[0], row[0]
	for _, v := range row {
		lo, hi = min(lo, v), max(hi, v)
	}
	out = make([]float32, sim.Pixels)
	for j, v := range row {
		x := float32(0.5)
		if hi > lo {
			x = (v - lo) / (hi - lo)
		}
		for k := 0; k < pt.A; k++ {
			out[pt.Index[j*pt.A+k]] = x
		}
	}
	return out, lo, hi
}

func (m *Main) hoverState(lane, q int) {
	sn := m.snap
	if sn == nil || lane >= len(sn.Lanes) || q < 0 {
		m.hover("")
		return
	}
	l := sn.Lanes[lane]
	f := l.At(sn.T)
	if f == nil || q >= len(f.Image) {
		m.hover("")
		return
	}
	txt := describe(l.Info.Label+" state", f.Image, q)
	if a, ok := m.selectedWeight(l, f, lane, q); ok {
		txt += a
	}
	m.hover(txt)
}

// selectedWeight is the hover text of the attention the selected patch
// pays to the patch under pixel q of lane's state; false when nothing is
// selected on that lane or the indices are not the model's (every index is
// bounded by the model's own sizes, whatever the selection was made on).
func (m *Main) selectedWeight(l sim.Lane, f *sim.Frame, lane, q int) (string, bool) {
	pt := l.Grid
	if m.query < 0 || lane != m.lane || l.AttnOf(f) == nil || pt == nil || m.query >= pt.N || q < 0 || q >= sim.Pixels {
		return "", false
	}
	j := pt.Token(q)
	attn := m.shownAttention(l, f)
	if j < 0 || j >= pt.N || m.query*pt.N+j >= len(attn) {
		return "", false
	}
	return fmt.Sprintf("   patch %d → patch %d: α = %.4f", m.query, j, attn[m.query*pt.N+j]), true
}

func (m *Main) hoverHeat(lane, r, c int) {
	if r < 0 || lane >= len(m.heat) {
		m.hover("")
		return
	}
	m.hover(fmt.Sprintf("attention: query patch %d → key patch %d: α = %.4f", r, c, m.heat[lane].Value(r, c)))
}

// gridSide is the side of the square grid of n tokens (the patches of a
// row), or 0 if n is not a square.
func gridSide(n int) int {
	g := int(math.Round(math.Sqrt(float64(n))))
	if g*g != n {
		return 0
	}
	return g
}

func column(frames []*sim.Frame, f func(*sim.Frame) float64) []float64 {
	out := make([]float64, len(frames))
	for k, fr := range frames {
		out[k] = f(fr)
	}
	return out
}

// drawPlots re-renders the plots when the curves changed and moves the
// markers to t always.
func (m *Main) drawPlots(sn *sim.Snapshot) {
	upto, xmax := 0, 0
	if m.lesson != nil {
		upto = sn.T + 1 // a lesson shows no step before it happens
		// A slide's short run fills the t axis (the masking lesson's one
		// step was a sliver of 100); a run to t* keeps the look-ahead's
		// axis, which does not say where t* is.
		if r := m.lesson.l.Slides[m.lesson.slide].Run; !r.ToBest {
			xmax = max(r.To, 1)
		}
	}
	if key := plotKey(sn) + fmt.Sprint(m.logY, upto, xmax); key != m.lastPlotKey {
		m.lastPlotKey = key
		logY := m.logY
		m.msePlot.SetPlot(func() (*plot.Plot, error) {
			return msePlot(sn, figures.TrajectoryOptions{LogY: logY, Now: -1, Best: -1, Upto: upto, XMax: xmax})
		})
		m.setLegend(sn)
		m.energyNote.Hide()
		for _, l := range sn.Lanes {
			if l.Info.HasEnergy && firstStepRules(sn, l.Info.Name) {
				m.energyNote.TextSize = theme.CaptionTextSize()
				m.energyNote.Show()
			}
		}
		m.energyNote.Refresh()
		m.energyPlot.SetPlot(func() (*plot.Plot, error) {
			return energyPlot(sn, figures.TrajectoryOptions{Now: -1, Best: -1, Upto: upto, XMax: xmax})
		})
	}
	// t* marked for a single model; in compare mode msePlot marks each
	// model's t* in its colour (one line could not say whose it is).
	// Only where the readout names one: a best step that does not improve
	// on the input is no t* (the status says "no step improves").
	best := -1.0
	if len(sn.Lanes) == 1 {
		if l := sn.Lanes[0]; !sn.Settings.NothingToRepair() && !m.ahead(sn, l) &&
			len(l.Frames) > 0 && sim.Improves(l.BestMSE, l.Frames[0].MSE) {
			best = float64(l.Best)
		}
	}
	for _, p := range []*PlotView{m.msePlot, m.energyPlot} {
		p.T, p.TStar = float64(sn.T), best
		p.Refresh()
	}
	var sets [][]float64
	var names []string
	var colors []color.Color
	for _, l := range sn.Lanes {
		if l.Info.Patch == 0 {
			continue // pixel models have no patches
		}
		sets = append(sets, l.At(sn.T).PatchVar)
		names = append(names, strings.TrimPrefix(l.Info.Name, "bsa-"))
		colors = append(colors, figures.ModelColor(l.Info.Name))
	}
	m.hist.Sets, m.hist.Names, m.hist.Colors = sets, names, colors
	m.hist.Empty = ""
	if len(sn.Lanes) == 0 && len(sn.Waiting) > 0 {
		m.hist.Empty = waitingText
	}
	m.hist.Refresh()
}

// ahead reports whether lane l's t* is not to be shown: a lesson shows a
// step before it (nothing after the shown step is shown), or the first
// look-ahead is still being recorded (sn.Unrecorded: it may change).
func (m *Main) ahead(sn *sim.Snapshot, l sim.Lane) bool {
	return m.lesson != nil && sn.T < l.Best || sn.Unrecorded > 0
}

// labelMark is checkMark of the nearest memory's label against the
// digit's; a digit without a label (a person's own) gets no mark.
func labelMark(near, own uint8) string {
	if own == sim.NoLabel {
		return "·"
	}
	return checkMark(near == own)
}

func checkMark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

func (m *Main) drawText(sn *sim.Snapshot) {
	if m.cleanTitle != nil {
		what := "your own"
		if c := sn.ClassName(sn.Label); c != "" {
			what = "a " + c
			if sn.Settings.DatasetName() == mnist.MNISTName {
				what = "label " + c
			}
		}
		m.cleanTitle.SetText("clean\n" + what)
	}
	if len(sn.Lanes) == 0 {
		if len(sn.Waiting) > 0 {
			m.tLabel.SetText(fmt.Sprintf("t = %-4d %s", sn.T, waitingText))
		}
		for k := range sn.Waiting {
			if k < len(m.stateTitles) && k < len(m.heatTitles) {
				info := m.lanes(k)
				name := info.Label
				if len(sn.Waiting) > 1 {
					name = info.Name
				}
				m.stateTitles[k].SetText(name + "\nfetching its weights…")
				m.heatTitles[k].SetText(name + "\nattention: its steps follow")
			}
		}
		return
	}
	for k, l := range sn.Lanes {
		if k >= len(m.stateTitles) {
			break
		}
		f := l.At(sn.T)
		// Alone, a model is named in full; side by side, by the short
		// name its lines carry in the plots, so titles fit.
		name, heads := l.Info.Label, m.headLabel(l.Info)
		pushed, asWas := false, false
		if b := l.BranchAt(sn.T); b != nil && len(sn.Lanes) > 1 {
			if m.unpushed {
				asWas = true // the run without the push, by choice
			} else {
				f, pushed = b, true // the panel shows the pushed run
			}
		}
		attention := "attention"
		if len(sn.Lanes) > 1 {
			name = l.Info.Name
			if l.Info.Heads > 1 { // the mean of the heads, or "head 2 of 4"
				heads = ""
				if h := min(m.head, l.Info.Heads); h > 0 {
					attention = fmt.Sprintf("head %d of %d", h, l.Info.Heads)
				}
			}
		}
		if on := l.Foreign(sn.Settings.Dataset); on != "" {
			// Weights from another data set: a legitimate experiment,
			// named as one.
			if len(sn.Lanes) > 1 {
				name += " (" + mnist.DatasetLabel(l.TrainedOn) + ")"
			} else {
				name += " (" + on + ")"
			}
		}
		title := fmt.Sprintf("%s\nt %d · MSE %.4f", name, f.T, f.MSE)
		if len(sn.Lanes) > 1 { // lockstep: one t for all, in the readout below
			title = fmt.Sprintf("%s\nMSE %.4f", name, f.MSE)
			if pushed {
				title = fmt.Sprintf("%s pushed\nMSE %.4f", name, f.MSE)
			} else if asWas {
				title = fmt.Sprintf("%s unpushed\nMSE %.4f", name, f.MSE)
			}
		}
		m.stateTitles[k].SetText(title)
		ht := name + "\n" + attention + heads
		pending := l.AttnPending(f) // the page takes it when it next idles
		if l.Info.Patterns > 0 {
			ht = name + "\ntop patterns"
			if pending {
				ht += ": taking them…"
			}
		} else if l.Info.Tokens == 0 && len(sn.Lanes) > 1 {
			ht = strings.Replace(name, "-", "-\n", 1) // "hopfield-\nclassic": a narrow panel
			if !strings.Contains(ht, "\n") {
				ht += "\n"
			}
		} else if l.Info.Tokens == 0 {
			ht = name + "\n"
		} else if pending {
			ht = name + "\n" + attention + ": taking it…"
		} else if l.AttnOf(f) == nil && pushed {
			ht = name + "\nnone: pushed here" // a fresh start at the push
		} else if l.AttnOf(f) == nil && len(sn.Lanes) > 1 {
			ht = name + "\nnone at t = 0" // a narrow panel
		} else if l.AttnOf(f) == nil {
			ht += " (none at t = 0)"
		} else if k == m.lane && m.query >= 0 {
			ht = fmt.Sprintf("%s\nattention, row %d%s", name, m.query, heads)
		}
		m.heatTitles[k].SetText(ht)
	}
	repair := sn.Settings.NothingToRepair()
	txt := fmt.Sprintf("t = %-4d ", sn.T) // readoutLead runes up to t = 9999
	if sn.Unrecorded > 0 {
		// The look-ahead is still being recorded (the page's start): a
		// t* over the steps so far could still change.
		txt += fmt.Sprintf("t* not known yet: recording the first %d steps, %d to go", sn.Horizon, sn.Unrecorded)
	} else if len(sn.Lanes) == 1 {
		if m.ahead(sn, sn.Lanes[0]) {
			txt += "t* not reached yet"
		} else {
			txt += sn.Lanes[0].Answer(repair)
		}
		if strings.HasPrefix(sn.Lanes[0].Info.Name, "bsa-") && sn.Settings.Dyn.Gamma == 0 {
			txt += "   (γ = 0: no attention signal, the state stays the input)"
		}
	} else {
		txt += fmt.Sprintf("%d models: their t* and errors are in the table", len(sn.Lanes))
		for _, l := range sn.Lanes {
			if !repair && !sim.Improves(l.BestMSE, l.Frames[0].MSE) && !m.ahead(sn, l) {
				txt += " (none: no step beats the input)"
				break
			}
		}
	}
	if len(sn.Lanes) == 1 && pushedPanel(sn) {
		m.pushedTitle.SetText(m.pushedText(sn))
	}
	if len(sn.Waiting) > 0 {
		// A model added beside others: it joins them when its weights
		// are in.
		txt += "   (fetching the weights of " + strings.Join(sn.Waiting, ", ") + ")"
	}
	m.tLabel.SetText(txt)
	if w := readoutWidth(m.tLabel); w != m.readoutW {
		m.readoutW = w // a new text's width: the row is laid out again
		m.readout.Refresh()
	}
	l := sn.Lanes[min(m.lane, len(sn.Lanes)-1)]
	f := l.At(sn.T)
	if mem := m.source().Memories; mem != nil {
		mean := "mean digit"
		if sn.Source != nil && sn.Source.Data.Name() != mnist.MNISTName {
			mean = "mean picture"
		}
		txt := fmt.Sprintf("#%d: %s %s r %.2f\n%s r %.2f",
			f.NearIdx, sn.ClassName(f.NearLbl), labelMark(f.NearLbl, sn.Label), f.NearCorr, mean, f.CorrMean)
		if len(sn.Lanes) > 1 { // a narrow panel; the table has every model's
			txt = fmt.Sprintf("#%d: %s %s\nr %.2f (%s)", f.NearIdx, sn.ClassName(f.NearLbl), labelMark(f.NearLbl, sn.Label), f.NearCorr, l.Info.Name)
		}
		m.nearestLbl.SetText(txt)
	}
	m.drawAnswers(sn)
}

// lanes returns the info of lane k of the current snapshot.
func (m *Main) lanes(k int) sim.ModelInfo {
	if m.snap == nil {
		return sim.ModelInfo{}
	}
	if w := m.snap.Waiting; len(m.snap.Lanes) == 0 && k < len(w) {
		// A model whose weights are being fetched, from its description.
		if info, err := m.source().Catalogue.Info(w[k]); err == nil {
			return info
		}
		return sim.ModelInfo{Name: w[k], Label: w[k]}
	}
	if k >= len(m.snap.Lanes) {
		return sim.ModelInfo{}
	}
	return m.snap.Lanes[k].Info
}

// panelCount is how many model panels the snapshot's window has: one per
// lane, or, while every model's weights are being fetched (the page's
// start), one per waiting model, laid out as its lane will be, so that
// the lane's coming redraws the panels instead of building new ones.
func panelCount(sn *sim.Snapshot) int {
	if len(sn.Lanes) == 0 {
		return len(sn.Waiting)
	}
	return len(sn.Lanes)
}

// setLegend lists the MSE plot's lines under it, in their colours.
func (m *Main) setLegend(sn *sim.Snapshot) {
	var names []string
	if len(sn.Lanes) == 1 {
		names = []string{"all"}
		if sn.PixelMask != nil {
			names = append(names, "masked", "unmasked")
		}
	} else {
		for _, l := range sn.Lanes {
			names = append(names, l.Info.Name)
		}
	}
	var objs []fyne.CanvasObject
	for k, n := range names {
		c := figures.Palette[k%len(figures.Palette)]
		if len(sn.Lanes) > 1 {
			c = figures.ModelColor(n) // a model keeps its colour
		}
		t := canvas.NewText("— "+n, c)
		t.TextSize = theme.CaptionTextSize()
		t.TextStyle.Bold = true
		objs = append(objs, t)
	}
	if pushedPanel(sn) {
		var c color.Color = pushedColor
		name := "pushed"
		if len(sn.Lanes) > 1 {
			c = theme.Color(theme.ColorNameForeground) // each model's in its colour
		}
		t := canvas.NewText("- - "+name, c)
		t.TextSize = theme.CaptionTextSize()
		t.TextStyle.Bold = true
		objs = append(objs, t)
	}
	in := canvas.NewText("··· input (t = 0)", figures.ReferenceColor)
	in.TextSize = theme.CaptionTextSize()
	in.TextStyle.Bold = true
	objs = append(objs, in)
	m.mseLegend.Objects = objs
	m.mseLegend.Refresh()
}

// answerColumns head the compare table: each model's best step, its MSE
// there beside the input's MSE (its baseline) and the MSE now.
var answerColumns = []string{"model", "t*", "at t*", "input", "now", "nearest, r"}

// answerWeights share the compare table's width among its columns.
var answerWeights = []float32{3.15, 1.15, 1.5, 1.5, 1.5, 3.15}

// answerLayout lays the table's cells out row by row, the columns
// dividing the width by answerWeights; a cell too narrow for its text
// shows an ellipsis.
type answerLayout struct{}

func (answerLayout) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	var total float32
	for _, w := range answerWeights {
		total += w
	}
	// Each column as wide as its widest cell when they all fit, the
	// room left shared by the weights; else the weights share it all.
	nat := answerNatural(objs)
	width := make([]float32, len(answerWeights))
	for c, w := range answerWeights {
		width[c] = s.Width * w / total
		if need := sum(nat); need <= s.Width {
			width[c] = nat[c] + (s.Width-need)*w/total
		}
	}
	y := float32(0)
	for r := 0; r*len(answerWeights) < len(objs); r++ {
		x, h := float32(0), float32(0)
		for c := range answerWeights {
			k := r*len(answerWeights) + c
			if k >= len(objs) {
				break
			}
			h = max(h, objs[k].MinSize().Height)
			cw := width[c]
			objs[k].Move(fyne.NewPos(x, y))
			objs[k].Resize(fyne.NewSize(cw, objs[k].MinSize().Height))
			x += cw
		}
		y += h
	}
}

// answerNatural is the width each column of the table needs to show its
// cells whole.
func answerNatural(objs []fyne.CanvasObject) []float32 {
	nat := make([]float32, len(answerWeights))
	for k, o := range objs {
		l, ok := o.(*Lines)
		var lead float32
		if sw, isSwatch := o.(*swatchLabel); isSwatch {
			l, ok, lead = sw.label, true, swatchSide() // a name led by its colour
		}
		if ok {
			w := lead + fyne.MeasureText(l.Text, theme.TextSize(), l.TextStyle).Width + 2*theme.InnerPadding() + 1
			nat[k%len(nat)] = max(nat[k%len(nat)], w)
		}
	}
	return nat
}

func (answerLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var h float32
	for r := 0; r*len(answerWeights) < len(objs); r++ {
		h += objs[r*len(answerWeights)].MinSize().Height
	}
	return fyne.NewSize(200, h)
}

// drawAnswers fills the compare table: each model's best step and error,
// its error now, and the stored digit nearest to its current state.
func (m *Main) drawAnswers(sn *sim.Snapshot) {
	if m.answers == nil || len(sn.Lanes) < 2 {
		return
	}
	repair := sn.Settings.NothingToRepair()
	// The labels are made once per layout and only their text changes:
	// snapshots arrive up to 60 times a second.
	rows := len(sn.Lanes)
	for _, l := range sn.Lanes {
		if len(l.Branch) > 0 {
			rows++ // its pushed run's row
		}
	}
	want := (rows + 1) * len(answerColumns)
	if len(m.answers.Objects) != want {
		m.answers.Objects = nil
		for k := 0; k < want; k++ {
			if k >= len(answerColumns) && k%len(answerColumns) == 0 {
				// a model's name, led by its colour
				m.answers.Objects = append(m.answers.Objects, newSwatchLabel())
				continue
			}
			l := NewLines("", fyne.TextAlignLeading, fyne.TextStyle{Bold: k < len(answerColumns)})
			l.Truncation = fyne.TextTruncateEllipsis
			m.answers.Objects = append(m.answers.Objects, l)
		}
		m.answers.Refresh()
	}
	next := 0
	cell := func(s string, _ bool) {
		l, _ := m.answers.Objects[next].(*Lines)
		if sw, ok := m.answers.Objects[next].(*swatchLabel); ok {
			l = sw.label
		}
		l.SetText(s)
		next++
	}
	for _, h := range answerColumns {
		cell(h, true)
	}
	for _, l := range sn.Lanes {
		f := l.At(sn.T)
		best := strconv.Itoa(l.Best)
		switch {
		case repair:
			best = "nothing to repair"
		case !sim.Improves(l.BestMSE, l.Frames[0].MSE):
			best = "none"
		}
		bestMSE := fmt.Sprintf("%.4f", l.BestMSE)
		if sn.Unrecorded > 0 {
			best, bestMSE = "recording…", "–"
		} else if m.ahead(sn, l) {
			best, bestMSE = "not yet", "–"
		}
		if sw, ok := m.answers.Objects[next].(*swatchLabel); ok {
			sw.SetColor(figures.ModelColor(l.Info.Name))
		}
		cell(l.Info.Name, false)
		cell(best, false)
		cell(bestMSE, false)
		cell(fmt.Sprintf("%.4f", l.Frames[0].MSE), false)
		cell(fmt.Sprintf("%.4f", f.MSE), false)
		cell(fmt.Sprintf("#%d: %s, %.2f", f.NearIdx, sn.ClassName(f.NearLbl), f.NearCorr), false)
		if len(l.Branch) == 0 {
			continue
		}
		// Its pushed run: the best step after the first push, the
		// error and nearest memory at t (before the push: none yet).
		if sw, ok := m.answers.Objects[next].(*swatchLabel); ok {
			sw.SetColor(figures.ModelColor(l.Info.Name))
		}
		cell(l.Info.Name+" pushed", false)
		bt, bm := branchBest(l)
		if bt < 0 || m.ahead(sn, sim.Lane{Best: bt}) {
			cell("–", false)
			cell("–", false)
		} else {
			cell(strconv.Itoa(bt), false)
			cell(fmt.Sprintf("%.4f", bm), false)
		}
		cell(fmt.Sprintf("%.4f", l.Frames[0].MSE), false)
		if b := l.BranchAt(sn.T); b != nil {
			cell(fmt.Sprintf("%.4f", b.MSE), false)
			cell(fmt.Sprintf("#%d: %s, %.2f", b.NearIdx, sn.ClassName(b.NearLbl), b.NearCorr), false)
		} else {
			cell(fmt.Sprintf("from t = %d", l.Branch[0].T), false)
			cell("", false)
		}
	}
	// A label's new text does not lay out its row again: when a column
	// needs another width ("not yet" became "30"), the table and the plot
	// beside it are laid out anew.
	if w := sum(answerNatural(m.answers.Objects)); w != m.answersWidth {
		m.answersWidth = w
		m.center.Refresh()
	}
}

// noLanes says why a plot of the snapshot's lanes has none.
func noLanes(sn *sim.Snapshot) error {
	if len(sn.Waiting) > 0 {
		return errors.New("waiting for its weights")
	}
	return errors.New("no model is running")
}

// msePlot draws each model's MSE against t (one model: all, masked and
// unmasked pixels) with the input's MSE as a dotted reference line.
func msePlot(sn *sim.Snapshot, o figures.TrajectoryOptions) (*plot.Plot, error) {
	if len(sn.Lanes) == 0 {
		return nil, noLanes(sn)
	}
	p, err := figures.TrajectoryPlot("MSE vs t", "MSE", mseSeries(sn), o)
	if err != nil {
		return nil, err
	}
	marks, err := tStarMarks(sn, o, p.Y.Min)
	if err != nil {
		return nil, err
	}
	p.Add(marks...)
	return p, nil
}

// mseSeries are msePlot's lines: each run's, each pushed run's (dashed)
// and the input's reference.
func mseSeries(sn *sim.Snapshot) []figures.Series {
	lanes := sn.Lanes
	var ss []figures.Series
	if len(lanes) == 1 {
		fr := lanes[0].Frames
		ss = append(ss, figures.Series{Name: "all", Values: column(fr, func(f *sim.Frame) float64 { return f.MSE })})
		if sn.PixelMask != nil {
			ss = append(ss,
				figures.Series{Name: "masked", Values: column(fr, func(f *sim.Frame) float64 { return f.MSEMask }), Dashed: true},
				figures.Series{Name: "unmasked", Values: column(fr, func(f *sim.Frame) float64 { return f.MSEOther }), Dashed: true})
		}
		if b := branchColumn(lanes[0], func(f *sim.Frame) float64 { return f.MSE }); b != nil {
			ss = append(ss, figures.Series{Name: "pushed", Values: b, Color: pushedColor, Dashed: true})
		}
	} else {
		for _, l := range lanes {
			ss = append(ss, figures.Series{Name: l.Info.Label, Color: figures.ModelColor(l.Info.Name),
				Values: column(l.Frames, func(f *sim.Frame) float64 { return f.MSE })})
			if b := branchColumn(l, func(f *sim.Frame) float64 { return f.MSE }); b != nil {
				ss = append(ss, figures.Series{Name: l.Info.Label + " pushed", Color: figures.ModelColor(l.Info.Name), Values: b, Dashed: true})
			}
		}
	}
	// The input's MSE as a reference: a step below it repairs.
	in := lanes[0].Frames[0].MSE
	ref := make([]float64, len(lanes[0].Frames))
	for t := range ref {
		ref[t] = in
	}
	return append(ss, figures.Series{Name: "input (t = 0)", Values: ref, Reference: true})
}

// tStarMarks are compare mode's t* markers: for each model, in its colour,
// a dot at its best error and a dashed drop to the bottom of the plot (y0);
// one marker line for all could not say whose it is. A model whose t* a
// lesson has not reached yet, or that no step improves, has none.
func tStarMarks(sn *sim.Snapshot, o figures.TrajectoryOptions, y0 float64) ([]plot.Plotter, error) {
	if len(sn.Lanes) < 2 || sn.Settings.NothingToRepair() || sn.Unrecorded > 0 {
		return nil, nil
	}
	var out []plot.Plotter
	for _, l := range sn.Lanes {
		if l.Best < 1 || len(l.Frames) == 0 || !sim.Improves(l.BestMSE, l.Frames[0].MSE) || (o.Upto > 0 && l.Best >= o.Upto) || (o.XMax > 0 && l.Best > o.XMax) ||
			math.IsNaN(l.BestMSE) || math.IsInf(l.BestMSE, 0) || (o.LogY && l.BestMSE <= 0) {
			continue
		}
		c := figures.ModelColor(l.Info.Name) // the colour of its curve
		x := float64(l.Best)
		drop, err := plotter.NewLine(plotter.XYs{{X: x, Y: y0}, {X: x, Y: l.BestMSE}})
		if err != nil {
			return nil, err
		}
		drop.Color, drop.Width = c, vg.Points(1.2)
		drop.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		dot, err := plotter.NewScatter(plotter.XYs{{X: x, Y: l.BestMSE}})
		if err != nil {
			return nil, err
		}
		dot.GlyphStyle.Shape = draw.CircleGlyph{}
		dot.GlyphStyle.Radius = vg.Points(4)
		dot.GlyphStyle.Color = c
		out = append(out, drop, dot)
	}
	return out, nil
}

// energyPlot draws one line per model that has an energy, in the model's
// colour, titled by the kind of energy.
func energyPlot(sn *sim.Snapshot, o figures.TrajectoryOptions) (*plot.Plot, error) {
	if len(sn.Lanes) == 0 {
		return nil, noLanes(sn)
	}
	var ss, pushed []figures.Series
	title := ""
	with := 0
	for _, l := range sn.Lanes {
		if l.Info.HasEnergy {
			with++
		}
	}
	for _, l := range sn.Lanes {
		s := figures.Series{Name: l.Info.Label, Color: figures.ModelColor(l.Info.Name)}
		if len(sn.Lanes) == 1 {
			s.Color = nil
		}
		if l.Info.HasEnergy {
			s.Values = column(l.Frames, func(f *sim.Frame) float64 { return f.Energy })
			b := branchColumn(l, func(f *sim.Frame) float64 { return f.Energy })
			if with > 1 {
				// Energies of different models differ in scale by
				// orders of magnitude: on one axis all but one
				// look flat. Each is scaled to its own 0…1 (its
				// pushed run on the same scale).
				n := len(s.Values)
				both := unitRange(append(slices.Clone(s.Values), b...))
				s.Values, b = both[:n], both[n:]
			}
			if firstStepRules(sn, l.Info.Name) {
				// E(X₀) of a masking run follows the first step's
				// rules (docs/maths.md §8): a point of its own.
				s.Apart = true
			}
			if b != nil {
				bs := figures.Series{Name: l.Info.Label + " pushed", Color: figures.ModelColor(l.Info.Name), Values: b, Dashed: true}
				if len(sn.Lanes) == 1 {
					bs.Color = pushedColor
				}
				pushed = append(pushed, bs)
			}
			kind := sim.PseudoLikelihood
			if sp, ok := sim.Spec(l.Info.Name); ok {
				kind = sp.Energy
			}
			if title == "" {
				title = "energy vs t\n(" + kind + ")"
			} else if !strings.Contains(title, kind) {
				title = "energy vs t\n(each model's own)"
			}
		}
		ss = append(ss, s)
	}
	ss = append(ss, pushed...) // after the runs: a run keeps its palette colour
	if title == "" {
		return nil, errors.New("these models have no energy")
	}
	if with > 1 {
		return figures.TrajectoryPlot("energy vs t, each model's\nscaled to its own range", "E (0: its lowest, 1: its highest)", ss, o)
	}
	return figures.TrajectoryPlot(title, "E", ss, o)
}

// unitRange maps v's finite values onto 0…1 (lowest to highest); a flat
// series sits at 0.5, and NaN and ±Inf stay as they are (not drawn).
func unitRange(v []float64) []float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	out := make([]float64, len(v))
	for k, x := range v {
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			out[k] = x
		case hi > lo:
			out[k] = (x - lo) / (hi - lo)
		default:
			out[k] = 0.5
		}
	}
	return out
}

// firstStepRules reports whether lane l's energy at t = 0 is measured by the
// bare model's first-step rules (masked keys left out), so is not
// comparable with its later energies.
func firstStepRules(sn *sim.Snapshot, model string) bool {
	return sn.PixelMask != nil && strings.HasPrefix(model, "bsa-")
}

// equalRows stacks its objects in rows of equal height when there is room
// (as a grid of rows), and otherwise gives each row at least its minimum
// height and shares the rest equally: its minimum is the rows' minimums
// added, not the tallest one's times the number of rows.
type equalRows struct{}

func (equalRows) Layout(objs []fyne.CanvasObject, s fyne.Size) {
	pad := theme.Padding()
	avail := s.Height - pad*float32(max(len(objs)-1, 0))
	h := make([]float32, len(objs))
	fixed := make([]bool, len(objs))
	// Rows whose minimum exceeds an equal share keep their minimum; the
	// others share what is left, until every share is enough.
	for changed := true; changed; {
		changed = false
		left, free := avail, 0
		for k, o := range objs {
			if fixed[k] {
				left -= o.MinSize().Height
			} else {
				free++
			}
		}
		for k, o := range objs {
			if !fixed[k] && o.MinSize().Height > left/float32(free) {
				fixed[k], changed = true, true
			}
		}
		for k, o := range objs {
			if fixed[k] {
				h[k] = o.MinSize().Height
			} else {
				h[k] = left / float32(max(free, 1))
			}
		}
	}
	y := float32(0)
	for k, o := range objs {
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(s.Width, h[k]))
		y += h[k] + pad
	}
}

func (equalRows) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	for _, o := range objs {
		m := o.MinSize()
		s.Width = max(s.Width, m.Width)
		s.Height += m.Height
	}
	s.Height += theme.Padding() * float32(max(len(objs)-1, 0))
	return s
}
