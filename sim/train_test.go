package sim

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

func smallTraining() BSATraining {
	cfg := models.DefaultTrainConfig()
	cfg.Epochs, cfg.Batch = 3, 50
	return BSATraining{Patch: 2, Images: 100, Lambda: 5, Seed: 1, Val: 10, Config: cfg}
}

// TestTrainBSACancelKeepsLastEpoch: cancelled during the second epoch, the
// run gives the couplings the first epoch ended with, bit for bit (not
// half of the second's updates), and says it finished one epoch.
func TestTrainBSACancelKeepsLastEpoch(t *testing.T) {
	train, test, err := mnist.Sample()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var first *models.BSA
	s := smallTraining()
	// Cancelled after the second epoch's first update: that update must
	// not count.
	s.Config.Batched = func(epoch, batch int) {
		if epoch == 2 && batch == 1 {
			cancel()
		}
	}
	m, epochs, err := TrainBSA(ctx, train, test, s, func(st models.EpochStats, snap *models.BSA) {
		if st.Epoch == 1 {
			first = snap
		}
	})
	if !errors.Is(err, context.Canceled) || epochs != 1 || first == nil || m == nil {
		t.Fatalf("epochs %d, model %v, err %v", epochs, m != nil, err)
	}
	for k := range m.J {
		if math.Float32bits(m.J[k]) != math.Float32bits(first.J[k]) {
			t.Fatalf("coupling %d: %g after the cancel, %g when epoch 1 ended", k, m.J[k], first.J[k])
		}
	}
	if m.Meta["epochs_done"] != "1" {
		t.Fatalf("epochs_done %q", m.Meta["epochs_done"])
	}
}

// TestTrainBSARefuses: a setting out of range is refused by its flag's
// name and range before any work.
func TestTrainBSARefuses(t *testing.T) {
	for _, c := range []struct {
		change func(*BSATraining)
		want   string
	}{
		{func(s *BSATraining) { s.Lambda = 0 }, "--lambda"},
		{func(s *BSATraining) { s.Lambda = math.NaN() }, "--lambda"},
		{func(s *BSATraining) { s.Images = 50 }, "--images"},
		{func(s *BSATraining) { s.Patch = 3 }, "--patch"},
		{func(s *BSATraining) { s.Val = 0 }, "--val"},
		{func(s *BSATraining) { s.Config.Epochs = 0 }, "epochs"},
	} {
		s := smallTraining()
		c.change(&s)
		m, _, err := TrainBSA(context.Background(), nil, nil, s, nil)
		if err == nil || m != nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a refusal naming %s", s, err, c.want)
		}
	}
}
