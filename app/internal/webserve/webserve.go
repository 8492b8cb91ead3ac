// Package webserve serves the web build's folder (make web's dist/web) as
// a well-set web server would, which is what lets a returning visitor's
// browser start the app from the machine code it compiled last time:
//
//   - A file with a gzipped copy beside it (attractorlab.wasm.gz) is sent
//     as that copy with Content-Encoding: gzip to a browser that accepts
//     gzip, so the page can fetch attractorlab.wasm itself and compile it
//     as it streams in (WebAssembly.compileStreaming). Chromium keeps the
//     compiled code beside the HTTP cache's entry of such a response only.
//   - A request carrying the build's version (?v=…, the page's way of
//     asking for this build's app) may be cached for a year and never
//     revalidated: a revalidation renews the cache entry, and Chromium then
//     throws the compiled code away. Everything else is revalidated on each
//     visit (no-cache), so a new build is seen at once.
//
// nginx (gzip_static on) and Caddy (file_server { precompressed gzip }) do
// the first; docs/browser.md says how to set the second. make serve-web and
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
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && !strings.HasSuffix(name, "/") && !strings.HasSuffix(name, ".gz") {
			h.Add("Vary", "Accept-Encoding")
			if acceptsGzip(r.Header.Get("Accept-Encoding")) {
				gz := filepath.Join(dir, filepath.FromSlash(name)+".gz")
				if st, err := os.Stat(gz); err == nil && st.Mode().IsRegular() {
					f, err := os.Open(gz)
					if err == nil {
						defer f.Close()
						if t := mime.TypeByExtension(path.Ext(name)); t != "" {
							h.Set("Content-Type", t)
						}
						h.Set("Content-Encoding", "gzip")
						http.ServeContent(w, r, name, st.ModTime(), f)
						return
					}
				}
			}
		}
		files.ServeHTTP(w, r)
	})
}

// acceptsGzip: the Accept-Encoding header names gzip with a quality other
// than 0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		params = strings.ReplaceAll(params, " ", "")
		return params != "q=0" && params != "q=0.0" && params != "q=0.00" && params != "q=0.000"
	}
	return false
}
