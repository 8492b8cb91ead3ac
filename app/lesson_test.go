package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"attractorlab/sim"
	"attractorlab/sim/lesson"
	"attractorlab/sim/mnist"
)

// dirNames lists a directory's entries (none when it does not exist).
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestLessonCommandsRefuseWhatWindowRefuses: `lesson check` and `lesson
// export` refuse each file of sim/lesson/testdata/refused with the error
// the window gives (lesson.ReadFile; ui tests the window), and export
// writes nothing.
func TestLessonCommandsRefuseWhatWindowRefuses(t *testing.T) {
	lim, _, _, err := lessonLimits()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../sim/lesson/testdata/refused/*.json")
	if len(files) == 0 {
		t.Fatal("no refused lessons")
	}
	out := filepath.Join(t.TempDir(), "slides")
	ctx := context.Background()
	for _, f := range files {
		_, want := lesson.ReadFile(f, lim)
		if want == nil {
			t.Fatalf("%s: accepted", f)
		}
		if err := run(ctx, []string{"lesson", "check", f}); err == nil || err.Error() != want.Error() {
			t.Errorf("lesson check %s: %v, want %q", f, err, want)
		}
		if err := run(ctx, []string{"lesson", "export", f, "--out", out}); err == nil || err.Error() != want.Error() {
			t.Errorf("lesson export %s: %v, want %q", f, err, want)
		}
		if names := dirNames(t, out); len(names) != 0 {
			t.Fatalf("lesson export %s wrote %v", f, names)
		}
	}
	// Devices and FIFOs are refused at once, naming the file.
	fifo := filepath.Join(t.TempDir(), "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"/dev/zero", fifo} {
		done := make(chan error, 1)
		go func() { done <- run(ctx, []string{"lesson", "check", f}) }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "lesson "+f+": not a regular file") {
				t.Errorf("lesson check %s: %v", f, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("lesson check %s: still reading after 20 s", f)
		}
	}
}

// TestLessonWithBadWeights: --lesson with a weights file that does not
// load refuses only lessons that use that model, naming the lesson and
// the flag (issue 20: --lesson hopfield --weights-block FIFO failed naming
// three-models).
func TestLessonWithBadWeights(t *testing.T) {
	data, err := mnist.LoadCached()
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "block.safetensors")
	if err := os.WriteFile(bad, []byte("not weights"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := sim.WeightFiles{"block": bad}
	lim := lessonLimitsWith(data, sim.NewCatalogue(data.Train, files), files)
	if _, err := lesson.Load("hopfield", lim); err != nil {
		t.Fatalf("hopfield: %v", err)
	}
	_, err = lesson.Load("three-models", lim)
	if err == nil || !strings.Contains(err.Error(), `shipped lesson three-models: lessons/4-three-models.json:8: slides[0].scenario.models: model "block" cannot run here: its weights (--weights-block) did not load`) ||
		!strings.Contains(err.Error(), bad) {
		t.Fatalf("three-models: %v", err)
	}
}

// cancelAfter is a context whose Err reports it cancelled from its n-th
// call on: a cancel that comes after the export has checked it n−1 times.
type cancelAfter struct {
	context.Context
	n, calls atomic.Int32
}

func (c *cancelAfter) Err() error {
	if c.calls.Add(1) >= c.n.Load() {
		return context.Canceled
	}
	return nil
}

// TestLessonExportCancelled: an export cancelled after its first slides
// (at every point it checks) stops with context.Canceled and leaves the
// output directory as it was.
func TestLessonExportCancelled(t *testing.T) {
	lim, data, cat, err := lessonLimits()
	if err != nil {
		t.Fatal(err)
	}
	l, err := lesson.Load("masking", lim)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	// How many times a whole export checks.
	count := &cancelAfter{Context: context.Background()}
	count.n.Store(1 << 30)
	if err := exportLesson(count, l, data, cat, t.TempDir(), 1280, 800, "Light", false); err != nil {
		t.Fatal(err)
	}
	checks := count.calls.Load()
	if checks < 4 {
		t.Fatalf("the export checked for a cancel %d times (three slides)", checks)
	}
	for _, n := range []int32{1, 2, checks / 2, checks} {
		ctx := &cancelAfter{Context: context.Background()}
		ctx.n.Store(n)
		err := exportLesson(ctx, l, data, cat, dir, 1280, 800, "Light", false)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled at check %d of %d: %v", n, checks, err)
		}
		if names := dirNames(t, dir); !slices.Equal(names, []string{"notes.txt"}) {
			t.Fatalf("cancelled at check %d of %d: the directory holds %v", n, checks, names)
		}
	}
	if err := exportLesson(context.Background(), l, data, cat, dir, 1280, 800, "Light", false); err != nil {
		t.Fatal(err)
	}
	if names := dirNames(t, dir); len(names) != 5 {
		t.Fatalf("the whole export wrote %v", names)
	}
}

// TestLessonExportSignals: the real program, sent SIGINT or SIGTERM once
// its first slide is written, stops before the rest and leaves no file
// (issue 20: SIGTERM left .slide-NN.png.tmp* files, Ctrl-C was ignored).
func TestLessonExportSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "slides")
			cmd := exec.Command(os.Args[0], "lesson", "export", "three-models", "--out", dir, "--size", "1920x1080")
			cmd.Env = append(os.Environ(), "ATTRACTORLAB_AS_MAIN=1")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The first slide is written when its name is printed.
			sc := bufio.NewScanner(stderr)
			var seen []string
			for sc.Scan() {
				seen = append(seen, sc.Text())
				if strings.HasPrefix(sc.Text(), "slide-01") {
					break
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			for sc.Scan() {
				seen = append(seen, sc.Text())
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || (ee.ExitCode() != 130 && ee.ExitCode() != 143) {
				t.Fatalf("exit %v, want it to stop by itself (status 130 or 143), not be killed; stderr:\n%s", err, strings.Join(seen, "\n"))
			}
			if names := dirNames(t, dir); len(names) != 0 {
				t.Fatalf("left %v; stderr:\n%s", names, strings.Join(seen, "\n"))
			}
		})
	}
}

// TestSavedSessionChecked: the session the window saved is checked as a
// scenario file is; hand-masked patches its models' grid does not have
// are refused with a warning naming the field (issue 20: [-1, 99999, 3,
// 3] loaded).
func TestSavedSessionChecked(t *testing.T) {
	data, err := mnist.LoadCached()
	if err != nil {
		t.Fatal(err)
	}
	cat := sim.NewCatalogue(data.Train, sim.WeightFiles{})
	good, err := os.ReadFile("../sim/testdata/scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	const wantT = 7 // the file's "t"
	if st, tt, ok, problem := savedSession(string(good), cat); !ok || problem != "" || st.Index != 17 || tt != wantT {
		t.Fatalf("the good session: %v %q, index %d, t = %d (want 17 at t = %d)", ok, problem, st.Index, tt, wantT)
	}
	for toggled, want := range map[string]string{
		"[-1, 99999, 3, 3]": "saved session: field toggled_patches: patch -1 is out of range (allowed 0 … 48",
		"[3, 3]":            "saved session: field toggled_patches: patch 3 is listed twice",
		"[49]":              "saved session: field toggled_patches: patch 49 is out of range (allowed 0 … 48",
	} {
		bad := strings.Replace(string(good), `"toggled_patches": [5]`, `"toggled_patches": `+toggled, 1)
		if _, _, ok, problem := savedSession(bad, cat); ok || !strings.HasPrefix(problem, want) || !strings.HasSuffix(problem, "opened the paper demo instead") {
			t.Errorf("%s: %v %q, want %q…", toggled, ok, problem, want)
		}
	}
	if _, _, ok, problem := savedSession("", cat); ok || problem != "" {
		t.Fatalf("no session: %v %q", ok, problem)
	}
}

// TestLessonExportKilled: SIGKILL gives the program no chance to clean
// up, so a killed export leaves its temporary files (attack 15: 127 of
// them, 22 MB); the next command writing the same files removes them, as
// the kernel dropped the killed process's locks on them.
func TestLessonExportKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program")
	}
	dir := filepath.Join(t.TempDir(), "slides")
	cmd := exec.Command(os.Args[0], "lesson", "export", "three-models", "--out", dir, "--size", "1920x1080")
	cmd.Env = append(os.Environ(), "ATTRACTORLAB_AS_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "slide-01") {
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	left := dirNames(t, dir)
	var finals []string
	for _, n := range left {
		base, _, ok := strings.Cut(strings.TrimPrefix(n, "."), ".tmp")
		if !ok {
			t.Fatalf("the killed export left %s (not a temporary file)", n)
		}
		finals = append(finals, filepath.Join(dir, base))
	}
	if len(finals) == 0 {
		t.Fatal("the killed export left nothing: the test shows nothing")
	}
	o, err := planOutputs("--out", false, finals...)
	if err != nil {
		t.Fatal(err)
	}
	o.Abort()
	if names := dirNames(t, dir); len(names) != 0 {
		t.Fatalf("after the next command, %v are left of %v", names, left)
	}
}
