package ui

import (
	"math"
	"slices"
)

// Shown is what the window shows, in words: the web page publishes it
// (attractorlab.shown) for its browser test and for scripts that drive the
// page, as the desktop's end-to-end check reads the lesson lines.
type Shown struct {
	T        int      `json:"t"`               // the step shown
	Frames   int      `json:"frames"`          // steps computed (the longest lane: a ViT stops at its depth)
	Digit    int      `json:"digit"`           // the digit's index in its split
	Split    string   `json:"split"`           // "test" or "train"
	Models   []string `json:"models"`          // the lanes' model names
	Waiting  []string `json:"waiting"`         // those whose weights are still being fetched (the page)
	Lesson   string   `json:"lesson"`          // the lesson presented ("" none)
	Slide    int      `json:"slide"`           // its slide, from 1
	Revealed bool     `json:"revealed"`        // the slide's answer is shown
	Status   string   `json:"status"`          // the status line
	Dialogs  int      `json:"dialogs"`         // dialogs open (an error's among them)
	Playing  bool     `json:"playing"`         // a run is playing
	Speed    float64  `json:"speed"`           // the play speed, steps a second
	Err      string   `json:"error,omitempty"` // the engine's refusal, if any
	Own      bool     `json:"own"`             // the digit is a person's own (drawn or a picture)
	Pushes   int      `json:"pushes"`          // pushes made on the run
	Branch   int      `json:"branch"`          // steps of the first model's pushed run recorded
	Present  bool     `json:"presentation"`    // presentation mode
	Dark     bool     `json:"dark"`            // the window drawn dark
	// Covered is true while, in the page, a window covers the whole page
	// and the main window's content beneath it is not drawn.
	Covered bool `json:"covered"`
	// Theming is true while, in the page, the window's objects are
	// still being refreshed, part by part, for a new theme.
	Theming bool `json:"theming"`
	// Space is the state-space window: "" closed, "placing" open while
	// the stored digits are placed in their plane, "drawn" once drawn.
	Space string `json:"space,omitempty"`
	// Dataset is the data set's name ("mnist", "fashion-mnist", …),
	// Class the clean picture's class ("7", "Coat"; "" for one's own).
	Dataset string `json:"dataset"`
	Class   string `json:"class"`
	// Ensemble is the Ensemble window, when open.
	Ensemble *EnsembleShown `json:"ensemble,omitempty"`
	// Training is the Training window, when open: whether a run is going,
	// the epochs it has finished, and its status line.
	Training *TrainingShown `json:"training,omitempty"`
	// Unrecorded is how many steps of the first look-ahead some lane has
	// not recorded yet (0 once every lane has its horizon).
	Unrecorded int `json:"unrecorded"`
	// Attention is each model's attention panel's title ("BSA P=2 /
	// attention", "… attention: taking it…" while the page takes it).
	Attention []string `json:"attention"`
	// AttnPending is how many models' step shown has attention the page
	// has not taken yet (it does when it next idles).
	AttnPending int `json:"attn_pending"`
}

// TrainingShown is what the Training window shows.
type TrainingShown struct {
	Running bool   `json:"running"`
	Epochs  int    `json:"epochs"`
	Status  string `json:"status"`
	// ValMSE is each finished epoch's validation MSE (−1: none, which
	// JSON's NaN would be).
	ValMSE []float64 `json:"val_mse"`
}

// EnsembleShown is what the Ensemble window shows: whether a run is going,
// its status line and, once a run has finished, each model's median MSE
// curve over the digits and the digits' count.
type EnsembleShown struct {
	Running bool                 `json:"running"`
	Status  string               `json:"status"`
	Digits  int                  `json:"digits"`
	Median  map[string][]float64 `json:"median,omitempty"`
}

// Shown reports what the window shows. Call it on Fyne's goroutine.
func (m *Main) Shown() Shown {
	var s Shown
	if m.snap != nil {
		s.T = m.snap.T
		s.Digit = m.snap.Settings.Index
		s.Split = m.snap.Settings.Split.String()
		s.Models = append([]string{}, m.snap.Settings.Lanes...)
		s.Waiting = append([]string{}, m.snap.Waiting...)
		s.Playing = m.snap.Playing
		s.Speed = m.snap.Speed
		s.Unrecorded = m.snap.Unrecorded
		s.Err = m.snap.Err
		s.Present = m.presentation
		s.Dark = m.darkShown()
		s.Own = m.snap.Settings.Own != nil
		s.Pushes = len(m.snap.Settings.Pushes)
		s.Dataset = m.snap.Settings.DatasetName()
		s.Class = m.snap.ClassName(m.snap.Label)
		if len(m.snap.Lanes) > 0 {
			s.Branch = len(m.snap.Lanes[0].Branch)
		}
		for k, l := range m.snap.Lanes {
			s.Frames = max(s.Frames, len(l.Frames)-1)
			if l.AttnPending(l.At(m.snap.T)) || l.AttnPending(l.BranchAt(m.snap.T)) {
				s.AttnPending++
			}
			if k < len(m.heatTitles) {
				s.Attention = append(s.Attention, m.heatTitles[k].Text)
			}
		}
	}
	if m.lesson != nil {
		s.Lesson = m.lesson.l.Name
		s.Slide = m.lesson.slide + 1
		s.Revealed = m.lesson.revealed
	}
	if m.status != nil {
		s.Status = m.status.Text
	}
	s.Dialogs = len(m.dialogs)
	s.Theming = m.themeLeft > 0
	if c := m.win.Content(); c != nil {
		s.Covered = !c.Visible()
	}
	if e := m.ens; e != nil {
		es := &EnsembleShown{Running: e.job.stop != nil, Status: e.job.status.Text}
		for _, b := range e.bands {
			if slices.ContainsFunc(b.Median, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }) {
				continue // JSON has no NaN: the status line says it all
			}
			if es.Median == nil {
				es.Median = map[string][]float64{}
			}
			es.Median[b.Model], es.Digits = b.Median, b.N
		}
		s.Ensemble = es
	}
	if tw := m.train; tw != nil {
		s.Training = &TrainingShown{Running: tw.running, Epochs: len(tw.stats), Status: tw.status.Text}
		for _, st := range tw.stats {
			v := st.ValMSE
			if math.IsNaN(v) {
				v = -1
			}
			s.Training.ValMSE = append(s.Training.ValMSE, v)
		}
	}
	if m.space != nil {
		s.Space = "placing"
		if m.space.space != nil {
			s.Space = "drawn"
		}
	}
	return s
}
