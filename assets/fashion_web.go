//go:build js && webweights

package assets

import (
	"errors"
	"io/fs"
)

// FashionSample in the page: its 4.8 MB are not in every visitor's
// download; the page fetches each file (data/fashion/…, which make web
// writes) when Fashion-MNIST is first chosen.
var FashionSample fs.ReadFileFS = pageFiles{}

// pageFiles reads a file the page fetches from the site's data/ folder.
type pageFiles struct{}

func (pageFiles) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: errors.ErrUnsupported}
}

// ReadFile fetches data/NAME through the page (attractorlab.fetchData).
// It blocks the calling goroutine until the fetch settles, and must not
// run inside a JavaScript callback.
func (pageFiles) ReadFile(name string) ([]byte, error) {
	return pageFetch("fetchData", name, "data/"+name, "data files")
}
