package rework

import (
	"net/http"
	"testing"

	"github.com/forgectx/forgectx/test/httpfake"
)

// TestCrossOriginRedirectNotFollowed: the shared client hands a redirect to another origin
// back unfollowed, so the token never reaches that host and the capture fails closed.
func TestCrossOriginRedirectNotFollowed(t *testing.T) {
	w := reworkWorld()
	other := httpfake.New(t) // no expectation: any request fails the test
	f := httpfake.New(t)
	f.Expect("GET", "/api/v1/version", httpfake.Redirect(other.URL+"/api/v1/version"))
	res, _ := runGate(t, newRun(t, f, targetJSON(w), contractJSON()))
	if res.Decision.Decision != DecisionBlocked || !hasReason(res.Decision, ReasonCaptureFailed) {
		t.Fatalf("decision %s %v, want blocked capture_failed", res.Decision.Decision, reasonsOf(res.Decision))
	}
	if n := len(other.Served()); n != 0 {
		t.Errorf("the other origin served %d requests", n)
	}
}

// TestRetryLogEndpointNamesNoRepository: the retry log line's endpoint template carries no
// owner, repository, number or query.
func TestRetryLogEndpointNamesNoRepository(t *testing.T) {
	for in, want := range map[string]string{
		"https://git.example/api/v1/version":                                         "GET /version",
		"https://git.example/api/v1/repos/acme/demo":                                 "GET /repos/{owner}/{repo}",
		"https://git.example/api/v1/repos/acme/demo/pulls/9/reviews?limit=50&page=2": "GET /repos/{owner}/{repo}/pulls/{n}/reviews",
		"https://git.example/sub/api/v1/repos/acme/42/pulls/9/reviews/77/comments":   "GET /repos/{owner}/{repo}/pulls/{n}/reviews/{n}/comments",
	} {
		req, err := http.NewRequest(http.MethodGet, in, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := endpointOf(req); got != want {
			t.Errorf("endpointOf(%s) = %q, want %q", in, got, want)
		}
	}
}
