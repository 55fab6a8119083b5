package retry

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

type bothTransport struct{ closed *bool }

type closeBody struct {
	io.Reader
	closed *bool
}

func (b closeBody) Close() error { *b.closed = true; return nil }

func (t bothTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 503, Body: closeBody{strings.NewReader("x"), t.closed}}, errors.New("giving up")
}

// A round-tripper that answers with a response and an error (retryablehttp giving up) is
// reduced to the error, and the response's body is closed so its connection is not held.
func TestStandardClientTransportDropsTheResponseOfAnError(t *testing.T) {
	closed := false
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/x", nil)
	resp, err := oneOf{bothTransport{&closed}}.RoundTrip(req)
	if resp != nil || err == nil || !closed {
		t.Fatalf("resp %v, err %v, body closed %v; want no response, the error, the body closed", resp, err, closed)
	}
}
