package github_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/forgectx/forgectx/pkg/forge/cassette"
	"github.com/forgectx/forgectx/pkg/forge/github"
	"github.com/forgectx/forgectx/test/ghscenario"
)

// unsized serves every answer of next as a chunked one would arrive: no Content-Length
// (header and field). It counts, independently of the adapter, the body bytes served and the
// body bytes the adapter read from it (an answer the adapter does not read to its end, say a
// redirect's body, is served but not read): response_bytes must be the bytes read.
type unsized struct {
	next         http.RoundTripper
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

func (u *unsized) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := u.next.RoundTrip(req)
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
	resp.Body = io.NopCloser(readCounter{Reader: bytes.NewReader(b), u: u})
	return resp, nil
}

// TestStatsCountResponseBytesRead: --stats response_bytes is the body bytes the adapter read,
// also when no answer announced a Content-Length (issue #15: Gitea streams its JSON chunked;
// summing Content-Length reported a fraction of what was read).
func TestStatsCountResponseBytesRead(t *testing.T) {
	s := ghscenario.Small()["pr"]()
	rp, err := cassette.NewReplayer(loadFixture(t, "pr"))
	if err != nil {
		t.Fatal(err)
	}
	tr := &unsized{next: rp}
	cl, err := github.New(github.Options{APIURL: "https://api.github.com", Transport: tr, Receipts: github.ReceiptsFromComments,
		RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond, MaxRateLimitWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := cl.Acquire(ctx, refOf(s), testProfile(kindOf(s))); err != nil {
		t.Fatal(err)
	}
	st := cl.Stats()
	if tr.read == 0 || st.ResponseBytes != tr.read || tr.read > tr.served || tr.read < tr.served*9/10 {
		t.Fatalf("response_bytes = %d, want the %d body bytes read (of %d served)", st.ResponseBytes, tr.read, tr.served)
	}
	var b bytes.Buffer
	if err := st.WriteJSON(&b); err != nil || !bytes.Contains(b.Bytes(), []byte(`"response_bytes": `)) {
		t.Fatalf("--stats document lacks response_bytes: %v\n%s", err, b.String())
	}
}
