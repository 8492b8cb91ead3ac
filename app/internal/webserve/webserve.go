// Package webserve serves the web build's folder (make web's dist/web) as
// a well-set web server would, which is what lets a returning visitor's
// browser start the app from the machine code it compiled last time:
//
//   - A file with a packed copy beside it (attractorlab.wasm.br, .gz) is
//     sent as that copy with its Content-Encoding to a browser that
//     accepts it, Brotli first: so the page can fetch attractorlab.wasm
//     itself and compile it as it streams in
//     (WebAssembly.compileStreaming). Chromium keeps the compiled code
//     beside the HTTP cache's entry of such a response only.
//   - A request carrying the build's version (?v=…, the page's way of
//     asking for this build's app) may be cached for a year and never
//     revalidated: a revalidation renews the cache entry, and Chromium then
//     throws the compiled code away. Everything else is revalidated on each
//     visit (no-cache), so a new build is seen at once.
//
// nginx (gzip_static on; brotli_static with Google's module) and Caddy
// (file_server { precompressed br gzip }) do the first; docs/browser.md says how to set the second. make serve-web and
// the browser test use this package.
package webserve

import (
	"fmt"
	"mime"
	"net/http"
	"path"
	"strings"
)

// Handler serves dir.
func Handler(dir string) http.Handler {
	root := http.Dir(dir)
	files := http.FileServer(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// This build's address may be kept for good, but only what was
		// found: a 404 during a deployment must not be kept a year.
		w = &cacheWriter{ResponseWriter: w, keep: r.URL.Query().Get("v") != ""}
		name := path.Clean("/" + r.URL.Path)
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && !strings.HasSuffix(name, "/") && !packed(name) {
			w.Header().Add("Vary", "Accept-Encoding")
			accept := r.Header.Get("Accept-Encoding")
			for _, c := range []struct{ coding, ext string }{{"br", ".br"}, {"gzip", ".gz"}} {
				if !accepts(accept, c.coding) {
					continue
				}
				// Through http.Dir, which keeps every name inside dir.
				f, err := root.Open(name + c.ext)
				if err != nil {
					continue
				}
				defer f.Close()
				st, err := f.Stat()
				if err != nil || !st.Mode().IsRegular() {
					continue
				}
				h := w.Header()
				t := mime.TypeByExtension(path.Ext(name))
				if t == "" {
					t = "application/octet-stream"
				}
				h.Set("Content-Type", t)
				h.Set("Content-Encoding", c.coding)
				// Each copy its own tag, so a resumed range never mixes
				// them.
				h.Set("ETag", fmt.Sprintf(`"%x-%x-%s"`, st.ModTime().UnixNano(), st.Size(), c.coding))
				http.ServeContent(w, r, name, st.ModTime(), f)
				return
			}
		}
		files.ServeHTTP(w, r)
	})
}

// cacheWriter sets Cache-Control as the status goes out: a year, never
// revalidated, for what was found at this build's address (keep); no-cache
// (revalidated at each use) for everything else.
type cacheWriter struct {
	http.ResponseWriter
	keep, done bool
}

func (w *cacheWriter) WriteHeader(code int) {
	if !w.done {
		w.done = true
		if w.keep && (code == http.StatusOK || code == http.StatusPartialContent || code == http.StatusNotModified) {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *cacheWriter) Write(b []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// packed: a compressed copy itself, sent as it is.
func packed(name string) bool {
	return strings.HasSuffix(name, ".gz") || strings.HasSuffix(name, ".br")
}

// accepts: the Accept-Encoding header names coding with a quality other
// than 0.
func accepts(header, coding string) bool {
	for _, part := range strings.Split(header, ",") {
		c, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(c), coding) {
			continue
		}
		params = strings.ReplaceAll(params, " ", "")
		return params != "q=0" && params != "q=0.0" && params != "q=0.00" && params != "q=0.000"
	}
	return false
}
