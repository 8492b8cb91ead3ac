package ui

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"fyne.io/fyne/v2/storage"

	"attractorlab/sim/lesson"
)

// TestWindowRefusesWhatCheckRefuses: the window's lesson loaders (a file
// chosen, or a reader) refuse each file `lesson check` refuses
// (sim/lesson/testdata/refused) with the same error, and the window stays
// as it was.
func TestWindowRefusesWhatCheckRefuses(t *testing.T) {
	m, _ := newTestMain(t)
	before := m.snap.Settings
	files, _ := filepath.Glob("../sim/lesson/testdata/refused/*.json")
	if len(files) == 0 {
		t.Fatal("no refused lessons")
	}
	for _, f := range files {
		_, want := lesson.ReadFile(f, m.lessonLimits())
		if want == nil {
			t.Fatalf("%s: lesson.ReadFile accepts it", f)
		}
		if err := m.OpenLessonFile(f); err == nil || err.Error() != want.Error() {
			t.Errorf("%s: the window says %v, lesson check %q", f, err, want)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.OpenLesson(bytes.NewReader(b), f); err == nil || err.Error() != want.Error() {
			t.Errorf("%s: OpenLesson says %v, lesson check %q", f, err, want)
		}
		if _, _, ok := m.InLesson(); ok || m.snap.Settings.Index != before.Index {
			t.Fatalf("%s: a refused lesson changed the window", f)
		}
	}
}

// TestWindowFileInputs: a FIFO or a device chosen as a lesson or a
// scenario is refused at once, naming it, and the file chooser does not
// list them.
func TestWindowFileInputs(t *testing.T) {
	m, _ := newTestMain(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "x.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/zero"} {
		for what, open := range map[string]func(string) error{"lesson": m.OpenLessonFile, "scenario": m.OpenScenarioFile, "picture": m.OpenPictureFile} {
			done := make(chan error, 1)
			go func() { done <- open(path) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), what+" "+path+": not a regular file") {
					t.Errorf("%s as a %s: %v", path, what, err)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s as a %s: still reading after 20 s", path, what)
			}
		}
	}
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	json := regularFiles{".json"}
	if json.Matches(storage.NewFileURI(fifo)) || !json.Matches(storage.NewFileURI(good)) || json.Matches(storage.NewFileURI(filepath.Join(dir, "x.png"))) {
		t.Fatal("the file chooser's filter lists the FIFO or hides the file")
	}
}

// TestOpenScenarioToggledPatches: a scenario whose hand-masked patches
// the models' grid does not have is refused naming the file, the field
// and the range (issue 20: [-1, 99999, 3, 3] loaded).
func TestOpenScenarioToggledPatches(t *testing.T) {
	m, _ := newTestMain(t)
	before := m.snap.Settings
	good, err := os.ReadFile("../sim/testdata/scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(good), `"toggled_patches": [5]`, `"toggled_patches": [-1, 99999, 3, 3]`, 1)
	if bad == string(good) {
		t.Fatal("the fault was not made")
	}
	err = m.OpenScenario(strings.NewReader(bad), "s.json")
	if err == nil || !strings.Contains(err.Error(), "s.json: field toggled_patches: patch -1 is out of range (allowed 0 … 48") {
		t.Fatalf("error %v", err)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.OpenScenarioFile(path); err == nil || !strings.Contains(err.Error(), path+": field toggled_patches") {
		t.Fatalf("error %v", err)
	}
	if m.snap.Settings.Index != before.Index || len(m.snap.Settings.Toggled) != 0 {
		t.Fatalf("a refused scenario changed the window: %+v", m.snap.Settings)
	}
	if err := m.OpenScenarioFile("../sim/testdata/scenario.json"); err != nil || m.snap.Settings.Index != 17 {
		t.Fatalf("the good scenario: %v", err)
	}
}
