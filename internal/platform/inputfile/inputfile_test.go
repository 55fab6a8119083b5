package inputfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An input must be a regular file: a FIFO without a writer, a directory and a character
// device are refused at once (no hang), naming what the path is; a symlink to a regular file
// is followed.
func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(dir, "reg")
	if err := os.WriteFile(reg, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	fifoLink := filepath.Join(dir, "fifo-link")
	if err := os.Symlink(fifo, fifoLink); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, "is a FIFO"},
		{fifoLink, "is a FIFO"},
		{dir, "is a directory"},
		{"/dev/zero", "is a character device"},
	} {
		done := make(chan error, 1)
		go func() { _, err := Open(tc.path); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, errNotRegular) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("Open(%s) = %v; want ErrNotRegular naming the path and %q", tc.path, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Open(%s) hangs", tc.path)
		}
	}
	for _, p := range []string{reg, link} {
		f, err := Open(p)
		if err != nil {
			t.Fatalf("Open(%s): %v", p, err)
		}
		f.Close()
	}
}

// countingReader counts what the bounded reader took from an endless source.
type countingReader struct{ n int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	c.n += int64(len(p))
	return len(p), nil
}

// The bound holds while reading: an endless source is read to bound+1 bytes, no further, and
// the error names the input and the bound.
func TestReaderStopsAtBoundPlusOne(t *testing.T) {
	src := &countingReader{}
	b, err := io.ReadAll(NewReader(src, "--payload -", 1000))
	var tl *tooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, ErrTooLarge) || tl.Limit != 1000 || tl.Input != "--payload -" {
		t.Fatalf("err = %v; want a *TooLargeError for --payload - at 1000", err)
	}
	if len(b) != 1000 || src.n != 1001 {
		t.Fatalf("returned %d bytes, read %d from the source; want 1000 and 1001", len(b), src.n)
	}
	for _, tc := range []struct {
		body string
		ok   bool
	}{{"", true}, {strings.Repeat("x", 1000), true}, {strings.Repeat("x", 1001), false}} {
		got, err := io.ReadAll(NewReader(strings.NewReader(tc.body), "in", 1000))
		if (err == nil) != tc.ok || (tc.ok && string(got) != tc.body) {
			t.Errorf("%d bytes: err %v", len(tc.body), err)
		}
	}
}

// ReadAll of a device path refuses it before reading; of stdin reads through the bound.
func TestReadAllDeviceAndStdin(t *testing.T) {
	if _, err := ReadAll("/dev/zero", nil, 10); !errors.Is(err, errNotRegular) {
		t.Fatalf("ReadAll(/dev/zero) = %v; want ErrNotRegular", err)
	}
	src := &countingReader{}
	if _, err := ReadAll("-", src, 10); !errors.Is(err, ErrTooLarge) || src.n != 11 {
		t.Fatalf("ReadAll(-) = %v after %d bytes; want ErrTooLarge after 11", err, src.n)
	}
}
