package lesson

import (
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"attractorlab/assets"
	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// Shipped reads the lessons embedded in the app, in order.
func Shipped(lim Limits) ([]*Lesson, error) {
	names, err := fs.Glob(assets.Lessons, "lessons/*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []*Lesson
	for _, n := range names {
		data, err := assets.Lessons.ReadFile(n)
		if err != nil {
			return nil, err
		}
		l, err := Parse(data, n, lim)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// Load finds a lesson by a shipped lesson's name or a file's path.
func Load(nameOrFile string, lim Limits) (*Lesson, error) {
	shipped, err := Shipped(lim)
	if err != nil {
		return nil, fmt.Errorf("shipped lessons: %w", err)
	}
	for _, l := range shipped {
		if l.Name == nameOrFile {
			return l, nil
		}
	}
	data, err := os.ReadFile(nameOrFile)
	if err != nil {
		var names []string
		for _, l := range shipped {
			names = append(names, l.Name)
		}
		return nil, fmt.Errorf("lesson %q is neither a shipped lesson (%s) nor a readable file: %w", nameOrFile, strings.Join(names, ", "), err)
	}
	l, err := Parse(data, nameOrFile, lim)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// LimitsOf are the limits of a catalogue's available models and a data
// set's splits.
func LimitsOf(data *mnist.Data, cat *sim.Catalogue) Limits {
	lim := Limits{Digits: map[sim.Split]int{}}
	for _, info := range cat.Available() {
		lim.Models = append(lim.Models, info.Name)
	}
	lim.Digits[sim.TestSplit] = data.Test.Len()
	lim.Digits[sim.TrainSplit] = data.Train.Len()
	return lim
}
