package realforge

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/rework"
	"github.com/forgectx/forgectx/test/realforge/giteaserver"
)

// gateSummary is the JSON line `forgectx rework input-gate` prints after publishing a receipt.
type gateSummary struct {
	Decision        string   `json:"decision"`
	Route           string   `json:"route"`
	BlockingReasons []string `json:"blocking_reasons"`
	ReworkReviewIDs []int64  `json:"rework_review_ids"`
	Output          string   `json:"output"`
	ReceiptSHA256   string   `json:"receipt_sha256"`
}

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// TestReworkInputGate drives `forgectx rework input-gate` (the built binary) against one real
// Gitea server through every decision path the server can be made to produce, in the order a
// pull request lives them: no review, spec approval with a code change request carrying an
// inline comment, code approval, a manual comment, a new commit, a blocked spec and a pending
// review. Each step adds to the same pull request, so the steps run in order and stop at the
// first failure. Seeding is the harness's (POST is allowed there); the gate stays GET-only.
func TestReworkInputGate(t *testing.T) {
	srv := giteaserver.Start(t, giteaserver.Config{ActionsDisabled: true})
	owner := srv.CreateUser(t, "maintainer")
	impl, spec, code, alice := srv.CreateUser(t, "impl-bot"), srv.CreateUser(t, "spec-bot"), srv.CreateUser(t, "code-bot"), srv.CreateUser(t, "alice")
	repo := srv.CreateRepo(t, owner, "demo")
	for _, u := range []*giteaserver.User{impl, spec, code, alice} {
		srv.AddCollaborator(t, repo, u, "write")
	}
	issueBody := "discovery-draft/v2\n# Widget cache\n\nAcceptance: bounded.\n"
	issue := srv.CreateIssue(t, owner, repo, "Widget cache", issueBody)
	srv.MustDo(t, impl.Token, "", "POST", "/repos/"+repo.FullName()+"/contents/cache.go", map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte("package cache\n\nfunc Get() {}\n")),
		"message": "cache", "branch": "main", "new_branch": "issue-1"}, nil)
	pr := srv.CreatePull(t, impl, repo, "issue-1", "Widget cache", fmt.Sprintf("Fixes #%d", issue))

	contract := []byte(fmt.Sprintf(`{"schema":"gitea-agent.rework-provider-contract/v1","provider":{"name":"gitea","api_version":"%s"},"counters":{"inline":{"field":"comments_count","components":["review_inline_records"]},"pr":{"field":"review_comments","components":["inline_records"]},"pr_issue":{"field":"comments","components":["pr_issue_comments"]}},"roles":{"spec_reviewer":{"id":%d,"login":"spec-bot"},"code_reviewer":{"id":%d,"login":"code-bot"}},"inline_endpoint":"required"}`,
		srv.Version, spec.ID, code.ID))
	contractSHA := rework.SpecResultDigest(issueBody)
	headOf := func() string {
		var p struct {
			Head struct {
				SHA string `json:"sha"`
			} `json:"head"`
		}
		srv.MustDo(t, owner.Token, "", "GET", fmt.Sprintf("/repos/%s/pulls/%d", repo.FullName(), pr), nil, &p)
		return p.Head.SHA
	}
	tg := &rework.Target{Owner: repo.Owner, Repository: repo.Name, Issue: issue, PR: pr, Head: headOf(), ContractSHA256: contractSHA}

	// gate runs the binary with token as FORGEJO_TOKEN (the Forgejo provider's default) and
	// returns its summary line; every run publishes a receipt, whatever the decision.
	gate := func(t *testing.T, token string) gateSummary {
		t.Helper()
		dir := t.TempDir()
		target := []byte(fmt.Sprintf(`{"schema":"gitea-agent.rework-input/v1","target":{"owner":%q,"repository":%q,"issue":%d,"pr":%d},"head":%q,"contract_sha256":%q}`,
			tg.Owner, tg.Repository, tg.Issue, tg.PR, tg.Head, tg.ContractSHA256))
		tp, cp, out := filepath.Join(dir, "target.json"), filepath.Join(dir, "contract.json"), filepath.Join(dir, "decision.json")
		if err := os.WriteFile(tp, target, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cp, contract, 0o600); err != nil {
			t.Fatal(err)
		}
		r := forgectx(t, map[string]string{"FORGEJO_TOKEN": token}, "rework", "input-gate",
			"--target", tp, "--target-sha256", sha256Hex(target),
			"--provider-contract", cp, "--provider-contract-sha256", sha256Hex(contract),
			"--actor-id", fmt.Sprint(impl.ID), "--output", out, "--api-url", srv.APIURL, "--timeout", "2m")
		if r.code != 0 {
			t.Fatalf("rework input-gate exit %d\n%s", r.code, tailStr(r.stderr, 3000))
		}
		var s gateSummary
		if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
			t.Fatalf("summary: %v\n%s", err, r.stdout)
		}
		receipt, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("no receipt: %v", err)
		}
		if got := sha256Hex(receipt); got != s.ReceiptSHA256 {
			t.Errorf("receipt sha256 %s, summary says %s", got, s.ReceiptSHA256)
		}
		t.Logf("%s route=%s reasons=%v rework_review_ids=%v", s.Decision, s.Route, s.BlockingReasons, s.ReworkReviewIDs)
		return s
	}
	expect := func(t *testing.T, s gateSummary, decision string, reasons ...rework.Reason) {
		t.Helper()
		if s.Decision != decision {
			t.Fatalf("decision %s %v, want %s", s.Decision, s.BlockingReasons, decision)
		}
		for _, r := range reasons {
			if !slices.Contains(s.BlockingReasons, string(r)) {
				t.Errorf("blocking reasons %v lack %s", s.BlockingReasons, r)
			}
		}
	}
	review := func(as *giteaserver.User, event, body string, inline ...giteaserver.ReviewComment) int64 {
		id := srv.Review(t, as, repo, pr, event, body, inline...)
		time.Sleep(1100 * time.Millisecond) // Gitea's timestamps have one-second resolution
		return id
	}
	step := func(name string, f func(t *testing.T)) {
		if !t.Run(name, f) {
			t.FailNow() // later steps build on this one's server state
		}
	}

	step("no-reviews/missing_current_review", func(t *testing.T) {
		expect(t, gate(t, impl.Token), rework.DecisionBlocked, rework.ReasonMissingCurrentReview)
	})
	var request int64
	step("code-request-with-inline/rework", func(t *testing.T) {
		review(spec, "APPROVED", rework.RenderSpecReview(tg, "Spec holds.", rework.VerdictApproved, tg.Head, contractSHA))
		request = review(code, "REQUEST_CHANGES", rework.RenderCodeMarker(rework.VerdictRequestChanges, tg.Head, contractSHA)+"\nRename Get.",
			giteaserver.ReviewComment{Path: "cache.go", Body: "rename Get", NewLine: 3})
		s := gate(t, impl.Token)
		expect(t, s, rework.DecisionRework)
		if !slices.Equal(s.ReworkReviewIDs, []int64{request}) {
			t.Errorf("rework_review_ids %v, want [%d]", s.ReworkReviewIDs, request)
		}
		if s.Route != rework.RouteImpl {
			t.Errorf("route %s, want %s", s.Route, rework.RouteImpl)
		}
	})
	step("code-approval/no_op", func(t *testing.T) {
		review(code, "APPROVED", rework.RenderCodeMarker(rework.VerdictApproved, tg.Head, contractSHA)+"\nFine now.")
		expect(t, gate(t, impl.Token), rework.DecisionNoOp)
	})
	step("manual-comment/current_manual_comment", func(t *testing.T) {
		review(alice, "COMMENT", "Have you considered a smaller cache?")
		expect(t, gate(t, impl.Token), rework.DecisionBlocked, rework.ReasonCurrentManualComment)
	})
	step("new-commit/head_mismatch", func(t *testing.T) {
		var file struct {
			SHA string `json:"sha"`
		}
		srv.MustDo(t, impl.Token, "", "GET", "/repos/"+repo.FullName()+"/contents/cache.go?ref=issue-1", nil, &file)
		srv.MustDo(t, impl.Token, "", "PUT", "/repos/"+repo.FullName()+"/contents/cache.go", map[string]any{
			"content": base64.StdEncoding.EncodeToString([]byte("package cache\n\nfunc Lookup() {}\n")),
			"message": "rename", "branch": "issue-1", "sha": file.SHA}, nil)
		// Gitea moves the pull request's head asynchronously after a push.
		old := tg.Head
		for i := 0; headOf() == old; i++ {
			if i > 50 {
				t.Fatal("the pull request head did not move after the push")
			}
			time.Sleep(200 * time.Millisecond)
		}
		expect(t, gate(t, impl.Token), rework.DecisionBlocked, rework.ReasonHeadMismatch)
		tg.Head = headOf()
		// Every review is now stale: the history alone is no current review.
		expect(t, gate(t, impl.Token), rework.DecisionBlocked, rework.ReasonMissingCurrentReview)
	})
	step("blocked-spec/route-discovery", func(t *testing.T) {
		review(spec, "REQUEST_CHANGES", rework.RenderSpecReview(tg, "The draft contradicts itself.", rework.VerdictBlockedSpec, tg.Head, contractSHA))
		s := gate(t, impl.Token)
		expect(t, s, rework.DecisionBlocked, rework.ReasonBlockedSpec)
		if s.Route != rework.RouteDiscovery {
			t.Errorf("route %s, want %s", s.Route, rework.RouteDiscovery)
		}
	})
	step("pending-review/pending_review+pagination_incomplete", func(t *testing.T) {
		review(code, "PENDING", "draft")
		// Its author sees the pending review; the implementation agent sees a review count
		// that the listing does not reach.
		expect(t, gate(t, code.Token), rework.DecisionBlocked, rework.ReasonPendingReview)
		expect(t, gate(t, impl.Token), rework.DecisionBlocked, rework.ReasonPaginationIncomplete)
	})
}
