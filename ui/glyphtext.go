package ui

import (
	"image/color"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// GlyphText is a line of text that changes with every step ("t 12 · MSE
// 0.0311", a colour bar's "0.042"), drawn as one canvas.Text a piece: a
// word (a run of letters) or any other single character. Fyne shapes and
// rasterises a canvas.Text afresh whenever its text changes, each time in
// a HarfBuzz shaper made anew; in the page that was about a third of a
// step's work. Here each piece's text is made once and kept: a new number
// moves kept digits into place (a move only repaints), and only a piece
// never shown before is rasterised.
//
// A text is drawn whole (one canvas.Text, as Fyne draws any) unless it
// replaces a text shown less than a second before (pieceEvery): a line
// that never changes (a model's name), or seldom (a training run's
// status, once an epoch), stays one object to paint, where its pieces
// would be dozens, each costing the painter a draw at every frame (in
// the page with its CPU throttled 4×, about a millisecond each); while
// stepping or playing, its numbers come from pieces. A change that would make
// more new pieces than the window's budget for this moment allows
// (pieceBudget) is drawn whole too, so that a theme's change, which
// needs every piece of every readout in the new colour, spreads their
// making over the next steps instead of drawing them all at once.
//
// The pieces sit at the sum of their own advances: no kerning between a
// digit and its neighbours (within a word there is), which the numbers,
// signs and short words of a readout do not need (the test compares it
// with Fyne's own text, pixel by pixel). A tab is a piece of its own
// width, not a move to the next tab stop: not for texts with tabs.
type GlyphText struct {
	widget.BaseWidget
	Text      string
	Color     color.Color // nil: the theme's foreground
	TextSize  float32     // 0: the theme's text size
	TextStyle fyne.TextStyle
}

// NewGlyphText returns a GlyphText showing text in colour c.
func NewGlyphText(text string, c color.Color) *GlyphText {
	g := &GlyphText{Text: text, Color: c}
	g.ExtendBaseWidget(g)
	return g
}

// SetText shows s, laying it out again only when it differs.
func (g *GlyphText) SetText(s string) {
	if s == g.Text {
		return
	}
	g.Text = s
	g.Refresh()
}

// look is what the texts of a GlyphText are drawn with.
type glyphLook struct {
	color color.NRGBA
	size  float32
	style fyne.TextStyle
}

func (g *GlyphText) look() glyphLook {
	c, size := g.Color, g.TextSize
	if c == nil || size == 0 {
		th := g.Theme()
		v := fyne.CurrentApp().Settings().ThemeVariant()
		if c == nil {
			c = th.Color(theme.ColorNameForeground, v)
		}
		if size == 0 {
			size = th.Size(theme.SizeNameText)
		}
	}
	return glyphLook{color.NRGBAModel.Convert(c).(color.NRGBA), size, g.TextStyle}
}

// glyphPieces calls f with each piece of s in order: a run of letters,
// or any other single character.
func glyphPieces(s string, f func(piece string)) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		j := i + n
		if unicode.IsLetter(r) {
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsLetter(r2) {
					break
				}
				j += n2
			}
		}
		f(s[i:j])
		i = j
	}
}

// pieceKey names a piece's size: its text in a font (by the theme's name
// for it), size and style.
type pieceKey struct {
	text  string
	font  string
	size  float32
	style fyne.TextStyle
}

// pieceSizes keeps the size of every piece measured. Fyne keeps the sizes
// of the texts it measures too, but forgets them all when the theme
// changes: measuring a GlyphText's pieces again would shape each anew.
var pieceSizes struct {
	sync.Mutex
	m map[pieceKey]fyne.Size
}

// pieceSize is the size of piece, as Fyne measures it.
func pieceSize(piece, font string, size float32, style fyne.TextStyle) fyne.Size {
	k := pieceKey{piece, font, size, style}
	pieceSizes.Lock()
	m, ok := pieceSizes.m[k]
	pieceSizes.Unlock()
	if ok {
		return m
	}
	m = fyne.MeasureText(piece, size, style)
	pieceSizes.Lock()
	if pieceSizes.m == nil || len(pieceSizes.m) >= 1<<14 {
		pieceSizes.m = map[pieceKey]fyne.Size{} // a bound on what is kept
	}
	k.text = strings.Clone(piece)
	pieceSizes.m[k] = m
	pieceSizes.Unlock()
	return m
}

// fontName is the name of the app's theme's font for style: the key that
// tells the sizes of one font's pieces from another's.
func fontName(style fyne.TextStyle) string {
	if a := fyne.CurrentApp(); a != nil {
		if f := a.Settings().Theme().Font(style); f != nil {
			return f.Name()
		}
	}
	return ""
}

// glyphsSize is the size of s drawn as a GlyphText: the sum of its
// pieces' advances, and the height of a line of the font (of its
// tallest piece where a fallback font is taller).
func glyphsSize(s string, size float32, style fyne.TextStyle) fyne.Size {
	font := fontName(style)
	h := pieceSize("M", font, size, style).Height
	var w float32
	glyphPieces(s, func(p string) {
		m := pieceSize(p, font, size, style)
		w += m.Width
		h = max(h, m.Height)
	})
	return fyne.NewSize(w, h)
}

func (g *GlyphText) CreateRenderer() fyne.WidgetRenderer {
	g.ExtendBaseWidget(g)
	r := &glyphRenderer{g: g, dirty: &canvas.Rectangle{}, used: map[string]int{}}
	r.Refresh()
	return r
}

// pieceBudget is how many new pieces the GlyphTexts of the app may make
// in one window of pieceWindow: a new piece costs a shaping and a
// rasterisation (about a millisecond in the page), as a whole text does.
var pieceBudget = struct {
	sync.Mutex
	max    int
	window time.Duration
	start  time.Time
	used   int
	now    func() time.Time
}{max: 16, window: 100 * time.Millisecond, now: time.Now}

// pieceEvery is how soon after the last a text's change must come for the
// new text to be drawn from pieces.
const pieceEvery = time.Second

// pieceClock is the budget's clock (a test's own).
func pieceClock() time.Time {
	b := &pieceBudget
	b.Lock()
	defer b.Unlock()
	return b.now()
}

// takePieces says whether n new pieces may be made now, and counts them
// if so. n pieces alone are always allowed in a fresh window: a text of
// more pieces than the budget still comes to be drawn from them.
func takePieces(n int) bool {
	if n == 0 {
		return true
	}
	b := &pieceBudget
	b.Lock()
	defer b.Unlock()
	if t := b.now(); t.Sub(b.start) >= b.window || t.Before(b.start) {
		b.start, b.used = t, 0
	}
	if b.used > 0 && b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

type glyphRenderer struct {
	g       *GlyphText
	look    glyphLook
	shownAt time.Time                 // when a text was last laid out (zero: none with this look)
	whole   *canvas.Text              // the text drawn whole (see GlyphText)
	made    bool                      // look is the pool's
	pool    map[string][]*canvas.Text // every piece's texts made so far
	laid    string                    // the text last laid out
	objs    []fyne.CanvasObject
	prev    []fyne.CanvasObject // objs before a layout
	used    map[string]int      // how many of each piece's texts a layout took
	// dirty is refreshed to have the window drawn again when the pieces
	// shown changed but none of them moved (a kept "6" already where a
	// "2" was): refreshing the widget instead would throw away the kept
	// pieces' rasters.
	dirty *canvas.Rectangle
}

func (r *glyphRenderer) Refresh() {
	lk := r.g.look()
	if !r.made || lk != r.look {
		r.look, r.made = lk, true
		r.pool = map[string][]*canvas.Text{} // the old ones are dropped with their rasters
		r.laid = "\x00"                      // nothing laid out with this look
		r.shownAt = time.Time{}
		r.whole = &canvas.Text{Color: lk.color, TextSize: lk.size, TextStyle: lk.style}
	}
	r.Layout(r.g.Size())
}

// Layout places the pieces of the text from the left edge, each in a
// kept text of its own (the widget's width does not matter: it is at
// least its MinSize where it is laid out as it asks).
func (r *glyphRenderer) Layout(size fyne.Size) {
	text := r.g.Text
	if text == r.laid {
		return
	}
	now := pieceClock()
	often := r.laid != "" && r.laid != "\x00" && !r.shownAt.IsZero() && now.Sub(r.shownAt) < pieceEvery
	r.shownAt = now
	r.laid = text
	lk := r.look
	font := fontName(lk.style)
	sz := glyphsSize(text, lk.size, lk.style)
	h := sz.Height
	used := r.used
	clear(used)
	r.prev = append(r.prev[:0], r.objs...)
	r.objs = r.objs[:0]
	if !often || text == "" || !takePieces(r.missing(text)) {
		r.whole.Text = text
		r.whole.Resize(sz)
		r.whole.Refresh()
		r.objs = append(r.objs, r.whole, r.dirty)
		return
	}
	changed := false
	x := float32(0)
	glyphPieces(text, func(p string) {
		m := pieceSize(p, font, lk.size, lk.style)
		if c, _ := utf8.DecodeRuneInString(p); unicode.IsSpace(c) {
			x += m.Width
			return
		}
		k := used[p]
		used[p] = k + 1
		texts := r.pool[p]
		if k == len(texts) {
			t := &canvas.Text{Text: strings.Clone(p), Color: lk.color, TextSize: lk.size, TextStyle: lk.style}
			texts = append(texts, t)
			r.pool[t.Text] = texts
			changed = true
		}
		t := texts[k]
		t.Resize(fyne.NewSize(m.Width, h)) // a new size rasterises it again: only when the line's height changes
		if t.Position() != fyne.NewPos(x, 0) {
			t.Move(fyne.NewPos(x, 0))
			changed = true
		}
		r.objs = append(r.objs, t)
		x += m.Width
	})
	r.objs = append(r.objs, r.dirty)
	if len(r.objs) != len(r.prev) {
		changed = true
	} else {
		for i, o := range r.objs {
			changed = changed || o != r.prev[i]
		}
	}
	if changed {
		canvas.Refresh(r.dirty)
	}
}

// missing is how many texts the pieces of text need that the pool does
// not have yet.
func (r *glyphRenderer) missing(text string) int {
	clear(r.used)
	n := 0
	glyphPieces(text, func(p string) {
		if c, _ := utf8.DecodeRuneInString(p); unicode.IsSpace(c) {
			return
		}
		k := r.used[p]
		r.used[p] = k + 1
		if k >= len(r.pool[p]) {
			n++
		}
	})
	clear(r.used)
	return n
}

func (r *glyphRenderer) MinSize() fyne.Size {
	return glyphsSize(r.g.Text, r.look.size, r.look.style)
}

func (r *glyphRenderer) Objects() []fyne.CanvasObject { return r.objs }
func (r *glyphRenderer) Destroy()                     {}
