package forge_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/forgectx/forgectx/internal/forge"
)

// A chunked answer announces no Content-Length: CountBody counts the bytes as they are read.
func TestCountBodyCountsChunkedBytesRead(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 3; i++ {
			_, _ = io.WriteString(w, `[{"id":1}]`)
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ContentLength != -1 {
		t.Fatalf("Content-Length %d: the answer is not chunked", resp.ContentLength)
	}
	var n int64
	body := forge.CountBody(resp.Body, func(k int64) { n += k })
	read, err := io.Copy(io.Discard, body)
	_ = body.Close()
	if err != nil || n != 30 || read != 30 {
		t.Fatalf("counted %d of %d bytes read (%v), want 30", n, read, err)
	}
}
