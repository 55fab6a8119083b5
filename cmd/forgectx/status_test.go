package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/testnotice"
)

// githubStub answers the status-reconcile and run requests these CLI tests make: every issue
// comment page is empty (or 404 when notFound), and it records the requests it saw.
type githubStub struct {
	mu       sync.Mutex
	notFound bool
	seen     []string
}

func (g *githubStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.seen = append(g.seen, r.Method+" "+r.URL.Path)
	nf := g.notFound
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if nf || r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/comments") {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}`))
		return
	}
	_, _ = w.Write([]byte(`[]`))
}

// `forgectx status reconcile` exits 0 and prints its counts as one JSON line; a forge that
// refuses the lookup is exit 1 with one error line; a configuration error is exit 2. The
// token never reaches either stream.
func TestStatusReconcileExitCodes(t *testing.T) {
	const tok = "ghs_reconcileTokenValue0123456789abcd"
	stub := &githubStub{}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	env := map[string]string{"GITHUB_TOKEN": tok, "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "o/r"}
	args := []string{"status", "reconcile", "--agent", "triage", "--number", "7", "--api-url", srv.URL}

	code, stdout, stderr := runCLI(t, env, "", args...)
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	var res map[string]int
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res["comments"] != 0 || res["finalized"] != 0 || strings.Count(stdout, "\n") != 1 {
		t.Errorf("stdout = %q (%v), want one JSON line of zero counts", stdout, err)
	}
	if len(stub.seen) != 1 || stub.seen[0] != "GET /repos/o/r/issues/7/comments" {
		t.Errorf("requests = %v, want exactly the comment listing", stub.seen)
	}

	stub.notFound = true
	code, stdout, stderr = runCLI(t, env, "", args...)
	if code != exitFailed || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want exit %d and no output", code, stdout, exitFailed)
	}
	if !strings.Contains(stderr, "forgectx: status reconcile: ") || !strings.Contains(stderr, "HTTP 404") {
		t.Errorf("stderr = %q, want one error naming the refused lookup", stderr)
	}

	for _, bad := range [][]string{
		{"status", "finalise"},
		{"status", "reconcile", "--agent", "triage", "--number", "7", "--api-url", srv.URL, "extra"},
		{"status", "reconcile", "--agent", "triage", "--number", "7", "--forge", "gitlab"},
		{"status", "reconcile", "--agent", "triage", "--number", "7", "--current-run"}, // no GITHUB_RUN_ID
		{"status", "reconcile", "--harness", "/nonexistent/h.yml", "--number", "7"},
	} {
		code, _, stderr := runCLI(t, env, "", bad...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d; stderr:\n%s", bad, code, exitUsage, stderr)
		}
	}
	for _, s := range []string{stdout, stderr} {
		if strings.Contains(s, tok) {
			t.Error("the token reached the output")
		}
	}
}

// A run whose forge refuses everything is exit 1 (after trying the status comment and the
// receipt), not a configuration error; no tree survives and the token is not printed.
func TestRunForgeFailureExits1(t *testing.T) {
	const tok = "ghs_runTokenValue0123456789abcdefghij"
	dir := t.TempDir()
	h := filepath.Join(dir, "h.yml")
	if err := os.WriteFile(h, []byte(cliHarness), 0o600); err != nil {
		t.Fatal(err)
	}
	stub := &githubStub{notFound: true}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	tmp := filepath.Join(dir, "runner-temp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GITHUB_TOKEN": tok, "GITHUB_ACTIONS": "true", "RUNNER_TEMP": tmp}
	code, _, stderr := runCLI(t, env, "", "run", "--harness", h, "--repo", "o/r", "--number", "7", "--api-url", srv.URL)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFailed, stderr)
	}
	if !strings.Contains(stderr, "forgectx: run: run failure: reading the entity from the forge failed") {
		t.Errorf("stderr lacks the one error line:\n%s", stderr)
	}
	if strings.Contains(stderr, tok) {
		t.Error("the token reached stderr")
	}
	posts := 0
	for _, r := range stub.seen {
		if strings.HasPrefix(r, "POST /repos/o/r/issues/7/comments") {
			posts++
		}
	}
	// The lookups fail (no comment is created over a failed lookup); the receipt is still
	// attempted.
	if posts != 1 {
		t.Errorf("requests = %v, want the receipt attempted once", stub.seen)
	}
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		if e.Name() != "forgectx-stage" {
			t.Errorf("%s left in the tree base", e.Name())
		}
	}
}

// forgeReplay answers from a ghscenario cassette (every recorded exchange, as often as asked)
// and accepts the comment writes of forgectx run; anything else is a test failure.
type forgeReplay struct {
	t       *testing.T
	replies map[string]*cassette.Response
	mu      sync.Mutex
	writes  []string
}

func newForgeReplay(t *testing.T, c *cassette.Cassette) *forgeReplay {
	f := &forgeReplay{t: t, replies: map[string]*cassette.Response{}}
	for _, in := range c.Interactions {
		body, err := in.Request.Body.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(in.Request.URL)
		if err != nil {
			t.Fatal(err)
		}
		k, err := cassette.Key(in.Request.Method, "http://fake"+u.RequestURI(), body)
		if err != nil {
			t.Fatal(err)
		}
		f.replies[k] = in.Response
	}
	return f
}

func (f *forgeReplay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if (r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/issues/7/comments")) ||
		(r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/issues/comments/9001")) {
		f.mu.Lock()
		f.writes = append(f.writes, r.Method)
		f.mu.Unlock()
		var in struct{ Body string }
		_ = json.Unmarshal(body, &in)
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": 9001, "node_id": "IC_kwDOLq3Xz86AACMp", "body": in.Body,
			"user": map[string]any{"login": "github-actions[bot]", "id": 41898282, "node_id": "MDM6Qm90NDE4OTgyODI=", "type": "Bot"}})
		return
	}
	k, err := cassette.Key(r.Method, "http://fake"+r.URL.RequestURI(), body)
	resp := f.replies[k]
	if err != nil || resp == nil {
		f.t.Errorf("unexpected request %s %s", r.Method, r.URL.RequestURI())
		w.WriteHeader(http.StatusNotFound)
		return
	}
	rb, _ := resp.Body.Bytes()
	for name, vs := range resp.Header {
		if name != "Content-Length" {
			w.Header()[name] = vs
		}
	}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(rb)
}

// Exit 0 through the CLI: a run the pre-script skips (exit 78) and a run whose agent succeeds.
func TestRunExit0SkipAndProceed(t *testing.T) {
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "run proceed case (non-root)", "sealing the agent's copy (read-only bind mount or ownership) needs root")
	}
	c, err := ghscenario.Build(ghscenario.Issue())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, pre string }{
		{"skip", "pre_script:\n  command: [\"sh\", \"-c\", \"exit 78\"]\n"},
		{"proceed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replay := newForgeReplay(t, c)
			srv := httptest.NewServer(replay)
			defer srv.Close()
			dir := t.TempDir()
			h := filepath.Join(dir, "h.yml")
			if err := os.WriteFile(h, []byte(cliHarness+tc.pre), 0o600); err != nil {
				t.Fatal(err)
			}
			tmp := filepath.Join(dir, "runner-temp")
			if err := os.Mkdir(tmp, 0o700); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"GITHUB_TOKEN": "ghs_cliExit0TokenValue0123456789abcdef", "GITHUB_ACTIONS": "true", "RUNNER_TEMP": tmp,
				"PATH": os.Getenv("PATH")}
			// The agent runs unprivileged: forgectx stops an agent with UID 0 in every mode.
			code, stdout, stderr := runCLI(t, env, "", "run", "--harness", h, "--repo", "octo-org/Hello-World", "--number", "7", "--api-url", srv.URL,
				"--immutability", "bind-mount", "--agent-uid", "65534", "--agent-gid", "65534")
			if code != exitOK || stdout != "" {
				t.Fatalf("exit %d, stdout %q; want exit 0 and no output; stderr:\n%s", code, stdout, stderr)
			}
			// Start comment, completion edit, receipt.
			if got := strings.Join(replay.writes, ","); got != "POST,PATCH,POST" {
				t.Errorf("comment writes = %s", got)
			}
			if !strings.Contains(stderr, "phase=done") || strings.Contains(stderr, "ghs_cliExit0TokenValue") {
				t.Errorf("stderr:\n%s", stderr)
			}
		})
	}
}
