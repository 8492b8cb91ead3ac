// Command webdist assembles the web build's static site (make web): the
// page (assets/web/index.html), Go's wasm_exec.js (keeping short strings:
// execjs.go), the icon, the app's WebAssembly with a gzipped copy, the weights in their transport form
// (half precision, models.WebWeights) and files.json, which tells the page
// every file's size and which weights it fetches before the app starts.
//
//	go run ./app/internal/webdist -wasm FILE -exec GOROOT/lib/wasm/wasm_exec.js -out DIR
//	go run ./app/internal/webdist -serve DIR [-addr 127.0.0.1:8080]
//
// The second serves a built site as docs/browser.md asks of a server
// (package webserve: the app's Brotli or gzipped copy with its
// Content-Encoding, this build's app cached for good): make serve-web.
//
// DIR is written whole or not at all: the site is built beside it and
// renamed into place, so a failed run leaves the last site as it was.
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"attractorlab/app/internal/webserve"
	"attractorlab/assets"
	"attractorlab/models"
)

// preload: the weights the page fetches as the app starts (the opening
// model's; the window's first frame does not wait for them); the others
// come on first use, the app describing them meanwhile from their headers
// (Files.Heads).
var preload = map[string]bool{"bsa-p2.safetensors": true}

// Files is files.json.
type Files struct {
	Wasm struct {
		File string `json:"file"`
		Raw  int    `json:"raw"`
		GZ   int    `json:"gz"`
		BR   int    `json:"br"` // attractorlab.wasm.br: Brotli, for a server that sends it
		// Sum names this build's app (the first 16 hex digits of its
		// SHA-256): the page asks for attractorlab.wasm?v=SUM, which a
		// browser may keep as long as it likes.
		Sum string `json:"sum"`
	} `json:"wasm"`
	Weights map[string]int `json:"weights"` // name → bytes of weights/NAME.web
	// Data are the data sets' files the page fetches when a data set is
	// first chosen (Fashion-MNIST's sample): path under data/ → bytes.
	Data    map[string]int `json:"data"`
	Preload []string       `json:"preload"`
	// Heads: each weights file's start in half precision (the 8-byte
	// header length and the JSON header; base64 in JSON), which describes
	// a model before its file is fetched.
	Heads map[string][]byte `json:"heads"`
	// FirstVisit is what a first visit downloads to run the opening
	// model, with gzip: files.json itself, the page, wasm_exec.js, the
	// icon, the gzipped wasm and the preloaded weights.
	FirstVisit int `json:"first_visit"`
	// FirstVisitBr is the same where the server sends the app's Brotli
	// copy (make serve-web; Caddy's precompressed br).
	FirstVisitBr int `json:"first_visit_br"`
	// BeforeStart and BeforeStartBr are what the page waits for before it
	// starts the app (FirstVisit and FirstVisitBr without the preloaded
	// weights, which come as it starts): all the window's first frame
	// needs.
	BeforeStart   int `json:"before_start"`
	BeforeStartBr int `json:"before_start_br"`
}

func main() {
	wasm := flag.String("wasm", "", "the app built with GOOS=js GOARCH=wasm -tags webweights")
	execJS := flag.String("exec", "", "Go's wasm_exec.js (its GOROOT/lib/wasm), which starts the app in the page")
	out := flag.String("out", "dist/web", "the site's folder (replaced whole)")
	serveDir := flag.String("serve", "", "serve this built site (make web's folder) instead of building one")
	addr := flag.String("addr", "127.0.0.1:8080", "with -serve: the address to listen on")
	flag.Parse()
	if *serveDir != "" {
		if err := serve(*serveDir, *addr); err != nil {
			fmt.Fprintln(os.Stderr, "webdist:", err)
			os.Exit(1)
		}
		return
	}
	if err := build(*wasm, *execJS, *out); err != nil {
		fmt.Fprintln(os.Stderr, "webdist:", err)
		os.Exit(1)
	}
}

func build(wasmPath, execPath, out string) error {
	if wasmPath == "" {
		return errors.New("-wasm: name the app's WebAssembly (GOOS=js GOARCH=wasm go build -tags webweights)")
	}
	code, err := os.ReadFile(wasmPath)
	if err != nil {
		return fmt.Errorf("-wasm: %w", err)
	}
	if !bytes.HasPrefix(code, []byte("\x00asm")) {
		return fmt.Errorf("-wasm %s: not WebAssembly (no \\0asm header)", wasmPath)
	}
	if execPath == "" {
		return errors.New("-exec: name Go's wasm_exec.js ($(go env GOROOT)/lib/wasm/wasm_exec.js), of the Go that built the app")
	}
	execJS, err := os.ReadFile(execPath)
	if err != nil {
		return fmt.Errorf("-exec: %w", err)
	}
	execJS, ok := withShortStrings(execJS)
	if !ok {
		fmt.Fprintf(os.Stderr, "webdist: -exec %s: its loadString is not Go 1.26's; copied as it is, without keeping short strings (execjs.go)\n", execPath)
	}
	out = filepath.Clean(out)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	write := func(name string, b []byte) error {
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, b, 0o644)
	}
	var f Files
	f.Wasm.File = "attractorlab.wasm"
	f.Wasm.Raw = len(code)
	sum := sha256.Sum256(code)
	f.Wasm.Sum = hex.EncodeToString(sum[:8])
	gz, err := gzipBest(code)
	if err != nil {
		return err
	}
	f.Wasm.GZ = len(gz)
	br, err := brotli(code)
	if err != nil {
		return err
	}
	f.Wasm.BR = len(br)
	page := assets.WebPage
	for _, w := range []struct {
		name string
		b    []byte
	}{{"index.html", page}, {"wasm_exec.js", execJS}, {"worker.js", assets.WebWorker}, {"icon.png", assets.Icon}, {"attractorlab.wasm", code}, {"attractorlab.wasm.gz", gz}, {"attractorlab.wasm.br", br}} {
		if err := write(w.name, w.b); err != nil {
			return err
		}
	}
	first, later := len(gz)+len(assets.Icon), 0
	for _, b := range [][]byte{page, execJS} {
		g, err := gzipBest(b)
		if err != nil {
			return err
		}
		first += len(g)
	}
	names, err := assets.WeightNames()
	if err != nil {
		return err
	}
	f.Weights, f.Heads = map[string]int{}, map[string][]byte{}
	for _, name := range names {
		raw, err := assets.ReadWeights(name)
		if err != nil {
			return err
		}
		f16, err := models.HalfWeights(raw, name)
		if err != nil {
			return err
		}
		web, err := models.WrapWeb(f16)
		if err != nil {
			return err
		}
		if err := write("weights/"+name+".web", web); err != nil {
			return err
		}
		f.Heads[name] = f16[:8+binary.LittleEndian.Uint64(f16)]
		f.Weights[name] = len(web)
		if preload[name] {
			f.Preload = append(f.Preload, name)
			later += len(web)
		}
	}
	for name := range preload {
		if _, ok := f.Weights[name]; !ok {
			return fmt.Errorf("the page preloads %s, which assets/weights does not hold", name)
		}
	}
	// Fashion-MNIST's sample, as the desktop app embeds it, for the page
	// to fetch when Fashion-MNIST is first chosen.
	f.Data = map[string]int{}
	ents, err := assets.FashionFiles.ReadDir("fashion")
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".gz") && !strings.HasSuffix(e.Name(), ".bin") {
			continue
		}
		b, err := assets.FashionFiles.ReadFile("fashion/" + e.Name())
		if err != nil {
			return err
		}
		if err := write("data/fashion/"+e.Name(), b); err != nil {
			return err
		}
		f.Data["fashion/"+e.Name()] = len(b)
	}
	meta, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	// files.json counts itself: its four sizes, written as 0 above, take
	// at most 7 more digits each.
	f.BeforeStart = first + len(meta) + 28
	f.BeforeStartBr = f.BeforeStart - len(gz) + len(br)
	f.FirstVisit = f.BeforeStart + later
	f.FirstVisitBr = f.BeforeStartBr + later
	if meta, err = json.MarshalIndent(f, "", "  "); err != nil {
		return err
	}
	if err := write("files.json", append(meta, '\n')); err != nil {
		return err
	}
	// Into place: the old site goes only once the new one is whole.
	old := ""
	if _, err := os.Stat(out); err == nil {
		old = tmp + ".old"
		if err := os.Rename(out, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, out); err != nil {
		if old != "" {
			os.Rename(old, out)
		}
		return err
	}
	if old != "" {
		os.RemoveAll(old)
	}
	fmt.Printf("web: %s (before the start %.1f MB with gzip, %.1f MB with Brotli: app %.1f MB, %.1f MB of %.1f MB; then weights %s, %.1f MB)\n",
		out, float64(f.BeforeStart)/1e6, float64(f.BeforeStartBr)/1e6, float64(f.Wasm.GZ)/1e6, float64(f.Wasm.BR)/1e6, float64(f.Wasm.Raw)/1e6, strings.Join(f.Preload, ", "), float64(later)/1e6)
	return nil
}

// serve serves the built site dir on addr until interrupted.
func serve(dir, addr string) error {
	if _, err := os.Stat(filepath.Join(dir, "files.json")); err != nil {
		return fmt.Errorf("-serve %s: not a built site (no files.json; make web builds one)", dir)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("-addr %s: %w", addr, err)
	}
	fmt.Printf("serving %s on http://%s/ (Ctrl-C stops it)\n", dir, ln.Addr())
	return http.Serve(ln, webserve.Handler(dir))
}

// brotliQuality: Brotli's quality for the app. 9 packs it to 11.5 MB in
// 12 s here; 10 and 11 take 10.5 and 10.2 MB but 67 s and 169 s, which
// every make web (and make test) would pay.
const brotliQuality = "9"

// brotli packs b with Google's brotli (Debian's brotli; make web installs
// it), its window at the largest (16 MB).
func brotli(b []byte) ([]byte, error) {
	exe, err := exec.LookPath("brotli")
	if err != nil {
		return nil, errors.New("brotli is not installed (Debian's brotli: make web installs it), and the app's Brotli copy needs it")
	}
	var out, msg bytes.Buffer
	cmd := exec.Command(exe, "-q", brotliQuality, "-w", "24", "-c", "-")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(b), &out, &msg
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("brotli: %v %s", err, strings.TrimSpace(msg.String()))
	}
	return out.Bytes(), nil
}

func gzipBest(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	z, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := z.Write(b); err != nil {
		return nil, err
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
