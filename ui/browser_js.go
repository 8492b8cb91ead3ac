//go:build js

package ui

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"path/filepath"
	"syscall/js"

	"fyne.io/fyne/v2"

	_ "attractorlab/ui/fyneclock" // Fyne's caches read a coarse clock
)

// In the browser there is no file system to save into or open from: a
// save is the browser's download (which never replaces a file: the
// browser names a second copy) and Open is the browser's file picker.

func init() {
	browserSave = download
	browserOpen = pickFile
	lettersAsRunes = true
}

// download hands data to the browser as the download name.
func download(name string, data []byte) error {
	doc := js.Global().Get("document")
	u8 := js.Global().Get("Uint8Array").New(len(data))
	js.CopyBytesToJS(u8, data)
	kind := mime.TypeByExtension(filepath.Ext(name))
	if kind == "" {
		kind = "application/octet-stream"
	}
	opts := js.Global().Get("Object").New()
	opts.Set("type", kind)
	blob := js.Global().Get("Blob").New(js.Global().Get("Array").New(u8), opts)
	url := js.Global().Get("URL").Call("createObjectURL", blob)
	a := doc.Call("createElement", "a")
	a.Set("href", url)
	a.Set("download", name)
	a.Get("style").Set("display", "none")
	doc.Get("body").Call("appendChild", a)
	a.Call("click")
	a.Call("remove")
	// The download has its own copy once started: the URL can go a little
	// later (revoking it at once can cancel the download in some browsers).
	js.Global().Call("setTimeout", js.FuncOf(func(js.Value, []js.Value) any {
		js.Global().Get("URL").Call("revokeObjectURL", url)
		return nil
	}), 60000)
	return nil
}

// pickFile shows the browser's file picker for .json files; open gets the
// chosen file's bytes on Fyne's goroutine (a file over max is refused by
// name before it is read). Choosing nothing does nothing.
func pickFile(what string, max int64, open func(r io.Reader, name string) error, report func(error)) {
	doc := js.Global().Get("document")
	in := doc.Call("createElement", "input")
	in.Set("type", "file")
	in.Set("accept", ".json,application/json")
	in.Get("style").Set("display", "none")
	doc.Get("body").Call("appendChild", in)
	var changed js.Func
	var cancelled js.Func
	changed = js.FuncOf(func(js.Value, []js.Value) any {
		defer changed.Release()
		defer cancelled.Release()
		files := in.Get("files")
		in.Call("remove")
		if files.Get("length").Int() == 0 {
			return nil
		}
		f := files.Index(0)
		name := f.Get("name").String()
		if size := int64(f.Get("size").Float()); size > max {
			err := fmt.Errorf("%s %s: %d bytes, over the limit of %d bytes for a %s file", what, name, size, max, what)
			fyne.Do(func() { report(err) })
			return nil
		}
		var done, failed js.Func
		done = js.FuncOf(func(_ js.Value, args []js.Value) any {
			defer done.Release()
			defer failed.Release()
			u8 := js.Global().Get("Uint8Array").New(args[0])
			b := make([]byte, u8.Get("length").Int())
			js.CopyBytesToGo(b, u8)
			fyne.Do(func() {
				if err := open(bytes.NewReader(b), name); err != nil {
					report(err)
				}
			})
			return nil
		})
		failed = js.FuncOf(func(_ js.Value, args []js.Value) any {
			defer done.Release()
			defer failed.Release()
			err := fmt.Errorf("%s %s: the browser could not read it: %s", what, name, args[0].Call("toString").String())
			fyne.Do(func() { report(err) })
			return nil
		})
		f.Call("arrayBuffer").Call("then", done, failed)
		return nil
	})
	in.Call("addEventListener", "change", changed)
	cancelled = js.FuncOf(func(js.Value, []js.Value) any {
		cancelled.Release()
		changed.Release()
		in.Call("remove")
		return nil
	})
	in.Call("addEventListener", "cancel", cancelled)
	in.Call("click")
}
