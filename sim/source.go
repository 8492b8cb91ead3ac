package sim

import (
	"fmt"
	"strings"

	"attractorlab/sim/mnist"
)

// A Source is a data set with what a session needs of it: the digits (or
// garments), the training pictures' nearest-memory search and the models,
// whose Hopfield networks store that set's training pictures.
type Source struct {
	Data      *mnist.Data
	Memories  *Memories
	Catalogue *Catalogue
}

// Sources gives the Source of a data set by name (mnist.Datasets); an
// error says why it cannot (a data set not on this machine: how to get
// it).
type Sources func(dataset string) (*Source, error)

// DatasetName is a settings' data set, MNIST when the settings name none.
func (s Settings) DatasetName() string {
	if s.Dataset == "" {
		return mnist.MNISTName
	}
	return s.Dataset
}

// checkDataset refuses a data set this version does not know.
func checkDataset(name string, via Via) error {
	if name == "" {
		return nil
	}
	for _, d := range mnist.Datasets {
		if name == d {
			return nil
		}
	}
	what := map[Via]string{ViaName: "data set", ViaFlag: "--dataset", ViaField: "field dataset"}[via]
	if f, ok := strings.CutPrefix(name, mnist.FolderPrefix); ok {
		if err := CheckFolderName(f); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	return fmt.Errorf("%s = %q is not a data set here (allowed: %s, or %sNAME, a folder of pictures)", what, name, strings.Join(mnist.Datasets, ", "), mnist.FolderPrefix)
}

// canonicalDataset is the name settings keep: "" for MNIST (the data set
// settings that name none meant before there were others), else the name.
func canonicalDataset(name string) string {
	if name == mnist.MNISTName {
		return ""
	}
	return name
}

// TrainedOn is the data set m's weights were trained on (weights that do
// not say were trained on MNIST), "" for a model without training data of
// its own (the Hopfield networks store the run's training pictures).
func TrainedOn(m Model, task Kind) string {
	var meta map[string]string
	switch v := m.(type) {
	case *BSAModel:
		meta = v.M.Meta
	case *TransformerModel:
		if net := v.Net(task); net != nil {
			meta = net.Meta
		}
	default:
		return ""
	}
	if d := meta["dataset"]; d != "" {
		return d
	}
	return mnist.MNISTName
}

// Foreign says how a lane's model came to this data set when its weights
// were trained on another ("trained on MNIST"), "" otherwise.
func (l Lane) Foreign(dataset string) string {
	if l.TrainedOn == "" || l.TrainedOn == mnist.DatasetOrMNIST(dataset) {
		return ""
	}
	return "trained on " + mnist.DatasetLabel(l.TrainedOn)
}

// RecordDataset writes into a weights file's metadata the data set it was
// trained on and the md5 of that set's training images (a file without
// it was trained on MNIST, as every file before them was).
func RecordDataset(meta map[string]string, dataset string) {
	switch {
	case dataset == mnist.FashionName:
		meta["dataset"] = dataset
		meta["dataset_md5"] = mnist.FashionFiles[0].MD5
	case strings.HasPrefix(dataset, mnist.FolderPrefix):
		meta["dataset"] = dataset
		if md5, err := FolderTrainMD5(strings.TrimPrefix(dataset, mnist.FolderPrefix)); err == nil {
			meta["dataset_md5"] = md5
		}
	}
}
