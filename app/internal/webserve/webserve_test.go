package webserve

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// TestHandler: a packed copy goes with its Content-Encoding and the
// uncompressed file's type to a browser that accepts it (Brotli before
// gzip), the file itself to one that accepts neither; this build's address (?v=) may be kept for good,
// the rest is revalidated.
func TestHandler(t *testing.T) {
	dir := t.TempDir()
	raw := bytes.Repeat([]byte("\x00asm\x01\x00\x00\x00"), 1000)
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	z.Write(raw)
	z.Close()
	br := []byte("a Brotli stream stands here") // served as it is, never read
	for name, b := range map[string][]byte{"app.wasm": raw, "app.wasm.gz": gz.Bytes(), "app.wasm.br": br, "files.json": []byte(`{}`)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(Handler(dir))
	defer srv.Close()
	get := func(path, accept string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest("GET", srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Set by hand: Go's client then leaves the body as sent.
		req.Header.Set("Accept-Encoding", accept)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}
	for _, c := range []struct {
		path, accept, encoding, cache string
		body                          []byte
	}{
		{"/app.wasm?v=1234", "gzip, deflate, br, zstd", "br", "public, max-age=31536000, immutable", br},
		{"/app.wasm?v=1234", "gzip, deflate", "gzip", "public, max-age=31536000, immutable", gz.Bytes()},
		{"/app.wasm", "br;q=0, gzip;q=0.8", "gzip", "no-cache", gz.Bytes()},
		{"/app.wasm", "br;q=1.0", "br", "no-cache", br},
		{"/app.wasm?v=1234", "identity", "", "public, max-age=31536000, immutable", raw},
		{"/app.wasm", "gzip;q=0", "", "no-cache", raw},
		{"/app.wasm.gz", "gzip", "", "no-cache", gz.Bytes()},
		{"/app.wasm.br", "br", "", "no-cache", br},
		{"/files.json", "gzip", "", "no-cache", []byte(`{}`)},
	} {
		resp, body := get(c.path, c.accept)
		if resp.StatusCode != 200 {
			t.Errorf("%s (Accept-Encoding %q): status %d", c.path, c.accept, resp.StatusCode)
			continue
		}
		if got := resp.Header.Get("Content-Encoding"); got != c.encoding {
			t.Errorf("%s (Accept-Encoding %q): Content-Encoding %q, want %q", c.path, c.accept, got, c.encoding)
		}
		if got := resp.Header.Get("Cache-Control"); got != c.cache {
			t.Errorf("%s: Cache-Control %q, want %q", c.path, got, c.cache)
		}
		if !bytes.Equal(body, c.body) {
			t.Errorf("%s (Accept-Encoding %q): %d bytes, not the %d expected", c.path, c.accept, len(body), len(c.body))
		}
		if c.path != "/files.json" && c.path != "/app.wasm.gz" && c.path != "/app.wasm.br" {
			if got := resp.Header.Get("Content-Type"); got != "application/wasm" {
				t.Errorf("%s (Accept-Encoding %q): Content-Type %q, want application/wasm", c.path, c.accept, got)
			}
		}
	}
	// What is not found is never kept, not even at this build's address.
	for _, p := range []string{"/missing.wasm", "/missing.wasm?v=1234"} {
		if resp, _ := get(p, "gzip"); resp.StatusCode != 404 || resp.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("%s: status %d, Cache-Control %q; want 404, no-cache", p, resp.StatusCode, resp.Header.Get("Cache-Control"))
		}
	}
	// A name that climbs out of the folder stays in it.
	outside := filepath.Join(filepath.Dir(dir), "secret.wasm")
	if err := os.WriteFile(outside+".gz", gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(outside + ".gz")
	for _, p := range []string{"/../secret.wasm", "/%2e%2e/secret.wasm", `/..\secret.wasm`} {
		if resp, _ := get(p, "gzip"); resp.StatusCode == 200 {
			t.Errorf("%s: status 200, a file outside the folder served", p)
		}
	}
	// Each packed copy has its own tag.
	b1, _ := get("/app.wasm", "br")
	b2, _ := get("/app.wasm", "gzip")
	if e1, e2 := b1.Header.Get("ETag"), b2.Header.Get("ETag"); e1 == "" || e1 == e2 {
		t.Errorf("the Brotli and gzip copies' ETags %q and %q: want two different tags", e1, e2)
	}
}
