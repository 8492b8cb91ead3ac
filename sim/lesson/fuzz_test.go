package lesson

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"attractorlab/assets"
	"attractorlab/sim"
)

// FuzzParseLesson: Parse never panics; a refusal is an *Error naming the
// file, with no control character in its message; an accepted lesson's
// text holds none but newlines and tabs in captions, and every slide's
// scenario is one the window takes.
func FuzzParseLesson(f *testing.F) {
	shipped, _ := fs.Glob(assets.Lessons, "lessons/*.json")
	for _, p := range shipped {
		b, err := assets.Lessons.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	seeds, _ := filepath.Glob("testdata/*/*.json")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(good))
	lim, _, cat := testLimits(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data, "fuzz.json", lim)
		if err != nil {
			var le *Error
			if !errors.As(err, &le) || le.File != "fuzz.json" {
				t.Fatalf("error %q is not an *Error naming the file", err)
			}
			if n, r, bad := badRune(err.Error(), false); bad {
				t.Fatalf("error %q holds %U at %d", err, r, n)
			}
			return
		}
		for _, s := range []string{l.Name, l.Title} {
			if _, _, bad := badRune(s, false); bad {
				t.Fatalf("accepted %q", s)
			}
		}
		for k, s := range l.Slides {
			if _, _, bad := badRune(s.Title, false); bad {
				t.Fatalf("slide %d: accepted title %q", k, s.Title)
			}
			for _, text := range []string{s.Caption, s.Question, s.Answer} {
				if _, _, bad := badRune(text, true); bad {
					t.Fatalf("slide %d: accepted %q", k, text)
				}
			}
			if err := s.Settings.Validate(sim.ViaField); err != nil {
				t.Fatalf("slide %d: accepted %+v: %v", k, s.Settings, err)
			}
			if err := cat.CheckScenario(s.Settings, sim.ViaName); err != nil {
				t.Fatalf("slide %d: accepted %+v: %v", k, s.Settings, err)
			}
			if n := lim.Digits[s.Settings.Split]; s.Settings.Index >= n {
				t.Fatalf("slide %d: accepted digit %d of %d", k, s.Settings.Index, n)
			}
		}
	})
}
