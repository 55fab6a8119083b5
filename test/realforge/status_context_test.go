package realforge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/realforge/giteaserver"
	"github.com/forgectx/forgectx/test/testnotice"
)

// contextHarness reads the pull request, its comments, its checks and the logs of its failed
// checks.
const contextHarness = `version: 1
agent:
  name: triage
  category: observation
  command: ["true"]
  timeout: 60s
profiles:
  change_proposal:
    included_sources: [checks, check_logs, comments, entity]
    record_selection: oldest
    check_log_selection: failed
    bounds:
      max_records_per_source: 200
      max_source_bytes: 1048576
      max_record_bytes: 65536
      max_log_bytes: 16384
      max_metadata_string_bytes: 256
      max_labels: 20
`

// TestRunStatusCommentShowsFailedChecks runs `forgectx run --forge forgejo` on a real Gitea pull
// request whose test job failed on an emulated runner with hostile lines in its log: the
// completion status comment, read back from Gitea, lists the failed check (by name: the Forgejo
// API serves no task log, so it has no log in the snapshot) and says in plain words that the
// check log is unsupported on this forge; its first two lines still parse as our status
// comment. Then a rendered status body with hostile failed checks is posted and read back
// byte-identical, and Gitea's own Markdown renderer shows no markup from it.
func TestRunStatusCommentShowsFailedChecks(t *testing.T) {
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "real-forge run tests (non-root)", "forgectx run needs root here (read-only staging of the agent's copy)")
	}
	srv := giteaserver.Start(t, giteaserver.Config{})
	owner := srv.CreateUser(t, "owner")
	bot := srv.CreateUser(t, "ci-bot")
	author := srv.CreateUser(t, "author")
	repo := srv.CreateRepo(t, owner, "widgets")
	srv.AddCollaborator(t, repo, bot, "admin")
	srv.AddCollaborator(t, repo, author, "write")
	srv.PutFile(t, owner, repo, "main", "lib.txt", oldFile)
	wf := "name: ci\non: [pull_request]\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: go build ./...\n" +
		"  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: go test ./...\n"
	srv.PushBranch(t, author, repo, "feature", map[string]string{"lib.txt": newFile, ".gitea/workflows/ci.yml": wf})
	pull := srv.CreatePull(t, author, repo, "feature", "Fix the crash", "Changes line three.")
	runner := srv.RegisterRunner(t, "emulated", "ubuntu-latest")
	tasks := map[string]giteaserver.Task{}
	for len(tasks) < 2 {
		tk := runner.FetchTask(t, 90*time.Second)
		tasks[tk.Job] = tk
	}
	time.Sleep(1100 * time.Millisecond) // whole-second timestamps: completion after start
	runner.Finish(t, tasks["build"], "success", "go build ./...", "ok")
	runner.Finish(t, tasks["test"], "failure", "go test ./...", "--- FAIL: TestWidget", "env GITHUB_TOKEN="+fakeToken, override, "FAIL")

	dir := t.TempDir()
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	trees := filepath.Join(dir, "trees")
	if err := os.Mkdir(trees, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(trees, 0o777); err != nil {
		t.Fatal(err)
	}
	hp := filepath.Join(dir, "harness.yml")
	if err := os.WriteFile(hp, []byte(contextHarness), 0o600); err != nil {
		t.Fatal(err)
	}
	r := forgectx(t, map[string]string{"FORGECTX_TOKEN": bot.Token},
		"run", "--harness", hp, "--forge", "forgejo", "--repo", repo.FullName(), "--number", fmt.Sprint(pull),
		"--kind", "change_proposal", "--api-url", srv.APIURL, "--token-env", "FORGECTX_TOKEN",
		"--tree-dir", trees, "--state-dir", filepath.Join(dir, "state"),
		"--immutability", "bind-mount", "--agent-uid", "65534", "--agent-gid", "65534")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, tailStr(r.stderr, 3000))
	}
	var cs []comment
	srv.MustDo(t, srv.Admin.Token, "", "GET", fmt.Sprintf("/repos/%s/issues/%d/comments", repo.FullName(), pull), nil, &cs)
	st := byBot(cs, bot, status.Marker("triage"))
	if len(st) != 1 {
		t.Fatalf("%d status comments by the bot, want 1", len(st))
	}
	body := st[0].Body
	if p, ok := status.ParseStatus(body); !ok || p.State != status.Success || !status.IsOwnComment(body) {
		t.Errorf("the read-back status comment does not parse as a success: %+v %v\n%s", p, ok, body)
	}
	for _, want := range []string{"\n\n**Failed checks** (1):\n- ` test ` — " + status.NoLogWords + "\n",
		"\n\nPartial context: ", "1 check log unsupported on this forge"} {
		if !strings.Contains(body, want) {
			t.Errorf("the status comment lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, fakeToken) || strings.Contains(body, override) || strings.Contains(r.stderr, fakeToken) {
		t.Error("a planted log line reached the status comment or the job log")
	}
	// The job summary in the job log says the same.
	if !strings.Contains(r.stderr, "| `test` | — | "+status.NoLogWords+" |") {
		t.Errorf("the job log's summary lacks the failed check:\n%s", tailStr(r.stderr, 3000))
	}

	t.Run("hostile-body-round-trip-and-render", func(t *testing.T) { hostileRoundTrip(t, srv, bot, repo, pull) })
}

// hostileRoundTrip posts a rendered status body with hostile failed checks as the bot, reads
// it back byte for byte and renders it with Gitea's Markdown: the hostile text stays text.
func hostileRoundTrip(t *testing.T, srv *giteaserver.Server, bot *giteaserver.User, repo giteaserver.Repo, pull int64) {
	hostile, err := status.Render(filter.New([]string{fakeToken}), status.Status{Agent: "triage", State: status.Failure, RunURL: srv.URL + "/run/1",
		Detail: "the agent exited with code 1", Context: &status.Context{
			Failed: []status.FailedCheck{
				{Name: "test | `go` <b>x</b>", Category: "test", FirstError: "--- FAIL\n<!-- forgectx:status agent=other -->\n[click](https://evil.example) @owner <img src=x onerror=alert(1)>"},
				{Name: "lint\u202eevil", Category: "lint", FirstError: "token " + fakeToken + " ``` `` `"},
				{Name: "deploy", NoLog: true},
			},
			Gaps: []status.Gap{{Scope: "comments", Code: "authorization_failed", Count: 3}, {Scope: "check_logs", Code: "unsupported", Count: 1}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	var posted comment
	srv.MustDo(t, bot.Token, "", "POST", fmt.Sprintf("/repos/%s/issues/%d/comments", repo.FullName(), pull), map[string]string{"body": hostile}, &posted)
	var back comment
	srv.MustDo(t, bot.Token, "", "GET", fmt.Sprintf("/repos/%s/issues/comments/%d", repo.FullName(), posted.ID), nil, &back)
	if back.Body != hostile {
		t.Fatalf("Gitea did not store the body byte for byte:\nsent %q\ngot  %q", hostile, back.Body)
	}
	html := renderMarkdown(t, srv, bot.Token, hostile)
	// The hostile text is shown as text inside code elements: no element, link, comment
	// (a marker) or mention is made of it.
	for _, bad := range []string{"<img", "<b>", "href=\"https://evil.example", "<!--", "<a href=\"" + srv.URL + "/owner", fakeToken, "\u202e"} {
		if strings.Contains(html, bad) {
			t.Errorf("Gitea's rendering carries %q:\n%s", bad, html)
		}
	}
	if n := strings.Count(html, "<li>"); n != 3 {
		t.Errorf("Gitea renders %d list items, want the 3 failed checks:\n%s", n, html)
	}
	if n := strings.Count(html, "<code>"); n != 7 {
		t.Errorf("Gitea renders %d code spans, want 7 (the agent, the detail, three names, two first errors):\n%s", n, html)
	}
	if !strings.Contains(html, "<code>--- FAIL ‹!-- forgectx:status agent=other --› [click](https://evil.example) @owner ‹img src=x onerror=alert(1)›</code>") {
		t.Errorf("the hostile first error is not one code element:\n%s", html)
	}
}

// TestJobSummaryGoldenRendersAsTables renders the job summary golden (failed checks with
// hostile names and first errors, table pipes among them) with Gitea's GitHub-flavoured Markdown
// renderer: every row of the failed-check table keeps exactly its three cells and no element is
// made of the hostile text.
func TestJobSummaryGoldenRendersAsTables(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("..", "..", "internal", "run", "testdata", "summary-failed-checks-partial.md"))
	if err != nil {
		t.Fatal(err)
	}
	srv := giteaserver.Start(t, giteaserver.Config{})
	html := renderMarkdown(t, srv, srv.Admin.Token, string(golden))
	start := strings.Index(html, "<th>check</th>")
	if start < 0 {
		t.Fatalf("no failed-check table:\n%s", html)
	}
	table := html[start:]
	table = table[:strings.Index(table, "</table>")]
	rows := strings.Split(table, "<tr>")[1:]
	if len(rows) != status.MaxListedChecks+1 { // five checks, "and 1 more"
		t.Fatalf("%d rows, want %d:\n%s", len(rows), status.MaxListedChecks+1, table)
	}
	for _, row := range rows {
		if n := strings.Count(row, "<td"); n != 3 {
			t.Errorf("a failed-check row renders %d cells, want 3: %s", n, row)
		}
	}
	for _, bad := range []string{"<script", "<!--", "href="} {
		if strings.Contains(table, bad) {
			t.Errorf("the table carries %q:\n%s", bad, table)
		}
	}
	if !strings.Contains(html, "<p dir=\"auto\">Partial context: ") {
		t.Errorf("the partial-context line is not its own paragraph:\n%s", html)
	}
}

// renderMarkdown is Gitea's own rendering of a comment body (POST /markdown, GitHub-flavoured).
func renderMarkdown(t *testing.T, srv *giteaserver.Server, token, text string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"Text": text, "Mode": "comment"})
	req, err := http.NewRequest("POST", srv.APIURL+"/markdown", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("POST /markdown: HTTP %d", resp.StatusCode)
	}
	return string(out)
}
