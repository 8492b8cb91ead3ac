//go:build !unix

package infile

import (
	"fmt"
	"os"
)

// openNoBlock stats path before opening it: only a regular file is opened.
func openNoBlock(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w (%s): give a file", ErrNotRegular, Kind(st.Mode()))
	}
	return os.Open(path)
}
