package rework

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRealGiteaDecisionPaths runs the gate against a real Gitea server for every decision path
// the server can be made to produce. It starts the binary named by FORGECTX_REWORK_REAL_GITEA
// (for example /root/.cache/forgectx-test/gitea/v1.25.5/gitea) on loopback with SQLite and
// skips without it: it costs a Gitea start, and test/realforge's shared harness replaces this
// bootstrap once it lands. Seeding uses its own client (POST is allowed here); the gate stays
// GET-only.
func TestRealGiteaDecisionPaths(t *testing.T) {
	bin := os.Getenv("FORGECTX_REWORK_REAL_GITEA")
	if bin == "" {
		t.Skip("FORGECTX_REWORK_REAL_GITEA is not set to a Gitea binary")
	}
	g := startGitea(t, bin)
	admin := g.token(t, "root1")
	for _, u := range []string{"impl-bot", "spec-bot", "code-bot", "alice"} {
		g.tokens[u] = g.token(t, u)
	}
	ids := map[string]int64{}
	for _, u := range []string{"impl-bot", "spec-bot", "code-bot", "alice"} {
		var v struct{ ID int64 }
		g.call(t, admin, "GET", "/users/"+u, nil, &v)
		ids[u] = v.ID
	}
	g.call(t, admin, "POST", "/orgs", map[string]any{"username": "acme"}, nil)
	g.call(t, admin, "POST", "/orgs/acme/repos", map[string]any{"name": "demo", "auto_init": true, "default_branch": "main"}, nil)
	for _, u := range []string{"impl-bot", "spec-bot", "code-bot", "alice"} {
		g.call(t, admin, "PUT", "/repos/acme/demo/collaborators/"+u, map[string]any{"permission": "write"}, nil)
	}
	issueBody := "discovery-draft/v2\n# Widget cache\n\nAcceptance: bounded.\n"
	var issue struct{ Number int64 }
	g.call(t, admin, "POST", "/repos/acme/demo/issues", map[string]any{"title": "Widget cache", "body": issueBody}, &issue)
	impl := g.tokens["impl-bot"]
	g.call(t, impl, "POST", "/repos/acme/demo/contents/cache.go", map[string]any{"content": base64.StdEncoding.EncodeToString([]byte("package cache\n\nfunc Get() {}\n")),
		"message": "cache", "branch": "main", "new_branch": "issue-1"}, nil)
	var pr struct {
		Number int64
		Head   struct{ SHA string }
	}
	g.call(t, impl, "POST", "/repos/acme/demo/pulls", map[string]any{"title": "Widget cache", "body": "Fixes #1", "head": "issue-1", "base": "main"}, &pr)

	contract := fmt.Sprintf(`{"schema":"gitea-agent.rework-provider-contract/v1","provider":{"name":"gitea","api_version":"1.25.5"},"counters":{"inline":{"field":"comments_count","components":["review_inline_records"]},"pr":{"field":"review_comments","components":["inline_records"]},"pr_issue":{"field":"comments","components":["pr_issue_comments"]}},"roles":{"spec_reviewer":{"id":%d,"login":"spec-bot"},"code_reviewer":{"id":%d,"login":"code-bot"}},"inline_endpoint":"required"}`, ids["spec-bot"], ids["code-bot"])
	head := pr.Head.SHA
	tg := &Target{Owner: "acme", Repository: "demo", Issue: issue.Number, PR: pr.Number, Head: head, ContractSHA256: SpecResultDigest(issueBody)}
	run := func(name, token string) Decision {
		t.Helper()
		dir := t.TempDir()
		target := fmt.Sprintf(`{"schema":"gitea-agent.rework-input/v1","target":{"owner":"acme","repository":"demo","issue":%d,"pr":%d},"head":%q,"contract_sha256":%q}`, tg.Issue, tg.PR, tg.Head, tg.ContractSHA256)
		tp, cp := filepath.Join(dir, "t.json"), filepath.Join(dir, "c.json")
		_ = os.WriteFile(tp, []byte(target), 0o600)
		_ = os.WriteFile(cp, []byte(contract), 0o600)
		res, err := Run(context.Background(), Options{TargetPath: tp, TargetSHA256: sum([]byte(target)), ContractPath: cp, ContractSHA256: sum([]byte(contract)),
			ActorID: ids["impl-bot"], OutputPath: filepath.Join(dir, "decision.json"), APIURL: g.api, TokenEnv: "T",
			Getenv: func(string) string { return token }})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: %s %v %v", name, res.Decision.Decision, reasonsOf(res.Decision), res.Decision.ReworkReviewIDs)
		return res.Decision
	}
	review := func(user, event, body string, inline bool) int64 {
		t.Helper()
		req := map[string]any{"event": event, "body": body, "commit_id": tg.Head}
		if inline {
			req["comments"] = []map[string]any{{"path": "cache.go", "body": "rename Get", "new_position": 3}}
		}
		var v struct{ ID int64 }
		g.call(t, g.tokens[user], "POST", fmt.Sprintf("/repos/acme/demo/pulls/%d/reviews", tg.PR), req, &v)
		time.Sleep(1100 * time.Millisecond) // Gitea's timestamps have one-second resolution
		return v.ID
	}
	expect := func(d Decision, decision string, reasons ...Reason) {
		t.Helper()
		if d.Decision != decision {
			t.Fatalf("decision %s %v, want %s", d.Decision, reasonsOf(d), decision)
		}
		for _, r := range reasons {
			if !hasReason(d, r) {
				t.Errorf("reasons %v lack %s", reasonsOf(d), r)
			}
		}
	}

	expect(run("no reviews", impl), DecisionBlocked, ReasonMissingCurrentReview)
	review("spec-bot", "APPROVED", RenderSpecReview(tg, "Spec holds.", VerdictApproved, head, tg.ContractSHA256), false)
	request := review("code-bot", "REQUEST_CHANGES", RenderCodeMarker(VerdictRequestChanges, head, tg.ContractSHA256)+"\nRename Get.", true)
	d := run("code request", impl)
	expect(d, DecisionRework)
	if len(d.ReworkReviewIDs) != 1 || d.ReworkReviewIDs[0] != request {
		t.Errorf("rework_review_ids %v, want [%d]", d.ReworkReviewIDs, request)
	}
	review("code-bot", "APPROVED", RenderCodeMarker(VerdictApproved, head, tg.ContractSHA256)+"\nFine now.", false)
	expect(run("both approve", impl), DecisionNoOp)
	review("alice", "COMMENT", "Have you considered a smaller cache?", false)
	expect(run("manual comment", impl), DecisionBlocked, ReasonCurrentManualComment)

	// A new commit: every review becomes stale; the old target no longer names the head.
	var file struct{ SHA string }
	g.call(t, impl, "GET", "/repos/acme/demo/contents/cache.go?ref=issue-1", nil, &file)
	g.call(t, impl, "PUT", "/repos/acme/demo/contents/cache.go", map[string]any{"content": base64.StdEncoding.EncodeToString([]byte("package cache\n\nfunc Lookup() {}\n")),
		"message": "rename", "branch": "issue-1", "sha": file.SHA}, nil)
	time.Sleep(2 * time.Second)
	expect(run("old head", impl), DecisionBlocked, ReasonHeadMismatch)
	g.call(t, admin, "GET", fmt.Sprintf("/repos/acme/demo/pulls/%d", tg.PR), nil, &pr)
	tg.Head, head = pr.Head.SHA, pr.Head.SHA
	expect(run("stale history only", impl), DecisionBlocked, ReasonMissingCurrentReview)

	review("spec-bot", "REQUEST_CHANGES", RenderSpecReview(tg, "The draft contradicts itself.", VerdictBlockedSpec, head, tg.ContractSHA256), false)
	d = run("blocked spec", impl)
	expect(d, DecisionBlocked, ReasonBlockedSpec)
	if d.Route != RouteDiscovery {
		t.Errorf("route %s, want discovery", d.Route)
	}
	review("code-bot", "PENDING", "draft", false)
	expect(run("pending, as the reviewer", g.tokens["code-bot"]), DecisionBlocked, ReasonPendingReview)
	expect(run("pending, hidden from impl", impl), DecisionBlocked, ReasonPaginationIncomplete)
}

type giteaServer struct {
	bin, dir, ini, api string
	tokens             map[string]string
}

func startGitea(t *testing.T, bin string) *giteaServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	g := &giteaServer{bin: bin, dir: dir, ini: filepath.Join(dir, "app.ini"), api: fmt.Sprintf("http://127.0.0.1:%d/api/v1", port), tokens: map[string]string{}}
	ini := fmt.Sprintf(`APP_NAME = rework-test
RUN_MODE = prod
WORK_PATH = %[1]s
RUN_USER = %[3]s
[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[2]d
ROOT_URL = http://127.0.0.1:%[2]d/
DISABLE_SSH = true
OFFLINE_MODE = true
LFS_START_SERVER = false
STATIC_ROOT_PATH = %[4]s
APP_DATA_PATH = %[1]s/data
[database]
DB_TYPE = sqlite3
PATH = %[1]s/gitea.db
[security]
INSTALL_LOCK = true
SECRET_KEY = rework-test-secret-key-not-secret
INTERNAL_TOKEN = rework-test-internal-token-not-a-secret-0123456789abcdef
PASSWORD_COMPLEXITY = off
MIN_PASSWORD_LENGTH = 8
[service]
DISABLE_REGISTRATION = true
[mailer]
ENABLED = false
[repository]
ROOT = %[1]s/repos
DEFAULT_BRANCH = main
[log]
MODE = file
LEVEL = Warn
ROOT_PATH = %[1]s/log
[cron]
ENABLED = false
[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false
[session]
PROVIDER = memory
[cache]
ADAPTER = memory
[queue]
TYPE = channel
[git]
HOME_PATH = %[1]s/git-home
[actions]
ENABLED = false
`, dir, port, currentUserName(), filepath.Dir(bin))
	if err := os.WriteFile(g.ini, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	g.cli(t, "migrate")
	g.cli(t, "admin", "user", "create", "--username", "root1", "--password", "password123", "--email", "root1@example.invalid", "--admin", "--must-change-password=false")
	for _, u := range []string{"impl-bot", "spec-bot", "code-bot", "alice"} {
		g.cli(t, "admin", "user", "create", "--username", u, "--password", "password123", "--email", u+"@example.invalid", "--must-change-password=false")
	}
	logf, err := os.Create(filepath.Join(dir, "gitea.out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "web", "--config", g.ini, "--work-path", dir)
	cmd.Env, cmd.Stdout, cmd.Stderr = g.env(), logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // the process this test started, by its handle
		_ = cmd.Wait()
		logf.Close()
	})
	for i := 0; ; i++ {
		resp, err := http.Get(g.api + "/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if i > 120 {
			t.Fatal("gitea did not start")
		}
		time.Sleep(500 * time.Millisecond)
	}
	return g
}

func currentUserName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	out, _ := exec.Command("id", "-un").Output()
	return strings.TrimSpace(string(out))
}

func (g *giteaServer) env() []string {
	return append(os.Environ(), "GITEA_WORK_DIR="+g.dir, "HOME="+filepath.Join(g.dir, "home"), "GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT=true", "GIT_CONFIG_NOSYSTEM=1")
}

func (g *giteaServer) cli(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(g.bin, append(args, "--config", g.ini, "--work-path", g.dir)...)
	cmd.Env = g.env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("gitea %s: %v\n%s", args[0], err, errb.String())
	}
	return out.String()
}

var tokenLine = regexp.MustCompile(`(?m)^[0-9a-f]{40}$`)

func (g *giteaServer) token(t *testing.T, user string) string {
	t.Helper()
	out := g.cli(t, "admin", "user", "generate-access-token", "--username", user, "--token-name", "rework", "--scopes", "all", "--raw")
	tok := tokenLine.FindString(out)
	if tok == "" {
		t.Fatalf("no token for %s", user)
	}
	return tok
}

// call is the seeding client: any method, JSON in and out.
func (g *giteaServer) call(t *testing.T, token, method, path string, in, out any) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, g.api+path, body)
	req.Header.Set("Authorization", "token "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}
