//go:build js && webweights

package assets

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall/js"
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
	page := js.Global().Get("attractorlab")
	if page.IsUndefined() || page.Get("fetchData").IsUndefined() {
		return nil, errors.New("the page provides no data files (attractorlab.fetchData): open the app from its index.html")
	}
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	ok := js.FuncOf(func(_ js.Value, args []js.Value) any {
		u := args[0]
		b := make([]byte, u.Get("length").Int())
		js.CopyBytesToGo(b, u)
		ch <- result{b: b}
		return nil
	})
	fail := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- result{err: fmt.Errorf("fetching data/%s: %s", name, args[0].Call("toString").String())}
		return nil
	})
	defer ok.Release()
	defer fail.Release()
	page.Call("fetchData", name).Call("then", ok, fail)
	r := <-ch
	return r.b, r.err
}
