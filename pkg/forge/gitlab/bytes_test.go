package gitlab

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/forgectx/forgectx/pkg/forge/httpfake"
)

// unsized hands every answer on as a chunked one arrives: no Content-Length (header and
// field). It counts, independently of the adapter, the body bytes served and those the
// adapter read: response_bytes must be the bytes read.
type unsized struct {
	mu           sync.Mutex
	served, read int64
}

type readCounter struct {
	io.Reader
	u *unsized
}

func (r readCounter) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	r.u.mu.Lock()
	r.u.read += int64(n)
	r.u.mu.Unlock()
	return n, err
}

type unsizedTransport struct {
	u    *unsized
	next http.RoundTripper
}

func (t unsizedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	t.u.mu.Lock()
	t.u.served += int64(len(b))
	t.u.mu.Unlock()
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	resp.Body = io.NopCloser(readCounter{Reader: bytes.NewReader(b), u: t.u})
	return resp, nil
}

// TestGitLabStatsCountResponseBytesRead: --stats response_bytes is the body bytes read, also
// when no answer announced a Content-Length (issue #15: summing Content-Length undercounts a
// chunked answer).
func TestGitLabStatsCountResponseBytesRead(t *testing.T) {
	f := httpfake.New(t)
	expectMRScenario(t, f)
	u := &unsized{}
	c := testClient(t, f, func(o *Options) {
		o.HTTPClient = &http.Client{Transport: unsizedTransport{u: u, next: http.DefaultTransport}}
	})
	acquireMR(t, c)
	s := c.Stats()
	if u.read == 0 || s.ResponseBytes != u.read || u.read > u.served || u.read < u.served*9/10 {
		t.Fatalf("response_bytes = %d, want the %d body bytes read (of %d served)", s.ResponseBytes, u.read, u.served)
	}
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil || !bytes.Contains(b.Bytes(), []byte(`"response_bytes": `)) || !bytes.Contains(b.Bytes(), []byte(`"forge": "gitlab"`)) {
		t.Fatalf("--stats document: %v\n%s", err, b.String())
	}
}
