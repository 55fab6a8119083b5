package rework

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/test/httpfake"
)

func reworkWorld() *world {
	w := baseWorld()
	w.Reviews = []fakeReview{
		review(101, specUser, "APPROVED", specBody(w, VerdictApproved, tHead), tHead, t1),
		review(102, codeUser, "REQUEST_CHANGES", codeBody(w, VerdictRequestChanges, tHead), tHead, t2, 9001, 9002),
	}
	return w
}

// captureCase is a capture-level blocking rule: the world (or the fake registration) that
// breaks it, and the reason it must produce.
type captureCase struct {
	name   string
	mutate func(w *world)
	reason Reason
	once   bool // the capture stops early: only one capture is registered
	target func(w *world) string
}

var captureCases = []captureCase{
	{name: "ProviderVersionMismatch", mutate: func(w *world) { w.Version = "1.25.4" }, reason: ReasonProviderVersionMismatch},
	{name: "IdentityMismatchSourceIssueIsAPullRequest", mutate: func(w *world) { w.IssueIsPull = true }, reason: ReasonIdentityMismatch},
	{name: "AuthorBindingMismatch", mutate: func(w *world) { w.PRAuthor = humanUser }, reason: ReasonAuthorBindingMismatch},
	{name: "PullRequestNotOpen", mutate: func(w *world) { w.PRState, w.Merged = "closed", true }, reason: ReasonPullRequestNotOpen},
	{name: "HeadMismatch", mutate: func(w *world) { w.Head = oldHead }, reason: ReasonHeadMismatch},
	{name: "DefaultBranchMismatch", mutate: func(w *world) { w.BaseRef = "develop" }, reason: ReasonDefaultBranchMismatch},
	{name: "DiscoveryDraftMissing", mutate: func(w *world) { w.IssueBody = "discovery-draft/v1\nold draft" }, reason: ReasonDiscoveryDraftMissing},
	{name: "DiscoveryDraftFirstLineIsExact", mutate: func(w *world) { w.IssueBody = "discovery-draft/v2\r\nCRLF body" }, reason: ReasonDiscoveryDraftMissing},
	{name: "ContractDigestMismatch", target: func(w *world) string {
		return strings.Replace(targetJSON(w), contractDigest(w), strings.Repeat("d", 64), 1)
	}, reason: ReasonContractDigestMismatch},
	{name: "ReviewCommentsCountMismatch", mutate: func(w *world) { w.Reviews[1].CommentsCount = "3" }, reason: ReasonReviewCommentsCountMismatch},
	{name: "ReviewCommentsCountUnverifiedBoolean", mutate: func(w *world) { w.Reviews[1].CommentsCount = "true" }, reason: ReasonReviewCommentsCountMismatch},
	{name: "SourceIssueCommentsMismatch", mutate: func(w *world) { w.IssueCommentLit = "4" }, reason: ReasonSourceIssueCommentsMismatch},
	{name: "SourceIssueCommentsUnverifiedNegative", mutate: func(w *world) { w.IssueCommentLit = "-1" }, reason: ReasonSourceIssueCommentsMismatch},
	{name: "MalformedRecordUnknownReviewState", mutate: func(w *world) { w.Reviews[0].State = "WEIRD" }, reason: ReasonMalformedRecord},
	{name: "MalformedRecordTenFractionalDigits", mutate: func(w *world) { w.Reviews[0].Submitted = "2026-11-21T12:00:00.0000000001Z" }, reason: ReasonMalformedRecord},
	{name: "InlineEndpointUnavailable404", mutate: func(w *world) { w.Reviews[0].InlineStatus = http.StatusNotFound }, reason: ReasonInlineEndpointUnavailable, once: true},
	{name: "InlineEndpointUnavailable405", mutate: func(w *world) { w.Reviews[1].InlineStatus = http.StatusMethodNotAllowed }, reason: ReasonInlineEndpointUnavailable, once: true},
	{name: "DuplicateRecordIDAcrossReviewsInlineLists", mutate: func(w *world) { w.Reviews[0].Inline = []int64{9001} }, reason: ReasonDuplicateRecordID, once: true},
	{name: "DuplicateRecordIDReviewListedTwice", mutate: func(w *world) { w.Reviews = append(w.Reviews, w.Reviews[0]) }, reason: ReasonDuplicateRecordID, once: true},
}

func TestCaptureRules(t *testing.T) {
	for _, c := range captureCases {
		t.Run(c.name, func(t *testing.T) {
			w := reworkWorld()
			if c.mutate != nil {
				c.mutate(w)
			}
			f := httpfake.New(t)
			if c.once && c.name == "DuplicateRecordIDReviewListedTwice" {
				// The capture stops at the review list: register only what it reads.
				expectPrefix(f, w)
			} else {
				expectCapture(f, w)
				if !c.once {
					expectCapture(f, w)
				}
			}
			tj := targetJSON(w)
			if c.target != nil {
				tj = c.target(w)
			}
			res, rec := runGate(t, newRun(t, f, tj, contractJSON()))
			if res.Decision.Decision != DecisionBlocked || !hasReason(res.Decision, c.reason) {
				t.Fatalf("decision %s %v, want blocked with %s", res.Decision.Decision, reasonsOf(res.Decision), c.reason)
			}
			if len(res.Decision.ReworkReviewIDs) != 0 {
				t.Errorf("a blocked decision carries rework_review_ids %v", res.Decision.ReworkReviewIDs)
			}
			if c.once {
				if n := len(rec["captures"].([]any)); n != 1 {
					t.Errorf("captures = %d, want 1 (the first capture stopped)", n)
				}
			}
		})
	}
}

// expectPrefix registers the requests up to and including the review list.
func expectPrefix(f *httpfake.Server, w *world) {
	const api = "/api/v1"
	repo := "/repos/acme/demo"
	f.Expect("GET", api+"/version", httpfake.JSON(200, `{"version":"`+w.Version+`"}`))
	f.Expect("GET", api+repo, httpfake.JSON(200, w.repoJSON(f.URL+api)))
	f.Expect("GET", api+repo+"/pulls/9", httpfake.JSON(200, w.pullJSON()))
	f.Expect("GET", api+repo+"/issues/7", httpfake.JSON(200, w.issueJSON()))
	expectList(f, repo+"/issues/7/comments", []string{commentJSON(5000, 7, w.IssueComments[0])})
	expectList(f, repo+"/issues/9/comments", []string{commentJSON(6000, 9, w.PRComments[0])})
	var rv []string
	for _, r := range w.Reviews {
		rv = append(rv, r.json())
	}
	expectList(f, repo+"/pulls/9/reviews", rv)
}

func TestCaptureDriftBlocks(t *testing.T) {
	t.Run("CaptureDriftNewReviewBetweenCaptures", func(t *testing.T) {
		w1 := reworkWorld()
		w2 := reworkWorld()
		w2.Reviews = append(w2.Reviews, review(103, humanUser, "APPROVED", "lgtm", tHead, t3))
		f := httpfake.New(t)
		expectCapture(f, w1)
		expectCapture(f, w2)
		res, rec := runGate(t, newRun(t, f, targetJSON(w1), contractJSON()))
		if res.Decision.Decision != DecisionBlocked || !hasReason(res.Decision, ReasonCaptureDrift) {
			t.Fatalf("decision %s %v, want blocked with capture_drift", res.Decision.Decision, reasonsOf(res.Decision))
		}
		drift := fmt.Sprint(rec["drift"])
		if !strings.Contains(drift, "reviews") || !strings.Contains(drift, "inline") {
			t.Errorf("drift = %s, want reviews and inline named", drift)
		}
	})
	t.Run("CaptureDriftAPageThatChanges", func(t *testing.T) {
		w1 := reworkWorld()
		w2 := reworkWorld()
		w2.PRComments = []string{"ready for review (edited)"}
		f := httpfake.New(t)
		expectCapture(f, w1)
		expectCapture(f, w2)
		res, rec := runGate(t, newRun(t, f, targetJSON(w1), contractJSON()))
		if !hasReason(res.Decision, ReasonCaptureDrift) || fmt.Sprint(rec["drift"]) != "[pr_issue_comments]" {
			t.Fatalf("decision %v drift %v, want capture_drift on pr_issue_comments", reasonsOf(res.Decision), rec["drift"])
		}
	})
}

func TestPaginationRules(t *testing.T) {
	t.Run("CompletePaginationFollowsLinkAcrossPages", func(t *testing.T) {
		w := reworkWorld()
		w.LinkPagedComments = true
		for i := 0; i < 120; i++ {
			w.PRComments = append(w.PRComments, fmt.Sprintf("comment %d", i))
		}
		res, rec := runWorld(t, w)
		if res.Decision.Decision != DecisionRework {
			t.Fatalf("decision %s %v", res.Decision.Decision, reasonsOf(res.Decision))
		}
		raw := rec["raw_input_snapshot"].(map[string]any)
		if n := len(raw["pr_issue_comments"].([]any)); n != 121 {
			t.Errorf("pr_issue_comments rows = %d, want 121", n)
		}
		var pages []any
		for _, p := range raw["provenance"].([]any) {
			if p.(map[string]any)["resource"] == "pr_issue_comments" {
				pages = p.(map[string]any)["pages"].([]any)
			}
		}
		if len(pages) != 3 {
			t.Fatalf("provenance pages = %d, want 3", len(pages))
		}
		first := pages[0].(map[string]any)
		if !strings.Contains(fmt.Sprint(first["link"]), `rel="next"`) || first["x_total_count"] != "121" {
			t.Errorf("page 1 provenance %v lacks the Link and X-Total-Count as sent", first)
		}
		diag := rec["counter_diagnostics"].(map[string]any)["pr_issue"].(map[string]any)
		if diag["status"] != StatusMatch || diag["expected"].(float64) != 121 {
			t.Errorf("pr_issue diagnostic %v", diag)
		}
	})
	t.Run("PaginationIncompleteRowsCountedButNotListed", func(t *testing.T) {
		// Gitea counts another user's pending review in X-Total-Count but lists it only to
		// its author: the list pages on by the total, finds the next page empty, and the
		// collection is incomplete.
		w := reworkWorld()
		f := httpfake.New(t)
		const api = "/api/v1"
		repo := "/repos/acme/demo"
		f.Expect("GET", api+"/version", httpfake.JSON(200, `{"version":"`+w.Version+`"}`))
		f.Expect("GET", api+repo, httpfake.JSON(200, w.repoJSON(f.URL+api)))
		f.Expect("GET", api+repo+"/pulls/9", httpfake.JSON(200, w.pullJSON()))
		f.Expect("GET", api+repo+"/issues/7", httpfake.JSON(200, w.issueJSON()))
		f.Expect("GET", api+repo+"/issues/7/comments?limit=50&page=1", withHeaders(httpfake.JSON(200, "["+commentJSON(5000, 7, "x")+"]"), "X-Total-Count", "2"))
		f.Expect("GET", api+repo+"/issues/7/comments?limit=50&page=2", withHeaders(httpfake.JSON(200, "[]"), "X-Total-Count", "2"))
		res, _ := runGate(t, newRun(t, f, targetJSON(w), contractJSON()))
		if !hasReason(res.Decision, ReasonPaginationIncomplete) {
			t.Fatalf("reasons %v, want pagination_incomplete", reasonsOf(res.Decision))
		}
	})
	t.Run("PaginationIncompleteLinkToAnotherEndpoint", func(t *testing.T) {
		w := reworkWorld()
		f := httpfake.New(t)
		const api = "/api/v1"
		repo := "/repos/acme/demo"
		f.Expect("GET", api+"/version", httpfake.JSON(200, `{"version":"`+w.Version+`"}`))
		f.Expect("GET", api+repo, httpfake.JSON(200, w.repoJSON(f.URL+api)))
		f.Expect("GET", api+repo+"/pulls/9", httpfake.JSON(200, w.pullJSON()))
		f.Expect("GET", api+repo+"/issues/7", httpfake.JSON(200, w.issueJSON()))
		f.Expect("GET", api+repo+"/issues/7/comments?limit=50&page=1", withHeaders(httpfake.JSON(200, "["+commentJSON(5000, 7, "x")+"]"),
			"Link", `<`+f.URL+api+`/repos/other/repo/issues/7/comments?limit=50&page=2>; rel="next"`))
		res, _ := runGate(t, newRun(t, f, targetJSON(w), contractJSON()))
		if !hasReason(res.Decision, ReasonPaginationIncomplete) {
			t.Fatalf("reasons %v, want pagination_incomplete", reasonsOf(res.Decision))
		}
	})
}

func TestCaptureFailed(t *testing.T) {
	w := reworkWorld()
	f := httpfake.New(t)
	f.Expect("GET", "/api/v1/version", httpfake.JSON(200, `{"version":"`+w.Version+`"}`))
	f.Expect("GET", "/api/v1/repos/acme/demo", httpfake.ServerError(), httpfake.ServerError(), httpfake.ServerError(), httpfake.ServerError())
	res, rec := runGate(t, newRun(t, f, targetJSON(w), contractJSON()))
	if res.Decision.Decision != DecisionBlocked || !hasReason(res.Decision, ReasonCaptureFailed) {
		t.Fatalf("decision %s %v, want blocked capture_failed", res.Decision.Decision, reasonsOf(res.Decision))
	}
	if rec["counter_diagnostics"] != nil {
		t.Errorf("an incomplete capture must not report counter diagnostics: %v", rec["counter_diagnostics"])
	}
}

// TestCounterDiagnosticsNeverDecide: PR-wide counters that disagree with the collection are
// diagnostics, not blockers; the decision keeps its role rules.
func TestCounterDiagnosticsNeverDecide(t *testing.T) {
	cases := []struct {
		name        string
		pr, prIssue string
		wantPR      string
		wantPRIssue string
	}{
		{"CounterMismatchIsADiagnostic", "9", "5", StatusMismatch, StatusMismatch},
		{"CounterUnverifiedBoolean", "true", "false", StatusUnverified, StatusUnverified},
		{"CounterUnverifiedNegativeAndNonInteger", "-1", "1.5", StatusUnverified, StatusUnverified},
		{"CounterUnverifiedString", `"2"`, `null`, StatusUnverified, StatusUnverified},
		{"CounterMatch", "", "", StatusMatch, StatusMatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := reworkWorld()
			w.PRReviewLit, w.PRCommentsLit = c.pr, c.prIssue
			res, rec := runWorld(t, w)
			if res.Decision.Decision != DecisionRework || len(res.Decision.BlockingReasons) != 0 {
				t.Fatalf("decision %s %v: diagnostics must not change it", res.Decision.Decision, reasonsOf(res.Decision))
			}
			cd := rec["counter_diagnostics"].(map[string]any)
			pr, pri := cd["pr"].(map[string]any), cd["pr_issue"].(map[string]any)
			if pr["status"] != c.wantPR || pri["status"] != c.wantPRIssue {
				t.Errorf("status pr=%v pr_issue=%v, want %s %s", pr["status"], pri["status"], c.wantPR, c.wantPRIssue)
			}
			if pr["expected"].(float64) != 2 || pr["field"] != "review_comments" {
				t.Errorf("pr diagnostic %v: expected is the collection-derived inline count 2", pr)
			}
			if c.pr != "" {
				if got, _ := json.Marshal(pr["observed"]); !strings.Contains(string(got), strings.Trim(c.pr, `"`)) {
					t.Errorf("observed %s is not the native value %s", got, c.pr)
				}
			}
			if _, ok := cd["inline"].(map[string]any)["reviews"]; !ok {
				t.Error("inline diagnostic lacks per-review entries")
			}
		})
	}
}

// TestReceiptRawSnapshot: the receipt's raw snapshot keeps provider row order and body text,
// raw_input_sha256 is the SHA-256 of its RFC 8785 bytes, and the same inputs give the same
// bytes.
func TestReceiptRawSnapshot(t *testing.T) {
	w := reworkWorld()
	// Provider order is not time order: the later review comes first.
	w.Reviews = []fakeReview{w.Reviews[1], w.Reviews[0]}
	f := httpfake.New(t)
	for i := 0; i < 4; i++ {
		expectCapture(f, w)
	}
	res, rec := runGate(t, newRun(t, f, targetJSON(w), contractJSON()))
	if rec["schema"] != ReceiptSchema {
		t.Fatalf("schema %v", rec["schema"])
	}
	raw := rec["raw_input_snapshot"].(map[string]any)
	rows := raw["reviews"].([]any)
	if id := rows[0].(map[string]any)["id"].(float64); id != 102 {
		t.Errorf("raw reviews[0].id = %v, want 102 (provider row order kept)", id)
	}
	if body := rows[0].(map[string]any)["body"].(string); body != w.Reviews[0].Body {
		t.Error("raw review body text is not kept verbatim")
	}
	tl := rec["timeline"].([]any)
	if id := tl[0].(map[string]any)["review_id"].(float64); id != 101 {
		t.Errorf("timeline[0] = %v, want 101 (sorted by instant)", id)
	}
	b, err := os.ReadFile(res.OutputPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Raw json.RawMessage `json:"raw_input_snapshot"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	cb, err := canon.Transform(doc.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if canon.SHA256Hex(cb) != rec["raw_input_sha256"] {
		t.Error("raw_input_sha256 is not the SHA-256 of the raw snapshot's RFC 8785 bytes")
	}
	if cbAll, _ := canon.Transform(b); !bytes.Equal(cbAll, b) {
		t.Error("the receipt is not written as RFC 8785 bytes")
	}
	st, _ := os.Stat(res.OutputPath)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("receipt mode %v, want 0600", st.Mode().Perm())
	}
	// Determinism: a second run over the same world writes the same bytes.
	res2, _ := runGate(t, newRun(t, f, targetJSON(w), contractJSON()))
	b2, _ := os.ReadFile(res2.OutputPath)
	if !bytes.Equal(b, b2) {
		t.Error("two runs over the same inputs wrote different receipts")
	}
}

// TestReceiptOverOneMillionBytesFailsClosed: nothing is written, nothing truncated.
func TestReceiptOverOneMillionBytesFailsClosed(t *testing.T) {
	w := reworkWorld()
	big := strings.Repeat("x", 350_000)
	w.IssueComments = []string{big, big, big}
	f := httpfake.New(t)
	expectCapture(f, w)
	expectCapture(f, w)
	g := newRun(t, f, targetJSON(w), contractJSON())
	_, err := Run(context.Background(), g.opts)
	if !errors.Is(err, ErrReceiptTooLarge) {
		t.Fatalf("err = %v, want ErrReceiptTooLarge", err)
	}
	if _, serr := os.Lstat(g.opts.OutputPath); !os.IsNotExist(serr) {
		t.Error("an oversized receipt left an output file")
	}
	entries, _ := os.ReadDir(filepath.Dir(g.opts.OutputPath))
	if len(entries) != 0 {
		t.Errorf("the run directory holds %d entries, want none", len(entries))
	}
}

// TestConcurrentWriterIsPreserved: a file created at the output while the gate captures is
// never replaced.
func TestConcurrentWriterIsPreserved(t *testing.T) {
	w := reworkWorld()
	f := httpfake.New(t)
	expectCapture(f, w)
	expectCapture(f, w)
	g := newRun(t, f, targetJSON(w), contractJSON())
	var once atomic.Bool
	g.opts.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if once.CompareAndSwap(false, true) {
			if err := os.WriteFile(g.opts.OutputPath, []byte("concurrent"), 0o600); err != nil {
				return nil, err
			}
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	_, err := Run(context.Background(), g.opts)
	if !errors.Is(err, ErrOutputExists) {
		t.Fatalf("err = %v, want ErrOutputExists", err)
	}
	if b, _ := os.ReadFile(g.opts.OutputPath); string(b) != "concurrent" {
		t.Errorf("the concurrently created file was replaced: %q", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(g.opts.OutputPath))
	if len(entries) != 1 {
		t.Errorf("the run directory holds %d entries, want only the concurrent file (no temporary left)", len(entries))
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestPreNetworkRefusals: every input and output refusal happens before the token is read
// and makes zero requests (the fake has no expectation, so any request would fail the test,
// and a counting transport under the shared forge client stays at 0).
func TestPreNetworkRefusals(t *testing.T) {
	w := reworkWorld()
	good := targetJSON(w)
	cases := []struct {
		name   string
		target string
		setup  func(t *testing.T, g *gateRun)
		check  func(err error) bool
	}{
		{name: "TargetSchemaWrong", target: strings.Replace(good, "rework-input/v1", "rework-input/v2", 1)},
		{name: "TargetDigestFlagMismatch", setup: func(t *testing.T, g *gateRun) { g.opts.TargetSHA256 = strings.Repeat("0", 64) }},
		{name: "ContractDigestFlagMismatch", setup: func(t *testing.T, g *gateRun) { g.opts.ContractSHA256 = strings.Repeat("0", 64) }},
		{name: "ActorIDIsARoleID", setup: func(t *testing.T, g *gateRun) { g.opts.ActorID = specID }},
		{name: "ActorIDNotPositive", setup: func(t *testing.T, g *gateRun) { g.opts.ActorID = 0 }},
		{name: "TargetIsASymlink", setup: func(t *testing.T, g *gateRun) {
			link := filepath.Join(g.dir, "link.json")
			if err := os.Symlink(g.opts.TargetPath, link); err != nil {
				t.Fatal(err)
			}
			g.opts.TargetPath = link
		}},
		{name: "TargetIsADirectory", setup: func(t *testing.T, g *gateRun) { g.opts.TargetPath = g.dir }},
		{name: "APIURLWithoutAPIV1", setup: func(t *testing.T, g *gateRun) { g.opts.APIURL = strings.TrimSuffix(g.opts.APIURL, "/api/v1") }},
		{name: "PlainHTTPToNonLoopbackRefused", setup: func(t *testing.T, g *gateRun) { g.opts.APIURL = "http://forge.example.invalid/api/v1" },
			check: func(err error) bool {
				var ie *InputError
				return errors.As(err, &ie) && ie.File == "--api-url" && strings.Contains(ie.Rule, "insecure-http")
			}},
		{name: "ExistingOutputRefusedBeforeCredentials", setup: func(t *testing.T, g *gateRun) {
			if err := os.WriteFile(g.opts.OutputPath, []byte("old receipt"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, check: func(err error) bool { return errors.Is(err, ErrOutputExists) }},
		{name: "ExistingDanglingSymlinkOutputRefused", setup: func(t *testing.T, g *gateRun) {
			if err := os.Symlink(filepath.Join(g.dir, "nowhere"), g.opts.OutputPath); err != nil {
				t.Fatal(err)
			}
		}, check: func(err error) bool { return errors.Is(err, ErrOutputExists) }},
		{name: "SymlinkedOutputDirectoryRefused", setup: func(t *testing.T, g *gateRun) {
			real := filepath.Join(g.dir, "real")
			if err := os.Mkdir(real, 0o700); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(g.dir, "linked")
			if err := os.Symlink(real, link); err != nil {
				t.Fatal(err)
			}
			g.opts.OutputPath = filepath.Join(link, "decision.json")
		}, check: func(err error) bool {
			var oe *OutputError
			return errors.As(err, &oe) && strings.Contains(oe.Rule, "symlink")
		}},
		{name: "GroupWritableOutputDirectoryRefused", setup: func(t *testing.T, g *gateRun) {
			if err := os.Chmod(filepath.Dir(g.opts.OutputPath), 0o770); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "MissingOutputDirectoryRefused", setup: func(t *testing.T, g *gateRun) {
			g.opts.OutputPath = filepath.Join(g.dir, "absent", "decision.json")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := httpfake.New(t) // no expectation: any request fails the test
			tj := good
			if c.target != "" {
				tj = c.target
			}
			g := newRun(t, f, tj, contractJSON())
			if c.setup != nil {
				c.setup(t, g)
			}
			var counted atomic.Int64
			g.opts.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
				counted.Add(1)
				return http.DefaultTransport.RoundTrip(r)
			})
			res, err := Run(context.Background(), g.opts)
			if err == nil {
				t.Fatalf("Run accepted the input: %+v", res)
			}
			if c.check != nil && !c.check(err) {
				t.Errorf("err = %v: not the expected refusal", err)
			}
			if n := g.tokenRead.Load(); n != 0 {
				t.Errorf("the token was read %d times before the refusal", n)
			}
			if n := counted.Load(); n != 0 || len(f.Served()) != 0 {
				t.Errorf("%d requests were made before the refusal", n)
			}
			if strings.Contains(err.Error(), "secret-token-value") {
				t.Error("the error carries the token")
			}
		})
	}
}

func TestTokenSentOnlyAsAuthorizationHeader(t *testing.T) {
	w := reworkWorld()
	f := httpfake.New(t)
	expectCapture(f, w)
	expectCapture(f, w)
	g := newRun(t, f, targetJSON(w), contractJSON())
	var bad atomic.Int64
	g.opts.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Header.Get("Authorization") != "token secret-token-value" || r.Method != http.MethodGet {
			bad.Add(1)
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	res, _ := runGate(t, g)
	if bad.Load() != 0 {
		t.Errorf("%d requests without the token header or not GET", bad.Load())
	}
	if res.Requests != int64(len(f.Served())) {
		t.Errorf("requests counted %d, served %d", res.Requests, len(f.Served()))
	}
	b, _ := os.ReadFile(res.OutputPath)
	if bytes.Contains(b, []byte("secret-token-value")) {
		t.Error("the receipt carries the token")
	}
}
