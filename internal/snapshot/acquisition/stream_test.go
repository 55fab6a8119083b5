package acquisition

import (
	"io"
	"strings"
	"testing"
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
