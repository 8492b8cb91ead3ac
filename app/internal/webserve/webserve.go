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
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Handler serves dir.
func Handler(dir string) http.Handler {
	files := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if r.URL.Query().Get("v") != "" {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		name := path.Clean("/" + r.URL.Path)
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && !strings.HasSuffix(name, "/") && !packed(name) {
			h.Add("Vary", "Accept-Encoding")
			accept := r.Header.Get("Accept-Encoding")
			for _, c := range []struct{ coding, ext string }{{"br", ".br"}, {"gzip", ".gz"}} {
				if !accepts(accept, c.coding) {
					continue
				}
				p := filepath.Join(dir, filepath.FromSlash(name)+c.ext)
				st, err := os.Stat(p)
				if err != nil || !st.Mode().IsRegular() {
					continue
				}
				f, err := os.Open(p)
				if err != nil {
					continue
				}
				defer f.Close()
				if t := mime.TypeByExtension(path.Ext(name)); t != "" {
					h.Set("Content-Type", t)
				}
				h.Set("Content-Encoding", c.coding)
				http.ServeContent(w, r, name, st.ModTime(), f)
				return
			}
		}
		files.ServeHTTP(w, r)
	})
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
