package ui

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"

	"attractorlab/models/infile/fifotest"
	"attractorlab/sim"
	"attractorlab/sim/figures"
)

// drawnTexts collects every canvas.Text drawn under o (widgets through
// their renderers), as the painter will shape them.
func drawnTexts(o fyne.CanvasObject, out *[]*canvas.Text) {
	if o == nil {
		return
	}
	switch v := o.(type) {
	case *canvas.Text:
		*out = append(*out, v)
		return
	case *fyne.Container:
		for _, c := range v.Objects {
			drawnTexts(c, out)
		}
		return
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(v).Objects() {
			drawnTexts(c, out)
		}
	}
}

// windowTexts is every text of w: its content, its overlays (dialogs,
// pop-ups) and its menu.
func windowTexts(w fyne.Window) []*canvas.Text {
	var out []*canvas.Text
	drawnTexts(w.Canvas().Content(), &out)
	for _, o := range w.Canvas().Overlays().List() {
		drawnTexts(o, &out)
	}
	if mm := w.MainMenu(); mm != nil {
		for _, menu := range mm.Items {
			out = append(out, canvas.NewText(menu.Label, nil))
			for _, it := range menu.Items {
				out = append(out, canvas.NewText(it.Label, nil))
			}
		}
	}
	return out
}

// missingGlyphs lists the runes of s the font draws as nothing or as its
// "missing" box: no entry in its cmap, or a glyph with no outline.
func missingGlyphs(t *testing.T, font fyne.Resource, s string) string {
	t.Helper()
	f, err := sfnt.Parse(font.Content())
	if err != nil {
		t.Fatalf("font %s: %v", font.Name(), err)
	}
	var buf sfnt.Buffer
	miss := ""
	for _, r := range s {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			continue
		}
		g, err := f.GlyphIndex(&buf, r)
		if err == nil && g != 0 {
			segs, err := f.LoadGlyph(&buf, g, fixed.I(12), nil)
			if err == nil && len(segs) > 0 {
				continue
			}
		}
		if !strings.ContainsRune(miss, r) {
			miss += string(r)
		}
	}
	return miss
}

// checkGlyphs fails for a text the window's theme cannot draw.
func checkGlyphs(t *testing.T, where string, texts []*canvas.Text) {
	t.Helper()
	th := newTheme("Light", 1)
	seen := map[string]bool{}
	for _, tx := range texts {
		key := tx.Text + "|" + string(rune('0'+btoi(tx.TextStyle.Bold)))
		if tx.Text == "" || seen[key] {
			continue
		}
		seen[key] = true
		if miss := missingGlyphs(t, th.Font(tx.TextStyle), tx.Text); miss != "" {
			t.Errorf("%s: %q: the theme's font %s has no glyph for %q", where, tx.Text, th.Font(tx.TextStyle).Name(), miss)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Every text the window shows (controls, titles, tables, status and
// readouts, menus, Help → Keys, tooltips, the population windows) draws
// with glyphs the theme's font has: no boxes, no blanks.
func TestEveryGlyphDraws(t *testing.T) {
	m, w := newTestMain(t)
	check := func(where string) {
		t.Helper()
		checkGlyphs(t, where, windowTexts(w))
	}
	check("single model")
	typeKey(w, fyne.KeyRight)
	m.selectQuery(0, 3)
	check("a step, a patch selected")
	m.PaperDemo()
	check("paper demo")
	m.Engine.Update(func(st *sim.Settings) { st.Lanes = []string{"bsa-p2", "bsa-p4", "hopfield", "hopfield-classic"} })
	typeKey(w, fyne.KeyRight)
	check("compare mode")
	m.showKeys()
	check("Help → Keys")
	for _, o := range w.Canvas().Overlays().List() {
		w.Canvas().Overlays().Remove(o)
	}
	m.showExport()
	check("Export")
	for _, o := range w.Canvas().Overlays().List() {
		w.Canvas().Overlays().Remove(o)
	}
	m.showEnsemble()
	checkGlyphs(t, "Ensemble", windowTexts(m.ens.w))
	m.showBasin()
	checkGlyphs(t, "Basin map", windowTexts(m.basin.w))
	// The texts written outside widgets' trees.
	var extra []*canvas.Text
	for _, r := range keysHelp() {
		extra = append(extra, canvas.NewText(r.keys, nil), canvas.NewText(r.action, nil))
	}
	for _, s := range []string{checkMark(true), checkMark(false), describeCorruption(sim.Corruption{Kind: sim.Noise, Sigma2: 0.7}), escapeText(-1)} {
		extra = append(extra, canvas.NewText(s, nil))
	}
	checkGlyphs(t, "help and readouts", extra)
}

// Help → Keys is a grid: each key in a cell of its own, its action in the
// cell beside it, every action starting at the same x, right of every key.
func TestKeysHelpIsAGrid(t *testing.T) {
	m, w := newTestMain(t)
	m.showKeys()
	var labels []*widget.Label
	for _, o := range w.Canvas().Overlays().List() {
		eachObject(o, func(o fyne.CanvasObject) {
			if l, ok := o.(*widget.Label); ok {
				labels = append(labels, l)
			}
		})
	}
	pos := func(text string) []*widget.Label {
		var out []*widget.Label
		for _, l := range labels {
			if strings.Contains(l.Text, "\t") {
				t.Fatalf("label %q has a tab: Fyne draws it as nothing", l.Text)
			}
			if l.Text == text {
				out = append(out, l)
			}
		}
		return out
	}
	abs := func(o fyne.CanvasObject) fyne.Position {
		return fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
	}
	var actionX float32 = -1
	for _, r := range keysHelp() {
		if r.keys == "" {
			continue
		}
		ks, as := pos(r.keys), pos(r.action)
		if len(ks) == 0 || len(as) == 0 {
			t.Fatalf("no label of its own for %q or %q", r.keys, r.action)
		}
		k, a := ks[0], as[0]
		if abs(a).X < abs(k).X+k.MinSize().Width-1 {
			t.Errorf("%q (x %v) overlaps its key %q (x %v, width %v)", r.action, abs(a).X, r.keys, abs(k).X, k.MinSize().Width)
		}
		if actionX >= 0 && abs(a).X != actionX {
			t.Errorf("%q starts at x %v, the actions above at %v", r.action, abs(a).X, actionX)
		}
		actionX = abs(a).X
	}
}

// Esc leaves the digit index field (what was typed is dropped, the
// window's keys work again) and closes the Gallery and the other dialogs.
func TestEscLeavesFieldAndClosesGallery(t *testing.T) {
	m, w := newTestMain(t)
	c := w.Canvas()
	idx := m.snap.Settings.Index
	c.Focus(m.side.index)
	test.Type(m.side.index, "77")
	c.Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if c.Focused() != nil {
		t.Fatalf("after Esc the index field still has the focus")
	}
	if m.side.index.Text != strconv.Itoa(idx) {
		t.Fatalf("after Esc the field shows %q, the digit is %d", m.side.index.Text, idx)
	}
	typeKey(w, fyne.KeyRight)
	if m.snap.T != 1 {
		t.Fatalf("→ after Esc: t = %d, want 1", m.snap.T)
	}

	m.showGallery()
	if c.Overlays().Top() == nil {
		t.Fatal("the Gallery did not open")
	}
	typeKey(w, fyne.KeyEscape)
	if top := c.Overlays().Top(); top != nil && top.Visible() {
		t.Fatal("Esc did not close the Gallery")
	}
	m.showKeys()
	typeKey(w, fyne.KeyEscape)
	if top := c.Overlays().Top(); top != nil && top.Visible() {
		t.Fatal("Esc did not close Help → Keys")
	}
	if len(m.dialogs) != 0 {
		t.Fatalf("%d dialogs still counted as open", len(m.dialogs))
	}
}

// The ensemble's size offers only what the loaded data hold (the embedded
// sample: 1,000 test digits), and the basin map refuses more by name.
func TestEnsembleOffersWhatExists(t *testing.T) {
	m, _ := newTestMain(t)
	have := m.deps.Data.Test.Len()
	m.showEnsemble()
	for _, o := range m.ens.n.Options {
		n, err := strconv.Atoi(o)
		if err != nil || n > have || n < 1 {
			t.Errorf("the N list offers %q; the data have %d test digits", o, have)
		}
	}
	if last := m.ens.n.Options[len(m.ens.n.Options)-1]; last != strconv.Itoa(have) {
		t.Errorf("the N list ends at %s, not at all %d digits", last, have)
	}
	m.showBasin()
	m.basin.n.SetText(strconv.Itoa(have + 1))
	if _, err := m.basin.config(); err == nil || !strings.Contains(err.Error(), "test digits") {
		t.Errorf("basin map with %d of %d digits: %v", have+1, have, err)
	}
}

// labelBeside finds the label sharing a container with o (its caption).
func labelBeside(root fyne.CanvasObject, o fyne.CanvasObject) string {
	c, ok := root.(*fyne.Container)
	if !ok {
		return ""
	}
	has := false
	txt := ""
	for _, x := range c.Objects {
		if x == o {
			has = true
		}
		if l, ok := x.(*widget.Label); ok {
			txt = l.Text
		}
	}
	if has {
		return txt
	}
	for _, x := range c.Objects {
		if s := labelBeside(x, o); s != "" {
			return s
		}
	}
	return ""
}

// The theme's drop-down says what it is.
func TestThemeControlLabelled(t *testing.T) {
	m, _ := newTestMain(t)
	if got := labelBeside(m.sideScroll.Content, m.side.themeSel); !strings.Contains(strings.ToLower(got), "theme") {
		t.Fatalf("the theme drop-down's caption is %q", got)
	}
}

// File → Open scenario takes a typed path, read through the bounded
// reader: a scenario file opens, and /dev/zero, a FIFO, a folder and a
// missing file are refused by name with nothing changed.
func TestOpenScenarioTypedPath(t *testing.T) {
	m, w := newTestMain(t)
	dir := t.TempDir()
	want := m.snap.Settings
	want.Index = 42
	var buf bytes.Buffer
	sn := *m.snap
	sn.Settings = want
	if err := sim.WriteScenario(&buf, &sn); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "s.json")
	if err := os.WriteFile(good, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	fifotest.Make(t, fifo)
	entry := func() *keyEntry {
		for _, o := range w.Canvas().Overlays().List() {
			if found := findEntry(o); found != nil {
				return found
			}
		}
		return nil
	}
	for _, bad := range []string{"/dev/zero", fifo, dir, filepath.Join(dir, "missing.json")} {
		m.openScenario()
		e := entry()
		if e == nil {
			t.Fatal("Open scenario has no field for a path")
		}
		e.SetText(bad)
		e.OnSubmitted(bad)
		if m.snap.Settings.Index == 42 {
			t.Fatalf("%s changed the digit", bad)
		}
		if len(m.dialogs) < 2 {
			t.Fatalf("%s: no error shown", bad)
		}
		for m.closeDialog() {
		}
	}
	m.openScenario()
	e := entry()
	e.SetText(good)
	e.OnSubmitted(good)
	m.Engine.Settle()
	if got := m.Engine.Snapshot().Settings.Index; got != 42 {
		t.Fatalf("opened %s: index %d, want 42", good, got)
	}
	if len(m.dialogs) != 0 {
		t.Fatalf("%d dialogs left open after a good file", len(m.dialogs))
	}
}

// tipsUnder lists the explanations (info icons) under o.
func tipsUnder(o fyne.CanvasObject, out *[]*infoTip) {
	eachObject(o, func(o fyne.CanvasObject) {
		if v, ok := o.(*infoTip); ok {
			*out = append(*out, v)
		}
	})
}

// explained reports whether a text shown in w, or an explanation one tap
// away, contains every one of words.
func explained(w fyne.Window, words ...string) bool {
	var all []string
	for _, tx := range windowTexts(w) {
		all = append(all, tx.Text)
	}
	var tips []*infoTip
	tipsUnder(w.Content(), &tips)
	for _, tp := range tips {
		test.Tap(tp)
		for _, o := range w.Canvas().Overlays().List() {
			var txs []*canvas.Text
			drawnTexts(o, &txs)
			var s []string
			for _, tx := range txs {
				s = append(s, tx.Text)
			}
			all = append(all, strings.Join(s, " "))
		}
		test.Tap(tp)
	}
	for _, s := range all {
		ok := true
		for _, wd := range words {
			ok = ok && strings.Contains(s, wd)
		}
		if ok {
			return true
		}
	}
	return false
}

// The terse readouts are explained: the nearest memory's ✓/✗, the
// histogram's top, and the basin map's escape step.
func TestTerseReadoutsExplained(t *testing.T) {
	m, w := newTestMain(t)
	m.PaperDemo()
	if !strings.ContainsAny(m.nearestLbl.Text, "✓✗") {
		t.Fatalf("nearest %q has no mark to explain", m.nearestLbl.Text)
	}
	if !explained(w, "✗", "label") {
		t.Error("nothing says what ✗ beside the nearest memory means")
	}
	for _, tx := range windowTexts(w) {
		if strings.HasPrefix(tx.Text, "top:") {
			t.Errorf("the histogram says %q: the top of what?", tx.Text)
		}
	}
	m.showBasin()
	if !explained(m.basin.w, "escape step", "after t*", "input") {
		t.Error("the basin window does not say what the escape step is")
	}
}

// greyish reports a grey pixel darker than lim (0…0xffff).
func greyish(c color.Color, lim uint32) bool {
	r, g, b, _ := c.RGBA()
	return r < lim && g < lim && b < lim && max(r, g, b)-min(r, g, b) < 0x1000
}

// dataArea finds an exported plot's data area: the x axis is the lowest
// grey line running across 40% of the width, the y axis the leftmost
// running down 40% of the height.
func dataArea(img image.Image) image.Rectangle {
	bd := img.Bounds()
	axis := func(c color.Color) bool { return greyish(c, 0xa000) }
	da := image.Rect(-1, -1, -1, -1)
	for y := bd.Max.Y - 1; y >= bd.Min.Y && da.Max.Y < 0; y-- {
		for x := bd.Min.X; x < bd.Max.X; {
			s := x
			for x < bd.Max.X && axis(img.At(x, y)) {
				x++
			}
			if x-s > bd.Dx()*4/10 {
				da.Max.Y, da.Max.X = y, x
				break
			}
			x++
		}
	}
	for x := bd.Min.X; x < bd.Max.X && da.Min.X < 0; x++ {
		for y := bd.Min.Y; y < bd.Max.Y; {
			s := y
			for y < bd.Max.Y && axis(img.At(x, y)) {
				y++
			}
			if y-s > bd.Dy()*4/10 {
				da.Min.X, da.Min.Y = x, s
				break
			}
			y++
		}
	}
	return da
}

// The exported MSE plot's legend covers no curve: nothing dark (legend
// text) is drawn inside the data area, alone or comparing four models.
func TestExportedLegendOutsideData(t *testing.T) {
	m, w := newTestMain(t)
	for _, lanes := range [][]string{{"bsa-p2"}, {"bsa-p2", "bsa-p4", "hopfield", "hopfield-classic"}} {
		m.Engine.Update(func(st *sim.Settings) { st.Lanes = lanes })
		for range 3 {
			typeKey(w, fyne.KeyRight)
		}
		m.Engine.Settle()
		var b bytes.Buffer
		if err := m.plotPNG(msePlot, false)(&b); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatal(err)
		}
		da := dataArea(img)
		if da.Dx() < 400 || da.Dy() < 300 {
			t.Fatalf("%v: data area %v of %v", lanes, da, img.Bounds())
		}
		in := 0
		for y := da.Min.Y + 4; y < da.Max.Y-4; y++ {
			for x := da.Min.X + 4; x < da.Max.X-4; x++ {
				if greyish(img.At(x, y), 0x5000) {
					in++
				}
			}
		}
		if in > 0 {
			t.Errorf("%v: %d dark (legend) pixels inside the data area %v", lanes, in, da)
		}
	}
}

// findButton finds a button of w (content and dialogs) whose text starts
// with prefix.
func findButton(w fyne.Window, prefix string) *widget.Button {
	var found *widget.Button
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		if found != nil || o == nil {
			return
		}
		switch v := o.(type) {
		case *widget.Button:
			if strings.HasPrefix(v.Text, prefix) {
				found = v
			}
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(v).Objects() {
				walk(c)
			}
		}
	}
	for _, o := range w.Canvas().Overlays().List() {
		walk(o)
	}
	walk(w.Content())
	return found
}

// exportTo presses Export… in w, the item named item, types path in the
// Save as dialog and saves.
func exportTo(t *testing.T, w fyne.Window, item, path string) {
	t.Helper()
	b := findButton(w, "Export")
	if b == nil {
		t.Fatalf("%s has no Export button", w.Title())
	}
	test.Tap(b)
	it := findButton(w, item)
	if it == nil {
		t.Fatalf("%s: Export offers no %q", w.Title(), item)
	}
	test.Tap(it)
	e, ok := w.Canvas().Focused().(*keyEntry)
	if !ok {
		t.Fatalf("%s: no path field focused after choosing %q", w.Title(), item)
	}
	e.SetText(path)
	e.OnSubmitted(path)
}

// The Ensemble and Basin map windows export their figures (PNG) and their
// numbers (CSV) through the main window's path: typed path, and an
// existing file is not replaced without asking.
func TestPopulationWindowsExport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an ensemble and a basin map (-short; make test runs it without the race detector)")
	}
	m, _ := newTestMain(t)
	dir := t.TempDir()
	m.Engine.Update(func(s *sim.Settings) { s.Corruption = sim.DefaultNoise })
	m.showEnsemble()
	e := m.ens
	e.n.SetSelected("50")
	waitJob(t, e.job, e.start)
	bandCSV := filepath.Join(dir, "band.csv")
	exportTo(t, e.w, "MSE band (CSV", bandCSV)
	data, err := os.ReadFile(bandCSV)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "\n"); lines != 1+101 || !strings.HasPrefix(string(data), "model,task,level,seed,n,t,mse_q25,mse_median,mse_q75\n") {
		t.Fatalf("band CSV: %d lines, starts %q", lines, string(data[:min(80, len(data))]))
	}
	bandPNG := filepath.Join(dir, "band.png")
	exportTo(t, e.w, "MSE band (PNG", bandPNG)
	if f, err := os.Open(bandPNG); err != nil {
		t.Fatal(err)
	} else if _, err := png.Decode(f); err != nil {
		t.Fatalf("%s: %v", bandPNG, err)
	}
	// Again to the same file: asked first, the file untouched meanwhile.
	os.WriteFile(bandCSV, []byte("mine"), 0o644)
	exportTo(t, e.w, "MSE band (CSV", bandCSV)
	if b := findButton(e.w, "Yes"); b == nil {
		t.Fatal("no Replace? question for an existing file")
	}
	if got, _ := os.ReadFile(bandCSV); string(got) != "mine" {
		t.Fatalf("the existing file was replaced unasked: %q", got)
	}
	for m.closeDialog() {
	}

	m.showBasin()
	b := m.basin
	b.levels.SetText("0.2, 0.5")
	b.values.SetText("0.5, 2")
	b.n.SetText("8")
	waitJob(t, b.job, b.start)
	sweepCSV := filepath.Join(dir, "basin.csv")
	exportTo(t, b.w, "Sweep table (CSV", sweepCSV)
	if data, err := os.ReadFile(sweepCSV); err != nil || strings.Count(string(data), "\n") != 1+4 {
		t.Fatalf("basin CSV: %v, %q", err, data)
	}
	mapPNG := filepath.Join(dir, "basin.png")
	exportTo(t, b.w, "Basin map (PNG", mapPNG)
	if f, err := os.Open(mapPNG); err != nil {
		t.Fatal(err)
	} else if _, err := png.Decode(f); err != nil {
		t.Fatalf("%s: %v", mapPNG, err)
	}
}

// cellText is the text of a compare table's cell (a model's name is a
// swatchLabel).
func cellText(o fyne.CanvasObject) string {
	if s, ok := o.(*swatchLabel); ok {
		return s.label.Text
	}
	return o.(*Lines).Text
}

// A model keeps one colour, whichever others it is compared with: its
// line and legend entry in the MSE plot, its state's frame, its row of
// the table.
func TestOneColourPerModel(t *testing.T) {
	m, w := newTestMain(t)
	want := color.RGBAModel.Convert(figures.ModelColor("hopfield")).(color.RGBA)
	for _, lanes := range [][]string{{"bsa-p2", "bsa-p4", "hopfield"}, {"bsa-p2", "hopfield"}, {"hopfield", "hopfield-classic"}} {
		m.Engine.Update(func(st *sim.Settings) { st.Lanes = lanes })
		typeKey(w, fyne.KeyRight)
		m.Engine.Settle()
		k := slices.Index(lanes, "hopfield")
		legend := ""
		for _, o := range m.mseLegend.Objects {
			if tx := o.(*canvas.Text); strings.Contains(tx.Text, "hopfield") && !strings.Contains(tx.Text, "classic") {
				if c := color.RGBAModel.Convert(tx.Color).(color.RGBA); c != want {
					t.Errorf("%v: legend %q in %v, want %v", lanes, tx.Text, c, want)
				}
				legend = tx.Text
			}
		}
		if legend == "" {
			t.Errorf("%v: hopfield not in the MSE legend", lanes)
		}
		if f := m.states[k].Frame; f == nil || color.RGBAModel.Convert(f).(color.RGBA) != want {
			t.Errorf("%v: hopfield's state frame %v, want %v", lanes, f, want)
		}
		sw, ok := m.answers.Objects[(k+1)*len(answerColumns)].(*swatchLabel)
		if !ok || color.RGBAModel.Convert(sw.swatch.FillColor).(color.RGBA) != want {
			t.Errorf("%v: hopfield's table row has no swatch in its colour", lanes)
		}
		var b bytes.Buffer
		if err := m.plotPNG(msePlot, false)(&b); err != nil {
			t.Fatal(err)
		}
		img, _ := png.Decode(&b)
		n := 0
		for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
			for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
				if color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) == want {
					n++
				}
			}
		}
		if n < 200 {
			t.Errorf("%v: %d pixels of hopfield's colour in the MSE plot", lanes, n)
		}
	}
}

// Energies of different models share no axis: compared, each is scaled
// to its own 0…1 and the axis says so; alone, a model's energy is drawn
// as it is.
func TestEnergiesScaledApart(t *testing.T) {
	m, w := newTestMain(t)
	m.Engine.Update(func(st *sim.Settings) { st.Lanes = []string{"bsa-p2", "hopfield", "hopfield-classic"} })
	for range 5 {
		typeKey(w, fyne.KeyRight)
	}
	m.Engine.Settle()
	p, err := energyPlot(m.snap, figures.TrajectoryOptions{Now: -1, Best: -1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min < -0.2 || p.Y.Max > 1.2 || !strings.Contains(p.Y.Label.Text+p.Title.Text, "scaled") {
		t.Fatalf("compared energies on %g … %g, axis %q, title %q", p.Y.Min, p.Y.Max, p.Y.Label.Text, p.Title.Text)
	}
	m.Engine.Update(func(st *sim.Settings) { st.Lanes = []string{"hopfield-classic"} })
	m.Engine.Settle()
	p, err = energyPlot(m.snap, figures.TrajectoryOptions{Now: -1, Best: -1})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.Y.Label.Text+p.Title.Text, "scaled") {
		t.Fatalf("one model's energy scaled: %q", p.Y.Label.Text)
	}
}

// At 1280×800 nothing the window writes is cut with "…": comparing four
// models, with the paper demo's long status.
func TestNothingCutAt1280(t *testing.T) {
	m, w := newTestMain(t)
	fyne.CurrentApp().Settings().SetTheme(newTheme("Light", 1))
	m.PaperDemo()
	m.Engine.Update(func(st *sim.Settings) {
		st.Lanes = []string{"bsa-p2", "bsa-p4", "hopfield", "hopfield-classic"}
	})
	m.Engine.Settle()
	m.setStatus("paper demo: noise σ² 0.7 on a test digit, bare self-attention P=2; the curve dips to t*, then rises toward the average digit")
	w.Resize(fyne.NewSize(1280, 800))
	if s := w.Content().MinSize(); s.Width > 1280-8 {
		t.Errorf("the window needs %v wide: its right edge is cut at 1280", s.Width)
	}
	var texts []*canvas.Text
	drawnTexts(w.Content(), &texts)
	for _, tx := range texts {
		if strings.HasSuffix(tx.Text, "…") && tx.Visible() {
			t.Errorf("cut: %q", tx.Text)
		}
	}
}

// The P=2 "where it looks" overlay spans its own range (the row's
// smallest weight dark, its largest bright) and says what the colours
// stand for.
func TestOverlayOnItsOwnScale(t *testing.T) {
	m, _ := newTestMain(t)
	m.Engine.Update(func(st *sim.Settings) { st.Lanes = []string{"bsa-p2"} })
	m.Engine.Step()
	m.Engine.Settle()
	m.selectQuery(0, 100)
	v := m.states[0]
	if v.Overlay == nil {
		t.Fatal("no overlay for the selected patch")
	}
	lo, hi := float32(1), float32(0)
	for _, x := range v.Overlay {
		lo, hi = min(lo, x), max(hi, x)
	}
	if lo != 0 || hi != 1 {
		t.Fatalf("the overlay spans %g … %g of its colour scale, want 0 … 1", lo, hi)
	}
	l := m.snap.Lanes[0]
	row := m.shownAttention(l, l.At(m.snap.T))[100*l.Grid.N : 101*l.Grid.N]
	if v.OverlayHi != slices.Max(row) || v.OverlayLo != slices.Min(row) {
		t.Fatalf("legend %g … %g, the row %g … %g", v.OverlayLo, v.OverlayHi, slices.Min(row), slices.Max(row))
	}
	test.WidgetRenderer(v).Refresh()
	if !v.legend.hi.Visible() || v.legend.hi.Text == "" {
		t.Fatal("the overlay has no legend")
	}
}

// Over an aggregated attention map the lens shows entries on the map's
// own colour scale: each block has the colour of its brightest entry as
// the lens draws it.
func TestLensSharesTheMapsScale(t *testing.T) {
	test.NewTempApp(t)
	h := NewHeatmap()
	w := test.NewTempWindow(t, h)
	w.Resize(fyne.NewSize(260, 200))
	h.Values, h.Rows, h.Cols, h.Block = randomAttention(196), 196, 196, 14
	h.Refresh()
	img := h.img.Image
	if img.Bounds().Dx() != 14 {
		t.Fatalf("map drawn %v, want 14 blocks", img.Bounds())
	}
	for br := 0; br < 14; br++ {
		for bc := 0; bc < 14; bc++ {
			var top float32
			for q := br * 14; q < (br+1)*14; q++ {
				for k := bc * 14; k < (bc+1)*14; k++ {
					top = max(top, h.shown[q*196+k])
				}
			}
			lens := viridis(float64(top)) // the lens draws entry (q, k) so
			if got := color.RGBAModel.Convert(img.At(bc, br)).(color.RGBA); got != lens {
				t.Fatalf("block (%d,%d) is %v; its brightest entry in the lens %v", br, bc, got, lens)
			}
		}
	}
}

// TestInfoTipHoverThenClick: the pointer over ⓘ puts its explanation in
// the status line; the click that follows opens it and it stays (a
// pop-up opened on hover was closed by that click: nothing was seen).
func TestInfoTipHoverThenClick(t *testing.T) {
	m, w := newTestMain(t)
	var tips []*infoTip
	tipsUnder(w.Content(), &tips)
	if len(tips) == 0 {
		t.Fatal("no ⓘ in the window")
	}
	tp := tips[0]
	tp.MouseIn(&desktop.MouseEvent{})
	if !strings.Contains(m.status.Text, "stored training digit") {
		t.Errorf("hovering ⓘ: status %q", m.status.Text)
	}
	test.Tap(tp)
	if tp.popup == nil || !tp.popup.Visible() {
		t.Fatal("hover then click: the explanation is not open")
	}
	tp.MouseOut()
	if !tp.popup.Visible() {
		t.Fatal("the explanation closed when the pointer left the icon")
	}
	test.Tap(tp)
	if tp.popup.Visible() {
		t.Fatal("a second click did not close it")
	}
}

// TestKeysHelpFits: Help → Keys, whose rows are taller than a 1366×768
// window, scrolls them, so that the dialog with its title and Close fits
// the window; in a tall window every row shows without scrolling.
func TestKeysHelpFits(t *testing.T) {
	for _, c := range []struct {
		size   fyne.Size
		scroll bool
	}{{fyne.NewSize(1366, 768), true}, {fyne.NewSize(1366, 1400), false}} {
		m, w := newTestMain(t)
		w.Resize(c.size)
		m.showKeys()
		var sc *container.Scroll
		for _, o := range w.Canvas().Overlays().List() {
			if h := o.MinSize().Height; h > w.Canvas().Size().Height {
				t.Errorf("%v: Help → Keys needs %.0f px of the window's %.0f", c.size, h, w.Canvas().Size().Height)
			}
			eachObject(o, func(o fyne.CanvasObject) {
				if v, ok := o.(*container.Scroll); ok {
					sc = v
				}
			})
		}
		if sc == nil {
			t.Fatalf("%v: Help → Keys has no scroll", c.size)
		}
		if rows := sc.Content.MinSize().Height; (sc.MinSize().Height < rows) != c.scroll {
			t.Errorf("%v: the rows need %.0f px and have %.0f: scrolling %v, want %v", c.size, rows, sc.MinSize().Height, sc.MinSize().Height < rows, c.scroll)
		}
		m.closeDialog()
	}
}

// eachObject calls visit on o and on every object under it, depth first:
// a container's objects and a widget's renderer's.
func eachObject(o fyne.CanvasObject, visit func(fyne.CanvasObject)) {
	visit(o)
	switch v := o.(type) {
	case *fyne.Container:
		for _, c := range v.Objects {
			eachObject(c, visit)
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(v).Objects() {
			eachObject(c, visit)
		}
	}
}
