// Package inputfile opens the files an operator names as inputs (a harness, a profile, a bot
// registry, an acquisition, a webhook payload, a CI event file) by one rule:
//
//   - the file is opened non-blocking (O_NONBLOCK, O_NOCTTY, O_CLOEXEC), so a FIFO without a
//     writer or a device cannot stall the open;
//   - what was opened must be a regular file (a symlink is judged by its target, checked with
//     fstat on the open descriptor, so nothing can swap it in between); a FIFO, socket,
//     device or directory is refused naming the input and what it is;
//   - it is read through a bound while reading: the read stops at bound+1 bytes and fails
//     with a *tooLargeError naming the input and the bound, never after reading it whole.
//
// Standard input ("-", where a flag allows it) is the one non-regular input: a pipe is read
// through the same bound.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// errNotRegular is matched (errors.Is) by the error of an input that is not a regular file.
var errNotRegular = errors.New("an input must be a regular file")

// ErrTooLarge is matched (errors.Is) by every *tooLargeError.
var ErrTooLarge = errors.New("input too large")

// tooLargeError is a read that went past its bound. Input names what was read (a flag and
// path, "stdin", "response body"), Limit the bound in bytes.
type tooLargeError struct {
	Input string
	Limit int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than the %d-byte bound (reading stopped there)", e.Input, e.Limit)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *tooLargeError) Is(target error) bool { return target == ErrTooLarge }

// Kind names the type of a file mode for an error message: "a FIFO", "a directory", ….
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "not a regular file"
}

// Open opens path as an input under the package rule. The error is an *os.PathError whose Op
// is "open" (missing, unreadable) or "input" (wraps errNotRegular, naming what the path is).
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &os.PathError{Op: "input", Path: path, Err: fmt.Errorf("is %s: %w", Kind(fi.Mode()), errNotRegular)}
	}
	return f, nil
}

// Check opens and closes path: the configuration check of an input read later.
func Check(path string) error {
	f, err := Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// Reader bounds r: it yields at most limit bytes and returns a *tooLargeError naming input as
// soon as a byte past them is read (one byte of look-ahead at the bound, no more).
type Reader struct {
	r     io.Reader
	input string
	limit int64
	n     int64
}

// NewReader returns r read through a bound of limit bytes.
func NewReader(r io.Reader, input string, limit int64) *Reader {
	return &Reader{r: r, input: input, limit: limit}
}

// Read reads at most the bytes left under the bound; at the bound it probes one more byte.
func (b *Reader) Read(p []byte) (int, error) {
	left := b.limit - b.n
	if left <= 0 {
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			b.n += int64(n)
			return 0, &tooLargeError{Input: b.input, Limit: b.limit}
		}
		return 0, err
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}

// BytesRead is how many bytes were taken from the wrapped reader (at most limit+1).
func (b *Reader) BytesRead() int64 { return b.n }

// ReadAll reads the input at path (or stdin for "-" when stdin is not nil) under limit.
func ReadAll(path string, stdin io.Reader, limit int64) ([]byte, error) {
	var r io.Reader
	input := path
	if path == "-" && stdin != nil {
		r, input = stdin, "stdin"
	} else {
		f, err := Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	return io.ReadAll(NewReader(r, input, limit))
}
