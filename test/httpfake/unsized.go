package httpfake

import (
	"bytes"
	"io"
	"net/http"
	"sync"
)

// Unsized wraps a transport so that every answer arrives as a chunked one does: without
// Content-Length (header and field). It counts, independently of the client under test, the
// body bytes served and the body bytes the client read from them (an answer the client does
// not read to its end is served but not read): a --stats response_bytes that sums
// Content-Length reads 0 here, one that counts the bytes read matches Read.
type Unsized struct {
	Next http.RoundTripper // nil: http.DefaultTransport

	mu           sync.Mutex
	served, read int64
}

// Served and Read are the body bytes handed to the client and read by it so far.
func (u *Unsized) Served() int64 { u.mu.Lock(); defer u.mu.Unlock(); return u.served }

// Read is the body bytes the client read so far.
func (u *Unsized) Read() int64 { u.mu.Lock(); defer u.mu.Unlock(); return u.read }

// RoundTrip implements http.RoundTripper.
func (u *Unsized) RoundTrip(req *http.Request) (*http.Response, error) {
	next := u.Next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	u.served += int64(len(b))
	u.mu.Unlock()
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	resp.Body = io.NopCloser(&readCounter{r: bytes.NewReader(b), u: u})
	return resp, nil
}

type readCounter struct {
	r io.Reader
	u *Unsized
}

func (c *readCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.u.mu.Lock()
	c.u.read += int64(n)
	c.u.mu.Unlock()
	return n, err
}
