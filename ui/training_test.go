package ui

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"attractorlab/sim"
	"attractorlab/sim/mnist"
	"attractorlab/sim/sweep"
)

// runTraining starts the training window's run and waits until it ended.
func runTraining(t *testing.T, tw *trainWin, during func()) {
	t.Helper()
	done := make(chan struct{})
	tw.after = func() { close(done) }
	tw.ui.wait(tw.startBtn.OnTapped)
	if during != nil {
		during()
	}
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the training did not end")
	}
	tw.after = nil
}

// TestTrainingWindow: a bad field is refused by the field's name and
// range; a short run shows its curves and the re-run digit, trains the
// couplings sim.TrainBSA trains with the same settings (which `train`
// trains too, app's TestTrainSameCouplingsEverywhere), and puts the model
// in the catalogue and the sidebar, from where the main window runs it
// beside the shipped one; Pause holds the run and Cancel keeps the last
// finished epoch.
func TestTrainingWindow(t *testing.T) {
	m, _ := newTestMain(t)
	m.showTraining()
	tw := m.train
	// The window's updates come through tw.ui; the test acts in turn
	// with them, as Fyne's goroutine would.
	do := tw.ui.wait
	views := 0
	do(func() {
		tw.lambda.SetText("12")
		tw.startBtn.OnTapped()
		if s := tw.status.Text; !strings.Contains(s, "λ = 12") || !strings.Contains(s, sim.TrainLambda.Allowed()) || tw.running {
			t.Errorf("λ 12: status %q, running %v", s, tw.running)
		}
		tw.lambda.SetText("5")
		tw.images.SetSelected("200")
		tw.epochs.SetText("3")
		tw.seed.SetText("4")
		tw.viewed = func(epoch, _ int) {
			if epoch > 0 {
				views++
			}
		}
	})
	runTraining(t, tw, nil)
	if len(tw.stats) != 3 || tw.trained == nil || views < 3 {
		t.Fatalf("%d epochs shown, trained %v, %d views; status %q", len(tw.stats), tw.trained != nil, views, tw.status.Text)
	}
	if tw.prog.Value != 1 || !strings.Contains(tw.status.Text, "bsa-p2-trained") {
		t.Fatalf("progress %g, status %q", tw.prog.Value, tw.status.Text)
	}
	if tw.atStar.Pixels == nil || tw.digit.Build == nil || tw.locality.Build == nil || tw.digitLbl.Text == "" {
		t.Fatal("the digit's re-run or the couplings were not drawn")
	}
	// The same settings through sim.TrainBSA.
	train, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	s := tw.set
	s.Batched = nil
	plain, _, err := sim.TrainBSA(t.Context(), train, test, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := range plain.J {
		if math.Float32bits(plain.J[k]) != math.Float32bits(tw.trained.J[k]) {
			t.Fatalf("coupling %d: %g in the window, %g from sim.TrainBSA", k, tw.trained.J[k], plain.J[k])
		}
	}
	// In the catalogue and the sidebar; run beside the shipped model.
	last := m.infos[len(m.infos)-1]
	if last.Name != "bsa-p2-trained" || len(m.side.modelCheck) != len(m.infos) {
		t.Fatalf("last model %q, %d checks for %d models", last.Name, len(m.side.modelCheck), len(m.infos))
	}
	// Saved, the weights load as a bare self-attention with the trained
	// couplings and the command that remakes them.
	var saved []byte
	savedName := ""
	browserSave = func(name string, data []byte) error { savedName, saved = name, data; return nil }
	tw.saveBtn.OnTapped()
	browserSave = nil
	path := filepath.Join(t.TempDir(), savedName)
	if err := os.WriteFile(path, saved, 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := sim.LoadBSA(2, path)
	if err != nil || savedName != "bsa-p2-trained.safetensors" {
		t.Fatalf("saved %q: %v", savedName, err)
	}
	if !slices.Equal(loaded.J, tw.trained.J) || !strings.Contains(loaded.Meta["command"], "--images 200 --lambda 5 --attn softmax --epochs 3") {
		t.Fatalf("the saved couplings differ, or its command is %q", loaded.Meta["command"])
	}
	// An ensemble runs on it.
	env := sweep.Env{Data: m.deps.Data, Cat: m.deps.Catalogue}
	if b, err := sweep.Ensemble(t.Context(), env, sim.PaperDemo(), "bsa-p2-trained", 5, 20, nil); err != nil || b.N != 5 {
		t.Fatalf("ensemble on the trained model: %v", err)
	}
	tw.useBtn.OnTapped()
	m.Engine.Settle()
	sn := m.Engine.Snapshot()
	if sn.Err != "" || len(sn.Lanes) != 2 || sn.Lanes[1].Info.Name != "bsa-p2-trained" {
		t.Fatalf("main window: err %q, %d lanes", sn.Err, len(sn.Lanes))
	}
	if !m.side.modelCheck[len(m.infos)-1].Checked {
		t.Fatal("the trained model's check is not ticked")
	}
	// Pause holds it; Cancel keeps the last finished epoch.
	do(func() {
		tw.images.SetSelected("10000")
		tw.epochs.SetText("50")
	})
	runTraining(t, tw, func() {
		deadline := time.Now().Add(time.Minute)
		for epochs := 0; epochs < 1 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
			do(func() { epochs = len(tw.stats) })
		}
		do(func() {
			tw.pauseBtn.OnTapped()
			if !strings.Contains(tw.status.Text, "paused") || tw.pauseBtn.Text != "Resume" {
				t.Errorf("paused: status %q, button %q", tw.status.Text, tw.pauseBtn.Text)
			}
			// The epoch under way and the finished ones, as the plots
			// count them.
			want := fmt.Sprintf("paused in epoch %d, after batch %d of %d; %d finished", tw.curEpoch, tw.curBatch, tw.batches, len(tw.stats))
			under := tw.curEpoch == len(tw.stats)+1
			if tw.curBatch >= tw.batches { // paused at an epoch's end
				want = fmt.Sprintf("paused at the end of epoch %d; %d finished", tw.curEpoch, len(tw.stats))
				under = tw.curEpoch == len(tw.stats) || tw.curEpoch == len(tw.stats)+1
			}
			if !strings.Contains(tw.status.Text, want) || !under {
				t.Errorf("paused: status %q, want %q, the epoch in it beside the %d finished", tw.status.Text, want, len(tw.stats))
			}
		})
		time.Sleep(100 * time.Millisecond)
		var p, q float64
		do(func() { p = tw.prog.Value })
		time.Sleep(300 * time.Millisecond)
		do(func() { q = tw.prog.Value })
		if q != p {
			t.Errorf("paused, the progress went on from %g to %g", p, q)
		}
		do(func() {
			tw.pauseBtn.OnTapped()
			tw.cancelBtn.OnTapped()
		})
	})
	if !strings.Contains(tw.status.Text, "cancelled in epoch 2; kept the finished ones: 1 epochs") || tw.trained == nil || tw.trained.Meta["epochs_done"] != "1" {
		t.Fatalf("after cancel: status %q, epochs_done %q", tw.status.Text, tw.trained.Meta["epochs_done"])
	}
	do(tw.w.Close)
	if m.train != nil {
		t.Fatal("closing the window kept it")
	}
}

// TestLessonTrainsLive: a slide with a training opens the Training window
// with the slide's form and starts it on the slide's digit once the slide
// is in place; coming back to it does not start another.
func TestLessonTrainsLive(t *testing.T) {
	m, w, l := shippedLesson(t, "watch-it-learn")
	if m.train != nil {
		t.Fatal("slide 1 opened the training window")
	}
	typeKey(w, fyne.KeyRight)
	tw := m.train
	if tw == nil {
		t.Fatal("slide 2 did not open the training window")
	}
	done := make(chan struct{})
	tw.ui.wait(func() {
		if !tw.running || tw.images.Selected != "10000" || tw.epochs.Text != "15" || tw.start.SelectedIndex() != 0 {
			t.Errorf("running %v, images %q, epochs %q, start %d", tw.running, tw.images.Selected, tw.epochs.Text, tw.start.SelectedIndex())
		}
		if m.snap.Settings.Index != l.Slides[1].Settings.Index {
			t.Errorf("the main window shows digit %d, the slide %d", m.snap.Settings.Index, l.Slides[1].Settings.Index)
		}
		tw.after = func() { close(done) }
		tw.cancelBtn.OnTapped()
	})
	<-done
	tw.ui.wait(func() {})
	typeKey(w, fyne.KeyRight) // slide 3 asks first: its training starts on the reveal
	tw.ui.wait(func() {
		if tw.running {
			t.Errorf("slide 3's question: the training it asks about is already running")
		}
	})
	typeKey(w, fyne.KeyRight) // the reveal
	tw.ui.wait(func() {
		if !tw.running || tw.images.Selected != "100" || tw.epochs.Text != "600" || tw.halveEvery != "400" {
			t.Errorf("slide 3 revealed: running %v, images %q, epochs %q, halve every %q", tw.running, tw.images.Selected, tw.epochs.Text, tw.halveEvery)
		}
		tw.cancelBtn.OnTapped()
	})
	do := tw.ui.wait
	do(func() {})
	do(tw.w.Close)
}

// closeTraining cancels a training run and closes the Training window,
// when one is open.
func closeTraining(m *Main) {
	tw := m.train
	if tw == nil {
		return
	}
	done := make(chan struct{})
	running := false
	tw.ui.wait(func() {
		running = tw.running
		if running {
			tw.after = func() { close(done) }
			tw.cancelBtn.OnTapped()
		}
	})
	if running {
		<-done
	}
	tw.ui.wait(tw.w.Close)
}

// TestTrainingSlideShowsCaptionAndTakesKeys: a lesson slide that trains
// heads the Training window with the slide's title and caption, the
// window fits a 1280-px screen at presentation size, and → typed there
// goes on with the lesson.
func TestTrainingSlideShowsCaptionAndTakesKeys(t *testing.T) {
	m, _, wl := shippedLesson(t, "watch-it-learn")
	m.togglePresentation()
	m.openSlide(1, false) // "Grow it from random couplings": trains at once
	tw := m.train
	if tw == nil {
		t.Fatal("the training slide opened no Training window")
	}
	defer tw.w.Close()
	if !tw.lessonCap.Visible() || !strings.Contains(tw.lessonCap.String(), wl.Slides[1].Title) || !strings.Contains(tw.lessonCap.String(), "pseudo-likelihood") {
		t.Fatalf("the Training window's head: visible %v, %q", tw.lessonCap.Visible(), tw.lessonCap.String())
	}
	if w := tw.w.Content().MinSize().Width; w > 1280 {
		t.Errorf("the Training window needs %.0f px at presentation size: wider than a 1280-px screen", w)
	}
	tw.w.Canvas().(interface{ OnTypedKey() func(*fyne.KeyEvent) }).OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyRight})
	if m.lesson == nil || m.lesson.slide != 2 {
		t.Fatalf("→ in the Training window: the lesson is at %+v, want slide 3", m.lesson)
	}
}

// TestLessonSlideTakesOverTraining: → from a training slide whose run is
// still under way stops that run; the next slide's question says its own
// training starts on the reveal, and the reveal starts it (issue 31: slide
// 3's run never started while slide 2's trained on, and the answer was
// read off slide 2's curve).
func TestLessonSlideTakesOverTraining(t *testing.T) {
	m, w, _ := shippedLesson(t, "watch-it-learn")
	typeKey(w, fyne.KeyRight) // slide 2 trains 10,000 images
	tw := m.train
	if tw == nil {
		t.Fatal("slide 2 did not open the training window")
	}
	tw.ui.wait(func() {
		if !tw.running {
			t.Fatal("slide 2 is not training")
		}
	})
	typeKey(w, fyne.KeyRight) // slide 3's question, slide 2 still training
	until := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
			var done bool
			tw.ui.wait(func() { done = ok() })
			if done {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
		}
	}
	until("slide 2's run did not stop on slide 3", func() bool { return !tw.running })
	tw.ui.wait(func() {
		if !strings.Contains(tw.status.Text, "starts when the answer is revealed") {
			t.Errorf("slide 3's question: the status says %q", tw.status.Text)
		}
	})
	typeKey(w, fyne.KeyRight) // the reveal
	until("the reveal did not start slide 3's 100-image run", func() bool { return tw.running && tw.images.Selected == "100" })
	closeTraining(m)
}
