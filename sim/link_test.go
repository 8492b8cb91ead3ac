package sim

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unicode"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// linkLessons stand for the shipped lessons' names (sim cannot import
// sim/lesson, which lists them: ui and app pass lesson.ShippedNames()).
var linkLessons = []string{"transient-memory", "masking", "global-attractor"}

// linkScenarios are settings a link must carry whole: toggled patches,
// several models, every parameter away from its default, t > 0.
func linkScenarios() []struct {
	name string
	st   Settings
	t    int
} {
	toggled := DefaultSettings()
	toggled.Index = 17
	toggled.Corruption.Seed = 3
	toggled.Corruption.Fraction = 0.45
	toggled.Toggled = []int{5, 48, 0, 30}
	toggled.Lanes = []string{"bsa-p2", "bsa-p4"}
	params := Settings{Split: TrainSplit, Index: 9999,
		Corruption: Corruption{Kind: Noise, Fraction: 0.9, Sigma2: 3.95, Seed: 18446744073709551615},
		Lanes:      []string{"hopfield-classic", "block", "hopfield", "bsa-p2"},
		Dyn:        models.Dynamics{Lambda: 2.7, Gamma: 0.35, Attn: models.ReluSeqlen},
		Hop:        HopfieldParams{Beta: 0.0123, K: 1000, Async: true}}
	vit := PaperDemo()
	vit.Lanes = []string{"vit"}
	vit.Corruption.Sigma2 = 0
	return []struct {
		name string
		st   Settings
		t    int
	}{
		{"defaults", DefaultSettings(), 0},
		{"paper demo at t*", PaperDemo(), 30},
		{"toggled patches, two models", toggled, 1},
		{"every parameter, four models", params, 1000},
		{"vit, nothing to repair", vit, 5},
	}
}

// TestLinkRoundTrip: a link carries a scenario whole; the reader, with
// and without the models at hand, gives back the same settings and step.
func TestLinkRoundTrip(t *testing.T) {
	cat := linkCatalogue(t)
	for _, c := range linkScenarios() {
		t.Run(c.name, func(t *testing.T) {
			for _, base := range []string{DefaultLinkBase, "https://example.org/attractor-lab/index.html", ""} {
				link, err := EncodeLink(base, c.st, c.t)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(link, base+"#s=") || len(link) > len(base)+600 {
					t.Fatalf("link %q (%d characters)", link, len(link))
				}
				if !IsLink(link) {
					t.Fatalf("IsLink(%q) = false", link)
				}
				for name, parse := range map[string]func(string, []string) (LinkTarget, error){"plain": ParseLink, "catalogue": cat.ParseLink} {
					got, err := parse(link, linkLessons)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if got.Lesson != "" || got.T != c.t || !reflect.DeepEqual(got.Settings, c.st) {
						t.Fatalf("%s: got %+v t=%d, want %+v t=%d", name, got.Settings, got.T, c.st, c.t)
					}
				}
			}
		})
	}
}

// TestLinkHoldsTheScenarioFile: a link's payload is the scenario file
// WriteScenario writes, without its indentation.
func TestLinkHoldsTheScenarioFile(t *testing.T) {
	c := linkScenarios()[2]
	link, err := EncodeLink("", c.st, c.t)
	if err != nil {
		t.Fatal(err)
	}
	js, err := inflateLink(strings.TrimPrefix(link, "#s="))
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if err := WriteScenario(&file, &Snapshot{Settings: c.st, T: c.t}); err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(strings.Fields(file.String()), ""); string(js) != want {
		t.Fatalf("payload %s\nwant      %s", js, want)
	}
}

// linkCatalogue is the catalogue of the embedded models.
func linkCatalogue(t testing.TB) *Catalogue {
	t.Helper()
	data, err := mnist.LoadData("")
	if err != nil {
		t.Fatal(err)
	}
	return NewCatalogue(data.Train, WeightFiles{})
}

// payloadOf deflates and encodes b as a link's PAYLOAD.
func payloadOf(t testing.TB, b []byte) string {
	t.Helper()
	var z bytes.Buffer
	w, err := flate.NewWriter(&z, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	w.Close()
	return base64.RawURLEncoding.EncodeToString(z.Bytes())
}

// TestLinkRefusesWhatAFileRefuses: a link whose scenario is bad is refused
// with the message the scenario reader gives a bad file, named "link".
func TestLinkRefusesWhatAFileRefuses(t *testing.T) {
	cat := linkCatalogue(t)
	good, err := os.ReadFile("testdata/scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(old, new string) []byte {
		b := bytes.Replace(good, []byte(old), []byte(new), 1)
		if bytes.Equal(b, good) {
			t.Fatalf("testdata/scenario.json has no %s", old)
		}
		return b
	}
	for _, c := range []struct {
		name string
		js   []byte
		want string
		cat  bool // only the catalogue refuses it
	}{
		{"unknown field", edit(`"t": 7`, `"t": 7, "colour": "red"`), `link: unknown field "colour"`, false},
		{"missing field", edit(`"gamma": 0.5,`, ``), "link: field gamma is missing", false},
		{"out of range", edit(`"lambda": 1`, `"lambda": 20`), "link: field lambda = 20 is out of range (allowed 0.1 … 10)", false},
		{"t out of range", edit(`"t": 7`, `"t": 1001`), "link: field t = 1001 is out of range (allowed 0 … 1000)", false},
		{"not a whole number", edit(`"hopfield_k": 10`, `"hopfield_k": 10.5`), "link: field hopfield_k = 10.5 is not a whole number (allowed 1 … 1000)", false},
		{"unknown model", edit(`"bsa-p4"]`, `"gpt"]`), `link: model "gpt" is not one of`, false},
		{"version", edit(`"version": 1`, `"version": 3`), "link: field version = 3: written by a newer Attractor Lab", false},
		{"unknown data set", edit(`"version": 1`, `"version": 2, "dataset": "cifar"`), `link: field dataset = "cifar" is not a data set here (allowed: mnist, fashion-mnist, or folder:NAME`, false},
		{"not JSON", []byte("hello"), "link: not a scenario file: invalid character", false},
		{"patch off the models' grid", edit(`[5]`, `[196]`), "link: field toggled_patches: patch 196 is out of range (allowed 0 … 48", true},
		{"patch off every grid", edit(`[5]`, `[784]`), "link: field toggled_patches: patch 784 is out of range (allowed 0 … 48", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			link := DefaultLinkBase + "#s=" + payloadOf(t, c.js)
			_, err := cat.ParseLink(link, linkLessons)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v, want %s…", err, c.want)
			}
			_, _, ferr := cat.ReadScenario(bytes.NewReader(c.js), "link")
			if ferr == nil || ferr.Error() != err.Error() {
				t.Fatalf("the link's error %q is not the file reader's %q", err, ferr)
			}
			_, perr := ParseLink(link, linkLessons)
			if c.cat != (perr == nil) {
				t.Fatalf("without the catalogue: %v", perr)
			}
		})
	}
}

// TestLinkCutShort: a link cut anywhere inside its scenario says so, not
// which character is wrong.
func TestLinkCutShort(t *testing.T) {
	for _, sc := range []Settings{PaperDemo(), DefaultSettings()} {
		good, err := EncodeLink(DefaultLinkBase, sc, 30)
		if err != nil {
			t.Fatal(err)
		}
		payload := strings.TrimPrefix(good, DefaultLinkBase+"#s=")
		for n := 1; n < len(payload); n++ {
			_, err := ParseLink(DefaultLinkBase+"#s="+payload[:n], nil)
			if err == nil || !strings.Contains(err.Error(), "this link is cut short") {
				t.Fatalf("cut after %d of %d characters: %v", n, len(payload), err)
			}
		}
	}
}

// TestLinkRefusals: links that are not a scenario or a shipped lesson are
// refused with a message that says why; none panics.
func TestLinkRefusals(t *testing.T) {
	good, err := EncodeLink(DefaultLinkBase, PaperDemo(), 30)
	if err != nil {
		t.Fatal(err)
	}
	payload := strings.TrimPrefix(good, DefaultLinkBase+"#s=")
	z, _ := base64.RawURLEncoding.DecodeString(payload)
	trailing := base64.RawURLEncoding.EncodeToString(append(z, 0, 1, 2))
	truncated := payload[:len(payload)/2&^3]
	big := payloadOf(t, bytes.Repeat([]byte(" "), MaxLinkScenario+1))
	for _, c := range []struct{ name, link, want string }{
		{"bad base64", DefaultLinkBase + "#s=" + payload[:10] + "$" + payload[11:], "link: the scenario is not base64url (A–Z, a–z, 0–9, - and _, without padding): character 11 is wrong"},
		{"padding", DefaultLinkBase + "#s=" + base64.URLEncoding.EncodeToString(z[:len(z)-len(z)%3+1]), "link: the scenario is not base64url"},
		{"standard base64", DefaultLinkBase + "#s=" + strings.NewReplacer("-", "+", "_", "/").Replace(payload) + "+/", "link: the scenario is not base64url"},
		{"truncated", DefaultLinkBase + "#s=" + truncated, fmt.Sprintf("link: this link is cut short: its scenario (#s=…) ends early, after %d characters. Copy the whole link again", len(truncated))},
		{"not deflated", DefaultLinkBase + "#s=" + base64.RawURLEncoding.EncodeToString([]byte{0xff, 0xff}), "link: the scenario is not deflated data: flate: corrupt input"},
		{"trailing bytes", DefaultLinkBase + "#s=" + trailing, "link: 3 bytes after the end of the deflated scenario"},
		{"inflates too big", DefaultLinkBase + "#s=" + big, "link: the scenario inflates to more than 16.0 KB, the limit of a link's scenario"},
		{"payload too long", DefaultLinkBase + "#s=" + strings.Repeat("A", MaxLinkPayload+1), "link: the scenario is 8193 characters, more than the limit of 8192"},
		{"link too long", DefaultLinkBase + "?x=" + strings.Repeat("a", MaxLinkLength), "link: 16409 characters, more than the limit of 16384 for a link"},
		{"empty scenario", DefaultLinkBase + "#s=", "link: the scenario (#s=) is empty"},
		{"other fragment", DefaultLinkBase + "#top", `link: the part after # is "top", not a scenario (#s=…)`},
		{"neither", DefaultLinkBase, "link: names neither a scenario (#s=…) nor a lesson (?lesson=…)"},
		{"nothing", "", "link: names neither a scenario"},
		{"both", DefaultLinkBase + "?lesson=masking#s=" + payload, "link: names both a scenario (#s=…) and a lesson (?lesson=…): a link opens one"},
		{"unknown lesson", DefaultLinkBase + "?lesson=hopfeld", `link: lesson "hopfeld" is not a shipped lesson (transient-memory, masking, global-attractor)`},
		{"empty lesson", DefaultLinkBase + "?lesson=", `link: lesson "" is not a shipped lesson (transient-memory, masking, global-attractor)`},
		{"lesson twice", DefaultLinkBase + "?lesson=masking&lesson=masking", "link: names 2 lessons (?lesson= given 2 times): a link opens one"},
		{"a lesson's file", DefaultLinkBase + "?lesson=%2Fetc%2Fpasswd", `link: lesson "/etc/passwd" is not a shipped lesson`},
		{"control characters", DefaultLinkBase + "?lesson=%1b%5b2J" + strings.Repeat("x", 100), `link: lesson "\x1b[2Jxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"… is not a shipped lesson`},
		{"bad escape", DefaultLinkBase + "?lesson=%zz", `link: the query after ? is not valid: invalid URL escape "%zz"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseLink(c.link, linkLessons)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v, want %s…", err, c.want)
			}
		})
	}
}

// TestLinkDeflateBomb: a payload at the size limit that inflates to
// megabytes is refused after reading the limit, without inflating it all.
func TestLinkDeflateBomb(t *testing.T) {
	const inflated = 6 << 20
	payload := payloadOf(t, bytes.Repeat([]byte{' '}, inflated))
	if len(payload) > MaxLinkPayload {
		t.Fatalf("the bomb's payload is %d characters, over the limit: make it smaller", len(payload))
	}
	link := "#s=" + payload
	var err error
	got := allocatedBytes(func() { _, err = ParseLink(link, nil) })
	if err == nil || !strings.Contains(err.Error(), "inflates to more than") {
		t.Fatalf("error %v", err)
	}
	if got > inflated/8 {
		t.Fatalf("refusing a %d-byte bomb allocated %d bytes", inflated, got)
	}
	t.Logf("a %d-character payload inflating to %d bytes: refused after allocating %d bytes", len(payload), inflated, got)
}

// allocatedBytes is what f allocates.
func allocatedBytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLessonLinks: ?lesson=NAME names a shipped lesson whatever the page
// address and its other query parameters.
func TestLessonLinks(t *testing.T) {
	for _, link := range []string{
		DefaultLinkBase + "?lesson=masking",
		"https://example.org/lab/?utm_source=mail&lesson=masking",
		"?lesson=masking#",
		"  ?lesson=mask%69ng\n",
	} {
		if !IsLink(link) {
			t.Errorf("IsLink(%q) = false", link)
		}
		got, err := ParseLink(link, linkLessons)
		if err != nil || got.Lesson != "masking" {
			t.Errorf("%q: %+v, %v", link, got, err)
		}
	}
	for _, plain := range []string{"", DefaultLinkBase, "https://example.org/?utm_source=mail", "https://example.org/#"} {
		if IsLink(plain) {
			t.Errorf("IsLink(%q) = true", plain)
		}
	}
}

// TestEncodeLinkRefuses: settings a scenario file could not hold, and page
// addresses a link cannot start with, are refused.
func TestEncodeLinkRefuses(t *testing.T) {
	st := DefaultSettings()
	st.Dyn.Lambda = 20
	if _, err := EncodeLink(DefaultLinkBase, st, 0); err == nil || !strings.Contains(err.Error(), "field lambda = 20 is out of range") {
		t.Fatalf("λ 20: %v", err)
	}
	if _, err := EncodeLink(DefaultLinkBase, DefaultSettings(), 1001); err == nil || !strings.Contains(err.Error(), "field t = 1001 is out of range") {
		t.Fatalf("t 1001: %v", err)
	}
	for base, want := range map[string]string{
		"localhost:8080":                              "is not an http:// or https:// address",
		"ftp://example.org/":                          "is not an http:// or https:// address",
		"https:///path":                               "is not an http:// or https:// address",
		"https://example.org/?a=1":                    `holds '?': the link adds its own`,
		"https://example.org/#top":                    `holds '#'`,
		"https://example.org/a b":                     "holds a space or a control character at byte 21",
		"https://example.org/\x1b[2J":                 "holds a space or a control character",
		"https://" + strings.Repeat("a", MaxLinkBase): "more than the limit of 2048",
	} {
		if err := CheckLinkBase(base); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want …%s", base, err, want)
		}
		if _, err := EncodeLink(base, DefaultSettings(), 0); err == nil {
			t.Errorf("EncodeLink took the address %q", base)
		}
	}
	for _, base := range []string{"", DefaultLinkBase, "https://example.org", "http://127.0.0.1:9000/lab/index.html"} {
		if err := CheckLinkBase(base); err != nil {
			t.Errorf("%q: %v", base, err)
		}
	}
}

// FuzzParseLink: ParseLink never panics; a refusal starts with "link: "
// and holds no control character; what it accepts is a shipped lesson or
// a scenario the window takes, which makes a link that reads back the
// same; what the catalogue accepts, the plain reader accepts.
func FuzzParseLink(f *testing.F) {
	for _, c := range linkScenarios() {
		link, err := EncodeLink(DefaultLinkBase, c.st, c.t)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(link)
	}
	seeds, _ := filepath.Glob("testdata/*.json")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add("#s=" + payloadOf(f, b))
	}
	f.Add(DefaultLinkBase + "?lesson=masking")
	f.Add("?lesson=x&lesson=y#s=AAAA")
	f.Add("#s=" + payloadOf(f, bytes.Repeat([]byte("{"), 100)))
	cat := linkCatalogue(f)
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := ParseLink(raw, linkLessons)
		cgot, cerr := cat.ParseLink(raw, linkLessons)
		for _, e := range []error{err, cerr} {
			if e == nil {
				continue
			}
			msg := e.Error()
			if !strings.HasPrefix(msg, "link: ") || strings.IndexFunc(msg, unicode.IsControl) >= 0 {
				t.Fatalf("error %q", msg)
			}
		}
		if cerr == nil && err != nil {
			t.Fatalf("the catalogue accepted what the plain reader refused (%v)", err)
		}
		if err != nil {
			return
		}
		if got.Lesson != "" {
			if !strings.Contains(strings.Join(linkLessons, "\n")+"\n", got.Lesson+"\n") || cgot.Lesson != got.Lesson {
				t.Fatalf("accepted lesson %q", got.Lesson)
			}
			return
		}
		st := got.Settings
		if st.Validate(ViaField) != nil || got.T < 0 || got.T > int(Steps.Max) || !patchesOf(st.Toggled, models.Pixels) {
			t.Fatalf("accepted an invalid scenario: %+v t=%d", st, got.T)
		}
		again, err := EncodeLink("", st, got.T)
		if err != nil {
			t.Fatalf("accepted %+v t=%d, which makes no link: %v", st, got.T, err)
		}
		back, err := ParseLink(again, nil)
		if err != nil || back.T != got.T || !reflect.DeepEqual(back.Settings, st) {
			t.Fatalf("%+v t=%d reads back as %+v t=%d (%v)", st, got.T, back.Settings, back.T, err)
		}
		if cerr == nil {
			g := 28 / cat.MaskGrid(cgot.Settings.Lanes)
			if !patchesOf(cgot.Settings.Toggled, g*g) {
				t.Fatalf("accepted patches %v on a %d×%d grid", cgot.Settings.Toggled, g, g)
			}
		}
	})
}
