//go:build js && webweights

package assets

import (
	"errors"
	"fmt"
	"syscall/js"
)

// The web build embeds no weights: the page (assets/web/index.html) fetches
// them in their transport form (weights/NAME.web: half precision, see
// models.WrapWeb) and hands them over through its attractorlab object.
// The small files and the opening model's come before the app starts; the
// others when a model first needs them.

// WebWeights: ReadWeights returns the transport form.
const WebWeights = true

// ReadWeights fetches name's transport form (or takes the copy the page
// fetched before the app started). It blocks the calling goroutine until
// the page's fetch settles, and must not run inside a JavaScript callback.
func ReadWeights(name string) ([]byte, error) {
	return pageFetch("fetchWeights", name, "weights/"+name+".web", "weights")
}

// pageFetch calls the page's attractorlab[method](arg), a Promise of a
// Uint8Array, and waits for it; path names the file in errors, what the
// kind of file the page must provide. It blocks the calling goroutine
// until the fetch settles, and must not run inside a JavaScript callback.
func pageFetch(method, arg, path, what string) ([]byte, error) {
	page := js.Global().Get("attractorlab")
	if page.IsUndefined() || page.Get(method).IsUndefined() {
		return nil, fmt.Errorf("the page provides no %s (attractorlab.%s): open the app from its index.html", what, method)
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
		ch <- result{err: fmt.Errorf("fetching %s: %s", path, args[0].Call("toString").String())}
		return nil
	})
	defer ok.Release()
	defer fail.Release()
	page.Call(method, arg).Call("then", ok, fail)
	r := <-ch
	return r.b, r.err
}

// WeightsDeferred tells whether name has not been fetched yet.
func WeightsDeferred(name string) bool {
	page := js.Global().Get("attractorlab")
	if page.IsUndefined() || page.Get("hasWeights").IsUndefined() {
		return false
	}
	return !page.Call("hasWeights", name).Bool()
}

// WeightsHead returns the start of name's file as the page has it before
// fetching the file (files.json: the header length and the JSON header of
// its half-precision form), or an error when the page has none.
func WeightsHead(name string) ([]byte, error) {
	page := js.Global().Get("attractorlab")
	if page.IsUndefined() || page.Get("weightsHead").IsUndefined() {
		return nil, errors.New("the page provides no weights headers (attractorlab.weightsHead): open the app from its index.html")
	}
	u := page.Call("weightsHead", name)
	if u.IsNull() || u.IsUndefined() {
		return nil, fmt.Errorf("the page has no header of weights/%s", name)
	}
	b := make([]byte, u.Get("length").Int())
	js.CopyBytesToGo(b, u)
	return b, nil
}
