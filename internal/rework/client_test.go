package rework

import (
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
