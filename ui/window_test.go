package ui

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"attractorlab/sim"
	"attractorlab/sim/figures"
	"attractorlab/sim/mnist"
)

func testDeps(t testing.TB) Deps {
	t.Helper()
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	return Deps{Data: data, Memories: sim.NewMemories(data.Train), Catalogue: sim.NewCatalogue(data.Train, sim.WeightFiles{}),
		Sources: fashionSample}
}

// fashionSample opens Fashion-MNIST's embedded sample (the shipped lesson
// on clothing runs on it).
func fashionSample(name string) (*sim.Source, error) {
	if name != mnist.FashionName {
		return nil, fmt.Errorf("%s is not in the tests' data", name)
	}
	fashionOnce.Do(func() {
		train, test, err := mnist.FashionSample()
		if err != nil {
			fashionErr = err
			return
		}
		d := &mnist.Data{Train: train, Test: test, Dataset: mnist.FashionName}
		fashionSrc = &sim.Source{Data: d, Memories: sim.NewMemories(train), Catalogue: sim.NewCatalogue(train, sim.WeightFiles{})}
	})
	return fashionSrc, fashionErr
}

var (
	fashionOnce sync.Once
	fashionSrc  *sim.Source
	fashionErr  error
)

func newTestMain(t testing.TB) (*Main, fyne.Window) {
	t.Helper()
	os.Setenv("LANG", "en_US.UTF-8")
	a := test.NewTempApp(t)
	w := test.NewTempWindow(t, nil)
	m := NewMainSync(a, w, testDeps(t), sim.DefaultSettings())
	// A theme's parts in the page at once (in Fyne's test driver a
	// goroutine's fyne.Do runs beside the test).
	m.afterFrame = func(f func()) { f() }
	w.SetContent(m.Content())
	w.Resize(fyne.NewSize(1280, 800))
	return m, w
}

func typeKey(w fyne.Window, k fyne.KeyName) {
	w.Canvas().(interface{ OnTypedKey() func(*fyne.KeyEvent) }).OnTypedKey()(&fyne.KeyEvent{Name: k})
}

func TestKeyboardAndTransport(t *testing.T) {
	m, w := newTestMain(t)
	before := append([]float32(nil), m.states[0].Pixels...)
	typeKey(w, fyne.KeyRight)
	if m.snap.T != 1 {
		t.Fatalf("→: t = %d, want 1", m.snap.T)
	}
	if bytes.Equal(f32bytes(before), f32bytes(m.states[0].Pixels)) {
		t.Fatal("the state image did not change after a step")
	}
	typeKey(w, fyne.KeyRight)
	typeKey(w, fyne.KeyLeft)
	if m.snap.T != 1 {
		t.Fatalf("→ → ←: t = %d", m.snap.T)
	}
	typeKey(w, fyne.KeyT)
	if m.snap.T != m.snap.Lanes[0].Best {
		t.Fatalf("T: t = %d, t* = %d", m.snap.T, m.snap.Lanes[0].Best)
	}
	// Masking digit 0: no step beats the zero-filled input, and the
	// readout says so instead of calling step 1 the best.
	if want := "no step improves on the input"; !strings.Contains(m.tLabel.Text, want) {
		t.Fatalf("t label %q, want %q", m.tLabel.Text, want)
	}
	// ...and no t* line is drawn where the readout names none.
	if m.msePlot.TStar >= 0 || m.energyPlot.TStar >= 0 {
		t.Fatalf("a t* line at %v while the readout says no step improves", m.msePlot.TStar)
	}
	typeKey(w, fyne.KeyHome)
	if m.snap.T != 0 {
		t.Fatal("Home did not reset")
	}
	typeKey(w, fyne.KeySpace)
	if !m.snap.Playing || m.playBtn.Text != "Pause" {
		t.Fatal("Space did not start playing")
	}
	m.Engine.Tick()
	m.Engine.Tick()
	if m.snap.T != 2 {
		t.Fatalf("two ticks while playing: t = %d", m.snap.T)
	}
	typeKey(w, fyne.KeySpace)
	if m.snap.Playing {
		t.Fatal("Space did not pause")
	}
	// Played to the end, playback stops and says why.
	m.Engine.Seek(m.snap.End - 1)
	typeKey(w, fyne.KeySpace)
	for k := 0; k < 3 && m.snap.Playing; k++ {
		m.Engine.Tick()
	}
	if m.snap.Playing || m.snap.T != m.snap.End || !strings.Contains(m.status.Text, fmt.Sprintf("playback stopped at t = %d, the last step", m.snap.End)) {
		t.Fatalf("played to the end: t = %d of %d, playing %v, status %q", m.snap.T, m.snap.End, m.snap.Playing, m.status.Text)
	}
	typeKey(w, fyne.KeyHome)
	typeKey(w, fyne.Key2)
	if m.snap.Lanes[0].Info.Name != "bsa-p4" || len(m.states) != 1 {
		t.Fatalf("key 2 chose %s", m.snap.Lanes[0].Info.Name)
	}
	typeKey(w, fyne.KeyF11)
	if !m.presentation || m.sidebar.Visible() {
		t.Fatal("F11 did not enter presentation mode")
	}
	typeKey(w, fyne.KeyF11)
	if m.presentation || !m.sidebar.Visible() {
		t.Fatal("F11 did not leave presentation mode")
	}
}

func f32bytes(v []float32) []byte {
	var b bytes.Buffer
	for _, x := range v {
		b.WriteByte(byte(x * 255))
	}
	return b.Bytes()
}

func TestClickPatchTogglesMask(t *testing.T) {
	m, _ := newTestMain(t)
	before := m.snap.PixelMask[0]
	// The input view is square: its top-left cell is patch 0.
	s := m.input.Size()
	side := min(s.Width, s.Height)
	test.TapAt(m.input, fyne.NewPos((s.Width-side)/2+2, (s.Height-side)/2+2))
	if m.snap.PixelMask[0] == before {
		t.Fatal("tapping patch 0 of the input did not toggle it")
	}
	// Clicking a state patch paints its attention row.
	m.Engine.Step()
	test.TapAt(m.states[0], fyne.NewPos(s.Width/2, s.Height/2))
	if m.query < 0 || m.states[0].Overlay == nil {
		t.Fatal("tapping a state patch did not select a query")
	}
}

func TestCompareAndScenarioRoundTrip(t *testing.T) {
	m, _ := newTestMain(t)
	test.Tap(m.side.modelCheck[1]) // BSA P=4 beside P=2
	if len(m.snap.Lanes) != 2 || len(m.states) != 2 || len(m.heat) != 2 {
		t.Fatalf("compare: %d lanes, %d state views", len(m.snap.Lanes), len(m.states))
	}
	if m.heat[0].Hi != m.heat[1].Hi {
		t.Fatal("attention maps do not share a colour scale")
	}
	m.Engine.Update(func(s *sim.Settings) { s.Index = 17; s.Corruption.Seed = 3 })
	m.Engine.TogglePatch(5)
	m.Engine.Seek(7)
	var buf bytes.Buffer
	if err := sim.WriteScenario(&buf, m.snap); err != nil {
		t.Fatal(err)
	}
	saved := *m.snap
	m.Engine.Update(func(s *sim.Settings) { s.Index = 3; s.Lanes = []string{"bsa-p2"} })
	if err := m.OpenScenario(bytes.NewReader(buf.Bytes()), "s.json"); err != nil {
		t.Fatal(err)
	}
	got := m.snap
	if got.T != 7 || got.Settings.Index != 17 || len(got.Lanes) != 2 || got.Settings.Corruption.Seed != 3 {
		t.Fatalf("scenario not restored: t=%d index=%d lanes=%d", got.T, got.Settings.Index, len(got.Lanes))
	}
	for q := range saved.PixelMask {
		if saved.PixelMask[q] != got.PixelMask[q] {
			t.Fatal("mask (with the toggled patch) not restored exactly")
		}
	}
	for q, v := range saved.Lanes[0].At(7).Image {
		if got.Lanes[0].At(7).Image[q] != v {
			t.Fatal("state at t not restored exactly")
		}
	}
	if err := m.OpenScenario(strings.NewReader(`{"version":1,"split":"moon"}`), "bad.json"); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("bad scenario: err = %v", err)
	}
	if m.snap.Settings.Index != 17 {
		t.Fatal("a bad scenario changed the session")
	}
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestLayoutMarkup compares the window's structure with the golden markup
// (go test ./ui -update rewrites it after an intended change).
func TestLayoutMarkup(t *testing.T) {
	frozenBudget(t) // which readouts are drawn from pieces does not hang on the machine's speed
	_, w := newTestMain(t)
	if *update {
		os.Remove(filepath.Join("testdata", "main_window.xml"))
		test.AssertRendersToMarkup(&testing.T{}, "main_window.xml", w.Canvas())
		if err := os.Rename(filepath.Join("testdata", "failed", "main_window.xml"), filepath.Join("testdata", "main_window.xml")); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join("testdata", "failed"))
	}
	test.AssertRendersToMarkup(t, "main_window.xml", w.Canvas())
}

// BenchmarkStepAndRedraw is one step (P=2) plus the redraw of every
// panel. "rasters" regenerates each panel's image at its on-screen size,
// as the GL driver does for refreshed rasters; "software" additionally
// paints the whole 1280×800 window with Fyne's software renderer (text and
// widgets included), which the GL driver does on the GPU.
func BenchmarkStepAndRedraw(b *testing.B) {
	for _, mode := range []string{"rasters", "software"} {
		b.Run(mode, func(b *testing.B) {
			m, w := newTestMain(b)
			w.Canvas().Capture()
			b.ReportAllocs()
			for b.Loop() {
				m.Engine.Step()
				if m.snap.T >= 90 {
					m.Engine.Reset()
				}
				if mode == "software" {
					w.Canvas().Capture()
					continue
				}
				for _, v := range append([]*PixelView{m.clean, m.input, m.nearest}, m.states...) {
					s := v.Size()
					v.draw(int(s.Width), int(s.Height))
				}
				for _, h := range m.heat {
					h.Refresh()
				}
				s := m.hist.Size()
				m.hist.draw(int(s.Width), int(s.Height))
			}
		})
	}
}

// TestTransformerHeads: with the ViT chosen (key 4), the attention
// map shows the mean of the heads; H shows head 1, 2, …, then the mean again.
func TestTransformerHeads(t *testing.T) {
	m, w := newTestMain(t)
	typeKey(w, fyne.Key4)
	typeKey(w, fyne.KeyRight)
	if got := m.snap.Lanes[0].Info.Name; got != "vit" || m.snap.T != 1 {
		t.Fatalf("lane %s at t = %d", got, m.snap.T)
	}
	attn := m.snap.Lanes[0].Attn
	n := 49 * 49
	if !strings.Contains(m.heatTitles[0].Text, "mean of 4 heads") || &m.heat[0].Values[0] != &attn[0] {
		t.Fatalf("title %q: not the head average", m.heatTitles[0].Text)
	}
	for h := 1; h <= 4; h++ {
		typeKey(w, fyne.KeyH)
		if !strings.Contains(m.heatTitles[0].Text, fmt.Sprintf("head %d of 4", h)) || &m.heat[0].Values[0] != &attn[h*n] {
			t.Fatalf("after %d presses of H: title %q", h, m.heatTitles[0].Text)
		}
	}
	typeKey(w, fyne.KeyH)
	if !strings.Contains(m.heatTitles[0].Text, "mean of 4 heads") {
		t.Fatalf("H past the last head: %q", m.heatTitles[0].Text)
	}
	// The ViT stops after its 5 layers.
	for range 8 {
		typeKey(w, fyne.KeyRight)
	}
	if m.snap.T != 5 || m.timeline.Max != 5 {
		t.Fatalf("ViT at t = %d after 9 steps (timeline to %g), want 5", m.snap.T, m.timeline.Max)
	}
	// Back to an unbounded model: the timeline grows again.
	typeKey(w, fyne.Key1)
	m.Engine.Settle()
	if m.timeline.Max <= 5 {
		t.Fatalf("timeline to %g after choosing BSA P=2", m.timeline.Max)
	}
}

// TestExportedPlots: a plot that is not drawn for the models shown (the
// ViT has no energy) exports an error, not a 1×1 PNG; the MSE plot exports
// with its legend and the labelled t and t* markers drawn in.
func TestExportedPlots(t *testing.T) {
	m, w := newTestMain(t)
	typeKey(w, fyne.Key4) // the ViT alone
	m.Engine.Settle()
	var b bytes.Buffer
	if err := m.plotPNG(energyPlot, false)(&b); err == nil || b.Len() != 0 {
		t.Fatalf("the ViT's energy exported %d bytes (err %v)", b.Len(), err)
	}
	typeKey(w, fyne.Key1)
	m.Engine.Settle()
	for range 3 {
		typeKey(w, fyne.KeyRight)
	}
	m.Engine.Settle()
	if err := m.plotPNG(msePlot, false)(&b); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	var now, best int
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			switch c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA); c {
			case figures.NowColor:
				now++
			case figures.BestColor:
				best++
			}
		}
	}
	if now < 100 || best < 100 {
		t.Fatalf("exported MSE plot: %d pixels of the t marker, %d of t*", now, best)
	}
}

// TestKeysWhateverHasFocus: with any control kind focused (a check box, a
// radio choice, a list, a slider, a button), the window's keys still step,
// play, reset and jump; the control does not act on them. Only a text
// entry keeps them (it is being typed in).
func TestKeysWhateverHasFocus(t *testing.T) {
	m, w := newTestMain(t)
	c := w.Canvas()
	for _, f := range []struct {
		kind string
		obj  fyne.Focusable
	}{
		{"none", nil},
		{"check box", m.side.gridCheck},
		{"model check box", m.side.modelCheck[0]},
		{"radio choice", m.side.kind.buttons[1]},
		{"list", m.side.split},
		{"slider", m.side.level},
		{"timeline", m.timeline},
		{"button", m.playBtn},
	} {
		t.Run(f.kind, func(t *testing.T) {
			m.Engine.Reset()
			grid, kind, level, split := m.side.gridCheck.Checked, m.snap.Settings.Corruption.Kind, m.side.level.Value, m.side.split.Selected
			if f.obj == nil {
				c.Unfocus()
			} else {
				c.Focus(f.obj)
				if c.Focused() != f.obj {
					t.Fatalf("%s did not take the focus", f.kind)
				}
			}
			press := func(k fyne.KeyName, r rune) {
				if foc := c.Focused(); foc != nil {
					foc.TypedKey(&fyne.KeyEvent{Name: k})
					if r != 0 {
						foc.TypedRune(r)
					}
				} else {
					m.typedKey(&fyne.KeyEvent{Name: k})
				}
			}
			for _, k := range []fyne.KeyName{fyne.KeyRight, fyne.KeyRight, fyne.KeyPageDown} {
				press(k, 0)
			}
			if m.snap.T != 3 {
				t.Fatalf("→ → PageDown: t = %d, want 3", m.snap.T)
			}
			press(fyne.KeyLeft, 0)
			press(fyne.KeyPageUp, 0)
			if m.snap.T != 1 {
				t.Fatalf("← PageUp: t = %d, want 1", m.snap.T)
			}
			press(fyne.KeyT, 't')
			best := m.snap.Lanes[0].Best
			if m.snap.T != best {
				t.Fatalf("T: t = %d, want t* = %d", m.snap.T, best)
			}
			press(fyne.KeyHome, 0)
			if m.snap.T != 0 {
				t.Fatalf("Home: t = %d", m.snap.T)
			}
			press(fyne.KeySpace, ' ')
			if !m.snap.Playing {
				t.Fatal("Space did not play")
			}
			press(fyne.KeySpace, ' ')
			if m.snap.Playing {
				t.Fatal("Space did not pause")
			}
			if m.side.gridCheck.Checked != grid || m.snap.Settings.Corruption.Kind != kind || m.side.level.Value != level ||
				m.side.split.Selected != split {
				t.Fatal("the focused control acted on the window's keys")
			}
		})
	}
	// A text entry being typed in keeps its keys.
	c.Focus(m.side.index)
	m.Engine.Reset()
	c.Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyRight})
	if m.snap.T != 0 {
		t.Fatal("→ in the index entry stepped the model")
	}
}

// TestDigitChoiceAndReadouts: the label filter shows a digit of that label
// at once; a bad index is refused and the field shows the digit shown; a
// problem leaves the status line at the next accepted change; the nearest
// memory has the same index in the window and the CSV; the corruption hint
// fits the corruption; pixel models say they have no patch histogram.
func TestDigitChoiceAndReadouts(t *testing.T) {
	m, w := newTestMain(t)
	m.side.labelSel.SetSelected("3")
	if m.snap.Label != 3 {
		t.Fatalf("label filter 3: showing a %d", m.snap.Label)
	}
	m.side.labelSel.SetSelected("any")
	submit := func(s string) {
		w.Canvas().Focus(m.side.index)
		m.side.index.SetText(s)
		m.side.index.OnSubmitted(s)
	}
	submit("abc")
	if !strings.Contains(m.status.Text, `"abc" is not a digit index`) || m.side.index.Text != strconv.Itoa(m.snap.Settings.Index) {
		t.Fatalf("abc: status %q, field %q", m.status.Text, m.side.index.Text)
	}
	submit("5")
	if m.snap.Settings.Index != 5 || m.status.Text != "" {
		t.Fatalf("5: index %d, status %q", m.snap.Settings.Index, m.status.Text)
	}
	submit("99999")
	if m.snap.Settings.Index != 5 || m.side.index.Text != "5" || !strings.Contains(m.status.Text, "99999 is out of range") {
		t.Fatalf("99999: index %d, field %q, status %q", m.snap.Settings.Index, m.side.index.Text, m.status.Text)
	}
	m.Engine.Seek(3)
	var b bytes.Buffer
	if err := sim.WriteTrajectoryCSV(&b, m.snap); err != nil {
		t.Fatal(err)
	}
	recs, _ := csv.NewReader(&b).ReadAll()
	f := m.snap.Lanes[0].At(3)
	if recs[4][6] != strconv.Itoa(f.NearIdx) || !strings.Contains(m.nearestLbl.Text, "#"+strconv.Itoa(f.NearIdx)+":") {
		t.Fatalf("nearest memory: CSV %s, window %q, frame %d", recs[4][6], m.nearestLbl.Text, f.NearIdx)
	}
	if !m.side.maskHint.Visible() || m.side.noiseHint.Visible() {
		t.Fatal("masking shows the noise hint")
	}
	m.Engine.Update(func(s *sim.Settings) { s.Corruption.Kind = sim.Noise })
	if m.side.maskHint.Visible() || !m.side.noiseHint.Visible() {
		t.Fatal("noise shows the masking hint (click a patch to mask)")
	}
	typeKey(w, fyne.Key5) // modern Hopfield alone
	if !strings.Contains(m.hist.means.Text, "no patches") {
		t.Fatalf("histogram of a pixel model: %q", m.hist.means.Text)
	}
	m.Engine.Update(func(s *sim.Settings) { s.Hop.Beta = 0.01 })
	m.Engine.Step()
	for _, pv := range m.patterns {
		for _, l := range pv.labels {
			if strings.HasSuffix(l.Text, " 0.00") {
				t.Fatalf("a top pattern's weight reads %q", l.Text)
			}
		}
	}
}

// TestCompareAnswersEveryModel: with several models, the table has a row
// per model with its own t* (not the first model's), and the energy plot
// stays, with a line per model that has one.
func TestCompareAnswersEveryModel(t *testing.T) {
	m, _ := newTestMain(t)
	m.Engine.Restore(sim.PaperDemo(), 0)
	m.Engine.Update(func(s *sim.Settings) { s.Lanes = []string{"bsa-p2", "block"} })
	m.Engine.Settle()
	if m.answers == nil || len(m.answers.Objects) != 3*len(answerColumns) {
		t.Fatalf("compare table: %v", m.answers)
	}
	for k, l := range m.snap.Lanes {
		row := m.answers.Objects[(k+1)*len(answerColumns):]
		if got := cellText(row[0]); got != l.Info.Name {
			t.Fatalf("row %d is %q, want %q", k, got, l.Info.Name)
		}
		if got := row[1].(*Lines).Text; got != strconv.Itoa(l.Best) {
			t.Fatalf("%s: t* %q, want its own %d", l.Info.Label, got, l.Best)
		}
	}
	if m.snap.Lanes[0].Best == m.snap.Lanes[1].Best {
		t.Fatal("the test needs two models with different t*")
	}
	if !m.energyPlot.Visible() || m.energyPlot.Build == nil {
		t.Fatal("the energy plot disappeared in compare mode")
	}
	if _, err := m.energyPlot.Build(); err != nil {
		t.Fatal(err)
	}
}

// TestGammaZeroSaysSo: with γ = 0 the state stays the input; the readout
// says no step improves (rounding is not a repair) and why, and under
// masking the energy's t = 0 point is marked as measured by other rules.
func TestGammaZeroSaysSo(t *testing.T) {
	m, _ := newTestMain(t)
	m.Engine.Update(func(st *sim.Settings) {
		st.Lanes = []string{"bsa-p2"}
		st.Corruption = sim.DefaultMask
		st.Dyn.Gamma = 0
	})
	m.Engine.Settle()
	txt := m.tLabel.Text
	if !strings.Contains(txt, "no step improves") || !strings.Contains(txt, "γ = 0") {
		t.Fatalf("readout at γ = 0: %q", txt)
	}
	if !m.energyNote.Visible() {
		t.Fatal("masking: the energy's t = 0 point is not explained")
	}
	m.Engine.Update(func(st *sim.Settings) { st.Corruption = sim.DefaultNoise })
	m.Engine.Settle()
	if m.energyNote.Visible() {
		t.Fatal("noise: the t = 0 note stays")
	}
}

// TestFourModelsFit: with four models (the most a comparison holds) the
// window's content needs no more than 1280×800 (a projector), so nothing
// is pushed out of the window.
func TestFourModelsFit(t *testing.T) {
	m, w := newTestMain(t)
	m.Engine.Update(func(st *sim.Settings) { st.Lanes = []string{"bsa-p2", "bsa-p4", "block", "hopfield"} })
	m.Engine.Settle()
	// A step fills the panels that are empty at t = 0 (the top stored
	// patterns and their weights were what made the window 2,000 px wide).
	typeKey(w, fyne.KeyRight)
	typeKey(w, fyne.KeyRight)
	if len(m.states) != 4 {
		t.Fatalf("%d lanes shown", len(m.states))
	}
	menu := float32(30) // the main menu bar above the content
	if s := m.Content().MinSize(); s.Width > 1280 || s.Height > 800-menu {
		t.Fatalf("four models need %v, more than 1280×%g", s, 800-menu)
	}
}

// TestScaleKeys: L makes the MSE axis logarithmic and back, A cycles the
// attention colour scales; their controls follow.
func TestScaleKeys(t *testing.T) {
	m, w := newTestMain(t)
	typeKey(w, fyne.KeyL)
	if !m.logY || !m.side.logCheck.Checked {
		t.Fatal("L did not make the MSE axis logarithmic")
	}
	typeKey(w, fyne.KeyL)
	if m.logY {
		t.Fatal("L did not make the MSE axis linear again")
	}
	for k := 1; k <= len(attnScaleNames); k++ {
		typeKey(w, fyne.KeyA)
		want := attnScale(k % len(attnScaleNames))
		if m.attnScale != want || m.side.scaleSel.Selected != attnScaleNames[want] || m.heat[0].Scale != want {
			t.Fatalf("A pressed %d times: scale %d (%q), map %d; want %d", k, m.attnScale, m.side.scaleSel.Selected, m.heat[0].Scale, want)
		}
	}
}

// TestSidebarHasEveryKnob: the sidebar has a control for each model
// parameter (sim.ParamKnobs, in order); moving it (a slider let go, a
// field's Enter) changes the engine's settings, and settings changed
// elsewhere set the control back. The level slider follows the task's
// knob.
func TestSidebarHasEveryKnob(t *testing.T) {
	m, _ := newTestMain(t)
	knobs := sim.ParamKnobs()
	if len(m.side.knobs) != len(knobs) {
		t.Fatalf("%d parameter controls, %d parameters", len(m.side.knobs), len(knobs))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Abs(b) }
	for i, k := range knobs {
		kc := m.side.knobs[i]
		if kc.k != k {
			t.Fatalf("control %d is %s's, want %s's", i, kc.k.Name, k.Name)
		}
		v := k.Max
		if v == k.Default {
			v = k.Min
		}
		if kc.slider != nil {
			pos := v
			if k.Log {
				pos = math.Log10(v)
			}
			kc.slider.SetValue(pos)
			kc.slider.OnChangeEnded(pos)
		} else {
			kc.entry.SetText(strconv.FormatFloat(v, 'g', -1, 64))
			kc.entry.OnSubmitted(kc.entry.Text)
		}
		if got := k.Get(m.snap.Settings); !near(got, v) {
			t.Errorf("%s: the control sent %v, the engine has %v", k.Name, v, got)
		}
		m.Engine.Update(func(st *sim.Settings) { k.Set(st, k.Default) })
		shown := 0.0
		if kc.slider != nil {
			shown = kc.value(kc.slider.Value)
		} else {
			shown, _ = strconv.ParseFloat(kc.entry.Text, 64)
		}
		if !near(shown, k.Default) {
			t.Errorf("%s: back at its default %v, the control shows %v", k.Name, k.Default, shown)
		}
	}
	for _, task := range []sim.Kind{sim.Mask, sim.Noise} {
		m.Engine.Update(func(st *sim.Settings) { st.Corruption.Kind = task })
		lk := sim.LevelKnob(task)
		if m.side.level.Min != lk.Min || m.side.level.Max != lk.Max || !near(m.side.level.Value, lk.Get(m.snap.Settings)) {
			t.Errorf("%s: level slider %v … %v at %v, want %s's range at %v", task, m.side.level.Min, m.side.level.Max, m.side.level.Value, lk.Name, lk.Get(m.snap.Settings))
		}
	}
}

// TestHaltStopsDrawing: after Halt (the app quitting) no snapshot is
// drawn: once Fyne's loop has stopped, fyne.Do runs on the caller's
// goroutine, and a slow model's late snapshot was drawn from the engine's
// (attack 4: "Error in Fyne call thread" from the sidebar).
func TestHaltStopsDrawing(t *testing.T) {
	m, _ := newTestMain(t)
	before := m.snap
	m.Halt()
	m.Engine.Step()
	if m.snap != before {
		t.Fatal("a snapshot was drawn after Halt")
	}
}

// TestLookAheadNotKnownYet: while the first look-ahead is being recorded
// (the page's start), the readout names no t*: it says what is still
// computing, and the plots mark none.
func TestLookAheadNotKnownYet(t *testing.T) {
	a := test.NewTempApp(t)
	w := test.NewTempWindow(t, nil)
	m := NewMainSync(a, w, testDeps(t), sim.PaperDemo()) // a transient memory at t* = 30
	w.SetContent(m.Content())
	w.Resize(fyne.NewSize(1280, 800))
	done := *m.snap
	if done.Unrecorded != 0 || !strings.Contains(m.tLabel.Text, "t* = ") {
		t.Fatalf("recorded: %d unrecorded, readout %q", done.Unrecorded, m.tLabel.Text)
	}
	partial := done
	partial.Unrecorded = 60
	partial.Seq++
	m.apply(&partial)
	if want := "t* not known yet: recording the first 100 steps, 60 to go"; !strings.Contains(m.tLabel.Text, want) {
		t.Fatalf("recording: readout %q, want %q", m.tLabel.Text, want)
	}
	if m.msePlot.TStar >= 0 || m.energyPlot.TStar >= 0 {
		t.Fatalf("recording: t* marked at %g on the plots", m.msePlot.TStar)
	}
	done.Seq = partial.Seq + 1
	m.apply(&done)
	if !strings.Contains(m.tLabel.Text, "t* = ") || m.msePlot.TStar < 1 {
		t.Fatalf("recorded again: readout %q, t* marked at %g", m.tLabel.Text, m.msePlot.TStar)
	}
}

// TestSpeedKeys: ] and [ move the play speed along speedSteps, the
// slider, the engine and the status line saying the same, and stay put at
// 1 and 120 steps a second.
func TestSpeedKeys(t *testing.T) {
	m, w := newTestMain(t)
	if m.speed.Value != 10 {
		t.Fatalf("the speed starts at %g", m.speed.Value)
	}
	check := func(keys string, want float64) {
		t.Helper()
		if m.speed.Value != want || m.snap.Speed != want || m.Shown().Speed != want {
			t.Fatalf("%s: slider %g, engine %g, shown %g; want %g", keys, m.speed.Value, m.snap.Speed, m.Shown().Speed, want)
		}
		if say := fmt.Sprintf("play speed %.0f steps/s", want); !strings.Contains(m.status.Text, say) {
			t.Fatalf("%s: the status line says %q, want %q", keys, m.status.Text, say)
		}
	}
	typeKey(w, fyne.KeyRightBracket)
	check("]", 15)
	typeKey(w, fyne.KeyRightBracket)
	typeKey(w, fyne.KeyRightBracket)
	check("] ] ]", 30)
	typeKey(w, fyne.KeyLeftBracket)
	typeKey(w, fyne.KeyLeftBracket)
	typeKey(w, fyne.KeyLeftBracket)
	typeKey(w, fyne.KeyLeftBracket)
	check("] ] ] [ [ [ [", 5)
	for range 10 {
		typeKey(w, fyne.KeyLeftBracket)
	}
	check("[ at the slowest", 1)
	m.speed.SetValue(7) // a speed between two steps, from the slider
	typeKey(w, fyne.KeyRightBracket)
	check("] from 7", 10)
	for range 20 {
		typeKey(w, fyne.KeyRightBracket)
	}
	check("] at the fastest", 120)
}

// D switches the theme between light and dark: from the system's to the
// other of the two, then back and forth; the selector shows the choice,
// the preference keeps it, the status line says it, and Shown tells it.
func TestThemeKey(t *testing.T) {
	m, w := newTestMain(t)
	if m.themeChoice != "System" {
		t.Fatalf("the theme starts as %q", m.themeChoice)
	}
	sysDark := m.app.Settings().ThemeVariant() == theme.VariantDark
	want := "Dark"
	if sysDark {
		want = "Light"
	}
	for k := range 3 {
		typeKey(w, fyne.KeyD)
		dark := want == "Dark"
		if m.themeChoice != want || m.side.themeSel.Selected != want || m.app.Preferences().String("theme") != want {
			t.Fatalf("D #%d: chosen %q, selector %q, preference %q; want %q", k+1, m.themeChoice, m.side.themeSel.Selected, m.app.Preferences().String("theme"), want)
		}
		if m.darkShown() != dark || m.Shown().Dark != dark {
			t.Fatalf("D #%d (%s): drawn dark %v, shown dark %v", k+1, want, m.darkShown(), m.Shown().Dark)
		}
		if say := "theme: " + want; !strings.Contains(m.status.Text, say) {
			t.Fatalf("D #%d: the status line says %q, want %q", k+1, m.status.Text, say)
		}
		variant := theme.VariantLight
		if dark {
			variant = theme.VariantDark
		}
		if bg := m.app.Settings().Theme().Color(theme.ColorNameBackground, m.app.Settings().ThemeVariant()); bg != theme.DefaultTheme().Color(theme.ColorNameBackground, variant) {
			t.Fatalf("D #%d (%s): the background is %v", k+1, want, bg)
		}
		want = map[string]string{"Dark": "Light", "Light": "Dark"}[want]
	}
}
