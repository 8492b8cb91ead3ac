// Package lesson reads lesson files: an ordered list of slides, each
// setting a scenario, saying what runs, and showing a caption, optionally
// after a question whose answer the next key reveals. Numbers in captions
// come from the running models through placeholders, never typed in.
//
// A lesson file is JSON (version 1; docs/lessons.md has a complete
// example). Every error names the file, the line and the field, and a
// refused file changes nothing.
package lesson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"attractorlab/models/infile"
	"attractorlab/sim"
)

// Version is the lesson format this code reads.
const Version = 1

// The limits of a lesson file, the same for `lesson check`, `lesson
// export`, --lesson and the window (they all read through Parse).
const (
	MaxSize  = 1 * infile.MB // bytes; the shipped lessons are under 4 KB
	MaxDepth = 16            // nesting of JSON objects and lists; a lesson needs 4
)

// Lesson is a checked lesson file.
type Lesson struct {
	Name   string // short name (the file's base name for shipped lessons)
	Title  string
	Slides []Slide
}

// Slide is one step of a lesson.
type Slide struct {
	Title    string
	Settings sim.Settings // the scenario: the previous slide's, with this slide's fields changed
	Run      Run
	Caption  string // may hold placeholders and **bold** / *italic*
	Question string // shown first when not empty; the next key reveals Answer
	Answer   string
	// Train, when set, trains the bare self-attention live as the slide
	// opens (the window's Training window, started with this form): a
	// slide where a memory forms.
	Train *sim.TrainingForm
}

// Run says what the models do when a slide opens: show step From, then
// play to To (at once when From = To or Speed is 0). A slide with a
// question shows it at From; the next key plays to To and reveals the
// answer, whose placeholders are read at To.
type Run struct {
	From, To         int
	FromBest, ToBest bool    // From or To is t*, the first model's best step
	Speed            float64 // steps a second when playing From → To (0: jump)
}

// Error is a refused lesson file: where, and what is wrong.
type Error struct {
	File  string
	Line  int    // 1-based; 0 when the file could not be read
	Field string // JSON path, e.g. slides[2].scenario.index
	Msg   string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// Limits are what a lesson's values are checked against: the digits there
// are and the models that can run.
type Limits struct {
	Digits map[sim.Split]int // how many digits each split has
	// Model describes a model that can run here, or says why it cannot
	// (its weights did not load: the error names the file). It is asked
	// only about the models a lesson uses, so a lesson never depends on
	// weights it does not use.
	Model func(name string) (sim.ModelInfo, error)
}

// Placeholders are the names a caption may use, each as {name} (the
// slide's first model) or {name:model}.
var Placeholders = []string{"t_star", "mse_t_star", "mse_input", "mse_now", "nearest_label", "nearest_corr", "corr_mean_digit"}

var placeholder = regexp.MustCompile(`\{([a-z_]+)(?::([a-z0-9-]+))?\}`)

// Parse reads and checks a lesson file (name is used in errors, and its
// base name without .json names a lesson that has no "name").
func Parse(data []byte, name string, lim Limits) (*Lesson, error) {
	if len(data) > MaxSize {
		return nil, &Error{File: name, Msg: fmt.Sprintf("%s is larger than the limit of %s for a lesson file", infile.Bytes(int64(len(data))), infile.Bytes(MaxSize))}
	}
	idx, err := locate(data)
	if err != nil {
		var se *json.SyntaxError
		var te *trailingError
		var de *depthError
		line := 0
		switch {
		case errors.As(err, &se):
			line = lineAt(data, se.Offset)
		case errors.As(err, &te):
			line = lineAt(data, te.off)
		case errors.As(err, &de):
			return nil, &Error{File: name, Line: lineAt(data, de.off), Msg: err.Error()}
		}
		return nil, &Error{File: name, Line: line, Msg: "not valid JSON: " + err.Error()}
	}
	p := &parser{data: data, idx: idx, file: name, lim: lim}
	l, err := p.lesson()
	if err == nil && l.Name == "" {
		l.Name = strings.TrimSuffix(filepath.Base(name), ".json")
	}
	return l, err
}

type parser struct {
	data []byte
	idx  map[string]int64
	file string
	lim  Limits
}

func (p *parser) fail(field, format string, a ...any) error {
	line := 0
	if off, ok := p.idx[field]; ok {
		line = lineAt(p.data, off)
	} else {
		// A missing field: the line of the object that should hold it.
		parent := field
		for line == 0 && parent != "" {
			if i := strings.LastIndexAny(parent, ".["); i >= 0 {
				parent = parent[:i]
			} else {
				parent = ""
			}
			if off, ok := p.idx[parent]; ok {
				line = lineAt(p.data, off)
			}
		}
	}
	return &Error{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
}

// object decodes the raw object at path, refusing fields not in allowed
// and missing ones in required.
func (p *parser) object(path string, raw json.RawMessage, allowed, required []string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, p.fail(path, "must be an object {…}")
	}
	for k := range m {
		if !slices.Contains(allowed, k) {
			return nil, p.fail(join(path, fieldName(k)), "unknown field (allowed: %s)", strings.Join(allowed, ", "))
		}
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			return nil, p.fail(join(path, k), "missing")
		}
	}
	return m, nil
}

// str reads a string; multiline text may hold newlines and tabs, and no
// text any other control character (escape sequences, carriage returns,
// bidirectional overrides), which would reach the terminal and the
// handout.
func (p *parser) str(path string, raw json.RawMessage, multiline bool) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", p.fail(path, "must be a string")
	}
	if n, r, ok := badRune(s, multiline); ok {
		allowed := "none is allowed here"
		if multiline {
			allowed = "only newline and tab are allowed"
		}
		return "", p.fail(path, "control character %U (%s) at character %d: %s", r, runeName(r), n, allowed)
	}
	return s, nil
}

// badRune finds the first control character of s that text may not hold:
// its 1-based position and the character.
func badRune(s string, multiline bool) (int, rune, bool) {
	n := 0
	for _, r := range s {
		n++
		if multiline && (r == '\n' || r == '\t') {
			continue
		}
		if unicode.IsControl(r) || bidi(r) || r == '\u2028' || r == '\u2029' {
			return n, r, true
		}
	}
	return 0, 0, false
}

// bidi reports the bidirectional controls: marks, embeddings, overrides
// and isolates, which reorder what a terminal or an editor shows.
func bidi(r rune) bool {
	return r == '\u061c' || r == '\u200e' || r == '\u200f' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
}

// runeName names a refused character for people.
func runeName(r rune) string {
	switch {
	case r == 0x1b:
		return "escape"
	case r == '\r':
		return "carriage return"
	case r == '\n':
		return "newline"
	case r == '\t':
		return "tab"
	case r < 0x20 || r == 0x7f:
		return "C0 control"
	case r >= 0x80 && r <= 0x9f:
		return "C1 control"
	case bidi(r):
		return "bidirectional control"
	}
	return "line or paragraph separator"
}

// fieldName is a JSON key as an error shows it: quoted and cut short
// unless it is a plain short name.
func fieldName(k string) string {
	plain := len(k) > 0 && len(k) <= 40
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			plain = false
		}
	}
	if plain {
		return k
	}
	if utf8.RuneCountInString(k) > 40 {
		k = string([]rune(k)[:40]) + "…"
	}
	return strconv.Quote(k)
}

// shortJSON is a raw JSON value as an error quotes it: cut short.
func shortJSON(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if len(s) <= 40 && strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r > '~' }) < 0 {
		return s
	}
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "…"
	}
	return strconv.Quote(s)
}

func (p *parser) lesson() (*Lesson, error) {
	top, err := p.object("", p.data, lessonKeys, []string{"version", "title", "slides"})
	if err != nil {
		return nil, err
	}
	var v int
	if err := json.Unmarshal(top["version"], &v); err != nil || v != Version {
		return nil, p.fail("version", "%s is not a lesson version this app reads (want %d)", shortJSON(top["version"]), Version)
	}
	l := &Lesson{}
	if l.Title, err = p.str("title", top["title"], false); err != nil {
		return nil, err
	}
	if raw, ok := top["name"]; ok {
		if l.Name, err = p.str("name", raw, false); err != nil {
			return nil, err
		}
	}
	var slides []json.RawMessage
	if err := json.Unmarshal(top["slides"], &slides); err != nil {
		return nil, p.fail("slides", "must be a list of slides […]")
	}
	if len(slides) == 0 {
		return nil, p.fail("slides", "a lesson needs at least one slide")
	}
	settings := sim.PaperDemo()
	for i, raw := range slides {
		s, err := p.slide(fmt.Sprintf("slides[%d]", i), raw, settings)
		if err != nil {
			return nil, err
		}
		settings = s.Settings
		l.Slides = append(l.Slides, s)
	}
	return l, nil
}

func (p *parser) slide(path string, raw json.RawMessage, prev sim.Settings) (Slide, error) {
	var s Slide
	m, err := p.object(path, raw, slideKeys, []string{"title", "run", "caption"})
	if err != nil {
		return s, err
	}
	for _, f := range []struct {
		key       string
		dst       *string
		multiline bool
	}{{"title", &s.Title, false}, {"caption", &s.Caption, true}, {"question", &s.Question, true}, {"answer", &s.Answer, true}} {
		if raw, ok := m[f.key]; ok {
			if *f.dst, err = p.str(join(path, f.key), raw, f.multiline); err != nil {
				return s, err
			}
		}
	}
	if (s.Question == "") != (s.Answer == "") {
		missing := "answer"
		if s.Question == "" {
			missing = "question"
		}
		return s, p.fail(join(path, missing), "missing: a question needs its answer and an answer its question")
	}
	s.Settings = prev
	if raw, ok := m["scenario"]; ok {
		if s.Settings, err = p.scenario(join(path, "scenario"), raw, prev); err != nil {
			return s, err
		}
	}
	if s.Run, err = p.run(join(path, "run"), m["run"]); err != nil {
		return s, err
	}
	if raw, ok := m["train"]; ok {
		if s.Train, err = p.train(join(path, "train"), raw); err != nil {
			return s, err
		}
	}
	for _, f := range []struct{ key, text string }{{"caption", s.Caption}, {"question", s.Question}, {"answer", s.Answer}} {
		if err := p.placeholders(join(path, f.key), f.text, s.Settings.Lanes); err != nil {
			return s, err
		}
	}
	return s, nil
}

// The fields of a lesson, a slide, a slide's run and its scenario.
// scenarioKeys are those of a scenario file (sim.ScenarioFields: its own
// and every knob's), less version and t (the run sets the step).
var (
	lessonKeys   = []string{"version", "name", "title", "slides"}
	slideKeys    = []string{"title", "scenario", "run", "caption", "question", "answer", "train"}
	runKeys      = []string{"from", "to", "speed"}
	trainKeys    = []string{"patch", "start", "images", "lambda", "attention", "d", "epochs", "lr", "seed", "halve_every"}
	scenarioKeys = slices.DeleteFunc(sim.ScenarioFields(), func(k string) bool { return k == "version" || k == "t" })
)

func (p *parser) scenario(path string, raw json.RawMessage, prev sim.Settings) (sim.Settings, error) {
	m, err := p.object(path, raw, scenarioKeys, nil)
	if err != nil {
		return prev, err
	}
	// The previous slide's scenario with this slide's fields written over
	// it: each field is decoded alone so a wrong type names its field.
	sc := sim.ScenarioOf(&sim.Snapshot{Settings: prev})
	// Decoding a list reuses the slice it decodes into: these must not be
	// the slide before's.
	sc.Models, sc.Toggled = slices.Clone(sc.Models), slices.Clone(sc.Toggled)
	sc.Pushes = nil // a slide's pushes are its own
	if _, ok := m["toggled_patches"]; !ok {
		if _, ok := m[sim.MaskFraction.Field]; ok {
			sc.Toggled = nil // a new mask forgets the old hand-made one
		}
	}
	for _, k := range scenarioKeys {
		v, ok := m[k]
		if !ok {
			continue
		}
		one, _ := json.Marshal(map[string]json.RawMessage{k: v})
		dec := json.NewDecoder(bytes.NewReader(one))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sc); err != nil {
			if msg := wholeOutOfRange(k, v); msg != "" {
				return prev, p.fail(join(path, k), "%s", msg)
			}
			return prev, p.fail(join(path, k), "wrong type: %s", typeWant(k))
		}
	}
	st, err := sc.Settings()
	if err != nil {
		return prev, p.fail(path+"."+fieldOf(err.Error(), m), "%s", err)
	}
	for _, name := range st.Lanes {
		if p.lim.Model == nil {
			return prev, p.fail(join(path, "models"), "model %q cannot run here: no model was loaded", name)
		}
		if _, err := p.lim.Model(name); err != nil {
			return prev, p.fail(join(path, "models"), "model %q cannot run here: %v", name, err)
		}
	}
	if n, ok := p.lim.Digits[st.Split]; ok && (st.Index < 0 || st.Index >= n) {
		return prev, p.fail(join(path, "index"), "digit %d is out of range for the %s split (allowed 0 … %d)", st.Index, st.Split, n-1)
	}
	grid := p.maskGrid(st.Lanes)
	_, own := m["toggled_patches"]
	if !own && grid != p.maskGrid(prev.Lanes) {
		// As in the window: hand-masked patches are numbered on the mask
		// grid, and other models' grid has other patches.
		st.Toggled = nil
	}
	if err := st.CheckMask(grid, sim.ViaName); err != nil {
		if !own {
			return prev, p.fail(join(path, "toggled_patches"), "%s (the patches are the slide before's: give this slide its own toggled_patches)", err)
		}
		return prev, p.fail(join(path, "toggled_patches"), "%s", err)
	}
	return st, nil
}

// maskGrid is the patch side the mask of models lanes is drawn on
// (sim.MaskGrid, as the window draws it).
func (p *parser) maskGrid(lanes []string) int {
	var sides []int
	for _, name := range lanes {
		if p.lim.Model != nil {
			if info, err := p.lim.Model(name); err == nil {
				sides = append(sides, info.Patch)
			}
		}
	}
	return sim.MaskGrid(sides...)
}

// fieldOf finds which of the slide's fields an error from
// Scenario.Settings is about ("field lambda = …").
func fieldOf(msg string, m map[string]json.RawMessage) string {
	for _, k := range scenarioKeys {
		if strings.Contains(msg, "field "+k) {
			return k
		}
	}
	if strings.Contains(msg, "model") {
		return "models"
	}
	if strings.Contains(msg, "patch") || strings.Contains(msg, "toggled") {
		return "toggled_patches"
	}
	for k := range m {
		return k
	}
	return ""
}

// wholeOutOfRange says what is wrong with a whole-number field holding a
// whole number too large (or negative) for it — it is a number, so "wrong
// type" would mislead — or "" when v is not such a number.
func wholeOutOfRange(k string, v json.RawMessage) string {
	var lim string
	switch k {
	case "seed":
		lim = "0 … 18446744073709551615"
	case "index":
		lim = "0 … 9999, and below the split's number of digits"
	default:
		return ""
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return ""
	}
	if f != math.Trunc(f) && !math.IsInf(f, 0) {
		return ""
	}
	return fmt.Sprintf("%s = %s is out of range (allowed %s)", k, v, lim)
}

func typeWant(k string) string {
	switch k {
	case "split", "corruption", "attention":
		return "want a string"
	case "own_digit":
		return "want base64 of 784 bytes (a scenario file's own_digit)"
	case "models":
		return fmt.Sprintf("want a list of model names, e.g. [%q]", sim.ModelNames[0])
	case "toggled_patches":
		return "want a list of patch numbers"
	case "pushes":
		return `want a list of pushes, e.g. [{"t": 30, "kind": "kick", "sigma2": 0.5, "seed": 1}]`
	case "hopfield_async":
		return "want true or false"
	case "index", "seed":
		return "want a whole number"
	}
	if k, ok := sim.KnobOfField(k); ok {
		return "want a number (allowed " + k.Allowed() + ")"
	}
	return "want a number"
}

func (p *parser) run(path string, raw json.RawMessage) (Run, error) {
	var r Run
	m, err := p.object(path, raw, runKeys, []string{"to"})
	if err != nil {
		return r, err
	}
	if r.To, r.ToBest, err = p.step(join(path, "to"), m["to"]); err != nil {
		return r, err
	}
	r.From, r.FromBest = r.To, r.ToBest
	if raw, ok := m["from"]; ok {
		if r.From, r.FromBest, err = p.step(join(path, "from"), raw); err != nil {
			return r, err
		}
		if !r.FromBest && !r.ToBest && r.From > r.To {
			return r, p.fail(join(path, "from"), "%d is after the run's \"to\" (%d)", r.From, r.To)
		}
	}
	if raw, ok := m["speed"]; ok {
		if err := json.Unmarshal(raw, &r.Speed); err != nil || !(r.Speed > 0 && r.Speed <= 60) {
			return r, p.fail(join(path, "speed"), "must be steps a second, more than 0 and at most 60")
		}
	}
	return r, nil
}

// train reads a slide's live training: the Training window's fields,
// each checked alone (so an error names its field) and then together.
// Missing fields keep the window's defaults (sim.DefaultTrainingForm).
func (p *parser) train(path string, raw json.RawMessage) (*sim.TrainingForm, error) {
	m, err := p.object(path, raw, trainKeys, nil)
	if err != nil {
		return nil, err
	}
	f := sim.DefaultTrainingForm()
	for _, k := range trainKeys {
		v, ok := m[k]
		if !ok {
			continue
		}
		one := sim.DefaultTrainingForm()
		switch k {
		case "patch":
			if err := json.Unmarshal(v, &one.Patch); err != nil || (one.Patch != 2 && one.Patch != 4) {
				return nil, p.fail(join(path, k), "must be 2 or 4")
			}
			f.Patch = one.Patch
			continue
		case "start":
			var st string
			if err := json.Unmarshal(v, &st); err != nil || (st != "random" && st != "shipped") {
				return nil, p.fail(join(path, k), `must be "random" (new couplings) or "shipped" (the shipped weights, trained further)`)
			}
			f.FromShipped = st == "shipped"
			continue
		case "attention":
			if err := json.Unmarshal(v, &one.Attn); err != nil {
				return nil, p.fail(join(path, k), "wrong type: want %s", strings.Join(sim.Attentions, " or "))
			}
			f.Attn = one.Attn
		default:
			var num json.Number
			dec := json.NewDecoder(bytes.NewReader(v))
			dec.UseNumber()
			if err := dec.Decode(&num); err != nil {
				return nil, p.fail(join(path, k), "wrong type: want a number")
			}
			*map[string]*string{"images": &one.Images, "lambda": &one.Lambda, "d": &one.D, "epochs": &one.Epochs, "lr": &one.LR, "seed": &one.Seed, "halve_every": &one.HalveEvery}[k] = num.String()
			*map[string]*string{"images": &f.Images, "lambda": &f.Lambda, "d": &f.D, "epochs": &f.Epochs, "lr": &f.LR, "seed": &f.Seed, "halve_every": &f.HalveEvery}[k] = num.String()
		}
		if _, err := one.Settings(nil); err != nil {
			return nil, p.fail(join(path, k), "%s", err)
		}
	}
	st, err := f.Settings(nil)
	if err != nil {
		return nil, p.fail(path, "%s", err)
	}
	f.Attn = st.Attn.String() // "relu" is read as relu/seqlen, the window's name
	return &f, nil
}

// step reads a step of a run: a whole number from 0 to the longest run, or
// "t*".
func (p *parser) step(path string, raw json.RawMessage) (int, bool, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err == nil {
		switch v := v.(type) {
		case string:
			if v == "t*" {
				return 0, true, nil
			}
		case float64:
			if v == float64(int(v)) && v >= 0 && v <= sim.Steps.Max {
				return int(v), false, nil
			}
			return 0, false, p.fail(path, "%g is not a step from 0 to %d", v, int(sim.Steps.Max))
		}
	}
	return 0, false, p.fail(path, "must be a step number from 0 to %d or \"t*\"", int(sim.Steps.Max))
}

func (p *parser) placeholders(path, text string, lanes []string) error {
	for _, mm := range placeholder.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(Placeholders, mm[1]) {
			return p.fail(path, "unknown placeholder {%s} (allowed: %s)", mm[1], strings.Join(Placeholders, ", "))
		}
		if mm[2] != "" && !slices.Contains(lanes, mm[2]) {
			return p.fail(path, "placeholder {%s:%s}: %s is not among the slide's models (%s)", mm[1], mm[2], mm[2], strings.Join(lanes, ", "))
		}
	}
	return nil
}

// join extends a JSON path by a field name.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// shape is the part of a lesson's JSON whose places errors can name: the
// fields of an object and the elements of a list. Values outside it are
// checked as JSON but not indexed, so the index stays as small as the
// file (indexing every nested value by its path grew with the square of
// the nesting depth).
type shape struct {
	fields map[string]*shape // an object's known fields
	elem   *shape            // a list's elements
}

func shapeOf(keys []string, sub map[string]*shape) *shape {
	sh := &shape{fields: map[string]*shape{}}
	for _, k := range keys {
		sh.fields[k] = sub[k]
		if sh.fields[k] == nil {
			sh.fields[k] = &shape{}
		}
	}
	return sh
}

var lessonShape = shapeOf(lessonKeys, map[string]*shape{
	"slides": {elem: shapeOf(slideKeys, map[string]*shape{
		"scenario": shapeOf(scenarioKeys, nil),
		"run":      shapeOf(runKeys, nil),
		"train":    shapeOf(trainKeys, nil),
	})},
})

// locate maps the JSON paths of data that errors can name (e.g.
// slides[2].scenario.index, or an unknown field's) to the offset where
// each value starts, and refuses data nested deeper than MaxDepth.
func locate(data []byte) (map[string]int64, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	idx := map[string]int64{}
	// path is the value's (when sh is not nil); depth counts the objects
	// and lists it is in.
	var walk func(path string, sh *shape, depth int) error
	walk = func(path string, sh *shape, depth int) error {
		start := skipSpace(data, dec.InputOffset())
		if sh != nil {
			idx[path] = start
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		if depth >= MaxDepth {
			return &depthError{start}
		}
		switch d {
		case '{':
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				var sub *shape
				subPath := ""
				if sh != nil {
					if sub = sh.fields[key]; sub != nil {
						subPath = join(path, key)
					} else if sh.fields != nil {
						// An unknown field: its place, for the error
						// that refuses it, not its contents'.
						idx[join(path, fieldName(key))] = skipSpace(data, dec.InputOffset())
					}
				}
				if err := walk(subPath, sub, depth+1); err != nil {
					return err
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				var sub *shape
				subPath := ""
				if sh != nil && sh.elem != nil {
					sub, subPath = sh.elem, fmt.Sprintf("%s[%d]", path, i)
				}
				if err := walk(subPath, sub, depth+1); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	if err := walk("", lessonShape, 0); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, &trailingError{dec.InputOffset()}
	}
	return idx, nil
}

// depthError is data nested deeper than MaxDepth.
type depthError struct{ off int64 }

func (e *depthError) Error() string {
	return fmt.Sprintf("nested deeper than the limit of %d levels of objects and lists for a lesson file", MaxDepth)
}

// trailingError is data after the lesson's object.
type trailingError struct{ off int64 }

func (e *trailingError) Error() string { return "more data after the lesson's closing }" }

// skipSpace moves an offset past blanks, colons and commas to a value.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n:,", data[off]) >= 0 {
		off++
	}
	return off
}

// lineAt is the 1-based line of an offset.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}
