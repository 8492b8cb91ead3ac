package lesson

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"attractorlab/assets"
	"attractorlab/models/infile"
	"attractorlab/sim"
	"attractorlab/sim/mnist"
)

// shippedFile is a lesson embedded in the app, not yet checked.
type shippedFile struct {
	name, file string
	data       []byte
}

// shippedFiles are the embedded lessons in order, with their names.
func shippedFiles() ([]shippedFile, error) {
	files, err := fs.Glob(assets.Lessons, "lessons/*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []shippedFile
	for _, f := range files {
		data, err := assets.Lessons.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var head struct{ Name string }
		json.Unmarshal(data, &head) // Parse reports what is wrong
		if head.Name == "" {
			head.Name = strings.TrimSuffix(filepath.Base(f), ".json")
		}
		out = append(out, shippedFile{name: head.Name, file: f, data: data})
	}
	return out, nil
}

// Shipped reads the lessons embedded in the app, in order. A lesson that
// cannot run here (a model it uses did not load) is left out, and the
// error names it and why; the others are returned all the same.
func Shipped(lim Limits) ([]*Lesson, error) {
	files, err := shippedFiles()
	if err != nil {
		return nil, err
	}
	var out []*Lesson
	var errs []error
	for _, f := range files {
		l, err := Parse(f.data, f.file, lim)
		if err != nil {
			errs = append(errs, fmt.Errorf("shipped lesson %s: %w", f.name, err))
			continue
		}
		out = append(out, l)
	}
	return out, errors.Join(errs...)
}

// ShippedNames are the names of the lessons embedded in the app, in order
// (what a link's ?lesson= may name: sim.ParseLink). No lesson is checked.
func ShippedNames() ([]string, error) {
	files, err := shippedFiles()
	if err != nil {
		return nil, fmt.Errorf("shipped lessons: %w", err)
	}
	names := make([]string, len(files))
	for k, f := range files {
		names[k] = f.name
	}
	return names, nil
}

// Load finds a lesson by a shipped lesson's name or a file's path (read
// through ReadFile). Only the lesson asked for is checked, so a model
// another lesson needs cannot make it fail.
func Load(nameOrFile string, lim Limits) (*Lesson, error) {
	files, err := shippedFiles()
	if err != nil {
		return nil, fmt.Errorf("shipped lessons: %w", err)
	}
	var names []string
	for _, f := range files {
		if f.name == nameOrFile {
			l, err := Parse(f.data, f.file, lim)
			if err != nil {
				return nil, fmt.Errorf("shipped lesson %s: %w", f.name, err)
			}
			return l, nil
		}
		names = append(names, f.name)
	}
	l, err := ReadFile(nameOrFile, lim)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("lesson %q is neither a shipped lesson (%s) nor a file: %w", nameOrFile, strings.Join(names, ", "), err)
	}
	return l, err
}

// ReadFile reads and checks the lesson file at path: a regular file (a
// FIFO or a device is refused before a byte is read) of at most MaxSize.
func ReadFile(path string, lim Limits) (*Lesson, error) {
	data, err := infile.ReadAll(path, "lesson", MaxSize)
	if err != nil {
		return nil, err
	}
	return Parse(data, path, lim)
}

// Read reads and checks a lesson from r (name is used in errors), reading
// at most MaxSize bytes and one more (to refuse a larger file).
func Read(r io.Reader, name string, lim Limits) (*Lesson, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, &Error{File: name, Msg: err.Error()}
	}
	return Parse(data, name, lim)
}

// LimitsOf are the limits of a catalogue's models and a data set's
// splits. A model is loaded only when a lesson asks for it (and, in the
// web build, its weights fetched only when the lesson runs it).
func LimitsOf(data *mnist.Data, cat *sim.Catalogue) Limits {
	lim := Limits{Digits: map[sim.Split]int{}}
	lim.Model = cat.Info
	lim.Digits[sim.TestSplit] = data.Test.Len()
	lim.Digits[sim.TrainSplit] = data.Train.Len()
	return lim
}
