// Package e2e runs `forgectx run` end to end against a loopback GitHub API (test/httpfake)
// that speaks GitHub's response shapes (test/ghscenario for the acquisition, the octokit
// issue-comment shape for the comments forgectx writes) and fails on any request that was not
// expected, and on any expected request never made.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/internal/lifecycle"
	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/snapshot/stage"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

const (
	token     = "ghs_e2eTokenValue0123456789abcdefABCDEF"
	runID     = "123456789"
	headSHA   = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	agentName = "triage"
	runURL    = "https://github.com/octo-org/Hello-World/actions/runs/" + runID
	receiptID = "gha-" + runID + "-1"
)

// clock is the pinned time of every run: receipts carry it, so request bodies are exact.
var clock = time.Date(2026, 9, 8, 12, 0, 0, 0, time.UTC)

// Comment IDs the fake assigns to what forgectx creates.
const (
	statusID    = 9001
	receiptID1  = 9002
	statusNode  = "IC_kwDOLq3Xz86AACMp"
	receiptNode = "IC_kwDOLq3Xz86AACMq"
)

// world is one test's loopback forge, environment and directories.
type world struct {
	t      *testing.T
	fake   *httpfake.Server
	sc     *ghscenario.Scenario
	dir    string
	out    string // the agent writes what it saw here
	env    map[string]string
	hyaml  string
	h      *harness.Harness
	logBuf *syncBuffer
	jobLog *syncBuffer
	// contexts holds, per index digest expectedIndex computed, the context block the final
	// status comment of a run that staged that tree shows (treeContext).
	contexts map[string]*status.Context
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// agentScript records what the agent saw: the digest of the index it was given, the agent-runs
// history, the excerpt, its environment, and whether the copy was writable. AGENT_MODE makes
// it fail, hang, or (gate) wait until the test creates $AGENT_OUT/release.
const agentScript = `set -u
out="$AGENT_OUT"
# The TERM trap is set first: on a loaded machine the recording below can outlast a short
# agent timeout, and the signal must still be seen.
if [ "${AGENT_MODE:-ok}" = sleep ]; then trap 'echo term > "$out/term"; exit 143' TERM; fi
sha256sum "$FORGECTX_CONTEXT_DIR/index.json" | cut -d' ' -f1 > "$out/index.sha"
cat "$FORGECTX_CONTEXT_DIR/history/agent-runs.json" > "$out/agent-runs.json"
printf '%s' "$FORGECTX_EVENT_EXCERPT" > "$out/excerpt.json"
env > "$out/env"
find "$FORGECTX_CONTEXT_DIR" -type f -exec cat {} + > "$out/all-files"
grep -F " $FORGECTX_CONTEXT_DIR " /proc/self/mountinfo > "$out/mounts" 2>/dev/null || true
stat -c '%a' "$FORGECTX_CONTEXT_DIR" "$FORGECTX_CONTEXT_DIR/index.json" "$FORGECTX_CONTEXT_DIR/history" > "$out/modes"
if ( : >> "$FORGECTX_CONTEXT_DIR/index.json" ) 2>/dev/null || mkdir "$FORGECTX_CONTEXT_DIR/x" 2>/dev/null; then echo writable; else echo readonly; fi > "$out/ro"
id -u > "$out/uid"
case "${AGENT_MODE:-ok}" in
  fail) echo "agent broke" >&2; exit 3 ;;
  sleep) echo started > "$out/started"; sleep 30 & wait ;;
  gate) echo started > "$out/started"; i=0; while [ ! -e "$out/release" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done ;;
esac
echo done > "$out/done"
`

const harnessTemplate = `version: 1
agent:
  name: triage
  category: observation
  command: ["bash", "{{DIR}}/agent.sh"]
  env: [PATH, HOME, AGENT_OUT, AGENT_MODE, MODEL_API_KEY, TOKEN_COPY, COPY_GH, COPY_INPUT, COPY_RUNTIME, COPY_IDTOKEN, COPY_IDURL, COPY_CIJOB, COPY_FORGEJO, COPY_SECRET]
  timeout: {{AGENT_TIMEOUT}}
{{PRE}}{{POST}}profiles:
  work_item:
    included_sources: [agent_runs, comments, entity]
    record_selection: newest
    check_log_selection: none
    bounds:
      max_records_per_source: 200
      max_source_bytes: 4096
      max_record_bytes: 65536
      max_log_bytes: 262144
      max_metadata_string_bytes: 512
      max_labels: 50
bots:
  - id: BOT_kgDOAn-Zag
    login: github-actions[bot]
    bot_role: triage
  - id: BOT_kgDOAb4Bng
    login: renovate[bot]
    bot_role: dependency-updates
secrets: [ANTHROPIC_API_KEY]
`

type worldOpts struct {
	pre          string // pre-script body (bash); "" = none
	post         string // post-script body (bash); "" = none
	agentTimeout string
	agentMode    string
}

func newWorld(t *testing.T, wo worldOpts) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, fake: httpfake.New(t), sc: ghscenario.Issue(), dir: dir, out: filepath.Join(dir, "agent-out"),
		logBuf: &syncBuffer{}, jobLog: &syncBuffer{}}
	must(t, os.Mkdir(w.out, 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(agentScript), 0o600))
	if os.Geteuid() == 0 {
		// The agent runs unprivileged (forgectx refuses an agent with UID 0 or a
		// write-overriding capability in every mode): it must reach its script and its
		// output directory.
		for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
			must(t, os.Chmod(d, 0o755))
		}
		must(t, os.Chmod(filepath.Join(dir, "agent.sh"), 0o644))
		must(t, os.Chmod(w.out, 0o777))
	}
	pre := ""
	if wo.pre != "" {
		wo.pre = strings.ReplaceAll(wo.pre, "{{DIR}}", dir)
		must(t, os.WriteFile(filepath.Join(dir, "pre.sh"), []byte(wo.pre), 0o600))
		pre = "pre_script:\n  command: [\"bash\", \"" + dir + "/pre.sh\"]\n  env: [PATH]\n  timeout: 30s\n"
	}
	post := ""
	if wo.post != "" {
		wo.post = strings.ReplaceAll(wo.post, "{{DIR}}", dir)
		must(t, os.WriteFile(filepath.Join(dir, "post.sh"), []byte(wo.post), 0o600))
		post = "post_script:\n  command: [\"bash\", \"" + dir + "/post.sh\"]\n  env: [PATH]\n  timeout: 30s\n"
	}
	if wo.agentTimeout == "" {
		wo.agentTimeout = "60s"
	}
	w.hyaml = strings.NewReplacer("{{DIR}}", dir, "{{PRE}}", pre, "{{POST}}", post, "{{AGENT_TIMEOUT}}", wo.agentTimeout).Replace(harnessTemplate)
	must(t, os.WriteFile(filepath.Join(dir, "harness.yml"), []byte(w.hyaml), 0o600))
	h, err := harness.Load(filepath.Join(dir, "harness.yml"))
	must(t, err)
	w.h = h

	// A real issues.labeled delivery, pointed at the scenario's issue.
	raw, err := os.ReadFile("../fixtures/webhooks/github/issues/09-labeled.json")
	must(t, err)
	var payload map[string]any
	must(t, json.Unmarshal(raw, &payload))
	payload["issue"].(map[string]any)["number"] = w.sc.Number
	ev, _ := json.Marshal(payload)
	must(t, os.WriteFile(filepath.Join(dir, "event.json"), ev, 0o600))
	for _, f := range []string{"output", "summary"} {
		must(t, os.WriteFile(filepath.Join(dir, f), nil, 0o600))
	}
	runnerTemp := filepath.Join(dir, "runner-temp")
	must(t, os.Mkdir(runnerTemp, 0o755)) // the stage base must be searchable by the agent
	w.env = map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": dir, "GITHUB_ACTIONS": "true", "GITHUB_TOKEN": token,
		"GITHUB_RUN_ID": runID, "GITHUB_RUN_ATTEMPT": "1", "GITHUB_SERVER_URL": "https://github.com",
		"GITHUB_REPOSITORY": "octo-org/Hello-World", "GITHUB_API_URL": w.fake.URL, "GITHUB_SHA": headSHA,
		"GITHUB_OUTPUT": filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary"),
		"GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": filepath.Join(dir, "event.json"),
		"GITHUB_WORKSPACE": filepath.Join(dir, "workspace"), "RUNNER_TEMP": runnerTemp,
		"AGENT_OUT": w.out, "AGENT_MODE": wo.agentMode, "MODEL_API_KEY": "model-key-the-agent-needs-0123456789", "TOKEN_COPY": "Bearer " + token, "ANTHROPIC_API_KEY": "sk-ant-api03-e2eSecretValueNotForTheAgent",
	}
	// Every common name a forge credential travels under, each with its own value, and a
	// harness-listed copy of each under an innocuous name: none may reach the agent.
	for name, copyName := range forgeCredentials {
		w.env[name] = credentialValue(name)
		w.env[copyName] = credentialValue(name)
	}
	w.env["COPY_SECRET"] = w.env["ANTHROPIC_API_KEY"]
	return w
}

// forgeCredentials maps the forge credential variables planted in every world to the
// harness-listed variable carrying a copy of each.
var forgeCredentials = map[string]string{
	"GH_TOKEN": "COPY_GH", "INPUT_GITHUB-TOKEN": "COPY_INPUT", "ACTIONS_RUNTIME_TOKEN": "COPY_RUNTIME",
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "COPY_IDTOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL": "COPY_IDURL",
	"CI_JOB_TOKEN": "COPY_CIJOB", "FORGEJO_TOKEN": "COPY_FORGEJO",
}

// credentialValue is the distinct planted value of a forge credential variable.
func credentialValue(name string) string {
	return "planted-" + strings.ToLower(strings.NewReplacer("_", "-").Replace(name)) + "-value-7f3a9c"
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (w *world) getenv(k string) string { return w.env[k] }

func (w *world) environ() []string {
	var out []string
	for k, v := range w.env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// agentUID is the unprivileged identity the agent runs as when the tests run as root.
const agentUID = 65534

func (w *world) options() run.Options {
	o := run.Options{
		HarnessPath: filepath.Join(w.dir, "harness.yml"),
		Getenv:      w.getenv,
		Common: lifecycle.Common{Environ: w.environ,
			Stdout: w.jobLog, Stderr: w.jobLog,
			Log:       zerolog.New(w.logBuf),
			Now:       func() time.Time { return clock },
			KillGrace: 500 * time.Millisecond,
		},
	}
	if os.Geteuid() == 0 {
		// A read-only bind mount, with the agent as an unprivileged user (as root it could
		// remount the copy writable, and forgectx stops it).
		o.Immutability, o.AgentUID, o.AgentGID = stage.ModeBindMount, agentUID, agentUID
	}
	return o
}

// run runs forgectx run in-process.
func (w *world) run() (*run.Result, error) { return runWith(w.options()) }

func runWith(o run.Options) (*run.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return run.Run(ctx, o)
}

// user is a REST simple-user in GitHub's shape.
func restUser(u *ghscenario.User) map[string]any {
	typ := "User"
	if u.Bot {
		typ = "Bot"
	}
	base := "https://api.github.com/users/" + u.Login
	return map[string]any{
		"login": u.Login, "id": u.ID, "node_id": u.NodeID,
		"avatar_url": fmt.Sprintf("https://avatars.githubusercontent.com/u/%d?v=4", u.ID), "gravatar_id": "",
		"url": base, "html_url": "https://github.com/" + u.Login, "followers_url": base + "/followers",
		"following_url": base + "/following{/other_user}", "gists_url": base + "/gists{/gist_id}",
		"starred_url": base + "/starred{/owner}{/repo}", "subscriptions_url": base + "/subscriptions",
		"organizations_url": base + "/orgs", "repos_url": base + "/repos", "events_url": base + "/events{/privacy}",
		"received_events_url": base + "/received_events", "type": typ, "user_view_type": "public", "site_admin": false,
	}
}

// restComment is an issue comment in GitHub's shape (POST/PATCH answers).
func (w *world) restComment(id int64, node string, u *ghscenario.User, body string, at time.Time) map[string]any {
	repo := "https://api.github.com/repos/octo-org/Hello-World"
	return map[string]any{
		"id": id, "node_id": node, "url": fmt.Sprintf("%s/issues/comments/%d", repo, id),
		"html_url": fmt.Sprintf("https://github.com/octo-org/Hello-World/issues/%d#issuecomment-%d", w.sc.Number, id),
		"body":     body, "user": restUser(u), "created_at": at.Format(time.RFC3339), "updated_at": at.Format(time.RFC3339),
		"issue_url": fmt.Sprintf("%s/issues/%d", repo, w.sc.Number), "author_association": "NONE",
		"performed_via_github_app": nil,
		"reactions": map[string]any{"url": fmt.Sprintf("%s/issues/comments/%d/reactions", repo, id),
			"total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0, "confused": 0, "heart": 0, "rocket": 0, "eyes": 0},
	}
}

// bodyJSON is the request body go-github sends for a comment body.
func bodyJSON(t testing.TB, body string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	must(t, enc.Encode(map[string]string{"body": body}))
	return b.Bytes()
}

func (w *world) commentsPath() string {
	return fmt.Sprintf("/repos/octo-org/Hello-World/issues/%d/comments", w.sc.Number)
}

// expectAcquisition registers the exchanges of one acquisition of the scenario: the cassette
// ghscenario makes (entity, comment pages, permissions). The receipt reader takes the
// receipts from the same comment pages: there is no second read.
func (w *world) expectAcquisition() {
	w.t.Helper()
	c, err := ghscenario.Build(w.sc)
	must(w.t, err)
	// One comments listing serves the comments source and the receipt reader.
	w.fake.ExpectCassette(c)
}

// expectCommentList registers one more read of every comment page.
func (w *world) expectCommentList(c *cassette.Cassette) {
	w.t.Helper()
	if c == nil {
		var err error
		c, err = ghscenario.Build(w.sc)
		must(w.t, err)
	}
	sub := &cassette.Cassette{Meta: c.Meta}
	for _, in := range c.Interactions {
		if in.Request.Method == "GET" && strings.Contains(in.Request.URL, w.commentsPath()) {
			sub.Interactions = append(sub.Interactions, in)
		}
	}
	if len(sub.Interactions) == 0 {
		w.t.Fatal("scenario has no comment pages")
	}
	w.fake.ExpectCassette(sub)
}

// expectedIndex assembles the scenario once through the same fake (the same source.host) and
// returns the index digest a run over the same forge state must consume.
func (w *world) expectedIndex() string {
	w.t.Helper()
	w.expectAcquisition()
	gc, err := github.New(github.Options{APIURL: w.fake.URL, Token: token, Receipts: github.ReceiptsFromCommentsBy(github.ActionsBotLogin)})
	must(w.t, err)
	p, err := w.h.ProfileFor("work_item")
	must(w.t, err)
	acq, err := gc.Acquire(context.Background(), forge.Ref{Forge: "github", APIURL: w.fake.URL, Repo: "octo-org/Hello-World", Number: w.sc.Number}, p)
	must(w.t, err)
	tree, err := snapshot.Assemble(context.Background(), acq, snapshot.Config{Profile: p, Category: w.h.Agent.Category, Bots: w.h.Bots, Filter: filter.New(nil)})
	must(w.t, err)
	if w.contexts == nil {
		w.contexts = map[string]*status.Context{}
	}
	w.contexts[tree.IndexSHA256] = treeContext(w.t, tree)
	return tree.IndexSHA256
}

func render(t testing.TB, st status.State, detail string) string {
	t.Helper()
	return renderContext(t, st, detail, nil)
}

// renderContext is render with the context block of a final state (nil: none).
func renderContext(t testing.TB, st status.State, detail string, c *status.Context) string {
	t.Helper()
	b, err := status.Render(filter.New([]string{token}), status.Status{Agent: agentName, State: st, RunURL: runURL, Detail: detail, Context: c})
	must(t, err)
	return b
}

func receiptBody(t testing.TB, st, input string) string {
	t.Helper()
	b, err := status.RenderReceipt(status.Receipt{ID: receiptID, Agent: agentName, Status: st, InputRevision: input,
		InputHeadSHA: headSHA, ResultRecordKeys: []string{}, StartedAt: canon.FormatTime(clock), CompletedAt: canon.FormatTime(clock)})
	must(t, err)
	return b
}

// expectStartCreate registers the first run's lookup (no status comment yet) and the creation
// of the started comment.
func (w *world) expectStartCreate() {
	w.expectCommentList(nil)
	start := render(w.t, status.Started, "")
	w.fake.ExpectBody("POST", w.commentsPath(), bodyJSON(w.t, start),
		httpfake.JSON(201, w.restComment(statusID, statusNode, ghscenario.Actions, start, clock)))
}

// expectFinish registers the completion edit of the status comment and the receipt creation
// (forgectx makes them in that order: lifecycleOrder checks it).
//
// A run that staged a tree (input is its index digest, from expectedIndex) shows that tree's
// failed checks and partial-context line below the state line; a run that staged none
// (noInputRevision) shows neither.
func (w *world) expectFinish(st status.State, detail, receiptStatus, input string) {
	final := renderContext(w.t, st, detail, w.contexts[input])
	w.fake.ExpectBody("PATCH", fmt.Sprintf("/repos/octo-org/Hello-World/issues/comments/%d", statusID), bodyJSON(w.t, final),
		httpfake.JSON(200, w.restComment(statusID, statusNode, ghscenario.Actions, final, clock)))
	rb := receiptBody(w.t, receiptStatus, input)
	w.fake.ExpectBody("POST", w.commentsPath(), bodyJSON(w.t, rb),
		httpfake.JSON(201, w.restComment(receiptID1, receiptNode, ghscenario.Actions, rb, clock)))
}

// lifecycleOrder reduces the requests the fake answered, in arrival order, to the lifecycle
// steps they belong to — "lookup" (the status comment lookup before anything was written),
// "start" (the started comment created or edited), "acquire" (the snapshot's reads), "status"
// (the completion edit), "receipt" (a POST after the start) — with repeats collapsed. from
// skips the requests served before the run (len(w.fake.Served()) then).
func (w *world) lifecycleOrder(from int) []string {
	var out []string
	started := false
	for _, k := range w.fake.Served()[from:] {
		m, _, _ := strings.Cut(k, " ")
		step := "acquire"
		switch {
		case !started && m == "GET" && strings.Contains(k, w.commentsPath()):
			step = "lookup"
		case !started && (m == "POST" || m == "PATCH") && !strings.Contains(k, "/graphql"):
			step, started = "start", true
		case m == "PATCH":
			step = "status"
		case m == "POST" && !strings.Contains(k, "/graphql"):
			step = "receipt"
		}
		if len(out) == 0 || out[len(out)-1] != step {
			out = append(out, step)
		}
	}
	return out
}

// writes lists the comment writes the fake answered, in order ("POST", "PATCH").
func (w *world) writes() []string {
	var out []string
	for _, k := range w.fake.Served() {
		if m, _, _ := strings.Cut(k, " "); m == "POST" || m == "PATCH" {
			if !strings.Contains(k, "/graphql") {
				out = append(out, m)
			}
		}
	}
	return out
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	must(t, err)
	return string(b)
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// assertNoTrees checks that no snapshot tree, sandbox copy or stage state survived the run.
func (w *world) assertNoTrees() {
	w.t.Helper()
	base := w.env["RUNNER_TEMP"]
	ents, err := os.ReadDir(base)
	if err != nil {
		w.t.Fatalf("tree base: %v", err)
	}
	for _, e := range ents {
		if e.Name() != "forgectx-stage" {
			w.t.Errorf("cleanup: %s left behind in the tree base", e.Name())
		}
	}
	ents, err = os.ReadDir(filepath.Join(base, "forgectx-stage"))
	if err != nil {
		w.t.Fatalf("stage state: %v", err)
	}
	for _, e := range ents {
		w.t.Errorf("cleanup: stage state %s left behind", e.Name())
	}
	w.assertNoMounts()
}

// assertLogHygiene checks the structured log and the job log never carry the token or the
// registered secret.
func (w *world) assertLogHygiene() {
	w.t.Helper()
	for name, s := range map[string]string{"log": w.logBuf.String(), "job log": w.jobLog.String(), "summary": readFile(w.t, w.env["GITHUB_STEP_SUMMARY"])} {
		secrets := []string{token, w.env["ANTHROPIC_API_KEY"]}
		for n := range forgeCredentials {
			secrets = append(secrets, credentialValue(n))
		}
		for _, secret := range secrets {
			if strings.Contains(s, secret) {
				w.t.Errorf("%s contains a credential", name)
			}
		}
	}
	for _, c := range w.sc.Comments {
		for name, s := range map[string]string{"log": w.logBuf.String(), "summary": readFile(w.t, w.env["GITHUB_STEP_SUMMARY"])} {
			if strings.Contains(s, c.Body) {
				w.t.Errorf("%s contains a comment body", name)
			}
		}
	}
}

func httpfake200(w *world, body string) httpfake.Reply {
	return httpfake.JSON(200, w.restComment(statusID, statusNode, ghscenario.Actions, body, clock))
}

// runOutputs is the exact $GITHUB_OUTPUT text of the run's own outputs (status, context-dir),
// appended after the decision on every path that reaches a terminal state.
func runOutputs(st, contextDir string) string {
	const d = "_GitHubActionsFileCommandDelimeter_"
	return "status<<" + d + "\n" + st + "\n" + d + "\ncontext-dir<<" + d + "\n" + contextDir + "\n" + d + "\n"
}

// hasGap reports whether gaps holds code with exactly count.
func hasGap(gaps []acquisition.Gap, code string, count int) bool {
	for _, g := range gaps {
		if g.Code == code {
			return g.Count == count
		}
	}
	return false
}
