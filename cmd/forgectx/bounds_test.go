package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A listed comment past its bound fails the read there with an error naming the bound (not
// "transport error"), and the command exits 1: `status reconcile` against a comment listing
// whose one comment runs past the 64 MiB body bound. The listing is decoded as it streams, so
// reading stops at the 1 MiB comment bound, long before the body bound.
func TestStatusReconcileOversizedResponseNamesTheBound(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write([]byte(`[{"id":1,"body":"`))
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		for i := 0; i < 80; i++ { // 80 MiB, over the 64 MiB API body bound
			n, err := w.Write(chunk)
			served.Add(int64(n))
			if err != nil {
				return
			}
		}
		_, _ = w.Write([]byte(`"}]`))
	}))
	defer srv.Close()
	env := map[string]string{"GITHUB_TOKEN": "ghs_boundTokenValue0123456789abcdefgh", "GITHUB_REPOSITORY": "o/r"}
	code, stdout, stderr := runCLI(t, env, "", "status", "reconcile", "--agent", "triage", "--number", "7", "--api-url", srv.URL, "--comment-author", "bot")
	if code != exitFailed || stdout != "" || !strings.Contains(stderr, "a comment of the answer is over the 1048576-byte bound (reading stopped there)") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 naming the 1048576-byte comment bound", code, stdout, stderr)
	}
	// Two pages are asked (the first failed, so the listing is read on from page 2), each
	// read only to the comment bound plus what the connection buffers.
	srv.Close() // waits for the handlers
	if n := served.Load(); n > 16<<20 {
		t.Fatalf("the server wrote %d bytes; want reading stopped near the 1 MiB comment bound", n)
	}
}

// endlessReader is stdin that never ends (a pipe from /dev/zero), counting what was read.
type endlessReader struct{ n int64 }

func (r *endlessReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	r.n += int64(len(p))
	return len(p), nil
}

// An unbounded filter (--max-source-bytes 0) still stops reading stdin at its ceiling + 1
// byte and fails naming it, instead of growing with the input.
func TestFilterStdinCeiling(t *testing.T) {
	defer func(v int64) { maxFilterInput = v }(maxFilterInput)
	maxFilterInput = 4 << 20
	src := &endlessReader{}
	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"filter"}, src, &out, &errb, func(string) string { return "" }, func() []string { return nil })
	if code != exitFailed || !strings.Contains(errb.String(), "stdin: larger than the 4194304-byte bound") {
		t.Fatalf("exit %d, stderr %q; want exit 1 naming the bound", code, errb.String())
	}
	if src.n > 4<<20+1<<20 {
		t.Fatalf("read %d bytes; want the read to stop within a chunk of the bound", src.n)
	}
}
