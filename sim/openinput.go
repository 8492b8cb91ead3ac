package sim

import (
	"io"

	"attractorlab/models/infile"
)

// JSONMax caps the JSON files a person opens in the window (scenarios,
// lessons).
const JSONMax = 1 * infile.MB

// OpenInput opens a file a person named for reading through the one
// bounded reader (models/infile), for the window, which does not reach
// into models: a regular file of at most max bytes, else an error naming
// what it was for and the path.
func OpenInput(path, what string, max int64) (io.ReadCloser, error) {
	return infile.Open(path, what, max)
}
