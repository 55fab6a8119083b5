package rework

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/forgectx/forgectx/test/httpfake"
)

// inlineWorld is a code review requesting changes with 4 inline comments (on 2 files × 2
// lines on the real server) beside a spec approval.
func inlineWorld() *world {
	w := baseWorld()
	w.Reviews = []fakeReview{
		review(101, specUser, "APPROVED", specBody(w, VerdictApproved, tHead), tHead, t1),
		review(102, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, tHead), tHead, t2, 9001, 9002, 9003, 9004),
	}
	return w
}

func inlineIDs(t *testing.T, rec map[string]any) []string {
	t.Helper()
	var out []string
	for _, l := range rec["raw_input_snapshot"].(map[string]any)["inline"].([]any) {
		for _, r := range l.(map[string]any)["records"].([]any) {
			out = append(out, fmt.Sprint(r.(map[string]any)["id"]))
		}
	}
	return out
}

// The fake serves the inline rows reversed on the second capture, as Gitea serves them in
// map order: the decision must not depend on it, and the raw snapshot keeps the first
// capture's order as served.
func TestCaptureDriftIgnoresTheOrderOfInlineRows(t *testing.T) {
	w := inlineWorld()
	res, rec := runWorld(t, w)
	if res.Decision.Decision != DecisionRework || len(res.Decision.BlockingReasons) != 0 {
		t.Fatalf("decision %s %v, want rework without blocking reasons", res.Decision.Decision, reasonsOf(res.Decision))
	}
	if d := fmt.Sprint(rec["drift"]); d != "[]" {
		t.Errorf("drift = %s, want []", d)
	}
	if got := strings.Join(inlineIDs(t, rec), ","); got != "9001,9002,9003,9004" {
		t.Errorf("raw snapshot inline order %s, want the first capture's order as served (9001,9002,9003,9004)", got)
	}
	caps := rec["captures"].([]any)
	if caps[0].(map[string]any)["raw_input_sha256"] == caps[1].(map[string]any)["raw_input_sha256"] {
		t.Error("the captures' digests are equal: the second capture was not served in another order, so this test proves nothing")
	}
}

// An edit, an addition or a removal of an inline row, and a reordering of a list whose order
// the forge defines, are still drift.
func TestCaptureDriftInlineChangesAndMeaningfulReorderingStillBlock(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(w *world)
		drift  string
	}{
		{"InlineRowAdded", func(w *world) { w.Reviews[1].Inline = append(w.Reviews[1].Inline, 9005) }, "inline"},
		{"InlineRowRemoved", func(w *world) { w.Reviews[1].Inline = w.Reviews[1].Inline[:3] }, "inline"},
		{"InlineRowReplaced", func(w *world) { w.Reviews[1].Inline[3] = 9009 }, "inline"},
		{"IssueCommentsReordered", func(w *world) { slices.Reverse(w.PRComments) }, "pr_issue_comments"},
		{"ReviewsReordered", func(w *world) { slices.Reverse(w.Reviews) }, "reviews"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w1, w2 := inlineWorld(), inlineWorld()
			w1.PRComments = []string{"first", "second"}
			w2.PRComments = []string{"first", "second"}
			tc.mutate(w2)
			f := httpfake.New(t)
			expectCapture(f, w1)
			w2.reads = 1 // the second capture: inline rows reversed, as Gitea may serve them
			expectCapture(f, w2)
			res, rec := runGate(t, newRun(t, f, targetJSON(w1), contractJSON()))
			if !hasReason(res.Decision, ReasonCaptureDrift) || !strings.Contains(fmt.Sprint(rec["drift"]), tc.drift) {
				t.Fatalf("decision %s %v drift %v, want capture_drift naming %s", res.Decision.Decision, reasonsOf(res.Decision), rec["drift"], tc.drift)
			}
		})
	}
}

// Gitea 1.27.3 serves a pull request's requested_reviewers in another order on every read: an
// unchanged set is no drift; a reviewer added or removed is.
func TestCaptureDriftIgnoresTheOrderOfRequestedReviewers(t *testing.T) {
	watchers := []fakeUser{{41, "w1"}, {42, "w2"}, {43, "w3"}}
	w := inlineWorld()
	w.Requested = watchers
	res, rec := runWorld(t, w)
	if res.Decision.Decision != DecisionRework || fmt.Sprint(rec["drift"]) != "[]" {
		t.Fatalf("decision %s %v drift %v, want rework without drift", res.Decision.Decision, reasonsOf(res.Decision), rec["drift"])
	}
	raw := rec["raw_input_snapshot"].(map[string]any)["pull_request"].(map[string]any)["requested_reviewers"].([]any)
	if first := fmt.Sprint(raw[0].(map[string]any)["id"]); first != "41" {
		t.Errorf("raw snapshot requested_reviewers start with %s, want the first capture's order as served (41)", first)
	}
	w1, w2 := inlineWorld(), inlineWorld()
	w1.Requested, w2.Requested = watchers, watchers[:2]
	f := httpfake.New(t)
	expectCapture(f, w1)
	w2.reads = 1
	expectCapture(f, w2)
	res, rec = runGate(t, newRun(t, f, targetJSON(w1), contractJSON()))
	if !hasReason(res.Decision, ReasonCaptureDrift) || fmt.Sprint(rec["drift"]) != "[pull_request]" {
		t.Fatalf("a removed reviewer: decision %v drift %v, want capture_drift on pull_request", reasonsOf(res.Decision), rec["drift"])
	}
}

// An inline row whose content changes between the captures is drift even when it also moves.
func TestCaptureDriftInlineEditIsDrift(t *testing.T) {
	w1, w2 := inlineWorld(), inlineWorld()
	w2.Reviews[1].User = &fakeUser{codeID, "code-bot"}
	w2.Reviews[1].Commit = oldHead // every inline row's commit_id changes (the review's too)
	f := httpfake.New(t)
	expectCapture(f, w1)
	expectCapture(f, w2)
	res, rec := runGate(t, newRun(t, f, targetJSON(w1), contractJSON()))
	if !hasReason(res.Decision, ReasonCaptureDrift) || !strings.Contains(fmt.Sprint(rec["drift"]), "inline") {
		t.Fatalf("decision %v drift %v, want capture_drift naming inline", reasonsOf(res.Decision), rec["drift"])
	}
}

// busyWorld is a PR with more than 50 review rows: old-head reviews, review requests, and
// both roles' approvals on the head.
func busyWorld() *world {
	w := baseWorld()
	for i := 0; i < 30; i++ {
		w.Reviews = append(w.Reviews, review(int64(200+i), humanUser, "COMMENT", "old round", oldHead, "2026-11-20T09:00:00Z"))
	}
	for i := 0; i < 25; i++ {
		r := review(int64(300+i), fakeUser{int64(400 + i), fmt.Sprintf("reviewer%d", i)}, "REQUEST_REVIEW", "", "", "2026-11-20T10:00:00Z")
		w.Reviews = append(w.Reviews, r)
	}
	w.Reviews = append(w.Reviews, approveBoth(w)...)
	w.Reviews[len(w.Reviews)-2].ID, w.Reviews[len(w.Reviews)-1].ID = 500, 501
	return w
}

// Gitea's review list sends X-Total-Count and no Link: the gate pages on by the total, as the
// snapshot adapter does, and decides a PR with more than 50 review rows.
func TestReviewListPagedByTotalWithoutLink(t *testing.T) {
	w := busyWorld()
	if len(w.Reviews) <= PageSize {
		t.Fatalf("%d reviews: the world must cross one page", len(w.Reviews))
	}
	res, rec := runWorld(t, w)
	if res.Decision.Decision != DecisionNoOp || len(res.Decision.BlockingReasons) != 0 {
		t.Fatalf("decision %s %v, want no_op", res.Decision.Decision, reasonsOf(res.Decision))
	}
	raw := rec["raw_input_snapshot"].(map[string]any)
	if n := len(raw["reviews"].([]any)); n != len(w.Reviews) {
		t.Errorf("%d review rows in the snapshot, want %d", n, len(w.Reviews))
	}
	for _, p := range raw["provenance"].([]any) {
		if p.(map[string]any)["resource"] == "reviews" {
			pages := p.(map[string]any)["pages"].([]any)
			if len(pages) != 2 || pages[0].(map[string]any)["link"] != nil {
				t.Errorf("reviews provenance %v, want 2 pages without Link", pages)
			}
		}
	}
}

// Gitea answers an issue's comments at once whatever page and limit say: 120 comments in one
// answer with X-Total-Count 120 are complete after page 1.
func TestCommentListAnsweredAtOnce(t *testing.T) {
	w := reworkWorld()
	for i := 0; i < 119; i++ {
		w.PRComments = append(w.PRComments, fmt.Sprintf("comment %d", i))
	}
	res, rec := runWorld(t, w)
	if res.Decision.Decision != DecisionRework {
		t.Fatalf("decision %s %v, want rework", res.Decision.Decision, reasonsOf(res.Decision))
	}
	for _, p := range rec["raw_input_snapshot"].(map[string]any)["provenance"].([]any) {
		if p.(map[string]any)["resource"] == "pr_issue_comments" {
			if pages := p.(map[string]any)["pages"].([]any); len(pages) != 1 || pages[0].(map[string]any)["rows"].(float64) != 120 {
				t.Errorf("pr_issue_comments provenance %v, want one page of 120 rows", pages)
			}
		}
	}
}

// Another user's pending review: counted in X-Total-Count, listed to nobody else. The walk
// reads the empty page the total announces and blocks: the gate never decides around it.
func TestReviewListPendingHiddenRowStillBlocks(t *testing.T) {
	w := busyWorld()
	f := httpfake.New(t)
	const api = "/api/v1"
	repo := "/repos/acme/demo"
	f.Expect("GET", api+"/version", httpfake.JSON(200, `{"version":"`+w.Version+`"}`))
	f.Expect("GET", api+repo, httpfake.JSON(200, w.repoJSON(f.URL+api)))
	f.Expect("GET", api+repo+"/pulls/9", httpfake.JSON(200, w.pullJSON()))
	f.Expect("GET", api+repo+"/issues/7", httpfake.JSON(200, w.issueJSON()))
	expectAtOnce(f, repo+"/issues/7/comments", []string{commentJSON(5000, 7, w.IssueComments[0])})
	expectAtOnce(f, repo+"/issues/9/comments", []string{commentJSON(6000, 9, w.PRComments[0])})
	var rv []string
	for _, r := range w.Reviews {
		rv = append(rv, r.json())
	}
	total := fmt.Sprint(len(rv) + 1) // the hidden pending review
	f.Expect("GET", api+repo+"/pulls/9/reviews?limit=50&page=1", withHeaders(httpfake.JSON(200, "["+strings.Join(rv[:50], ",")+"]"), "X-Total-Count", total))
	f.Expect("GET", api+repo+"/pulls/9/reviews?limit=50&page=2", withHeaders(httpfake.JSON(200, "["+strings.Join(rv[50:], ",")+"]"), "X-Total-Count", total))
	res, rec := runGate(t, newRun(t, f, targetJSON(w), contractJSON()))
	if res.Decision.Decision != DecisionBlocked || !hasReason(res.Decision, ReasonPaginationIncomplete) {
		t.Fatalf("decision %s %v, want blocked with pagination_incomplete", res.Decision.Decision, reasonsOf(res.Decision))
	}
	if want := fmt.Sprintf("read %d rows, X-Total-Count says %s", len(rv), total); !strings.Contains(fmt.Sprint(rec["decision"]), want) {
		t.Errorf("decision %v does not say %q", rec["decision"], want)
	}
}

// decision.blocking_reasons is a JSON list in the receipt of every decision, and the receipts
// of all three decisions validate against the receipt schema.
func TestBlockingReasonsIsAListInEveryDecision(t *testing.T) {
	blocked := baseWorld()
	for _, tc := range []struct {
		name     string
		w        *world
		decision string
	}{
		{"rework", inlineWorld(), DecisionRework},
		{"no_op", func() *world { w := baseWorld(); w.Reviews = approveBoth(w); return w }(), DecisionNoOp},
		{"blocked", blocked, DecisionBlocked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := runWorld(t, tc.w)
			if res.Decision.Decision != tc.decision {
				t.Fatalf("decision %s %v, want %s", res.Decision.Decision, reasonsOf(res.Decision), tc.decision)
			}
			b, err := os.ReadFile(res.OutputPath)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b, []byte(`"blocking_reasons":[`)) {
				t.Errorf("receipt decision %s", b[bytes.Index(b, []byte(`"decision":{`)):][:200])
			}
			validateReceipt(t, b)
		})
	}
}

// The contract's provider.name is compared with the server GET /version names.
func TestProviderNameMismatch(t *testing.T) {
	for _, tc := range []struct {
		name, contractName, version string
		mismatch                    bool
	}{
		{"ForgejoContractGiteaServer", "forgejo", tVersion, true},
		{"GiteaContractForgejoServer", "gitea", "11.0.1+gitea-1.22.0", true},
		{"ForgejoContractForgejoServer", "forgejo", "11.0.1+gitea-1.22.0", false},
		{"GiteaContractGiteaServer", "gitea", tVersion, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := reworkWorld()
			w.Version = tc.version
			contract := strings.Replace(contractJSON(), `"name":"gitea","api_version":"`+tVersion+`"`,
				`"name":"`+tc.contractName+`","api_version":"`+tc.version+`"`, 1)
			f := httpfake.New(t)
			expectCapture(f, w)
			expectCapture(f, w)
			res, _ := runGate(t, newRun(t, f, targetJSON(w), contract))
			if got := hasReason(res.Decision, ReasonProviderNameMismatch); got != tc.mismatch {
				t.Fatalf("decision %s %v: provider_name_mismatch %v, want %v", res.Decision.Decision, reasonsOf(res.Decision), got, tc.mismatch)
			}
			if !tc.mismatch && res.Decision.Decision != DecisionRework {
				t.Fatalf("decision %s %v, want rework", res.Decision.Decision, reasonsOf(res.Decision))
			}
		})
	}
}

func TestServerName(t *testing.T) {
	for v, want := range map[string]string{
		"1.25.5": "gitea", "1.27.3": "gitea", "1.26.0+dev-12-gabc": "gitea",
		"11.0.1+gitea-1.22.0": "forgejo", "1.21.11+1-gitea-1.21.11": "forgejo", "7.0.0+gitea-1.22.0": "forgejo",
	} {
		if got := ServerName(v); got != want {
			t.Errorf("ServerName(%q) = %q, want %q", v, got, want)
		}
	}
}

// validateReceipt checks a receipt against docs/schemas/rework-input-gate-v1.schema.json.
func validateReceipt(t *testing.T, b []byte) {
	t.Helper()
	f, err := os.Open("../../docs/schemas/rework-input-gate-v1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://forgectx.invalid/schemas/rework-input-gate-v1.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("the receipt does not validate against its schema: %v", err)
	}
}
