package retry

import (
	"net/http"

	"github.com/hashicorp/go-retryablehttp"
)

// StandardClient is rc.StandardClient() with a transport that returns a response or an error,
// never both. With the passthrough error handler (Apply) retryablehttp hands back the last
// response together with the error when it gives up (a cancelled read-ahead page, for one);
// net/http would then print an unstructured line to stderr and drop the response without
// closing its body, holding the connection. Every retrying client of the forge layer is made
// here.
func StandardClient(rc *retryablehttp.Client) *http.Client {
	return &http.Client{Transport: oneOf{&retryablehttp.RoundTripper{Client: rc}}}
}

// oneOf closes and drops the response of a round trip that also failed.
type oneOf struct{ next http.RoundTripper }

func (t oneOf) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil && resp != nil {
		resp.Body.Close()
		resp = nil
	}
	return resp, err
}
