package acquisition

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// endless is an unseekable source (a pipe on stdin) of one byte repeated, counting what was
// taken from it.
type endless struct {
	b byte
	n int64
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.b
	}
	e.n += int64(len(p))
	return len(p), nil
}

// A pipe of bytes that are not JSON (stdin from /dev/zero) fails at the first of them: the
// read stops within the decoder's first buffer instead of reading to the 1 GiB bound first.
func TestReadFromPipeStopsAtFirstNonJSONByte(t *testing.T) {
	src := &endless{b: 0}
	_, err := Read(struct{ io.Reader }{src})
	if err == nil || !strings.Contains(err.Error(), "invalid character") {
		t.Fatalf("err = %v; want a JSON syntax error", err)
	}
	if src.n > 1<<20 {
		t.Fatalf("read %d bytes of a non-JSON pipe before failing; want at most 1 MiB", src.n)
	}
}

// A pipe gives the same result and the same ranked error as a seekable reader.
func TestReadFromPipeMatchesSeekable(t *testing.T) {
	for _, doc := range []string{
		`{"acquisition_version":1,"source":{},"extra":1}`,
		`{"extra":1,"acquisition_version":99}`,
		`{"acquisition_version":1,"Source":{}}`,
		`{"acquisition_version":1} x`,
		`[1]`,
	} {
		_, want := Read(strings.NewReader(doc))
		_, got := Read(struct{ io.Reader }{strings.NewReader(doc)})
		if (want == nil) != (got == nil) || (want != nil && want.Error() != got.Error()) {
			t.Errorf("%s: pipe %v, seekable %v", doc, got, want)
		}
	}
}

// countingSeeker is a seekable source counting the bytes read from it.
type countingSeeker struct {
	io.ReadSeeker
	n int64
}

func (c *countingSeeker) Read(p []byte) (int, error) {
	n, err := c.ReadSeeker.Read(p)
	c.n += int64(n)
	return n, err
}

// A seekable document that is not JSON (a file of NUL bytes) fails at its first byte too: the
// syntax error is final, so the document is not then read whole to rank it (it was, up to the
// 1 GiB bound, holding it in memory).
func TestReadSeekableStopsAtFirstNonJSONByte(t *testing.T) {
	src := &countingSeeker{ReadSeeker: strings.NewReader(strings.Repeat("\x00", 64<<20))}
	_, err := Read(src)
	if err == nil || !strings.Contains(err.Error(), "invalid character") {
		t.Fatalf("err = %v; want a JSON syntax error", err)
	}
	if src.n > 1<<20 {
		t.Fatalf("read %d bytes of a non-JSON document before failing; want at most 1 MiB", src.n)
	}
}

// A regular file larger than the bound is refused by its size, before any read.
func TestReadRefusesAnOversizedFileBeforeReading(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(maxDocumentBytes + 1); err != nil { // sparse: no disk used
		t.Skipf("sparse file: %v", err)
	}
	start := time.Now()
	_, err = Read(f)
	if err == nil || err.Error() != "acquisition: document larger than 1073741824 bytes" {
		t.Fatalf("err = %v; want the size bound named", err)
	}
	if off, _ := f.Seek(0, io.SeekCurrent); off != 0 {
		t.Fatalf("read to offset %d before refusing; want no read", off)
	}
	t.Logf("refused in %s", time.Since(start))
}
