package github_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

// TestStatsCountResponseBytesRead: --stats response_bytes is the body bytes the adapter read,
// also when no answer announced a Content-Length (Gitea streams its JSON chunked;
// summing Content-Length reported a fraction of what was read).
func TestStatsCountResponseBytesRead(t *testing.T) {
	s := ghscenario.Small()["pr"]()
	rp, err := cassette.NewReplayer(loadFixture(t, "pr"))
	if err != nil {
		t.Fatal(err)
	}
	u := &httpfake.Unsized{Next: rp}
	cl, err := github.New(github.Options{APIURL: "https://api.github.com", Transport: u, Receipts: github.ReceiptsFromComments,
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
	if read := u.Read(); read == 0 || st.ResponseBytes != read || read < u.Served()*9/10 {
		t.Fatalf("response_bytes = %d, want the %d body bytes read (of %d served)", st.ResponseBytes, read, u.Served())
	}
	var b bytes.Buffer
	if err := st.WriteJSON(&b); err != nil || !bytes.Contains(b.Bytes(), []byte(`"response_bytes": `)) {
		t.Fatalf("--stats document lacks response_bytes: %v\n%s", err, b.String())
	}
}
