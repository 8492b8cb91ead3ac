package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
)

// TestWaitingForWeights: while the page fetches the opening model's
// weights (the snapshot has the model waiting and no lane), the window
// shows the digit and its input, keeps the model chosen, and says the
// steps follow, in either mode, in panels laid out as the model's lane
// will be; when the lane comes it is drawn in them.
func TestWaitingForWeights(t *testing.T) {
	m, w := newTestMain(t)
	full := m.snap
	waiting := *full
	waiting.Seq++
	waiting.Lanes = nil
	waiting.Waiting = []string{"bsa-p2"}
	for _, present := range []bool{false, true} {
		if m.presentation != present {
			m.togglePresentation()
		}
		m.apply(&waiting)
		if !strings.Contains(m.tLabel.Text, waitingText) {
			t.Errorf("presentation %v: the readout says %q, want %q", present, m.tLabel.Text, waitingText)
		}
		if !m.side.modelCheck[0].Checked {
			t.Errorf("presentation %v: %s is not shown chosen while its weights come", present, m.infos[0].Name)
		}
		if len(m.states) != 1 || !strings.Contains(m.stateTitles[0].Text, "fetching its weights") {
			t.Fatalf("presentation %v: %d state panels while the model's weights come, want 1 saying so", present, len(m.states))
		}
		panel := m.states[0]
		if !present && !strings.Contains(m.hist.means.Text, waitingText) {
			t.Errorf("the histogram says %q while the weights come", m.hist.means.Text)
		}
		for _, it := range m.exports() { // Ctrl+E while waiting
			if strings.Contains(it.label, "state") || strings.Contains(it.label, "attention") {
				t.Errorf("presentation %v: Export offers %q with no lane", present, it.label)
			}
		}
		img := w.Canvas().Capture()
		if b := img.Bounds(); b.Dx() == 0 {
			t.Fatal("nothing drawn")
		}
		again := *full
		again.Seq = waiting.Seq + 1
		m.apply(&again)
		if len(m.states) != 1 || strings.Contains(m.tLabel.Text, waitingText) || strings.Contains(m.stateTitles[0].Text, "fetching") {
			t.Errorf("presentation %v: the lane came: %d state panels, readout %q, title %q", present, len(m.states), m.tLabel.Text, m.stateTitles[0].Text)
		}
		if m.states[0] != panel {
			t.Errorf("presentation %v: the lane's coming built the window anew (its panels were laid out for it)", present)
		}
		if m.states[0].Pixels == nil {
			t.Errorf("presentation %v: the lane came and its state is not drawn", present)
		}
		waiting.Seq = again.Seq + 1
	}
	w.Resize(fyne.NewSize(800, 600))
	m.apply(&waiting)
}
