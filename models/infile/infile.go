// Package infile opens the files a person names (weights, lessons,
// scenarios, sweep parts, MNIST files, CSV) for reading, the one way every
// input of Attractor Lab is read: the path must be a regular file (a FIFO,
// a device such as /dev/zero, a socket or a directory is refused before a
// byte is read, so nothing hangs or fills memory), and it may hold at most
// a stated number of bytes. Errors name the file, what it was for and the
// allowed size.
package infile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Size caps, in bytes, of the kinds of file the project reads.
const (
	KB = 1 << 10
	MB = 1 << 20
	GB = 1 << 30
)

// ErrTooLarge is wrapped by the error of a file over its cap.
var ErrTooLarge = errors.New("file too large")

// ErrNotRegular is wrapped by the error of a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// File is an open regular file whose reads stop with an error past the cap.
type File struct {
	f    *os.File
	r    io.Reader
	Path string
	What string
	Max  int64
	Size int64 // the size when opened
	read int64
}

// Open opens path for reading. what says what the file is for (a flag such
// as "--weights", or "lesson"); it starts every error message. A path that
// is not a regular file, or is larger than max bytes, is refused.
func Open(path, what string, max int64) (*File, error) {
	f, err := openNoBlock(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, unwrapPath(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s %s: %w", what, path, unwrapPath(err))
	}
	if err := check(st, path, what, max); err != nil {
		f.Close()
		return nil, err
	}
	return &File{f: f, r: f, Path: path, What: what, Max: max, Size: st.Size()}, nil
}

// Stat checks path as Open would, without reading it.
func Stat(path, what string, max int64) (fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, unwrapPath(err))
	}
	if err := check(st, path, what, max); err != nil {
		return nil, err
	}
	return st, nil
}

func check(st fs.FileInfo, path, what string, max int64) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s %s: %w (%s): give a file", what, path, ErrNotRegular, Kind(st.Mode()))
	}
	if st.Size() > max {
		size, limit := Bytes(st.Size()), Bytes(max)
		if size == limit { // rounding hid the difference
			size, limit = fmt.Sprintf("%d bytes", st.Size()), fmt.Sprintf("%d bytes", max)
		}
		return fmt.Errorf("%s %s: %w: %s, the limit is %s", what, path, ErrTooLarge, size, limit)
	}
	return nil
}

// Read reads from the file; past Max bytes it returns an error (a file
// that grew after it was opened).
func (f *File) Read(p []byte) (int, error) {
	if f.read >= f.Max+1 {
		return 0, f.tooLarge()
	}
	if int64(len(p)) > f.Max+1-f.read {
		p = p[:f.Max+1-f.read]
	}
	n, err := f.r.Read(p)
	f.read += int64(n)
	if f.read > f.Max {
		return n - int(f.read-f.Max), f.tooLarge()
	}
	return n, err
}

func (f *File) tooLarge() error {
	return fmt.Errorf("%s %s: %w: it grew past the limit of %s while it was read", f.What, f.Path, ErrTooLarge, Bytes(f.Max))
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// OS is the underlying file, for readers that need ReadAt or Seek; reads
// through it are not capped (Size was checked on Open).
func (f *File) OS() *os.File { return f.f }

// ReadAll reads the whole of path (a regular file of at most max bytes).
func ReadAll(path, what string, max int64) ([]byte, error) {
	f, err := Open(path, what, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 0, f.Size+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				return nil, err
			}
			return nil, fmt.Errorf("%s %s: %w", what, path, unwrapPath(err))
		}
	}
}

// Kind names a file mode's type for messages.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "an irregular file"
}

// Bytes formats a size for messages.
func Bytes(n int64) string {
	switch {
	case n >= GB:
		return fmt.Sprintf("%.1f GB", float64(n)/GB)
	case n >= MB:
		return fmt.Sprintf("%.1f MB", float64(n)/MB)
	case n >= KB:
		return fmt.Sprintf("%.1f KB", float64(n)/KB)
	}
	return fmt.Sprintf("%d bytes", n)
}

// unwrapPath drops a *PathError's repeat of the path (the message names it).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
