package gitlab

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/forgectx/forgectx/test/httpfake"
)

// TestGitLabStatsCountResponseBytesRead: --stats response_bytes is the body bytes read, also
// when no answer announced a Content-Length (summing Content-Length undercounts a
// chunked answer); the document names its forge.
func TestGitLabStatsCountResponseBytesRead(t *testing.T) {
	f := httpfake.New(t)
	expectMRScenario(t, f)
	u := &httpfake.Unsized{}
	c := testClient(t, f, func(o *Options) { o.HTTPClient = &http.Client{Transport: u} })
	acquireMR(t, c)
	s := c.Stats()
	if read := u.Read(); read == 0 || s.ResponseBytes != read || read < u.Served()*9/10 {
		t.Fatalf("response_bytes = %d, want the %d body bytes read (of %d served)", s.ResponseBytes, read, u.Served())
	}
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil || !bytes.Contains(b.Bytes(), []byte(`"response_bytes": `)) || !bytes.Contains(b.Bytes(), []byte(`"forge": "gitlab"`)) {
		t.Fatalf("--stats document: %v\n%s", err, b.String())
	}
}
