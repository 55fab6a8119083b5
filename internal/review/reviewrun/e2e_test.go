package reviewrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/lifecycle"
	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/review/reviewpub"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/test/httpfake"
)

// The end-to-end tests run the whole lifecycle against a fake GitLab: httpfake replays the
// recorded merge request for the snapshot (test/fixtures/gitlab/cassettes/mr) and the
// reviewctx fixtures for the context store, both verifying every expected request; a front
// server records the posting writes (notes, discussions, approval) and answers them with
// GitLab's response shapes. The review engine is testdata/engine, a Go program that speaks
// MCP as a client (go-sdk) to the real `forgectx mcp`, built once per test binary.

const (
	e2eToken   = "glpat-e2eReviewRunToken012345"
	e2eHead    = "8e0b45049b6253b8984cde9241830d2851168142"
	e2eTarget  = "dd692733bb84bc3e9e862e66c099daec2fa00c83"
	e2eBlob    = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	e2eProject = "Acme/Platform/widgets"
	// e2eRulesTree lists the repository Rules at the target SHA.
	e2eRulesTree = "/api/v4/projects/Acme%2FPlatform%2Fwidgets/repository/tree?page=1&path=.opencodereview%2Frules&per_page=100&ref=" + e2eTarget
	e2eP         = "/api/v4/projects/Acme%2FPlatform%2Fwidgets"
)

var (
	buildOnce              sync.Once
	forgectxBin, engineBin string
	buildErr               error
)

// TestMain removes the binaries the end-to-end tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if forgectxBin != "" {
		os.RemoveAll(filepath.Dir(forgectxBin))
	}
	os.Exit(code)
}

// binaries builds forgectx (the MCP server the generated configuration starts) and the
// stand-in engine once.
func binaries(t *testing.T) (string, string) {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "reviewrun-bin-")
		if err != nil {
			buildErr = err
			return
		}
		// As root the engine (and its relay entry) run as DefaultEngineID: they must reach
		// the binaries.
		if err := os.Chmod(dir, 0o755); err != nil {
			buildErr = err
			return
		}
		forgectxBin, engineBin = filepath.Join(dir, "forgectx"), filepath.Join(dir, "engine")
		for _, b := range [][2]string{{forgectxBin, "../../../cmd/forgectx"}, {engineBin, "./testdata/engine"}} {
			out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return forgectxBin, engineBin
}

// engineDirs makes the session base and the engine's output directory reachable by the engine
// identity of a root run: both (and their per-test parent) traversable, out its own.
func engineDirs(t *testing.T, out, tmp string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	for _, d := range []string{filepath.Dir(out), filepath.Dir(tmp), tmp} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(out, DefaultEngineID, DefaultEngineID); err != nil {
		t.Fatal(err)
	}
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "reviewctx", "testdata", "gitlab", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func edit(t *testing.T, b []byte, f func(v any) any) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(f(v))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func listPage(body []byte) httpfake.Reply {
	r := httpfake.JSON(200, body)
	r.Header.Set("X-Page", "1")
	r.Header.Set("X-Per-Page", "100")
	return r
}

// post is one recorded write.
type post struct {
	Method, Path string
	Body         map[string]any
}

// fakeGitLab is the fake: reads through httpfake, writes recorded by the front server.
type fakeGitLab struct {
	*httpfake.Server
	t     *testing.T
	front *httptest.Server
	mu    sync.Mutex
	posts []post
	// wantPosts is the exact number of writes per "METHOD suffix" the test expects.
	wantPosts map[string]int
	nextID    int64
}

var (
	reDiscussions = regexp.MustCompile(`^` + regexp.QuoteMeta(e2eP) + `/merge_requests/7/discussions$`)
	reNotes       = regexp.MustCompile(`^` + regexp.QuoteMeta(e2eP) + `/merge_requests/7/notes(/[0-9]+)?$`)
	reApprove     = regexp.MustCompile(`^` + regexp.QuoteMeta(e2eP) + `/merge_requests/7/approve$`)
)

func newFakeGitLab(t *testing.T) *fakeGitLab {
	f := &fakeGitLab{Server: httpfake.New(t), t: t, wantPosts: map[string]int{}, nextID: 7000}
	target, _ := url.Parse(f.Server.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	f.front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			proxy.ServeHTTP(w, r)
			return
		}
		f.write(w, r)
	}))
	t.Cleanup(func() {
		f.front.Close()
		got := map[string]int{}
		for _, p := range f.posts {
			got[p.Method+" "+kind(p.Path)]++
		}
		for k, n := range f.wantPosts {
			if got[k] != n {
				t.Errorf("fake GitLab: %s: %d requests, want %d", k, got[k], n)
			}
		}
		for k, n := range got {
			if _, ok := f.wantPosts[k]; !ok {
				t.Errorf("fake GitLab: unexpected %s (%d)", k, n)
			}
		}
	})
	return f
}

func kind(path string) string {
	switch {
	case reDiscussions.MatchString(path):
		return "discussions"
	case reNotes.MatchString(path):
		return "notes"
	case reApprove.MatchString(path):
		return "approve"
	}
	return path
}

// write answers a posting request with GitLab's response shape for it.
func (f *fakeGitLab) write(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	var body map[string]any
	raw, _ := io.ReadAll(r.Body)
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &body); err != nil {
			f.t.Errorf("fake GitLab: %s %s: body is not JSON", r.Method, path)
		}
	}
	f.mu.Lock()
	f.posts = append(f.posts, post{r.Method, path, body})
	f.nextID++
	id := f.nextID
	f.mu.Unlock()
	text, _ := body["body"].(string)
	note := map[string]any{"id": id, "type": nil, "body": text, "attachment": nil, "system": false, "noteable_id": 9007,
		"noteable_type": "MergeRequest", "noteable_iid": 7, "resolvable": false, "confidential": false, "internal": false,
		"created_at": "2026-12-02T00:40:00.000Z", "updated_at": "2026-12-02T00:40:00.000Z",
		"author": map[string]any{"id": 104, "username": "project_42_bot_3cca1d029554e372cf8f39df76bf507d", "name": "widgets-ci", "state": "active"}}
	var ans any
	status := http.StatusCreated
	switch k := kind(path); {
	case k == "discussions" && r.Method == http.MethodPost && positionOutsideDiff(body):
		// GitLab's answer to a position that is not a line of the diff.
		status, ans = http.StatusBadRequest, map[string]any{"message": "400 Bad request - Note {:line_code=>[\"can't be blank\", \"must be a valid line code\"]}"}
	case k == "discussions" && r.Method == http.MethodPost:
		note["type"], note["resolvable"] = "DiscussionNote", true
		ans = map[string]any{"id": fmt.Sprintf("%040x", id), "individual_note": false, "notes": []any{note}}
	case k == "notes" && r.Method == http.MethodPost:
		ans = note
	case k == "notes" && r.Method == http.MethodPut:
		status, ans = http.StatusOK, note
	case k == "approve" && r.Method == http.MethodPost:
		ans = map[string]any{"id": 9007, "iid": 7, "project_id": 42, "approved": true, "approvals_required": 0, "approvals_left": 0,
			"approved_by": []any{map[string]any{"user": note["author"]}}}
	default:
		f.t.Errorf("fake GitLab: unexpected write %s %s", r.Method, path)
		http.Error(w, "unexpected", http.StatusNotImplemented)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(ans)
}

// positionOutsideDiff: the fake's diff touches cache/cache.go only.
func positionOutsideDiff(body map[string]any) bool {
	pos, ok := body["position"].(map[string]any)
	return ok && pos["new_path"] != "cache/cache.go"
}

func (f *fakeGitLab) writes(k string) []post {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []post
	for _, p := range f.posts {
		if kind(p.Path) == k {
			out = append(out, p)
		}
	}
	return out
}

// scenario is one end-to-end run's inputs.
type scenario struct {
	mode      string // OCR_REVIEW_CONTEXT_MODE
	protected bool
	policy    []byte
	mr        []byte   // the merge request (both acquisition reads and the posting read)
	mrRecheck []byte   // the acquisition's second read, when it differs
	pages     [][]byte // discussion pages per read (acquisition ×2, posting ×1)
	script    string   // ENGINE_SCRIPT
	approve   string   // OCR_AUTO_APPROVE
	noPosting bool     // the run fails before posting
	withheld  bool     // only the withheld summary note is posted
	failed    bool     // only the failure summary note is posted (the run failed before its projection)
	notes     []byte   // the MR's notes (the sticky summary lookup); nil: none
	// refused: protection is left required (unset) and the run stops at the lifecycle
	// decision: one MR read and the branch, nothing else.
	refused bool
	// noPipeline leaves out the merge-request pipeline variables an enriched run needs.
	noPipeline bool
	// rules is the target SHA's .opencodereview/rules listing and blobs (nil: no directory).
	rules *rulesFixture
	// skipSnapshot: the run stops after reading the rules (nothing later is requested).
	skipSnapshot bool
	// hungPosting: the run fails before its projection and the forge never answers the
	// failure note's first request (the token's user).
	hungPosting bool
}

func e2ePolicy(t *testing.T, mut func(m map[string]any)) []byte {
	t.Helper()
	b, err := os.ReadFile("../../../examples/gitlab/context/policy-discussions.json")
	if err != nil {
		t.Fatal(err)
	}
	return edit(t, b, func(v any) any {
		m := v.(map[string]any)
		for _, k := range []string{"forge_discussions", "remediation_threads"} {
			m[k].(map[string]any)["max_age_seconds"] = 0 // the fixtures are older than the wall clock
		}
		if mut != nil {
			mut(m)
		}
		return m
	})
}

// expect registers every read the scenario makes, in order.
func (f *fakeGitLab) expect(t *testing.T, sc scenario) {
	mr := sc.mr
	if mr == nil {
		mr = fixture(t, "merge_request")
	}
	second := sc.mrRecheck
	if second == nil {
		second = mr
	}
	if sc.refused {
		f.Expect("GET", e2eP+"/merge_requests/7", httpfake.JSON(200, mr))
		f.Expect("GET", e2eP+"/repository/branches/main", httpfake.JSON(200, edit(t, fixture(t, "branch_main"), func(v any) any {
			v.(map[string]any)["protected"] = false
			return v
		})))
		return
	}
	if sc.mode == "" || sc.mode == "off" {
		f.Expect("GET", e2eP+"/merge_requests/7", httpfake.JSON(200, mr)) // off: no re-read
	} else {
		f.Expect("GET", e2eP+"/merge_requests/7", httpfake.JSON(200, mr), httpfake.JSON(200, second))
	}
	branch := fixture(t, "branch_main")
	if !sc.protected {
		branch = edit(t, branch, func(v any) any { v.(map[string]any)["protected"] = false; return v })
	}
	f.Expect("GET", e2eP+"/repository/branches/main", httpfake.JSON(200, branch))
	if sc.mode == "metadata" {
		f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fixture(t, "user_bot"))) // the live bot's mention commands
	}
	if sc.mode == "enriched" {
		f.Expect("GET", e2eP+"/repository/tree?page=1&path=.opencodereview&per_page=100&ref="+e2eTarget, listPage(fixture(t, "tree_opencodereview")))
		f.Expect("GET", e2eP+"/repository/blobs/"+e2eBlob+"/raw", httpfake.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: sc.policy})
		f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fixture(t, "user_bot")))
		f.Expect("GET", e2eP+"/merge_requests/7/discussions?page=1&per_page=100", listPage(sc.pages[0]), listPage(sc.pages[1]))
	}
	// the repository Rules at the target SHA: none unless the scenario has some
	if sc.rules == nil {
		f.Expect("GET", e2eRulesTree, httpfake.JSON(404, []byte(`{"message":"404 Tree Not Found"}`)))
	} else {
		f.Expect("GET", e2eRulesTree, listPage(sc.rules.tree))
		for id, body := range sc.rules.blobs {
			f.Expect("GET", e2eP+"/repository/blobs/"+id+"/raw", httpfake.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: body})
		}
	}
	if sc.skipSnapshot {
		return
	}
	c, err := cassette.Load("../../../test/fixtures/gitlab/cassettes/mr")
	if err != nil {
		t.Fatal(err)
	}
	f.ExpectCassette(entityOnly(c))
	if sc.noPosting {
		return
	}
	if sc.hungPosting {
		f.Expect("GET", "/api/v4/user", httpfake.Timeout())
		return
	}
	if sc.withheld || sc.failed {
		f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fixture(t, "user_bot")))
		f.Expect("GET", e2eP+"/merge_requests/7/notes?order_by=created_at&per_page=100&sort=asc", listPage([]byte("[]")))
		return
	}
	f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fixture(t, "user_bot")))
	f.Expect("GET", e2eP+"/merge_requests/7", httpfake.JSON(200, mr))
	last := fixture(t, "discussions_page1")
	if len(sc.pages) > 2 {
		last = sc.pages[2]
	}
	f.Expect("GET", e2eP+"/merge_requests/7/discussions?page=1&per_page=100", listPage(last))
	notes := sc.notes
	if notes == nil {
		notes = []byte("[]")
	}
	f.Expect("GET", e2eP+"/merge_requests/7/notes?order_by=created_at&per_page=100&sort=asc", listPage(notes))
}

// rulesFixture is a rules directory at the target SHA: the tree listing and blob ID → bytes.
type rulesFixture struct {
	tree  []byte
	blobs map[string][]byte
}

type e2eRun struct {
	res  *Result
	err  error
	fake *fakeGitLab
	out  string // ENGINE_OUT
	logs *bytes.Buffer
	tmp  string
}

func runScenario(t *testing.T, sc scenario, hook func(string)) e2eRun {
	return runScenarioWith(t, sc, hook, func(*Options) {})
}

func runScenarioWith(t *testing.T, sc scenario, hook func(string), opt func(*Options)) e2eRun {
	t.Helper()
	fctx, eng := binaries(t)
	f := newFakeGitLab(t)
	f.expect(t, sc)
	out, tmp := t.TempDir(), t.TempDir()
	engineDirs(t, out, tmp)
	hf := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(hf, []byte(e2eHarness(eng)), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := harness.Load(hf)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "GITLAB_TOKEN=" + e2eToken, "ENGINE_SCRIPT=" + sc.script, "ENGINE_OUT=" + out,
		"COPIED_TOKEN=prefix-" + e2eToken, "DEPLOY_PASSWORD=hunter2-deploy-secret"}
	if sc.mode != "" {
		env = append(env, "OCR_REVIEW_CONTEXT_MODE="+sc.mode)
	}
	if sc.mode == "enriched" && !sc.noPipeline {
		// enriched runs only in a validated GitLab merge-request pipeline (the fixture's MR)
		env = append(env, "GITLAB_CI=true", "CI_PIPELINE_SOURCE=merge_request_event", "CI_MERGE_REQUEST_PROJECT_ID=42",
			"CI_MERGE_REQUEST_IID=7", "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA="+e2eHead)
	}
	if !sc.protected && !sc.refused {
		env = append(env, "OCR_GITLAB_TARGET_PROTECTION_MODE=unprotected")
	}
	if sc.approve != "" {
		env = append(env, "OCR_AUTO_APPROVE="+sc.approve)
	}
	var logs bytes.Buffer
	o := Options{
		Common: lifecycle.Common{APIURL: f.front.URL + "/api/v4", TokenEnv: "GITLAB_TOKEN",
			Harness: h, Environ: func() []string { return env },
			Stdout: io.Discard, Stderr: &logs, Log: zerolog.New(&logs)},
		Project: e2eProject, MR: 7, ExpectedHead: e2eHead, Forgectx: fctx, TempDir: tmp, hook: hook,
	}
	opt(&o)
	res, err := Run(context.Background(), o)
	return e2eRun{res: res, err: err, fake: f, out: out, logs: &logs, tmp: tmp}
}

func e2eHarness(engine string) string {
	return `version: 1
agent:
  name: ocr
  category: observation
  command: ["` + engine + `"]
  env: [ENGINE_SCRIPT, ENGINE_OUT, PATH, COPIED_TOKEN]
  timeout: 60s
secrets: [DEPLOY_PASSWORD]
profiles:
  change_proposal:
    included_sources: [entity]
    record_selection: newest
    check_log_selection: none
    bounds:
      max_records_per_source: 100
      max_source_bytes: 4096
      max_record_bytes: 8192
      max_log_bytes: 4096
      max_metadata_string_bytes: 256
      max_labels: 20
`
}

// summaryNote returns the one summary note the run created and its receipt.
func summaryNote(t *testing.T, r e2eRun) (string, *Receipt) {
	t.Helper()
	notes := r.fake.writes("notes")
	if len(notes) != 1 {
		t.Fatalf("summary notes: %d", len(notes))
	}
	body, _ := notes[0].Body["body"].(string)
	if !strings.HasPrefix(body, SummaryMarker) {
		t.Fatalf("summary note lacks its marker")
	}
	rc, err := ReceiptFromBody(body)
	if err != nil {
		t.Fatalf("summary receipt: %v", err)
	}
	if _, ok := reviewpub.ParseMarker(body); !ok {
		t.Fatalf("summary lacks the DLP signal marker")
	}
	return body, rc
}

// failureNote checks the one summary note of a run that failed before its projection: the
// marker, the ❌ outcome with exactly state, no receipt, no DLP signal, no withheld value.
func failureNote(t *testing.T, r e2eRun, state string) {
	t.Helper()
	notes := r.fake.writes("notes")
	if len(notes) != 1 {
		t.Fatalf("summary notes: %d, want the one failure note\n%s", len(notes), r.logs)
	}
	body, _ := notes[0].Body["body"].(string)
	if body != failureBody(state) || !strings.HasPrefix(body, SummaryMarker+"\n") || !strings.Contains(body, "❌") || !strings.Contains(body, "(`"+state+"`)") {
		t.Fatalf("failure note:\n%s\nwant state %s", body, state)
	}
	if _, err := ReceiptFromBody(body); err == nil {
		t.Fatal("a failure note carries a receipt")
	}
	for _, leak := range []string{e2eToken, "hunter2-deploy-secret", r.tmp} {
		if strings.Contains(body, leak) {
			t.Fatal("the failure note carries a withheld value or a path")
		}
	}
	if r.res.Detail != "failed: "+state {
		t.Fatalf("detail %q", r.res.Detail)
	}
}

func assertNoLeftovers(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("session artifact left behind: %s", e.Name())
	}
}

func discussionsOK(b []byte) [][]byte { return [][]byte{b, b} }

// The approval rows end to end: each scenario yields the summary note with receipt v8, the
// finding discussions, and the approval request exactly when the row says so.
func TestReviewContextE2EEligibilityRows(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	page1 := fixture(t, "discussions_page1")
	remediation := fixture(t, "discussions_remediation")
	secretPage := edit(t, page1, func(v any) any {
		d := v.([]any)[0].(map[string]any)["notes"].([]any)[0].(map[string]any)
		d["body"] = "Deploy with token glpat-Leaked0123456789abcdXY please."
		return v
	})
	changedMR := edit(t, fixture(t, "merge_request"), func(v any) any { v.(map[string]any)["title"] = "Add widget caching (edited)"; return v })
	rows := []struct {
		name        string
		sc          scenario
		approved    bool
		discussions int
		reason      string
		unprotected bool
	}{
		{name: "eligible enriched run approves", sc: scenario{mode: "enriched", protected: true, approve: "true", script: "clean"}, approved: true},
		{name: "OCR_AUTO_APPROVE unset", sc: scenario{mode: "enriched", protected: true, script: "clean"}, reason: NotAutoApprove},
		{name: "findings", sc: scenario{mode: "enriched", protected: true, approve: "true", script: "findings"}, discussions: 3, reason: NotFindings},
		{name: "admitted remediation record", sc: scenario{mode: "enriched", protected: true, approve: "true", script: "clean", pages: [][]byte{remediation, remediation, remediation}}, reason: NotRemediation},
		{name: "DLP-rejected selected source", sc: scenario{mode: "enriched", protected: true, approve: "true", script: "clean", pages: discussionsOK(secretPage)}, reason: NotDLPRejected},
		{name: "degraded selected metadata", sc: scenario{mode: "enriched", protected: true, approve: "true", script: "clean", mrRecheck: changedMR}, reason: NotMetadata},
		{name: "degraded required source", sc: scenario{mode: "enriched", protected: true, approve: "true", script: "clean",
			pages: [][]byte{page1, secretPage}, policy: e2ePolicy(t, func(m map[string]any) { m["forge_discussions"].(map[string]any)["required"] = true })}, reason: NotRequiredDegraded},
		{name: "unprotected target", sc: scenario{mode: "metadata", protected: false, approve: "true", script: "clean"}, reason: NotProtected, unprotected: true},
		{name: "protected off run approves", sc: scenario{mode: "off", protected: true, approve: "true", script: "clean"}, approved: true},
		{name: "protected metadata run approves", sc: scenario{mode: "metadata", protected: true, approve: "true", script: "clean"}, approved: true},
		{name: "publication-filtered", sc: scenario{mode: "enriched", protected: true, approve: "true", script: "hostile"}, discussions: 2, reason: NotPublication},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			sc := row.sc
			if sc.policy == nil {
				sc.policy = e2ePolicy(t, nil)
			}
			if sc.pages == nil {
				sc.pages = discussionsOK(page1)
			}
			approvals := 0
			if row.approved {
				approvals = 1
			}
			r := runScenario(t, sc, nil)
			r.fake.wantPosts = map[string]int{"POST notes": 1, "POST discussions": row.discussions, "POST approve": approvals}
			if r.err != nil {
				t.Fatalf("run: %v\n%s", r.err, r.logs)
			}
			t.Logf("GitLab requests: %d reads, %d writes", len(r.fake.Served()), len(r.fake.posts))
			body, rc := summaryNote(t, r)
			if r.res.Approved != row.approved {
				t.Fatalf("approved %v, want %v (reasons %v)", r.res.Approved, row.approved, r.res.Decision.Reasons)
			}
			if row.reason != "" && !slices.Contains(r.res.Decision.Reasons, row.reason) {
				t.Fatalf("reasons %v, want %s", r.res.Decision.Reasons, row.reason)
			}
			if strings.Contains(body, UnprotectedLimitation) != row.unprotected || (rc.TargetState == TargetUnprotected) != row.unprotected {
				t.Fatalf("limitation line / target state wrong for unprotected=%v: %s", row.unprotected, rc.TargetState)
			}
			if rc.Cleanup != CleanupComplete || rc.SourceSHA != e2eHead || rc.TargetSHA != e2eTarget {
				t.Fatalf("receipt %+v", rc)
			}
			for _, d := range r.fake.writes("discussions") {
				text, _ := d.Body["body"].(string)
				if strings.Count(text, "<!-- ocr.remediation-marker/v1 fingerprint=") != 1 {
					t.Errorf("finding discussion without exactly one remediation marker")
				}
			}
			assertNoLeftovers(t, r.tmp)
		})
	}
}

// assertEngineConfined checks the engine's probe (testdata/engine probe): as root, the engine
// ran as DefaultEngineID and could open neither forgectx's start-up environment nor the
// store, snapshot or usage directories, nor list the session root; without root (the
// documented limitation) at least its copy of the parent environment carries no token.
func assertEngineConfined(t *testing.T, out string, storeExists bool) {
	t.Helper()
	probe := strings.Join(readLines(t, filepath.Join(out, "probe")), "\n")
	if os.Geteuid() != 0 {
		if b, err := os.ReadFile(filepath.Join(out, "parent_environ")); err == nil && strings.Contains(string(b), e2eToken) {
			t.Fatal("the engine read the token from forgectx's environment")
		}
		return
	}
	store := "store absent"
	if storeExists {
		store = "store denied"
	}
	want := fmt.Sprintf("uid %d\nparent_environ denied\n%s\nsnapshot denied\nmcp denied\nsession_root denied", DefaultEngineID, store)
	if probe != want {
		t.Fatalf("engine probe:\n%s\nwant:\n%s", probe, want)
	}
	if _, err := os.Stat(filepath.Join(out, "parent_environ")); err == nil {
		t.Fatal("the engine copied forgectx's environment")
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

func envKeys(lines []string) []string {
	var ks []string
	for _, l := range lines {
		k, _, _ := strings.Cut(l, "=")
		ks = append(ks, k)
	}
	return ks
}

// Spec "OCR runs under a fresh owner-only isolated HOME containing only validated
// toolkit-generated configuration" and "the engine never receives the forge token": the
// engine's whole environment is the generated one plus the allowed harness names (a variable
// whose value carries the token and a registered secret are withheld), its HOME holds exactly
// the generated MCP configuration, owner-only, and the tool lists are exact per mode.
func TestReviewContextEngineIsolation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	for _, tc := range []struct {
		mode      string
		protected bool
		tools     []string
	}{
		{"enriched", true, []string{"context_get", "context_list", "ocr_toolkit_evidence", "ocr_toolkit_evidence_coverage", "ocr_toolkit_evidence_search"}},
		{"metadata", true, []string{"ocr_toolkit_evidence", "ocr_toolkit_evidence_coverage", "ocr_toolkit_evidence_search"}},
		{"metadata", false, []string{"ocr_toolkit_evidence", "ocr_toolkit_evidence_coverage", "ocr_toolkit_evidence_search"}},
	} {
		t.Run(fmt.Sprintf("%s protected=%v", tc.mode, tc.protected), func(t *testing.T) {
			page1 := fixture(t, "discussions_page1")
			r := runScenario(t, scenario{mode: tc.mode, protected: tc.protected, script: "clean", policy: e2ePolicy(t, nil), pages: discussionsOK(page1)}, nil)
			r.fake.wantPosts = map[string]int{"POST notes": 1}
			if r.err != nil {
				t.Fatalf("run: %v\n%s", r.err, r.logs)
			}
			env := readLines(t, filepath.Join(r.out, "env"))
			want := []string{"ENGINE_OUT", "ENGINE_SCRIPT", EnvMCPConfig, EnvResultFile, EnvRules, "HOME", "LANG", "PATH", "TMPDIR"}
			if got := envKeys(env); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("engine environment keys %v, want %v", got, want)
			}
			all := strings.Join(env, "\n")
			for _, leak := range []string{e2eToken, "hunter2-deploy-secret"} {
				if strings.Contains(all, leak) {
					t.Fatalf("the engine's environment carries a withheld value")
				}
			}
			home := readLines(t, filepath.Join(r.out, "home"))
			wantHome := []string{". 700", ".config 700", ".config/forgectx 700", ".config/forgectx/mcp.json 600"}
			if strings.Join(home, ",") != strings.Join(wantHome, ",") {
				t.Fatalf("isolated HOME %v, want %v", home, wantHome)
			}
			assertEngineConfined(t, r.out, tc.protected)
			tools := readLines(t, filepath.Join(r.out, "tools"))
			if strings.Join(tools, ",") != strings.Join(tc.tools, ",") {
				t.Fatalf("tools %v, want %v", tools, tc.tools)
			}
			_, rc := summaryNote(t, r)
			if rc.EvidenceTools.EvidenceSummary != 1 || (tc.mode == "enriched") != (rc.ContextTools.List == 1) {
				t.Fatalf("tool-use counts %+v %+v", rc.EvidenceTools, rc.ContextTools)
			}
			if rc.FailedTool.State != FailedToolAbsent {
				t.Fatalf("failed tool %+v", rc.FailedTool)
			}
			assertNoLeftovers(t, r.tmp)
		})
	}
}

// A hostile engine leaks context text, a secret, PII, a Markdown image link and a
// bidi-laundered copy into findings; each is caught before anything reaches the merge request.
func TestReviewContextHostileEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	page1 := fixture(t, "discussions_page1")
	r := runScenario(t, scenario{mode: "enriched", protected: true, approve: "true", script: "hostile", policy: e2ePolicy(t, nil), pages: discussionsOK(page1)}, nil)
	r.fake.wantPosts = map[string]int{"POST notes": 1, "POST discussions": 2} // positioned (400), then general
	if r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.logs)
	}
	ctxText := strings.Split(string(must(os.ReadFile(filepath.Join(r.out, "context")))), "\n\x00\n")[0]
	if len([]rune(ctxText)) < 40 {
		t.Fatalf("test premise: the engine read no context text long enough to leak")
	}
	leaks := map[string]string{
		"context excerpt": string([]rune(ctxText)[:30]), "secret": "glpat-Zx9Yw8Vu7Ts6Rq5Po4Nm", "e-mail": "alice.liddell@example.com",
		"phone": "555-0134", "image link": "attacker.example.invalid", "bidi": "\u202e", "zero-width": "\u200b",
		"laundered copy": string([]rune(ctxText)[20:40]),
	}
	var bodies []string
	for _, k := range []string{"notes", "discussions"} {
		for _, p := range r.fake.writes(k) {
			b, _ := p.Body["body"].(string)
			bodies = append(bodies, b)
		}
	}
	for name, v := range leaks {
		for _, b := range bodies {
			if strings.Contains(b, v) {
				t.Errorf("%s reached the merge request", name)
			}
		}
	}
	for _, d := range r.fake.writes("discussions") {
		if !strings.Contains(d.Body["body"].(string), "Prefer a named constant") {
			t.Fatalf("a finding other than the safe one was posted")
		}
	}
	body, rc := summaryNote(t, r)
	sig, _ := reviewpub.ParseMarker(body)
	if rc.PublicationDLP.Result != DLPPublicationFiltered || sig.FindingsOmitted != 5 || sig.FindingsRetained != 1 {
		t.Fatalf("receipt %+v signal %+v", rc.PublicationDLP, sig)
	}
	rs := sig.Reasons
	if rs.Secret < 1 || rs.PII < 1 || rs.ForbiddenContext < 1 || rs.MarkdownDestination+rs.HTML < 1 || rs.Control+rs.Laundering < 1 {
		t.Fatalf("not every leak class was detected: %+v", rs)
	}
	if r.res.Approved || !slices.Contains(r.res.Decision.Reasons, NotPublication) {
		t.Fatalf("a publication-filtered run approved: %+v", r.res.Decision)
	}
	if strings.Contains(r.logs.String(), "glpat-Zx9Yw8Vu7Ts6Rq5Po4Nm") || strings.Contains(r.logs.String(), e2eToken) {
		t.Fatalf("a secret reached the log")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Spec "Termination is deferred across cleanup and atomic result projection": a SIGTERM that
// arrives during cleanup neither kills the process nor skips a step; every artifact is removed,
// the projection and receipt are attached, and nothing is posted.
func TestReviewContextSignalDuringCleanup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			page1 := fixture(t, "discussions_page1")
			var points []string
			hook := func(p string) {
				points = append(points, p)
				if p == "cleanup:snapshot" {
					if err := syscall.Kill(os.Getpid(), sig); err != nil {
						t.Fatal(err)
					}
					time.Sleep(300 * time.Millisecond) // let the runtime deliver it mid-cleanup
				}
			}
			r := runScenario(t, scenario{mode: "enriched", protected: true, approve: "true", script: "clean", policy: e2ePolicy(t, nil), pages: discussionsOK(page1), noPosting: true}, hook)
			r.fake.wantPosts = map[string]int{}
			if r.err == nil || r.res.Status != StatusCancelled {
				t.Fatalf("want an interrupted run, got %v %+v", r.err, r.res)
			}
			want := []string{"acquired", "engine", "cleanup:store", "cleanup:snapshot", "cleanup:home", "cleanup:tmp", "cleanup:mcp", "cleanup:rules", "replace"}
			if strings.Join(points, ",") != strings.Join(want, ",") {
				t.Fatalf("lifecycle points %v, want %v", points, want)
			}
			if r.res.Cleanup != CleanupComplete || r.res.Receipt == nil || r.res.Receipt.Cleanup != CleanupComplete {
				t.Fatalf("cleanup %s, receipt %+v", r.res.Cleanup, r.res.Receipt)
			}
			assertNoLeftovers(t, r.tmp)
		})
	}
}

// A signal while the engine runs stops the engine's whole process group; cleanup still runs.
func TestReviewContextSignalDuringEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	page1 := fixture(t, "discussions_page1")
	hook := func(p string) {
		if p == "engine" {
			go func() {
				time.Sleep(500 * time.Millisecond)
				syscall.Kill(os.Getpid(), syscall.SIGTERM)
			}()
		}
	}
	start := time.Now()
	r := runScenario(t, scenario{mode: "enriched", protected: true, script: "sleep", policy: e2ePolicy(t, nil), pages: discussionsOK(page1), noPosting: true}, hook)
	r.fake.wantPosts = map[string]int{}
	if r.err == nil || r.res.Status != StatusCancelled || time.Since(start) > 20*time.Second {
		t.Fatalf("want a prompt interrupted run, got %v %+v after %s", r.err, r.res, time.Since(start))
	}
	if r.res.Cleanup != CleanupComplete {
		t.Fatalf("cleanup %s", r.res.Cleanup)
	}
	assertNoLeftovers(t, r.tmp)
}

// Spec "A cleanup or publication-validation failure blocks ordinary result publication": the
// summary says the result is withheld (with the receipt, cleanup failed), no finding is
// posted and nothing is approved.
func TestReviewContextCleanupFailureWithholdsResult(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	defer func(f func(string) error) { removeAll = f }(removeAll)
	removeAll = func(p string) error {
		if filepath.Base(p) == "home" {
			return fmt.Errorf("injected")
		}
		return os.RemoveAll(p)
	}
	page1 := fixture(t, "discussions_page1")
	sc := scenario{mode: "enriched", protected: true, approve: "true", script: "findings", policy: e2ePolicy(t, nil), pages: discussionsOK(page1), withheld: true}
	r := runScenario(t, sc, nil)
	r.fake.wantPosts = map[string]int{"POST notes": 1}
	if r.err == nil || r.res.Status != StatusFailure || r.res.Cleanup != CleanupFailed {
		t.Fatalf("want a failed run with a failed cleanup, got %v %+v", r.err, r.res)
	}
	body, rc := summaryNote(t, r)
	if rc.Cleanup != CleanupFailed || !strings.Contains(body, "result is withheld") || strings.Contains(body, "cache is never invalidated") {
		t.Fatalf("withheld summary wrong: cleanup %s", rc.Cleanup)
	}
	if r.res.Approved || !slices.Contains(r.res.Decision.Reasons, NotCleanup) {
		t.Fatalf("decision %+v", r.res.Decision)
	}
}

// Spec "OCR must still record at least one ocr_toolkit_evidence(action=summary) call; context
// calls do not satisfy that requirement": an engine that reads context but never the evidence
// summary fails the run before anything is posted.
func TestReviewContextSummaryCallRequired(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	page1 := fixture(t, "discussions_page1")
	r := runScenario(t, scenario{mode: "enriched", protected: true, approve: "true", script: "nosummary", policy: e2ePolicy(t, nil), pages: discussionsOK(page1), failed: true}, nil)
	r.fake.wantPosts = map[string]int{"POST notes": 1}
	if r.err == nil || !strings.Contains(r.err.Error(), "summary") || r.res.Status != StatusFailure {
		t.Fatalf("want the summary-call failure, got %v", r.err)
	}
	failureNote(t, r, FailNoEvidenceSummary)
	if got := readLines(t, filepath.Join(r.out, "tools")); !slices.Contains(got, "context_list") {
		t.Fatalf("test premise: the engine had context tools: %v", got)
	}
	assertNoLeftovers(t, r.tmp)
}

// A failed engine or an unusable result fails the run after a complete cleanup; the sticky
// summary note says so with a closed failure state (❌), nothing else is posted, no approval.
func TestReviewContextEngineFailuresPostFailureNote(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	for script, want := range map[string][2]string{"crash": {"engine exited 5", FailEngine}, "invalid": {"result", FailResult}, "symlink": {"result file", FailResult}} {
		t.Run(script, func(t *testing.T) {
			page1 := fixture(t, "discussions_page1")
			r := runScenario(t, scenario{mode: "enriched", protected: true, approve: "true", script: script, policy: e2ePolicy(t, nil), pages: discussionsOK(page1), failed: true}, nil)
			r.fake.wantPosts = map[string]int{"POST notes": 1}
			if r.err == nil || !strings.Contains(r.err.Error(), want[0]) || r.res.Status != StatusFailure || r.res.Cleanup != CleanupComplete {
				t.Fatalf("got %v %+v, want a failure mentioning %q after a complete cleanup", r.err, r.res, want[0])
			}
			failureNote(t, r, want[1])
			assertNoLeftovers(t, r.tmp)
		})
	}
}

// Spec "--preserve-private-artifacts … retains owner-only raw session/context state, adds a
// value-free ocr.private-dlp-decisions/v1 … sidecar, and deliberately emits no posting
// receipt": the session stays, the sidecar names paths, reasons and hashes only, nothing is
// posted.
func TestReviewContextPreservePrivateArtifacts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	// metadata: preservation is a local diagnostic, and enriched runs only inside a validated
	// merge-request pipeline, where preservation is refused
	r := runScenarioWith(t, scenario{mode: "metadata", protected: true, approve: "true", script: "hostile", noPosting: true}, nil,
		func(o *Options) { o.PreservePrivateArtifacts = true })
	r.fake.wantPosts = map[string]int{}
	if r.err != nil || r.res.Status != StatusSuccess || r.res.Cleanup != CleanupPreserved || r.res.Receipt != nil {
		t.Fatalf("got %v %+v", r.err, r.res)
	}
	for _, p := range []string{"store/context-store.json", "snapshot/index.json", "home/.config/forgectx/mcp.json", "mcp/usage.json", "out/result.json", "out/" + DecisionsFile} {
		fi, err := os.Lstat(filepath.Join(r.res.Preserved, p))
		if err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: %v (mode %v)", p, err, fi)
		}
	}
	side := string(must(os.ReadFile(filepath.Join(r.res.Preserved, "out", DecisionsFile))))
	if !strings.Contains(side, `"schema_version":"ocr.private-dlp-decisions/v1"`) || !strings.Contains(side, `"sha256":`) {
		t.Fatalf("sidecar: %s", side)
	}
	for _, leak := range []string{"glpat-Zx9Yw8Vu7Ts6Rq5Po4Nm", "alice.liddell@example.com", "attacker.example.invalid"} {
		if strings.Contains(side, leak) {
			t.Fatalf("the sidecar carries a value")
		}
	}
	if err := os.RemoveAll(r.res.Preserved); err != nil {
		t.Fatal(err)
	}
}

// The summary note is sticky: a note of the token's own user carrying the marker is updated in
// place (PUT), one by another author with the same marker is ignored.
func TestReviewContextSummaryNoteIsSticky(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	page1 := fixture(t, "discussions_page1")
	note := func(id, author int) map[string]any {
		return map[string]any{"id": id, "body": SummaryMarker + "\nold review", "system": false, "noteable_type": "MergeRequest", "noteable_iid": 7,
			"created_at": "2026-11-30T10:00:00.000Z", "updated_at": "2026-11-30T10:00:00.000Z", "author": map[string]any{"id": author, "username": "u"}}
	}
	notes, _ := json.Marshal([]any{note(5101, 101), note(5102, 104)})
	r := runScenario(t, scenario{mode: "enriched", protected: true, script: "clean", policy: e2ePolicy(t, nil), pages: discussionsOK(page1), notes: notes}, nil)
	r.fake.wantPosts = map[string]int{"PUT notes": 1}
	if r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.logs)
	}
	w := r.fake.writes("notes")
	if len(w) != 1 || !strings.HasSuffix(w[0].Path, "/notes/5102") {
		t.Fatalf("writes %+v, want one PUT of note 5102", w)
	}
	if _, err := ReceiptFromBody(w[0].Body["body"].(string)); err != nil {
		t.Fatal(err)
	}
}

// An unprotected target with the protection requirement left at its default is rejected at the
// lifecycle decision: no policy read, no snapshot, no engine, nothing posted.
func TestReviewContextUnprotectedTargetRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	r := runScenario(t, scenario{mode: "enriched", refused: true, script: "clean"}, nil)
	r.fake.wantPosts = map[string]int{}
	if !errors.Is(r.err, reviewctx.ErrUnprotectedTarget) {
		t.Fatalf("got %v, want ErrUnprotectedTarget", r.err)
	}
	if _, err := os.Stat(filepath.Join(r.out, "env")); err == nil {
		t.Fatal("the engine started")
	}
	assertNoLeftovers(t, r.tmp)
}

// Finding discussions are anchored on the reviewed diff (base/start/head SHA, new path and
// line) so part 1 can tell a current anchor from an outdated one; a line GitLab refuses (400)
// falls back to a general discussion, once.
func TestReviewContextFindingDiscussionsAnchored(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	page1 := fixture(t, "discussions_page1")
	r := runScenario(t, scenario{mode: "enriched", protected: true, script: "findings", policy: e2ePolicy(t, nil), pages: discussionsOK(page1)}, nil)
	r.fake.wantPosts = map[string]int{"POST notes": 1, "POST discussions": 3}
	if r.err != nil || r.res.Discussions != 2 {
		t.Fatalf("run: %v, %d discussions\n%s", r.err, r.res.Discussions, r.logs)
	}
	d := r.fake.writes("discussions")
	pos, _ := d[0].Body["position"].(map[string]any)
	want := map[string]any{"base_sha": e2eTarget, "start_sha": e2eTarget, "head_sha": e2eHead, "position_type": "text", "new_path": "cache/cache.go", "new_line": float64(12)}
	for k, v := range want {
		if pos[k] != v {
			t.Errorf("position %s = %v, want %v", k, pos[k], v)
		}
	}
	if p, _ := d[1].Body["position"].(map[string]any); p["new_path"] != "cache/cache_test.go" {
		t.Errorf("second request: %v", d[1].Body)
	}
	if _, ok := d[2].Body["position"]; ok || d[2].Body["body"] != d[1].Body["body"] {
		t.Errorf("the fallback must be the same body without a position")
	}
}

// The same lifecycle through the command line: `forgectx review-context run` as a process
// (its own executable is the MCP entry's command), against the fake GitLab.
func TestReviewContextCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	fctx, eng := binaries(t)
	page1 := fixture(t, "discussions_page1")
	f := newFakeGitLab(t)
	f.expect(t, scenario{mode: "enriched", protected: true, policy: e2ePolicy(t, nil), pages: discussionsOK(page1)})
	f.wantPosts = map[string]int{"POST notes": 1, "POST approve": 1}
	out, tmp := t.TempDir(), t.TempDir()
	engineDirs(t, out, tmp)
	hf := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(hf, []byte(e2eHarness(eng)), 0o600); err != nil {
		t.Fatal(err)
	}
	// The fake serves the project by its path; GitLab's pipeline variable is its numeric ID.
	cmd := exec.Command(fctx, "review-context", "run", "--harness", hf, "--temp-dir", tmp, "--project", e2eProject)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GITLAB_TOKEN=" + e2eToken, "ENGINE_SCRIPT=clean", "ENGINE_OUT=" + out,
		"OCR_REVIEW_CONTEXT_MODE=enriched", "OCR_AUTO_APPROVE=true", "GITLAB_CI=true", "CI_PIPELINE_SOURCE=merge_request_event",
		"CI_API_V4_URL=" + f.front.URL + "/api/v4", "CI_MERGE_REQUEST_PROJECT_ID=42", "CI_MERGE_REQUEST_IID=7",
		"CI_MERGE_REQUEST_SOURCE_BRANCH_SHA=" + e2eHead}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("forgectx review-context run: %v\n%s", err, stderr.String())
	}
	for _, line := range []string{"status: success", "cleanup: complete", "target: protected", "mode: enriched", "publication_dlp: clean", "discussions: 0", "approved: true"} {
		if !strings.Contains(stdout.String(), line+"\n") {
			t.Errorf("stdout lacks %q:\n%s", line, stdout.String())
		}
	}
	if strings.Contains(stderr.String(), e2eToken) || strings.Contains(stdout.String(), e2eToken) {
		t.Fatal("the token reached the output")
	}
	summaryNote(t, e2eRun{fake: f})
	// Here forgectx is its own process with the token in its start-up environment.
	assertEngineConfined(t, out, true)
	assertNoLeftovers(t, tmp)
}

// SIGTERM to the forgectx process while the engine runs: the engine's group is stopped, the
// session removed, nothing posted, exit 1 with status cancelled.
func TestReviewContextCLISigterm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	fctx, eng := binaries(t)
	page1 := fixture(t, "discussions_page1")
	f := newFakeGitLab(t)
	f.expect(t, scenario{mode: "enriched", protected: true, policy: e2ePolicy(t, nil), pages: discussionsOK(page1), noPosting: true})
	out, tmp := t.TempDir(), t.TempDir()
	engineDirs(t, out, tmp)
	hf := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(hf, []byte(e2eHarness(eng)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(fctx, "review-context", "run", "--harness", hf, "--temp-dir", tmp, "--api-url", f.front.URL+"/api/v4",
		"--project", e2eProject, "--mr", "7", "--token-env", "GITLAB_TOKEN")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GITLAB_TOKEN=" + e2eToken, "ENGINE_SCRIPT=sleep", "ENGINE_OUT=" + out, "OCR_REVIEW_CONTEXT_MODE=enriched",
		"GITLAB_CI=true", "CI_PIPELINE_SOURCE=merge_request_event", "CI_MERGE_REQUEST_PROJECT_ID=42", "CI_MERGE_REQUEST_IID=7",
		"CI_MERGE_REQUEST_SOURCE_BRANCH_SHA=" + e2eHead}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(out, "home")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the engine never started:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "status: cancelled\n") || !strings.Contains(stdout.String(), "cleanup: complete\n") {
		t.Fatalf("stdout:\n%s", stdout.String())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %s to stop", d)
	}
	assertNoLeftovers(t, tmp)
}

// GitLab's checkout keeps the job token in .git/config's remote URL. The engine
// (working in the checkout) sees the configuration without it; afterwards the file is the
// original again, byte for byte and mode for mode.
func TestReviewContextCheckoutCredentialsStripped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	const jobToken = "glcbt-64_e2eJobTokenValue0123"
	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(work, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(work, ".git", "config")
	orig := "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://gitlab-ci-token:" + jobToken + "@gitlab.example/acme/widgets.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
	if err := os.WriteFile(cfgPath, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	page1 := fixture(t, "discussions_page1")
	r := runScenarioWith(t, scenario{mode: "enriched", protected: true, script: "clean", policy: e2ePolicy(t, nil), pages: discussionsOK(page1)}, nil, func(o *Options) {
		env := append(o.Environ(), "CI_JOB_TOKEN="+jobToken)
		o.Environ, o.WorkDir = func() []string { return env }, work
	})
	r.fake.wantPosts = map[string]int{"POST notes": 1}
	if r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.logs)
	}
	seen, err := os.ReadFile(filepath.Join(r.out, "gitconfig"))
	if err != nil {
		t.Fatalf("the engine did not see the checkout's configuration: %v", err)
	}
	if strings.Contains(string(seen), jobToken) || !strings.Contains(string(seen), "\turl = https://gitlab.example/acme/widgets.git\n") {
		t.Fatalf("the engine's view of .git/config:\n%s", seen)
	}
	after, err := os.ReadFile(cfgPath)
	fi, serr := os.Stat(cfgPath)
	if err != nil || serr != nil || string(after) != orig || fi.Mode().Perm() != 0o644 {
		t.Fatalf("the configuration was not restored (%v %v):\n%s", err, serr, after)
	}
	if strings.Contains(r.logs.String(), jobToken) {
		t.Fatal("the job token reached the log")
	}
	assertNoLeftovers(t, r.tmp)
}

// A checkout configuration that still carries the job token after stripping stops the run
// before the engine starts; the failure note names the closed state, the file is untouched.
func TestReviewContextCheckoutCredentialRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	const jobToken = "glcbt-64_e2eJobTokenValue0123"
	work := t.TempDir()
	os.Chmod(work, 0o755)
	os.Mkdir(filepath.Join(work, ".git"), 0o755)
	cfgPath := filepath.Join(work, ".git", "config")
	orig := "[remote \"origin\"]\n\turl = https://gitlab.example/acme/widgets.git\n[credential]\n\thelper = store --token " + jobToken + "\n"
	if err := os.WriteFile(cfgPath, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	page1 := fixture(t, "discussions_page1")
	r := runScenarioWith(t, scenario{mode: "enriched", protected: true, script: "clean", policy: e2ePolicy(t, nil), pages: discussionsOK(page1), failed: true}, nil, func(o *Options) {
		env := append(o.Environ(), "CI_JOB_TOKEN="+jobToken)
		o.Environ, o.WorkDir = func() []string { return env }, work
	})
	r.fake.wantPosts = map[string]int{"POST notes": 1}
	if !errors.Is(r.err, ErrCheckoutCredential) || r.res.Status != StatusFailure {
		t.Fatalf("got %v, want ErrCheckoutCredential", r.err)
	}
	if _, err := os.Stat(filepath.Join(r.out, "env")); err == nil {
		t.Fatal("the engine started")
	}
	if b, _ := os.ReadFile(cfgPath); string(b) != orig {
		t.Fatal("the configuration changed")
	}
	failureNote(t, r, FailCheckoutCredentials)
	assertNoLeftovers(t, r.tmp)
}

// entityOnly keeps the recorded merge request's interactions an entity-only snapshot makes
// (the project, the merge request, its author's user and membership): the review run never
// fetches conversations, CI or other participants for the engine.
func entityOnly(c *cassette.Cassette) *cassette.Cassette {
	out := &cassette.Cassette{Meta: c.Meta}
	for _, in := range c.Interactions {
		u := in.Request.URL
		if strings.Contains(u, "/discussions") || strings.Contains(u, "/pipelines") || strings.Contains(u, "/jobs/") ||
			(strings.Contains(u, "/users/") || strings.Contains(u, "/members/")) && !strings.HasSuffix(u, "/101") {
			continue
		}
		out.Interactions = append(out.Interactions, in)
	}
	return out
}
