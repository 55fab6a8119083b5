package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/review/reviewrun"
	"github.com/forgectx/forgectx/test/httpfake"
)

// The `review-context run` row of the exit-code table (docs/exit-codes.md), driven through the built
// forgectx binary (its own executable is the MCP entry's command, so it cannot be this test
// binary) and internal/review/reviewrun's stand-in engine against a fake GitLab: a clean review posts its
// summary note (0), a crashing engine posts the failure note (1).

const (
	rcProjectPath = "/api/v4/projects/Acme%2FPlatform%2Fwidgets"
	rcHead        = "8e0b45049b6253b8984cde9241830d2851168142"
	rcToken       = "glpat-exitTableReviewToken0123"
)

var rcFixtures = filepath.Join("..", "..", "internal", "review", "reviewctx", "testdata", "gitlab")

var (
	rcBuildOnce   sync.Once
	rcFctx, rcEng string
	rcBuildErr    error
)

// TestMain removes the binaries reviewRunBinaries built (they outlive any one test).
func TestMain(m *testing.M) {
	code := m.Run()
	if rcFctx != "" {
		os.RemoveAll(filepath.Dir(rcFctx))
	}
	os.Exit(code)
}

// reviewRunBinaries builds forgectx and the stand-in engine once per test binary (both
// exit-table cells use them), into a directory a root run's engine identity can execute from.
func reviewRunBinaries(t *testing.T) (string, string) {
	t.Helper()
	rcBuildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "forgectx-exit-bin-")
		if err != nil {
			rcBuildErr = err
			return
		}
		// Set before anything can fail, so TestMain removes the directory.
		rcFctx, rcEng = filepath.Join(dir, "forgectx"), filepath.Join(dir, "engine")
		// As root the engine runs as reviewrun.DefaultEngineID: it must reach the binaries.
		// The parent is os.TempDir(), shared and already traversable, so it is left as is.
		if err := os.Chmod(dir, 0o755); err != nil {
			rcBuildErr = err
			return
		}
		for _, b := range [][2]string{{rcFctx, "."}, {rcEng, "../../internal/review/reviewrun/testdata/engine"}} {
			if out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
				rcBuildErr = fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
				return
			}
		}
	})
	if rcBuildErr != nil {
		t.Fatal(rcBuildErr)
	}
	return rcFctx, rcEng
}

// reviewRunFake is the fake GitLab of one cell (context mode off, protected target): every
// read the run makes, and the summary note's creation recorded (notes returns the bodies).
func reviewRunFake(t *testing.T, script string) (string, func() []string) {
	f := httpfake.New(t)
	mr := rcFixture(t, "merge_request")
	f.Expect("GET", rcProjectPath+"/merge_requests/7", httpfake.JSON(200, mr))
	f.Expect("GET", rcProjectPath+"/repository/branches/main", httpfake.JSON(200, rcFixture(t, "branch_main")))
	// no repository Rules at the target SHA
	f.Expect("GET", rcProjectPath+"/repository/tree?page=1&path=.opencodereview%2Frules&per_page=100&ref=dd692733bb84bc3e9e862e66c099daec2fa00c83",
		httpfake.JSON(404, []byte(`{"message":"404 Tree Not Found"}`)))
	c, err := cassette.Load("../../test/fixtures/gitlab/cassettes/mr")
	if err != nil {
		t.Fatal(err)
	}
	f.ExpectCassette(entityOnly(c))
	if script == "clean" {
		f.Expect("GET", "/api/v4/user", httpfake.JSON(200, rcFixture(t, "user_bot")))
		f.Expect("GET", rcProjectPath+"/merge_requests/7", httpfake.JSON(200, mr))
		f.Expect("GET", rcProjectPath+"/merge_requests/7/discussions?page=1&per_page=100", rcList(rcFixture(t, "discussions_page1")))
	} else {
		f.Expect("GET", "/api/v4/user", httpfake.JSON(200, rcFixture(t, "user_bot")))
	}
	f.Expect("GET", rcProjectPath+"/merge_requests/7/notes?order_by=created_at&per_page=100&sort=asc", rcList([]byte("[]")))
	var notes []string
	var mu sync.Mutex
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.EscapedPath() != rcProjectPath+"/merge_requests/7/notes" {
			f.ServeHTTP(w, r)
			return
		}
		var body struct{ Body string }
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		notes = append(notes, body.Body)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":7001,"body":%q,"noteable_type":"MergeRequest","noteable_iid":7,"author":{"id":104}}`, body.Body)
	}))
	t.Cleanup(front.Close)
	return front.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), notes...)
	}
}

func rcFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(rcFixtures, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rcList(body []byte) httpfake.Reply {
	r := httpfake.JSON(200, body)
	r.Header.Set("X-Page", "1")
	r.Header.Set("X-Per-Page", "100")
	return r
}

// reviewRunCell runs `forgectx review-context run` (context mode off, protected target) with
// the stand-in engine's script and returns the exit code and stderr; it checks that exactly
// one summary note was created and that it is the note script leads to.
func reviewRunCell(script string) exitCase {
	return func(t *testing.T) (int, string) {
		fctx, eng := reviewRunBinaries(t)
		front, notes := reviewRunFake(t, script)
		base := t.TempDir()
		out, tmp := filepath.Join(base, "out"), filepath.Join(base, "tmp")
		for _, d := range []string{out, tmp} {
			if err := os.Mkdir(d, 0o711); err != nil {
				t.Fatal(err)
			}
		}
		if os.Geteuid() == 0 {
			if err := os.Chmod(base, 0o711); err != nil || os.Chmod(filepath.Dir(base), 0o711) != nil || os.Chown(out, reviewrun.DefaultEngineID, reviewrun.DefaultEngineID) != nil {
				t.Fatal("cannot open the test directories to the engine identity")
			}
		}
		hf := filepath.Join(base, "harness.yml")
		// internal/review/reviewrun's end-to-end harness: the profile the fixtures' cassette was recorded for.
		harnessText := `version: 1
agent:
  name: ocr
  category: observation
  command: ["` + eng + `"]
  env: [ENGINE_SCRIPT, ENGINE_OUT, PATH]
  timeout: 60s
profiles:
  change_proposal:
    included_sources: [entity]
    record_selection: newest
    check_log_selection: none
    bounds: {max_records_per_source: 100, max_source_bytes: 4096, max_record_bytes: 8192, max_log_bytes: 4096, max_metadata_string_bytes: 256, max_labels: 20}
`
		if err := os.WriteFile(hf, []byte(harnessText), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(fctx, "review-context", "run", "--harness", hf, "--temp-dir", tmp, "--work-dir", base)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GITLAB_TOKEN=" + rcToken, "ENGINE_SCRIPT=" + script, "ENGINE_OUT=" + out,
			"OCR_REVIEW_CONTEXT_MODE=off", "CI_API_V4_URL=" + front + "/api/v4", "CI_MERGE_REQUEST_PROJECT_ID=Acme/Platform/widgets",
			"CI_MERGE_REQUEST_IID=7", "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA=" + rcHead}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		want := "<!-- ocr.review-receipt/" // a review's summary carries the receipt
		if script != "clean" {
			want = "❌ **Outcome:** failed"
		}
		if got := notes(); len(got) != 1 || !strings.Contains(got[0], want) {
			return -1, fmt.Sprintf("summary notes %q, want one containing %q\n%s", got, want, stderr.String())
		}
		return code, stdout.String() + stderr.String()
	}
}

// `mcp --relay` takes no other flag (the server's configuration is the run's), and an
// unreachable socket is a failure, not a silent end.
func TestMCPRelayFlags(t *testing.T) {
	code, _, errOut := runCLI(t, nil, "", "mcp", "--relay", "@forgectx-review-none", "--mode", "enriched")
	if code != exitUsage || !strings.Contains(errOut, "--relay") {
		t.Fatalf("exit %d, stderr %q; want 2 naming --relay", code, errOut)
	}
	code, _, errOut = runCLI(t, nil, "", "mcp", "--relay", "@forgectx-review-test-absent-socket")
	if code != exitFailed || !strings.Contains(errOut, "MCP relay") {
		t.Fatalf("exit %d, stderr %q; want 1 naming the relay", code, errOut)
	}
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
