package realforge

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/rework"
	"github.com/forgectx/forgectx/test/realforge/giteaserver"
)

// gateWorld is a repository with a Source Issue and the implementation agent's pull request
// changing two files of four lines each, the two role reviewers and a human collaborator.
type gateWorld struct {
	srv                     *giteaserver.Server
	owner, impl, spec, code *giteaserver.User
	alice                   *giteaserver.User
	repo                    giteaserver.Repo
	pr                      int64
	tg                      *rework.Target
	contract                []byte
}

func newGateWorld(t *testing.T, srv *giteaserver.Server) *gateWorld {
	t.Helper()
	w := &gateWorld{srv: srv, owner: srv.CreateUser(t, "maintainer")}
	w.impl, w.spec, w.code, w.alice = srv.CreateUser(t, "impl-bot"), srv.CreateUser(t, "spec-bot"), srv.CreateUser(t, "code-bot"), srv.CreateUser(t, "alice")
	w.repo = srv.CreateRepo(t, w.owner, "demo")
	for _, u := range []*giteaserver.User{w.impl, w.spec, w.code, w.alice} {
		srv.AddCollaborator(t, w.repo, u, "write")
	}
	body := "discovery-draft/v2\n# Widget cache\n\nAcceptance: bounded.\n"
	issue := srv.CreateIssue(t, w.owner, w.repo, "Widget cache", body)
	w.put(t, "cache.go", "package cache\n\nfunc Get() {}\nfunc Put() {}\n", "", "issue-1")
	w.put(t, "store.go", "package cache\n\nfunc Load() {}\nfunc Save() {}\n", "issue-1", "")
	w.pr = srv.CreatePull(t, w.impl, w.repo, "issue-1", "Widget cache", fmt.Sprintf("Fixes #%d", issue))
	w.contract = []byte(fmt.Sprintf(`{"schema":"gitea-agent.rework-provider-contract/v1","provider":{"name":"gitea","api_version":"%s"},"counters":{"inline":{"field":"comments_count","components":["review_inline_records"]},"pr":{"field":"review_comments","components":["inline_records"]},"pr_issue":{"field":"comments","components":["pr_issue_comments"]}},"roles":{"spec_reviewer":{"id":%d,"login":"spec-bot"},"code_reviewer":{"id":%d,"login":"code-bot"}},"inline_endpoint":"required"}`,
		srv.Version, w.spec.ID, w.code.ID))
	w.tg = &rework.Target{Owner: w.repo.Owner, Repository: w.repo.Name, Issue: issue, PR: w.pr, Head: w.head(t), ContractSHA256: rework.SpecResultDigest(body)}
	return w
}

// put creates path on a new branch from main (newBranch) or on branch.
func (w *gateWorld) put(t *testing.T, path, content, branch, newBranch string) {
	t.Helper()
	req := map[string]any{"content": base64.StdEncoding.EncodeToString([]byte(content)), "message": "add " + path}
	if newBranch != "" {
		req["branch"], req["new_branch"] = "main", newBranch
	} else {
		req["branch"] = branch
	}
	w.srv.MustDo(t, w.impl.Token, "", "POST", "/repos/"+w.repo.FullName()+"/contents/"+path, req, nil)
}

func (w *gateWorld) head(t *testing.T) string {
	t.Helper()
	var p struct {
		Head struct {
			SHA string `json:"sha"`
		} `json:"head"`
	}
	w.srv.MustDo(t, w.owner.Token, "", "GET", fmt.Sprintf("/repos/%s/pulls/%d", w.repo.FullName(), w.pr), nil, &p)
	return p.Head.SHA
}

// push adds a commit to the pull request's branch and waits until Gitea moved its head.
func (w *gateWorld) push(t *testing.T) {
	t.Helper()
	old := w.head(t)
	w.put(t, "notes.txt", "round two\n", "issue-1", "")
	for i := 0; w.head(t) == old; i++ {
		if i > 50 {
			t.Fatal("the pull request head did not move after the push")
		}
		time.Sleep(200 * time.Millisecond)
	}
	w.tg.Head = w.head(t)
	w.settle(t)
}

// settle waits until the pull request reads the same twice in a row, 500 ms apart: after a
// push Gitea re-checks mergeability in the background (1.27.3 flips mergeable and updated_at
// a second or more later), which a gate run in between rightly reports as capture_drift.
func (w *gateWorld) settle(t *testing.T) {
	t.Helper()
	path := fmt.Sprintf("/repos/%s/pulls/%d", w.repo.FullName(), w.pr)
	var prev json.RawMessage
	for i := 0; i < 60; i++ {
		var cur json.RawMessage
		w.srv.MustDo(t, w.owner.Token, "", "GET", path, nil, &cur)
		if prev != nil && string(prev) == string(cur) {
			return
		}
		if prev != nil {
			t.Logf("the pull request changed while settling: %s", changedKeys(prev, cur))
		}
		prev = cur
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatal("the pull request kept changing for 30 s after the push")
}

// gate runs `forgectx rework input-gate` with token and returns its summary and receipt.
func (w *gateWorld) gate(t *testing.T, token string) (gateSummary, map[string]any) {
	t.Helper()
	dir := t.TempDir()
	tg := w.tg
	target := []byte(fmt.Sprintf(`{"schema":"gitea-agent.rework-input/v1","target":{"owner":%q,"repository":%q,"issue":%d,"pr":%d},"head":%q,"contract_sha256":%q}`,
		tg.Owner, tg.Repository, tg.Issue, tg.PR, tg.Head, tg.ContractSHA256))
	tp, cp, out := filepath.Join(dir, "target.json"), filepath.Join(dir, "contract.json"), filepath.Join(dir, "decision.json")
	if err := os.WriteFile(tp, target, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, w.contract, 0o600); err != nil {
		t.Fatal(err)
	}
	r := forgectx(t, map[string]string{"FORGEJO_TOKEN": token}, "rework", "input-gate",
		"--target", tp, "--target-sha256", sha256Hex(target),
		"--provider-contract", cp, "--provider-contract-sha256", sha256Hex(w.contract),
		"--actor-id", fmt.Sprint(w.impl.ID), "--output", out, "--api-url", w.srv.APIURL, "--timeout", "2m")
	if r.code != 0 {
		t.Fatalf("rework input-gate exit %d\n%s", r.code, tailStr(r.stderr, 3000))
	}
	var s gateSummary
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("summary: %v\n%s", err, r.stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no receipt: %v", err)
	}
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return s, rec
}

// TestReworkGateSameDecisionOnEveryRun: Gitea serves a review's inline comments in no fixed
// order (it iterates a map), so the gate's two captures of an unchanged pull request differ in
// row order. A code review with 4 inline comments on 2 files × 2 lines, the gate run 20 times:
// 20 identical rework decisions (the byte comparison blocked 30-50% of such runs as drift).
func TestReworkGateSameDecisionOnEveryRun(t *testing.T) {
	srv := giteaserver.Start(t, giteaserver.Config{ActionsDisabled: true})
	w := newGateWorld(t, srv)
	w.srv.Review(t, w.spec, w.repo, w.pr, "APPROVED", rework.RenderSpecReview(w.tg, "Spec holds.", rework.VerdictApproved, w.tg.Head, w.tg.ContractSHA256))
	time.Sleep(1100 * time.Millisecond) // one-second timestamps: the two roles' reviews apart
	request := w.srv.Review(t, w.code, w.repo, w.pr, "REQUEST_CHANGES",
		rework.RenderCodeMarker(rework.VerdictRequestChanges, w.tg.Head, w.tg.ContractSHA256)+"\nFour findings.",
		giteaserver.ReviewComment{Path: "cache.go", Body: "rename Get", NewLine: 3},
		giteaserver.ReviewComment{Path: "cache.go", Body: "rename Put", NewLine: 4},
		giteaserver.ReviewComment{Path: "store.go", Body: "rename Load", NewLine: 3},
		giteaserver.ReviewComment{Path: "store.go", Body: "rename Save", NewLine: 4})

	// What the server does: the same review's inline rows, read 20 times.
	orders := map[string]int{}
	for i := 0; i < 20; i++ {
		orders[fmt.Sprint(srv.ReviewCommentIDs(t, w.impl, w.repo, w.pr, request))]++
	}
	t.Logf("Gitea %s served the review's 4 inline rows in %d distinct orders over 20 reads: %v", srv.Version, len(orders), orders)

	const runs = 20
	drifted := 0
	for i := 0; i < runs; i++ {
		s, rec := w.gate(t, w.impl.Token)
		if d, _ := rec["drift"].([]any); len(d) > 0 {
			drifted++
		}
		if s.Decision != rework.DecisionRework || len(s.BlockingReasons) != 0 || !slices.Equal(s.ReworkReviewIDs, []int64{request}) {
			t.Errorf("run %d: %s %v rework_review_ids %v, want rework [%d]", i+1, s.Decision, s.BlockingReasons, s.ReworkReviewIDs, request)
		}
	}
	t.Logf("%d runs: %d with drift", runs, drifted)
}

// TestReworkGateManyReviewRows: a busy pull request has more than one page of review rows
// (old-head reviews, review requests and both roles' approvals on the head). Gitea's review
// list sends X-Total-Count and no Link; the gate pages on by the total and decides no_op. An
// unreadable pending review (another user's: counted, not listed) still blocks.
func TestReworkGateManyReviewRows(t *testing.T) {
	srv := giteaserver.Start(t, giteaserver.Config{ActionsDisabled: true})
	w := newGateWorld(t, srv)
	const oldRounds, requests = 46, 4
	for i := 0; i < oldRounds; i++ {
		srv.Review(t, w.alice, w.repo, w.pr, "COMMENT", fmt.Sprintf("Round %d note.", i+1))
	}
	w.push(t)
	var logins []string
	for i := 0; i < requests; i++ {
		u := srv.CreateUser(t, fmt.Sprintf("watcher%d", i))
		srv.AddCollaborator(t, w.repo, u, "read")
		logins = append(logins, u.Login)
	}
	srv.MustDo(t, w.owner.Token, "", "POST", fmt.Sprintf("/repos/%s/pulls/%d/requested_reviewers", w.repo.FullName(), w.pr),
		map[string]any{"reviewers": logins}, nil)
	srv.Review(t, w.spec, w.repo, w.pr, "APPROVED", rework.RenderSpecReview(w.tg, "Spec holds.", rework.VerdictApproved, w.tg.Head, w.tg.ContractSHA256))
	time.Sleep(1100 * time.Millisecond)
	srv.Review(t, w.code, w.repo, w.pr, "APPROVED", rework.RenderCodeMarker(rework.VerdictApproved, w.tg.Head, w.tg.ContractSHA256)+"\nFine.")

	t.Run("no_op", func(t *testing.T) {
		s, rec := w.gate(t, w.impl.Token)
		rows := len(rec["raw_input_snapshot"].(map[string]any)["reviews"].([]any))
		var pages []any
		for _, p := range rec["raw_input_snapshot"].(map[string]any)["provenance"].([]any) {
			if p.(map[string]any)["resource"] == "reviews" {
				pages = p.(map[string]any)["pages"].([]any)
			}
		}
		t.Logf("%d review rows in %d pages; page 1: %v", rows, len(pages), pages[0])
		if s.Decision != rework.DecisionNoOp || len(s.BlockingReasons) != 0 {
			t.Fatalf("decision %s %v (drift %v), want no_op", s.Decision, s.BlockingReasons, rec["drift"])
		}
		if rows <= rework.PageSize || len(pages) < 2 {
			t.Fatalf("%d review rows in %d pages: the pull request must cross one page", rows, len(pages))
		}
	})
	t.Run("hidden-pending/pagination_incomplete", func(t *testing.T) {
		srv.Review(t, w.alice, w.repo, w.pr, "PENDING", "draft")
		s, rec := w.gate(t, w.impl.Token)
		if s.Decision != rework.DecisionBlocked || !slices.Contains(s.BlockingReasons, string(rework.ReasonPaginationIncomplete)) {
			t.Fatalf("decision %s %v, want blocked with pagination_incomplete", s.Decision, s.BlockingReasons)
		}
		if d := fmt.Sprint(rec["decision"]); !strings.Contains(d, "X-Total-Count says") {
			t.Errorf("decision %s does not name the declared total", d)
		}
	})
}

// changedKeys names the top-level keys whose values differ between two JSON objects.
func changedKeys(a, b json.RawMessage) []string {
	var ma, mb map[string]json.RawMessage
	_ = json.Unmarshal(a, &ma)
	_ = json.Unmarshal(b, &mb)
	var out []string
	for k, v := range ma {
		if string(mb[k]) != string(v) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
