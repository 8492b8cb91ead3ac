package ui

import (
	"slices"
	"testing"

	"fyne.io/fyne/v2/test"
)

// TestPostLatestReplacesWaiting: in the page, an update posted with
// postLatest while another of its key still waits takes that one's place
// in the queue; once that ran, the next is queued anew; other updates keep
// their order. On the desktop every update runs.
func TestPostLatestReplacesWaiting(t *testing.T) {
	test.NewTempApp(t)
	for _, browser := range []bool{true, false} {
		if browser {
			browserSave = func(string, []byte) error { return nil }
		}
		u := newUpdater()
		var ran []string
		hold := make(chan struct{})
		u.post(func() { <-hold })
		u.postLatest("k", func() { ran = append(ran, "k1") })
		u.postLatest("k", func() { ran = append(ran, "k2") })
		u.post(func() { ran = append(ran, "g") })
		u.postLatest("k", func() { ran = append(ran, "k3") })
		u.postLatest("other", func() { ran = append(ran, "o") })
		close(hold)
		u.wait(func() {})
		u.postLatest("k", func() { ran = append(ran, "k4") })
		u.wait(func() {})
		u.close()
		browserSave = nil
		want := []string{"k3", "g", "o", "k4"}
		if !browser {
			want = []string{"k1", "k2", "g", "k3", "o", "k4"}
		}
		if !slices.Equal(ran, want) {
			t.Errorf("browser %v: ran %q, want %q", browser, ran, want)
		}
	}
}
