// Package lesson reads lesson files: an ordered list of slides, each
// setting a scenario, saying what runs, and showing a caption, optionally
// after a question whose answer the next key reveals. Numbers in captions
// come from the running models through placeholders, never typed in.
//
// A lesson file is JSON (version 1; README "Lessons" has a complete
// example). Every error names the file, the line and the field, and a
// refused file changes nothing.
package lesson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"attractorlab/sim"
)

// Version is the lesson format this code reads.
const Version = 1

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
// are and the models that loaded.
type Limits struct {
	Digits map[sim.Split]int // how many digits each split has
	Models []string          // model names available
}

// Placeholders are the names a caption may use, each as {name} (the
// slide's first model) or {name:model}.
var Placeholders = []string{"t_star", "mse_t_star", "mse_input", "mse_now", "nearest_label", "nearest_corr", "corr_mean_digit"}

var placeholder = regexp.MustCompile(`\{([a-z_]+)(?::([a-z0-9-]+))?\}`)

// Parse reads and checks a lesson file (name is used in errors, and its
// base name without .json names a lesson that has no "name").
func Parse(data []byte, name string, lim Limits) (*Lesson, error) {
	idx, err := locate(data)
	if err != nil {
		var se *json.SyntaxError
		var te *trailingError
		line := 0
		switch {
		case errors.As(err, &se):
			line = lineAt(data, se.Offset)
		case errors.As(err, &te):
			line = lineAt(data, te.off)
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
			return nil, p.fail(join(path, k), "unknown field (allowed: %s)", strings.Join(allowed, ", "))
		}
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			return nil, p.fail(join(path, k), "missing")
		}
	}
	return m, nil
}

func (p *parser) str(path string, raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", p.fail(path, "must be a string")
	}
	return s, nil
}

func (p *parser) lesson() (*Lesson, error) {
	top, err := p.object("", p.data, []string{"version", "name", "title", "slides"}, []string{"version", "title", "slides"})
	if err != nil {
		return nil, err
	}
	var v int
	if err := json.Unmarshal(top["version"], &v); err != nil || v != Version {
		return nil, p.fail("version", "%s is not a lesson version this app reads (want %d)", strings.TrimSpace(string(top["version"])), Version)
	}
	l := &Lesson{}
	if l.Title, err = p.str("title", top["title"]); err != nil {
		return nil, err
	}
	if raw, ok := top["name"]; ok {
		if l.Name, err = p.str("name", raw); err != nil {
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
	m, err := p.object(path, raw, []string{"title", "scenario", "run", "caption", "question", "answer"}, []string{"title", "run", "caption"})
	if err != nil {
		return s, err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"title", &s.Title}, {"caption", &s.Caption}, {"question", &s.Question}, {"answer", &s.Answer}} {
		if raw, ok := m[f.key]; ok {
			if *f.dst, err = p.str(join(path, f.key), raw); err != nil {
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
	for _, f := range []struct{ key, text string }{{"caption", s.Caption}, {"question", s.Question}, {"answer", s.Answer}} {
		if err := p.placeholders(join(path, f.key), f.text, s.Settings.Lanes); err != nil {
			return s, err
		}
	}
	return s, nil
}

// scenarioKeys are a slide's scenario fields: those of a scenario file
// (docs/maths.md and README), less version and t (the run sets the step).
var scenarioKeys = []string{"split", "index", "corruption", "mask_fraction", "noise_sigma2", "seed", "toggled_patches",
	"models", "lambda", "gamma", "attention", "hopfield_beta", "hopfield_k", "hopfield_async"}

func (p *parser) scenario(path string, raw json.RawMessage, prev sim.Settings) (sim.Settings, error) {
	m, err := p.object(path, raw, scenarioKeys, nil)
	if err != nil {
		return prev, err
	}
	// The previous slide's scenario with this slide's fields written over
	// it: each field is decoded alone so a wrong type names its field.
	sc := sim.ScenarioOf(&sim.Snapshot{Settings: prev})
	if _, ok := m["toggled_patches"]; !ok {
		if _, ok := m["mask_fraction"]; ok {
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
			return prev, p.fail(join(path, k), "wrong type: %s", typeWant(k))
		}
	}
	st, err := sc.Settings()
	if err != nil {
		return prev, p.fail(path+"."+fieldOf(err.Error(), m), "%s", err)
	}
	for _, name := range st.Lanes {
		if !slices.Contains(p.lim.Models, name) {
			return prev, p.fail(join(path, "models"), "model %q is not one of %s", name, strings.Join(p.lim.Models, ", "))
		}
	}
	if n, ok := p.lim.Digits[st.Split]; ok && (st.Index < 0 || st.Index >= n) {
		return prev, p.fail(join(path, "index"), "digit %d is out of range for the %s split (allowed 0 … %d)", st.Index, st.Split, n-1)
	}
	return st, nil
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

func typeWant(k string) string {
	switch k {
	case "split", "corruption", "attention":
		return "want a string"
	case "models":
		return `want a list of model names, e.g. ["bsa-p2"]`
	case "toggled_patches":
		return "want a list of patch numbers"
	case "hopfield_async":
		return "want true or false"
	case "index", "seed", "hopfield_k":
		return "want a whole number"
	}
	return "want a number"
}

func (p *parser) run(path string, raw json.RawMessage) (Run, error) {
	var r Run
	m, err := p.object(path, raw, []string{"from", "to", "speed"}, []string{"to"})
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

// locate maps every JSON path of data (e.g. slides[2].scenario.index) to
// the offset where its value starts.
func locate(data []byte) (map[string]int64, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	idx := map[string]int64{}
	var walk func(path string) error
	walk = func(path string) error {
		idx[path] = skipSpace(data, dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		switch d {
		case '{':
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				if err := walk(join(path, key)); err != nil {
					return err
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				if err := walk(fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, &trailingError{dec.InputOffset()}
	}
	return idx, nil
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
