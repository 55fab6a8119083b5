package rework

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/test/httpfake"
)

// The fake world is shaped like Gitea 1.25's JSON (swagger: Repository, PullRequest, Issue,
// Comment, PullReview, PullReviewComment) and served as Gitea 1.25.5 and 1.27.3 serve it: an
// issue's comments in one answer whatever page/limit say, with X-Total-Count and no Link; the
// review list in pages of 50 with X-Total-Count and no Link; each review's inline rows in one
// answer without pagination headers; inline rows and requested_reviewers in another order on
// every other read.

const (
	tOwner   = "acme"
	tRepo    = "demo"
	tIssue   = 7
	tPR      = 9
	tHead    = "0123456789abcdef0123456789abcdef01234567"
	oldHead  = "89abcdef0123456789abcdef0123456789abcdef"
	tVersion = "1.25.5"
	implID   = 11
	specID   = 21
	codeID   = 22
	otherID  = 31
)

type fakeUser struct {
	ID    int64
	Login string
}

var (
	implUser  = fakeUser{implID, "impl-bot"}
	specUser  = fakeUser{specID, "spec-bot"}
	codeUser  = fakeUser{codeID, "code-bot"}
	humanUser = fakeUser{otherID, "alice"}
)

func (u fakeUser) json() string {
	return fmt.Sprintf(`{"id":%d,"login":%q,"login_name":"","source_id":0,"full_name":"","email":"%s@noreply.localhost","avatar_url":"http://localhost/avatars/x","html_url":"http://localhost/%s","language":"","is_admin":false,"last_login":"0001-01-01T00:00:00Z","created":"2026-11-01T10:00:00Z","restricted":false,"active":false,"prohibit_login":false,"location":"","website":"","description":"","visibility":"public","followers_count":0,"following_count":0,"starred_repos_count":0,"username":%q}`, u.ID, u.Login, u.Login, u.Login, u.Login)
}

type fakeReview struct {
	ID            int64
	User          *fakeUser
	State         string
	Body          string
	Commit        string
	Stale         bool
	Dismissed     bool
	Submitted     string
	Inline        []int64
	CommentsCount string // literal; "" means len(Inline)
	InlineStatus  int    // 0 means 200
}

type world struct {
	Version         string
	DefaultBranch   string
	BaseRef         string
	Head            string
	PRAuthor        fakeUser
	PRState         string
	Merged          bool
	IssueBody       string
	IssueIsPull     bool
	IssueComments   []string
	PRComments      []string
	Reviews         []fakeReview
	PRCommentsLit   string // "" means computed
	PRReviewLit     string
	IssueCommentLit string
	// Requested are the pull request's requested reviewers.
	Requested []fakeUser
	// LinkPagedComments serves the comment lists in pages of 50 with X-Total-Count and Link
	// rel="next" (a server that pages them; Gitea answers them at once).
	LinkPagedComments bool
	// reads counts the captures registered for this world: Gitea serves a review's inline
	// rows (1.25.5, 1.27.3) and a pull request's requested_reviewers (1.27.3) in no fixed
	// order (it iterates a map), so every other capture serves them reversed, and no test
	// depends on an order the real server does not keep.
	reads int
}

func baseWorld() *world {
	return &world{Version: tVersion, DefaultBranch: "main", BaseRef: "main", Head: tHead, PRAuthor: implUser, PRState: "open",
		IssueBody: "discovery-draft/v2\n# Widget cache\n\nAcceptance: the cache is bounded.\n", IssueComments: []string{"looks right"}, PRComments: []string{"ready for review"}}
}

func contractDigest(w *world) string {
	s := sha256.Sum256([]byte(w.IssueBody))
	return hex.EncodeToString(s[:])
}

func testTarget(w *world) *Target {
	return &Target{Owner: tOwner, Repository: tRepo, Issue: tIssue, PR: tPR, Head: tHead, ContractSHA256: contractDigest(w)}
}

// Review bodies with canonical markers.
func codeBody(w *world, verdict, head string) string {
	return RenderCodeMarker(verdict, head, contractDigest(w)) + "\n\nCode review findings.\n"
}

func specBody(w *world, verdict, head string) string {
	return RenderSpecReview(testTarget(w), "Spec review result.\n\n- finding 1", verdict, head, contractDigest(w))
}

func review(id int64, u fakeUser, state, body, commit, submitted string, inline ...int64) fakeReview {
	uu := u
	return fakeReview{ID: id, User: &uu, State: state, Body: body, Commit: commit, Submitted: submitted, Inline: inline}
}

func (w *world) repoJSON(base string) string {
	return fmt.Sprintf(`{"id":77,"owner":%s,"name":%q,"full_name":%q,"description":"","empty":false,"private":false,"fork":false,"template":false,"mirror":false,"size":40,"language":"","languages_url":"%s/repos/acme/demo/languages","html_url":"http://localhost/acme/demo","url":"%s/repos/acme/demo","link":"","ssh_url":"git@localhost:acme/demo.git","clone_url":"http://localhost/acme/demo.git","original_url":"","website":"","stars_count":0,"forks_count":0,"watchers_count":1,"open_issues_count":1,"open_pr_counter":1,"release_counter":0,"default_branch":%q,"archived":false,"created_at":"2026-11-01T10:00:00Z","updated_at":"2026-11-20T10:00:00Z","archived_at":"1970-01-01T00:00:00Z","permissions":{"admin":false,"push":true,"pull":true},"has_code":true,"has_issues":true,"has_wiki":true,"has_pull_requests":true,"has_projects":true,"has_releases":true,"has_packages":true,"has_actions":true,"ignore_whitespace_conflicts":false,"allow_merge_commits":true,"allow_rebase":true,"allow_rebase_explicit":true,"allow_squash_merge":true,"allow_fast_forward_only_merge":true,"allow_rebase_update":true,"allow_manual_merge":false,"autodetect_manual_merge":false,"default_delete_branch_after_merge":false,"default_merge_style":"merge","default_allow_maintainer_edit":false,"avatar_url":"","internal":false,"mirror_interval":"","object_format_name":"sha1","mirror_updated":"0001-01-01T00:00:00Z","topics":[],"licenses":[]}`,
		fakeUser{5, tOwner}.json(), tRepo, tOwner+"/"+tRepo, base, base, w.DefaultBranch)
}

func (w *world) inlineTotal() int {
	n := 0
	for _, r := range w.Reviews {
		n += len(r.Inline)
	}
	return n
}

func lit(s string, n int) string {
	if s != "" {
		return s
	}
	return strconv.Itoa(n)
}

func (w *world) pullJSON() string {
	var req []string
	for _, u := range w.Requested {
		req = append(req, u.json())
	}
	if w.reads%2 == 0 {
		slices.Reverse(req)
	}
	return fmt.Sprintf(`{"id":9009,"url":"http://localhost/acme/demo/pulls/9","number":9,"user":%s,"title":"Widget cache","body":"Fixes #7","labels":[],"milestone":null,"assignee":null,"assignees":null,"requested_reviewers":[`+strings.Join(req, ",")+`],"requested_reviewers_teams":[],"state":%q,"draft":false,"is_locked":false,"comments":%s,"review_comments":%s,"additions":10,"deletions":2,"changed_files":1,"html_url":"http://localhost/acme/demo/pulls/9","diff_url":"http://localhost/acme/demo/pulls/9.diff","patch_url":"http://localhost/acme/demo/pulls/9.patch","mergeable":true,"merged":%t,"merged_at":null,"merge_commit_sha":null,"merged_by":null,"allow_maintainer_edit":false,"base":{"label":%q,"ref":%q,"sha":"1111111111111111111111111111111111111111","repo_id":77,"repo":null},"head":{"label":"issue-7","ref":"issue-7","sha":%q,"repo_id":77,"repo":null},"merge_base":"1111111111111111111111111111111111111111","due_date":null,"created_at":"2026-11-20T10:00:00Z","updated_at":"2026-11-21T10:00:00Z","closed_at":null,"pin_order":0}`,
		w.PRAuthor.json(), w.PRState, lit(w.PRCommentsLit, len(w.PRComments)), lit(w.PRReviewLit, w.inlineTotal()), w.Merged, w.BaseRef, w.BaseRef, w.Head)
}

func (w *world) issueJSON() string {
	pr := "null"
	if w.IssueIsPull {
		pr = `{"merged":false,"merged_at":null,"draft":false,"html_url":"http://localhost/acme/demo/pulls/7"}`
	}
	body, _ := json.Marshal(w.IssueBody)
	return fmt.Sprintf(`{"id":7007,"url":"http://localhost/api/v1/repos/acme/demo/issues/7","html_url":"http://localhost/acme/demo/issues/7","number":7,"user":%s,"original_author":"","original_author_id":0,"title":"Widget cache","body":%s,"ref":"","assets":[],"labels":[],"milestone":null,"assignee":null,"assignees":null,"state":"open","is_locked":false,"comments":%s,"created_at":"2026-11-19T10:00:00Z","updated_at":"2026-11-19T10:00:00Z","closed_at":null,"due_date":null,"time_estimate":0,"pull_request":%s,"repository":{"id":77,"name":"demo","owner":"acme","full_name":"acme/demo"},"pin_order":0}`,
		fakeUser{5, tOwner}.json(), body, lit(w.IssueCommentLit, len(w.IssueComments)), pr)
}

func commentJSON(id int64, issue int, body string) string {
	b, _ := json.Marshal(body)
	return fmt.Sprintf(`{"id":%d,"html_url":"http://localhost/acme/demo/issues/%d#issuecomment-%d","pull_request_url":"","issue_url":"http://localhost/acme/demo/issues/%d","user":%s,"original_author":"","original_author_id":0,"body":%s,"assets":[],"created_at":"2026-11-21T11:00:00Z","updated_at":"2026-11-21T11:00:00Z"}`,
		id, issue, id, issue, humanUser.json(), b)
}

func (r fakeReview) json() string {
	user := "null"
	if r.User != nil {
		user = r.User.json()
	}
	body, _ := json.Marshal(r.Body)
	return fmt.Sprintf(`{"id":%d,"user":%s,"team":null,"state":%q,"body":%s,"commit_id":%q,"stale":%t,"official":true,"dismissed":%t,"comments_count":%s,"submitted_at":%q,"updated_at":%q,"html_url":"http://localhost/acme/demo/pulls/9#issuecomment-%d","pull_request_url":"http://localhost/acme/demo/pulls/9"}`,
		r.ID, user, r.State, body, r.Commit, r.Stale, r.Dismissed, lit(r.CommentsCount, len(r.Inline)), r.Submitted, r.Submitted, r.ID)
}

func inlineJSON(id, review int64, u *fakeUser, commit string) string {
	user := "null"
	if u != nil {
		user = u.json()
	}
	return fmt.Sprintf(`{"id":%d,"body":"please rename","user":%s,"resolver":null,"pull_request_review_id":%d,"created_at":"2026-11-21T12:00:00Z","updated_at":"2026-11-21T12:00:00Z","path":"cache.go","commit_id":%q,"original_commit_id":%q,"diff_hunk":"@@ -1,3 +1,4 @@\n package cache\n+// x","position":2,"original_position":0,"html_url":"http://localhost/acme/demo/pulls/9/files#issuecomment-%d","pull_request_url":"http://localhost/acme/demo/pulls/9"}`,
		id, user, review, commit, commit, id)
}

func withHeaders(r httpfake.Reply, kv ...string) httpfake.Reply {
	r.Header = r.Header.Clone()
	for i := 0; i+1 < len(kv); i += 2 {
		r.Header.Set(kv[i], kv[i+1])
	}
	return r
}

// expectList registers a paginated Gitea list: pages of 50 with X-Total-Count and Link.
func expectList(f *httpfake.Server, path string, rows []string) { expectPages(f, path, rows, true) }

// expectAtOnce registers a list Gitea answers at once, ignoring page and limit (an issue's
// comments): every row on page 1 with X-Total-Count, no Link.
func expectAtOnce(f *httpfake.Server, path string, rows []string) {
	r := withHeaders(httpfake.JSON(200, "["+strings.Join(rows, ",")+"]"), "X-Total-Count", strconv.Itoa(len(rows)))
	f.Expect("GET", fmt.Sprintf("/api/v1%s?limit=%d&page=1", path, PageSize), r)
}

// expectPages registers a paginated Gitea list: pages of 50 with X-Total-Count, and Link only
// when link is set (Gitea's review list sends X-Total-Count and no Link).
func expectPages(f *httpfake.Server, path string, rows []string, link bool) {
	const api = "/api/v1"
	total := len(rows)
	pages := (total + PageSize - 1) / PageSize
	if pages == 0 {
		pages = 1
	}
	for p := 1; p <= pages; p++ {
		lo, hi := (p-1)*PageSize, min(p*PageSize, total)
		r := withHeaders(httpfake.JSON(200, "["+strings.Join(rows[lo:hi], ",")+"]"), "X-Total-Count", strconv.Itoa(total))
		if pages > 1 && link {
			var links []string
			mk := func(n int, rel string) string {
				return fmt.Sprintf(`<%s%s%s?limit=%d&page=%d>; rel=%q`, f.URL, api, path, PageSize, n, rel)
			}
			if p < pages {
				links = append(links, mk(p+1, "next"), mk(pages, "last"))
			}
			if p > 1 {
				links = append(links, mk(1, "first"), mk(p-1, "prev"))
			}
			r.Header.Set("Link", strings.Join(links, ","))
		}
		f.Expect("GET", fmt.Sprintf("%s%s?limit=%d&page=%d", api, path, PageSize, p), r)
	}
}

// expectCapture registers every request of one capture of w.
func expectCapture(f *httpfake.Server, w *world) {
	const api = "/api/v1"
	repo := "/repos/acme/demo"
	w.reads++
	f.Expect("GET", api+"/version", httpfake.JSON(200, `{"version":"`+w.Version+`"}`))
	f.Expect("GET", api+repo, httpfake.JSON(200, w.repoJSON(f.URL+api)))
	f.Expect("GET", api+repo+"/pulls/9", httpfake.JSON(200, w.pullJSON()))
	f.Expect("GET", api+repo+"/issues/7", httpfake.JSON(200, w.issueJSON()))
	var ic, pc, rv []string
	for i, b := range w.IssueComments {
		ic = append(ic, commentJSON(int64(5000+i), 7, b))
	}
	for i, b := range w.PRComments {
		pc = append(pc, commentJSON(int64(6000+i), 9, b))
	}
	for _, r := range w.Reviews {
		rv = append(rv, r.json())
	}
	comments := expectAtOnce
	if w.LinkPagedComments {
		comments = expectList
	}
	comments(f, repo+"/issues/7/comments", ic)
	comments(f, repo+"/issues/9/comments", pc)
	expectPages(f, repo+"/pulls/9/reviews", rv, false)
	for _, r := range w.Reviews {
		path := fmt.Sprintf("%s/pulls/9/reviews/%d/comments", repo, r.ID)
		if r.InlineStatus != 0 {
			f.Expect("GET", fmt.Sprintf("%s%s?limit=%d&page=1", api, path, PageSize), httpfake.JSON(r.InlineStatus, `{"message":"not found","url":"http://localhost/api/swagger"}`))
			return
		}
		var rows []string
		for _, id := range r.Inline {
			rows = append(rows, inlineJSON(id, r.ID, r.User, r.Commit))
		}
		if w.reads%2 == 0 {
			slices.Reverse(rows)
		}
		// Gitea answers the per-review comments endpoint in one page, without pagination
		// headers.
		f.Expect("GET", fmt.Sprintf("%s%s?limit=%d&page=1", api, path, PageSize), httpfake.JSON(200, "["+strings.Join(rows, ",")+"]"))
	}
}

func contractJSON() string {
	return `{"schema":"gitea-agent.rework-provider-contract/v1","provider":{"name":"gitea","api_version":"` + tVersion + `"},` +
		`"counters":{"inline":{"field":"comments_count","components":["review_inline_records"]},"pr":{"field":"review_comments","components":["inline_records"]},"pr_issue":{"field":"comments","components":["pr_issue_comments"]}},` +
		`"roles":{"spec_reviewer":{"id":21,"login":"spec-bot"},"code_reviewer":{"id":22,"login":"code-bot"}},"inline_endpoint":"required"}`
}

func targetJSON(w *world) string {
	return fmt.Sprintf(`{"schema":"gitea-agent.rework-input/v1","target":{"owner":"acme","repository":"demo","issue":7,"pr":9},"head":%q,"contract_sha256":%q}`, tHead, contractDigest(w))
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

type gateRun struct {
	opts      Options
	dir       string
	tokenRead *atomic.Int64
}

// newRun writes the inputs into a private directory and returns options against f.
func newRun(t *testing.T, f *httpfake.Server, target, contract string) *gateRun {
	t.Helper()
	dir := t.TempDir()
	tp, cp := filepath.Join(dir, "rework-input.json"), filepath.Join(dir, "provider-contract.json")
	if err := os.WriteFile(tp, []byte(target), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, []byte(contract), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}
	g := &gateRun{dir: dir, tokenRead: &atomic.Int64{}}
	g.opts = Options{
		TargetPath: tp, TargetSHA256: sum([]byte(target)), ContractPath: cp, ContractSHA256: sum([]byte(contract)),
		ActorID: implID, OutputPath: filepath.Join(out, "decision.json"), APIURL: f.URL + "/api/v1", TokenEnv: "GITEA_TOKEN",
		Getenv: func(k string) string {
			g.tokenRead.Add(1)
			if k == "GITEA_TOKEN" {
				return "secret-token-value"
			}
			return ""
		},
		Retry: forge.Retry{WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond, MaxServerWait: 2 * time.Millisecond},
	}
	return g
}

// runWorld runs the gate against two identical captures of w and returns the receipt.
func runWorld(t *testing.T, w *world) (*Result, map[string]any) {
	t.Helper()
	f := httpfake.New(t)
	expectCapture(f, w)
	expectCapture(f, w)
	g := newRun(t, f, targetJSON(w), contractJSON())
	return runGate(t, g)
}

func runGate(t *testing.T, g *gateRun) (*Result, map[string]any) {
	t.Helper()
	res, err := Run(context.Background(), g.opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	b, err := os.ReadFile(g.opts.OutputPath)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return res, rec
}

func reasonsOf(d Decision) []string {
	out := []string{}
	for _, b := range d.BlockingReasons {
		out = append(out, string(b.Reason))
	}
	return out
}

func hasReason(d Decision, r Reason) bool {
	for _, b := range d.BlockingReasons {
		if b.Reason == r {
			return true
		}
	}
	return false
}

var _ = http.StatusOK

func newFake(t *testing.T) *httpfake.Server { return httpfake.New(t) }
