package sim

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"attractorlab/models/infile"
)

// A link is an address that opens the window on a scenario or a lesson:
//
//	BASE#s=PAYLOAD   a whole scenario: PAYLOAD is the scenario file's JSON
//	                 (as WriteScenario writes it, without the indentation),
//	                 deflated (compress/flate) and base64url-encoded without
//	                 padding
//	BASE?lesson=NAME a shipped lesson, by name
//
// BASE is the address of the hosted page (DefaultLinkBase unless the user
// chose another). A scenario link is read by the scenario reader, with
// every check a scenario file gets, and refused with the same messages,
// prefixed by "link: ".

// DefaultLinkBase is the page address links start with until the user
// chooses another: the page `make serve-web` serves.
const DefaultLinkBase = "http://localhost:8080/"

// The bounds of a link. A scenario's payload is a few hundred characters;
// the inflated JSON is bounded so that a small payload that inflates
// without end (a deflate bomb) is refused after MaxLinkScenario bytes.
const (
	MaxLinkLength   = 16 * infile.KB // characters of a whole link
	MaxLinkPayload  = 8 * infile.KB  // characters of a scenario's PAYLOAD
	MaxLinkScenario = 16 * infile.KB // bytes of a scenario's inflated JSON
	MaxLinkBase     = 2 * infile.KB  // characters of a page address
)

// LinkTarget is what a link opens: a shipped lesson (Lesson, by name), or
// else a scenario (Settings at step T).
type LinkTarget struct {
	Lesson   string
	Settings Settings
	T        int
}

// CheckLinkBase refuses a page address links cannot start with: one that
// is not an http:// or https:// address, that already holds a query (?) or
// a fragment (#) — the link adds its own — or that holds spaces or control
// characters. An empty address is allowed: it makes relative links
// ("#s=…"), which open on the page they are followed from.
func CheckLinkBase(base string) error {
	if base == "" {
		return nil
	}
	if len(base) > MaxLinkBase {
		return fmt.Errorf("link address: %d characters, more than the limit of %d", len(base), MaxLinkBase)
	}
	if i := strings.IndexFunc(base, func(r rune) bool { return r == utf8.RuneError || unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return fmt.Errorf("link address %s holds a space or a control character at byte %d", quoteShort(base), i)
	}
	if i := strings.IndexAny(base, "?#"); i >= 0 {
		return fmt.Errorf("link address %s holds %q: the link adds its own ?lesson= or #s= part", quoteShort(base), base[i])
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("link address %s is not an http:// or https:// address (like %s)", quoteShort(base), DefaultLinkBase)
	}
	return nil
}

// EncodeLink makes the link to settings st at step t on the page at base
// (CheckLinkBase). The link is refused unless the scenario reader takes
// it back: what EncodeLink writes, ParseLink reads.
func EncodeLink(base string, st Settings, t int) (string, error) {
	if err := CheckLinkBase(base); err != nil {
		return "", err
	}
	var js bytes.Buffer
	if err := WriteScenario(&js, &Snapshot{Settings: st, T: t}); err != nil {
		return "", err
	}
	if _, _, err := ReadScenario(bytes.NewReader(js.Bytes()), "link"); err != nil {
		return "", err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, js.Bytes()); err != nil {
		return "", err
	}
	var z bytes.Buffer
	w, err := flate.NewWriter(&z, flate.BestCompression)
	if err != nil {
		return "", err
	}
	w.Write(compact.Bytes()) // a bytes.Buffer does not fail
	if err := w.Close(); err != nil {
		return "", err
	}
	payload := base64.RawURLEncoding.EncodeToString(z.Bytes())
	if len(payload) > MaxLinkPayload {
		return "", fmt.Errorf("link: the scenario takes %d characters, more than the limit of %d", len(payload), MaxLinkPayload)
	}
	return base + "#s=" + payload, nil
}

// ParseLink reads a link (EncodeLink's, or BASE?lesson=NAME with NAME
// one of lessons, the shipped lessons' names). A scenario is checked as
// ReadScenario checks a file (without the models at hand: see
// Catalogue.ParseLink); every error starts with "link: ". The page
// address before the ? or # is not checked: a link opens wherever it was
// made. Query parameters other than lesson belong to the page and are
// ignored.
func ParseLink(raw string, lessons []string) (LinkTarget, error) {
	return parseLink(raw, lessons, func(js []byte) (Settings, int, error) {
		return ReadScenario(bytes.NewReader(js), "link")
	})
}

// ParseLink is ParseLink with the scenario checked against the models at
// hand, as Catalogue.ReadScenario checks a file: every model must be
// available here, and the hand-masked patches must be patches of their
// mask grid.
func (c *Catalogue) ParseLink(raw string, lessons []string) (LinkTarget, error) {
	return parseLink(raw, lessons, func(js []byte) (Settings, int, error) {
		return c.ReadScenario(bytes.NewReader(js), "link")
	})
}

// IsLink reports whether raw names something to open: a fragment (#…) or
// a lesson query parameter. A page address without either (the hosted
// page opened plainly) is not a link.
func IsLink(raw string) bool {
	_, query, frag, _ := splitLink(strings.TrimSpace(raw))
	if frag != "" {
		return true
	}
	for _, part := range strings.Split(query, "&") {
		key, _, _ := strings.Cut(part, "=")
		if k, err := url.QueryUnescape(key); key == "lesson" || (err == nil && k == "lesson") {
			return true
		}
	}
	return false
}

// splitLink cuts a link at its first # (the fragment) and the ? before it
// (the query).
func splitLink(raw string) (base, query, frag string, hasFrag bool) {
	rest := raw
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		rest, frag, hasFrag = raw[:i], raw[i+1:], true
	}
	base = rest
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		base, query = rest[:i], rest[i+1:]
	}
	return base, query, frag, hasFrag
}

func parseLink(raw string, lessons []string, read func([]byte) (Settings, int, error)) (LinkTarget, error) {
	raw = strings.TrimSpace(raw)
	if len(raw) > MaxLinkLength {
		return LinkTarget{}, fmt.Errorf("link: %d characters, more than the limit of %d for a link", len(raw), MaxLinkLength)
	}
	_, query, frag, _ := splitLink(raw)
	q, err := url.ParseQuery(query)
	if err != nil {
		return LinkTarget{}, fmt.Errorf("link: the query after ? is not valid: %v", err)
	}
	names, isLesson := q["lesson"]
	if frag != "" && !strings.HasPrefix(frag, "s=") {
		return LinkTarget{}, fmt.Errorf("link: the part after # is %s, not a scenario (#s=…)", quoteShort(frag))
	}
	isScenario := frag != ""
	switch {
	case isScenario && isLesson:
		return LinkTarget{}, errors.New("link: names both a scenario (#s=…) and a lesson (?lesson=…): a link opens one")
	case !isScenario && !isLesson:
		return LinkTarget{}, errors.New("link: names neither a scenario (#s=…) nor a lesson (?lesson=…)")
	case isLesson:
		if len(names) != 1 {
			return LinkTarget{}, fmt.Errorf("link: names %d lessons (?lesson= given %d times): a link opens one", len(names), len(names))
		}
		name := names[0]
		for _, l := range lessons {
			if l == name {
				return LinkTarget{Lesson: name}, nil
			}
		}
		return LinkTarget{}, fmt.Errorf("link: lesson %s is not a shipped lesson (%s)", quoteShort(name), strings.Join(lessons, ", "))
	}
	js, err := inflateLink(frag[len("s="):])
	if err != nil {
		return LinkTarget{}, err
	}
	st, t, err := read(js)
	if err != nil {
		return LinkTarget{}, err
	}
	return LinkTarget{Settings: st, T: t}, nil
}

// inflateLink decodes a scenario's PAYLOAD into its JSON, reading at most
// MaxLinkScenario bytes and one more (to refuse a larger one).
func inflateLink(payload string) ([]byte, error) {
	if payload == "" {
		return nil, errors.New("link: the scenario (#s=) is empty")
	}
	if len(payload) > MaxLinkPayload {
		return nil, fmt.Errorf("link: the scenario is %d characters, more than the limit of %d", len(payload), MaxLinkPayload)
	}
	z, err := base64.RawURLEncoding.Strict().DecodeString(payload)
	if err != nil {
		var ce base64.CorruptInputError
		if errors.As(err, &ce) && int(ce) >= len(payload)-4 && base64url(payload) {
			// Every character is right but the last group is incomplete
			// (or its spare bits are not zero): the link was cut.
			return nil, errCutShort(payload)
		}
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("link: the scenario is not base64url (A–Z, a–z, 0–9, - and _, without padding): character %d is wrong", int64(ce)+1)
		}
		return nil, fmt.Errorf("link: the scenario is not base64url: %v", err)
	}
	zr := bytes.NewReader(z)
	fr := flate.NewReader(zr)
	js, err := io.ReadAll(io.LimitReader(fr, MaxLinkScenario+1))
	switch {
	case len(js) > MaxLinkScenario:
		return nil, fmt.Errorf("link: the scenario inflates to more than %s, the limit of a link's scenario", infile.Bytes(MaxLinkScenario))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, errCutShort(payload)
	case err != nil:
		return nil, fmt.Errorf("link: the scenario is not deflated data: %v", err)
	case zr.Len() > 0:
		return nil, fmt.Errorf("link: %d bytes after the end of the deflated scenario", zr.Len())
	}
	return js, nil
}

// errCutShort says a link's scenario ends early: the usual fate of a link
// copied by hand, wrapped in an e-mail or cut by a chat program.
func errCutShort(payload string) error {
	return fmt.Errorf("link: this link is cut short: its scenario (#s=…) ends early, after %d characters. Copy the whole link again", len(payload))
}

// base64url reports whether every character of s is in base64url's alphabet.
func base64url(s string) bool {
	for _, c := range []byte(s) {
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// quoteShort quotes s for an error message, cut to its first 40
// characters.
func quoteShort(s string) string {
	const most = 40
	if utf8.RuneCountInString(s) <= most {
		return fmt.Sprintf("%q", s)
	}
	r := []rune(s)
	return fmt.Sprintf("%q…", string(r[:most]))
}
