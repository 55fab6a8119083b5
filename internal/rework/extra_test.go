package rework

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/test/httpfake"
)

// TestCaptureFailedInTheSecondCaptureBlocks: a failure of the second capture blocks like one
// of the first; the receipt records both captures.
func TestCaptureFailedInTheSecondCaptureBlocks(t *testing.T) {
	w1 := reworkWorld()
	w2 := reworkWorld()
	w2.Reviews[1].InlineStatus = 404
	f := httpfake.New(t)
	expectCapture(f, w1)
	expectCapture(f, w2)
	res, rec := runGate(t, newRun(t, f, targetJSON(w1), contractJSON()))
	if !hasReason(res.Decision, ReasonInlineEndpointUnavailable) || res.Decision.Decision != DecisionBlocked {
		t.Fatalf("decision %s %v", res.Decision.Decision, reasonsOf(res.Decision))
	}
	if !strings.HasPrefix(res.Decision.BlockingReasons[0].Subject, "second capture: ") {
		t.Errorf("subject %q does not name the second capture", res.Decision.BlockingReasons[0].Subject)
	}
	caps := rec["captures"].([]any)
	if len(caps) != 2 || caps[1].(map[string]any)["complete"] != false {
		t.Errorf("captures %v", caps)
	}
}

// TestPaginationFollowsALinkRenderedFromAnotherRootURL: Gitea renders Link from ROOT_URL; the
// walk checks endpoint and page, builds the request from --api-url, and records the Link.
func TestPaginationFollowsALinkRenderedFromAnotherRootURL(t *testing.T) {
	w := reworkWorld()
	f := httpfake.New(t)
	const api = "/api/v1"
	repo := "/repos/acme/demo"
	for c := 0; c < Captures; c++ {
		f.Expect("GET", api+"/version", httpfake.JSON(200, `{"version":"`+w.Version+`"}`))
		f.Expect("GET", api+repo, httpfake.JSON(200, w.repoJSON(f.URL+api)))
		f.Expect("GET", api+repo+"/pulls/9", httpfake.JSON(200, w.pullJSON()))
		f.Expect("GET", api+repo+"/issues/7", httpfake.JSON(200, w.issueJSON()))
		expectList(f, repo+"/issues/7/comments", []string{commentJSON(5000, 7, w.IssueComments[0])})
		expectList(f, repo+"/issues/9/comments", []string{commentJSON(6000, 9, w.PRComments[0])})
		link := func(p int) string {
			return fmt.Sprintf(`<https://git.example.com/api/v1/repos/acme/demo/pulls/9/reviews?limit=50&page=%d>; rel="next",<https://git.example.com/api/v1/repos/acme/demo/pulls/9/reviews?limit=50&page=2>; rel="last"`, p)
		}
		f.Expect("GET", api+repo+"/pulls/9/reviews?limit=50&page=1", withHeaders(httpfake.JSON(200, "["+w.Reviews[0].json()+"]"), "X-Total-Count", "2", "Link", link(2)))
		f.Expect("GET", api+repo+"/pulls/9/reviews?limit=50&page=2", withHeaders(httpfake.JSON(200, "["+w.Reviews[1].json()+"]"), "X-Total-Count", "2",
			"Link", `<https://git.example.com/api/v1/repos/acme/demo/pulls/9/reviews?limit=50&page=1>; rel="first",<https://git.example.com/api/v1/repos/acme/demo/pulls/9/reviews?limit=50&page=1>; rel="prev"`))
		f.Expect("GET", api+repo+"/pulls/9/reviews/101/comments?limit=50&page=1", httpfake.JSON(200, `[]`))
		f.Expect("GET", api+repo+"/pulls/9/reviews/102/comments?limit=50&page=1", httpfake.JSON(200, "["+inlineJSON(9001, 102, &codeUser, tHead)+","+inlineJSON(9002, 102, &codeUser, tHead)+"]"))
	}
	res, rec := runGate(t, newRun(t, f, targetJSON(w), contractJSON()))
	if res.Decision.Decision != DecisionRework {
		t.Fatalf("decision %s %v", res.Decision.Decision, reasonsOf(res.Decision))
	}
	if !strings.Contains(fmt.Sprint(rec["raw_input_snapshot"]), "git.example.com") {
		t.Error("the Link as sent is not recorded in the provenance")
	}
}

// TestPublishNoClobber: Publish never replaces an existing file, leaves no temporary file and
// refuses a symlink anywhere in the parent chain.
func TestPublishNoClobber(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "decision.json")
	if err := Publish(out, []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := Publish(out, []byte(`{"a":2}`)); !errors.Is(err, ErrOutputExists) {
		t.Fatalf("second Publish: %v, want ErrOutputExists", err)
	}
	if b, _ := os.ReadFile(out); string(b) != `{"a":1}` {
		t.Errorf("the first receipt was replaced: %s", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries left, want 1", len(entries))
	}
	deep := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := Publish(filepath.Join(dir, "link", "b", "decision.json"), []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("Publish through a symlinked ancestor: %v", err)
	}
	if err := Publish(dir+"/a/../a/b/x.json", []byte(`{}`)); err == nil {
		t.Error("Publish accepted a .. component")
	}
	if err := Publish(filepath.Join(deep, "big.json"), make([]byte, MaxReceiptBytes+1)); !errors.Is(err, ErrReceiptTooLarge) {
		t.Errorf("oversized Publish: %v", err)
	}
}
