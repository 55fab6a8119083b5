package gitlab

import (
	"bytes"
	"context"
	"flag"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/httpfake"
)

var update = flag.Bool("update", false, "rewrite golden files and the recorded cassettes under test/fixtures/gitlab")

// headSHA is the merge request's sha in the fixtures.
const headSHA = "8e0b45049b6253b8984cde9241830d2851168142"

// testToken is a fake credential; tests assert it never reaches logs.
const testToken = "glpat-TESTTOKENnotreal0000"

func fixtureDir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "test", "fixtures", "gitlab")
}

func fixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// page is a JSON reply with GitLab's offset pagination headers.
func page(t testing.TB, rel string, next int) httpfake.Reply {
	r := httpfake.JSON(http.StatusOK, fixture(t, rel))
	if next > 0 {
		r.Header.Set("X-Next-Page", itoa(next))
	}
	return r
}

func itoa(n int) string { return strconv.Itoa(n) }

func text(t testing.TB, rel string) httpfake.Reply {
	b := fixture(t, rel)
	return httpfake.Reply{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/plain"}}, Body: b}
}

func notFound() httpfake.Reply {
	return httpfake.JSON(http.StatusNotFound, `{"message":"404 Not found"}`)
}

// profileMR selects every v1 source for a change proposal, logs of failed checks, and a
// 4096-byte pre-decode cap (trace_9009 is larger).
func profileMR() acquisition.Profile {
	return acquisition.Profile{
		EntityKind:        acquisition.KindChangeProposal,
		IncludedSources:   []string{"agent_runs", "check_logs", "checks", "comments", "entity", "reviews"},
		RecordSelection:   "newest",
		CheckLogSelection: "failed",
		Bounds: acquisition.Bounds{MaxRecordsPerSource: 100, MaxSourceBytes: 4096, MaxRecordBytes: 8192,
			MaxLogBytes: 4096, MaxMetadataStringBytes: 256, MaxLabels: 20},
	}
}

func profileIssue() acquisition.Profile {
	p := profileMR()
	p.EntityKind = acquisition.KindWorkItem
	p.IncludedSources = []string{"comments", "entity"}
	p.CheckLogSelection = "none"
	return p
}

// Expected request paths of the fixtures (project 42, MR !7, issue iid 3).
const (
	pProjectByPath = "/api/v4/projects/Acme%2FPlatform%2Fwidgets"
	pProject       = "/api/v4/projects/42"
	pMR            = "/api/v4/projects/42/merge_requests/7"
	pMRDiscussions = "/api/v4/projects/42/merge_requests/7/discussions"
	pPipelines     = "/api/v4/projects/42/pipelines?order_by=id&per_page=100&sha=" + headSHA + "&sort=asc"
	pJobs801       = "/api/v4/projects/42/pipelines/801/jobs"
	pJobs802       = "/api/v4/projects/42/pipelines/802/jobs?include_retried=true&per_page=100"
	pIssue         = "/api/v4/projects/42/issues/3"
)

// expectActors registers the users/members lookups for the given actor ids: 103 is not a
// member (404), 104 is a bot (no membership lookup), the others are members.
func expectActors(t testing.TB, f *httpfake.Server, ids ...int) {
	for _, id := range ids {
		f.Expect("GET", "/api/v4/users/"+itoa(id), httpfake.JSON(200, fixture(t, "common/user_"+itoa(id)+".json")))
		switch id {
		case 104:
		case 103:
			f.Expect("GET", "/api/v4/projects/42/members/all/103", notFound())
		default:
			f.Expect("GET", "/api/v4/projects/42/members/all/"+itoa(id), httpfake.JSON(200, fixture(t, "common/member_"+itoa(id)+".json")))
		}
	}
}

// expectMRScenario registers every request of the merge-request scenario (addressed by path).
func expectMRScenario(t testing.TB, f *httpfake.Server) {
	f.Expect("GET", pProjectByPath, httpfake.JSON(200, fixture(t, "common/project.json")))
	f.Expect("GET", pMR, httpfake.JSON(200, fixture(t, "mr/merge_request.json")))
	f.Expect("GET", pMRDiscussions+"?per_page=100", page(t, "mr/discussions_page1.json", 2))
	f.Expect("GET", pMRDiscussions+"?page=2&per_page=100", page(t, "mr/discussions_page2.json", 0))
	f.Expect("GET", pPipelines, page(t, "mr/pipelines.json", 0))
	f.Expect("GET", pJobs801+"?include_retried=true&per_page=100", page(t, "mr/jobs_801_page1.json", 2))
	f.Expect("GET", pJobs801+"?include_retried=true&page=2&per_page=100", page(t, "mr/jobs_801_page2.json", 0))
	f.Expect("GET", pJobs802, page(t, "mr/jobs_802.json", 0))
	f.Expect("GET", "/api/v4/projects/42/jobs/9002/trace", text(t, "mr/trace_9002.txt"))
	f.Expect("GET", "/api/v4/projects/42/jobs/9009/trace", text(t, "mr/trace_9009.txt"))
	expectActors(t, f, 101, 102, 103, 104, 105, 106)
}

func expectIssueScenario(t testing.TB, f *httpfake.Server) {
	f.Expect("GET", pProject, httpfake.JSON(200, fixture(t, "common/project.json")))
	f.Expect("GET", pIssue, httpfake.JSON(200, fixture(t, "issue/issue.json")))
	f.Expect("GET", "/api/v4/projects/42/issues/3/discussions?per_page=100", page(t, "issue/discussions.json", 0))
	expectActors(t, f, 101, 102, 106)
}

// testClient is a client against the fake with fast retries.
func testClient(t testing.TB, f *httpfake.Server, mod ...func(*Options)) *Client {
	t.Helper()
	o := Options{APIURL: f.URL + "/api/v4", Token: testToken, RetryWaitMin: time.Millisecond,
		RetryWaitMax: 5 * time.Millisecond, MaxServerWait: 3 * time.Second, Log: zerolog.Nop()}
	for _, m := range mod {
		m(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func acquireMR(t testing.TB, c *Client) *acquisition.Acquisition {
	t.Helper()
	a, err := c.Acquire(context.Background(), forge.Ref{Forge: "gitlab", Repo: "Acme/Platform/widgets", Number: 7}, profileMR())
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	return a
}

func encode(t testing.TB, a *acquisition.Acquisition) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := acquisition.Write(&b, a); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// golden compares got with the golden file (rewritten under -update).
func golden(t *testing.T, rel string, got []byte) {
	t.Helper()
	path := filepath.Join(fixtureDir(t), rel)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n%s", rel, got)
	}
}

// removeAll clears a cassette directory before re-recording it.
func removeAll(dir string) error { return os.RemoveAll(dir) }

// redirectTo is a transport that sends every request to the fake server, whatever its host.
func redirectTo(base string) http.RoundTripper {
	u, err := url.Parse(base)
	if err != nil {
		panic(err)
	}
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r2 := r.Clone(r.Context())
		r2.URL.Scheme, r2.URL.Host, r2.Host = u.Scheme, u.Host, u.Host
		return http.DefaultTransport.RoundTrip(r2)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
