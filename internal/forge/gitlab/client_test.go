package gitlab

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/httpfake"
)

func TestGitLabSourceHostNormalisation(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"https://gitlab.com/api/v4", "gitlab.com", ""},
		{"https://GitLab.Example.COM/api/v4", "gitlab.example.com", ""},
		{"https://gitlab.example.com:443/api/v4", "gitlab.example.com", ""},
		{"https://gitlab.example.com:8443/api/v4", "gitlab.example.com:8443", ""},
		{"https://gitlab.example.com/gitlab/api/v4", "gitlab.example.com", ""},
		{"http://127.0.0.1:8080/api/v4", "127.0.0.1:8080", ""},
		{"https://example.com/gitlab/api/v4", "example.com", ""},
		{"https://Example.com:8443/gitlab/api/v4/", "example.com:8443", ""},
		{"https://example.com:443/gitlab/api/v4", "example.com", ""},
		{"https://gitlab.example.com:65535/api/v4", "gitlab.example.com:65535", ""},
		{"https://gitlab.example.com:65536/api/v4", "", "port"},
		{"https://gitläb.example.com/api/v4", "", "host"},
		{"https://git_lab.example.com/api/v4", "", "host"},
		{"https://gitlab.example.com./api/v4", "", "host"},
		{"https://gitlab.example.com:0/api/v4", "", "port"},
		{"https://gitlab.example.com:08443/api/v4", "", "port"},
		{"https://[::1]:8443/api/v4", "", "IPv6"},
		{"ftp://gitlab.example.com/api/v4", "", "scheme"},
		{"https://user:pw@gitlab.example.com/api/v4", "", "credentials"},
		{"https://gitlab.example.com/api/v4?x=1", "", "query"},
	} {
		c, err := New(Options{APIURL: tc.in})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || c.Host() != tc.want {
			t.Errorf("%s: host %v %v, want %s", tc.in, c, err, tc.want)
		}
	}
	c, err := New(Options{APIURL: "https://gitlab.example.com"})
	if err != nil || c.base.String() != "https://gitlab.example.com/api/v4/" {
		t.Errorf("bare host base = %v %v", c, err)
	}
}

func TestGitLabBackoffHonoursRetryAfterAndRateLimitReset(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	b := Backoff(func() time.Time { return now }, 60*time.Second)
	resp := func(code int, h map[string]string) *http.Response {
		r := &http.Response{StatusCode: code, Header: http.Header{}}
		for k, v := range h {
			r.Header.Set(k, v)
		}
		return r
	}
	for _, tc := range []struct {
		name    string
		resp    *http.Response
		attempt int
		want    time.Duration
	}{
		{"429 Retry-After seconds", resp(429, map[string]string{"Retry-After": "7"}), 0, 7 * time.Second},
		{"429 Retry-After HTTP date", resp(429, map[string]string{"Retry-After": now.Add(12 * time.Second).UTC().Format(http.TimeFormat)}), 0, 12 * time.Second},
		{"429 RateLimit-Reset", resp(429, map[string]string{"RateLimit-Reset": "1800000030"}), 0, 30 * time.Second},
		{"Retry-After wins over RateLimit-Reset", resp(429, map[string]string{"Retry-After": "2", "RateLimit-Reset": "1800000030"}), 0, 2 * time.Second},
		{"503 Retry-After", resp(503, map[string]string{"Retry-After": "3"}), 0, 3 * time.Second},
		{"403 with RateLimit-Remaining 0", resp(403, map[string]string{"RateLimit-Remaining": "0", "RateLimit-Reset": "1800000005"}), 0, 5 * time.Second},
		{"server wait is capped", resp(429, map[string]string{"Retry-After": "3600"}), 0, 60 * time.Second},
		{"past reset waits the minimum", resp(429, map[string]string{"RateLimit-Reset": "1700000000"}), 0, 100 * time.Millisecond},
		{"429 without headers backs off exponentially", resp(429, nil), 2, 400 * time.Millisecond},
		{"500 backs off exponentially", resp(500, map[string]string{"Retry-After": "30"}), 1, 200 * time.Millisecond},
		{"exponential is capped", resp(500, nil), 20, 2 * time.Second},
		{"transport error", nil, 0, 100 * time.Millisecond},
		{"garbage Retry-After falls back", resp(429, map[string]string{"Retry-After": "soon"}), 0, 100 * time.Millisecond},
	} {
		if got := b(100*time.Millisecond, 2*time.Second, tc.attempt, tc.resp); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestGitLabClientRetriesThroughClientGo verifies the retry option of client-go as configured
// here: 429 and 5xx are retried with the server-asked wait, 501 and 4xx are not, and retries
// stop after RetryMax.
func TestGitLabClientRetriesThroughClientGo(t *testing.T) {
	project := fixture(t, "common/project.json")
	t.Run("429 with Retry-After waits and succeeds", func(t *testing.T) {
		f := httpfake.New(t)
		f.Expect("GET", pProject, httpfake.TooManyRequests(1), httpfake.JSON(200, project))
		start := time.Now()
		p, _, err := testClient(t, f).gl.Projects.GetProject(42, nil, gl.WithContext(context.Background()))
		if err != nil || p.ID != 42 {
			t.Fatalf("%v %v", p, err)
		}
		if el := time.Since(start); el < 900*time.Millisecond {
			t.Errorf("retried after %v, Retry-After asked for 1s", el)
		}
	})
	t.Run("5xx are retried", func(t *testing.T) {
		f := httpfake.New(t)
		f.Expect("GET", pProject, httpfake.ServerError(), httpfake.BadGateway(), httpfake.JSON(200, project))
		if _, _, err := testClient(t, f).gl.Projects.GetProject(42, nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("retries stop after RetryMax", func(t *testing.T) {
		f := httpfake.New(t)
		f.Expect("GET", pProject, httpfake.ServerError(), httpfake.ServerError(), httpfake.ServerError())
		_, _, err := testClient(t, f, func(o *Options) { o.RetryMax = 2 }).gl.Projects.GetProject(42, nil)
		if statusOf(err) != 500 {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("501 and 404 are not retried", func(t *testing.T) {
		f := httpfake.New(t)
		f.Expect("GET", pProject, httpfake.JSON(501, `{"message":"501"}`))
		f.Expect("GET", "/api/v4/projects/43", notFound())
		c := testClient(t, f)
		if _, _, err := c.gl.Projects.GetProject(42, nil); statusOf(err) != 501 {
			t.Errorf("err = %v", err)
		}
		if _, _, err := c.gl.Projects.GetProject(43, nil); statusOf(err) != 404 {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a hanging server fails at the context deadline", func(t *testing.T) {
		f := httpfake.New(t)
		f.Expect("GET", pProject, httpfake.Timeout())
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := testClient(t, f).Acquire(ctx, forge.Ref{Repo: "42", Number: 7}, profileMR())
		if err == nil {
			t.Fatal("no error")
		}
	})
}

// recordingTransport records request headers and forwards to the fake.
type recordingTransport struct {
	mu      sync.Mutex
	headers []http.Header
	next    http.RoundTripper
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.headers = append(r.headers, req.Header.Clone())
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

// TestGitLabTokenHeadersAndNoTokenInLogs: access tokens go in PRIVATE-TOKEN, job tokens in
// JOB-TOKEN (also for the trace reader), and the value never reaches a log line.
func TestGitLabTokenHeadersAndNoTokenInLogs(t *testing.T) {
	for _, tc := range []struct {
		kind   TokenKind
		header string
	}{{tokenAccess, headerPrivateToken}, {tokenJob, headerJobToken}} {
		f := httpfake.New(t)
		expectMRScenario(t, f)
		rt := &recordingTransport{next: http.DefaultTransport}
		var logs bytes.Buffer
		c := testClient(t, f, func(o *Options) {
			o.TokenKind = tc.kind
			o.HTTPClient = &http.Client{Transport: rt}
			o.Log = zerolog.New(zerolog.SyncWriter(&logs)).Level(zerolog.TraceLevel) // sources log from several goroutines
		})
		acquireMR(t, c)
		if len(rt.headers) != 21 {
			t.Errorf("%d requests", len(rt.headers))
		}
		for _, h := range rt.headers {
			if h.Get(tc.header) != testToken || len(h.Values(headerPrivateToken))+len(h.Values(headerJobToken)) != 1 {
				t.Errorf("auth headers %v", h)
			}
		}
		if strings.Contains(logs.String(), testToken) || logs.Len() == 0 {
			t.Errorf("token in logs or nothing logged: %q", logs.String())
		}
	}
	if kindForToken("CI_JOB_TOKEN", "x") != tokenJob || kindForToken("GITLAB_TOKEN", "glcbt-abc") != tokenJob || kindForToken("GITLAB_TOKEN", "glpat-x") != tokenAccess {
		t.Error("KindForToken")
	}
}

// countingBody counts the bytes the client actually read from the network body.
type countingBody struct {
	io.ReadCloser
	n *int64
}

func (c countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	atomic.AddInt64(c.n, int64(n))
	return n, err
}

// TestGitLabTraceNeverReadsPastMaxSourceBytes streams an endless log without a length and a
// log with a declared oversized length: neither is read beyond max_source_bytes+1 bytes, and
// neither keeps a prefix.
func TestGitLabTraceNeverReadsPastMaxSourceBytes(t *testing.T) {
	const limit = 1000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v4/projects/42/jobs/1/trace": // endless, chunked
			chunk := bytes.Repeat([]byte("x"), 512)
			for i := 0; i < 1<<14; i++ {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/api/v4/projects/42/jobs/2/trace": // declared too large
			w.Header().Set("Content-Length", "5000")
			w.Write(bytes.Repeat([]byte("y"), 5000))
		case "/api/v4/projects/42/jobs/3/trace": // exactly the cap
			w.Write(bytes.Repeat([]byte("z"), limit))
		case "/api/v4/projects/42/jobs/4/trace":
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	var read int64
	tr := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil {
			resp.Body = countingBody{resp.Body, &read}
		}
		return resp, err
	})
	c, err := New(Options{APIURL: srv.URL + "/api/v4", HTTPClient: &http.Client{Transport: tr}, RetryMax: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		job     int64
		outcome string
		maxRead int64
		size    int
	}{
		{1, acquisition.LogSourceTooLarge, limit + 1 + 32*1024, 0}, // +1 byte over the cap, plus at most one transport buffer
		{2, acquisition.LogSourceTooLarge, 32 * 1024, 0},
		{3, acquisition.LogFetched, limit + 32*1024, limit},
		{4, acquisition.LogFetchFailed, 32 * 1024, 0},
	} {
		atomic.StoreInt64(&read, 0)
		l := c.Trace(context.Background(), int64(42), tc.job, limit)
		if l.Outcome != tc.outcome || len(l.Content) != tc.size {
			t.Errorf("job %d: %s %d bytes, want %s %d", tc.job, l.Outcome, len(l.Content), tc.outcome, tc.size)
		}
		if got := atomic.LoadInt64(&read); got > tc.maxRead {
			t.Errorf("job %d: read %d bytes from the body, cap %d", tc.job, got, tc.maxRead)
		}
	}
	// The application-level reader stops at limit+1: the counted bytes for the endless log
	// are what io.LimitReader asked for, not the 8 MiB the server offers.
	atomic.StoreInt64(&read, 0)
	c.Trace(context.Background(), int64(42), 1, limit)
	if got := atomic.LoadInt64(&read); got != limit+1 {
		t.Errorf("endless log: read %d bytes, want exactly %d", got, limit+1)
	}
}

func TestGitLabPaginationFollowsKeysetAndOffset(t *testing.T) {
	t.Run("keyset next link", func(t *testing.T) {
		f := httpfake.New(t)
		r1 := httpfake.JSON(200, `[{"id":1}]`)
		r1.Header.Set("Link", `<`+f.URL+`/api/v4/projects?id_after=1&order_by=id&pagination=keyset&per_page=1&sort=asc>; rel="next"`)
		f.Expect("GET", "/api/v4/projects?order_by=id&pagination=keyset&per_page=1&sort=asc", r1)
		f.Expect("GET", "/api/v4/projects?id_after=1&order_by=id&pagination=keyset&per_page=1&sort=asc", httpfake.JSON(200, `[{"id":2}]`))
		c := testClient(t, f)
		opt := &gl.ListProjectsOptions{ListOptions: gl.ListOptions{PerPage: 1, Pagination: "keyset", OrderBy: "id", Sort: "asc"}}
		ps, err := all(context.Background(), func(o ...gl.RequestOptionFunc) ([]*gl.Project, *gl.Response, error) {
			return c.gl.Projects.ListProjects(opt, o...)
		})
		if err != nil || len(ps) != 2 || ps[1].ID != 2 {
			t.Fatalf("%v %v", ps, err)
		}
	})
	t.Run("offset pages", func(t *testing.T) {
		f := httpfake.New(t)
		f.Expect("GET", "/api/v4/projects/42/pipelines/802/jobs?include_retried=true&per_page=100", page(t, "mr/jobs_802.json", 2))
		f.Expect("GET", "/api/v4/projects/42/pipelines/802/jobs?include_retried=true&page=2&per_page=100", page(t, "mr/jobs_802.json", 3))
		f.Expect("GET", "/api/v4/projects/42/pipelines/802/jobs?include_retried=true&page=3&per_page=100", page(t, "mr/jobs_802.json", 0))
		c := testClient(t, f)
		jobs, err := all(context.Background(), func(o ...gl.RequestOptionFunc) ([]*gl.Job, *gl.Response, error) {
			return c.gl.Jobs.ListPipelineJobs(42, 802, &gl.ListJobsOptions{ListOptions: gl.ListOptions{PerPage: 100}, IncludeRetried: gl.Ptr(true)}, o...)
		})
		if err != nil || len(jobs) != 6 {
			t.Fatalf("%d %v", len(jobs), err)
		}
	})
	t.Run("a next page that repeats is an error", func(t *testing.T) {
		f := httpfake.New(t)
		f.Expect("GET", "/api/v4/projects/42/pipelines/802/jobs?per_page=100", page(t, "mr/jobs_802.json", 2))
		f.Expect("GET", "/api/v4/projects/42/pipelines/802/jobs?page=2&per_page=100", page(t, "mr/jobs_802.json", 2))
		c := testClient(t, f)
		_, err := all(context.Background(), func(o ...gl.RequestOptionFunc) ([]*gl.Job, *gl.Response, error) {
			return c.gl.Jobs.ListPipelineJobs(42, 802, &gl.ListJobsOptions{ListOptions: gl.ListOptions{PerPage: 100}}, o...)
		})
		if err == nil || !strings.Contains(err.Error(), "repeats") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestGitLabOptionalScopeFaultsBecomeGaps injects faults into each optional source: the
// entity still arrives, and the failed scope carries an unusable gap. What was read before
// the fault is kept (keep what can be kept): the gap, not an empty history, says the scope is
// incomplete.
func TestGitLabOptionalScopeFaultsBecomeGaps(t *testing.T) {
	fail := []httpfake.Reply{httpfake.ServerError(), httpfake.ServerError(), httpfake.ServerError()}
	base := func(t *testing.T, f *httpfake.Server) {
		f.Expect("GET", pProject, httpfake.JSON(200, fixture(t, "common/project.json")))
		f.Expect("GET", pMR, httpfake.JSON(200, fixture(t, "mr/merge_request.json")))
	}
	run := func(t *testing.T, f *httpfake.Server, sources ...string) *acquisition.Acquisition {
		p := profileMR()
		p.IncludedSources = append([]string{"entity"}, sources...)
		a, err := testClient(t, f, func(o *Options) { o.RetryMax = 2 }).Acquire(context.Background(), forge.Ref{Repo: "42", Number: 7}, p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	t.Run("discussions page 2 fails: comments fetch_failed, page 1 kept", func(t *testing.T) {
		f := httpfake.New(t)
		base(t, f)
		f.Expect("GET", pMRDiscussions+"?per_page=100", page(t, "mr/discussions_page1.json", 2))
		f.Expect("GET", pMRDiscussions+"?page=2&per_page=100", fail...)
		expectActors(t, f, 101, 102, 105)
		a := run(t, f, "comments")
		if len(a.Comments) != 3 || len(a.Threads) != 1 || gapCount(a.Outcomes.Comments, "fetch_failed") != 1 {
			t.Errorf("comments %d threads %d outcome %+v", len(a.Comments), len(a.Threads), a.Outcomes.Comments)
		}
	})
	t.Run("discussions 403: comments authorization_failed", func(t *testing.T) {
		f := httpfake.New(t)
		base(t, f)
		f.Expect("GET", pMRDiscussions+"?per_page=100", httpfake.JSON(403, `{"message":"403 Forbidden"}`))
		expectActors(t, f, 101)
		a := run(t, f, "comments")
		if gapCount(a.Outcomes.Comments, "authorization_failed") != 1 {
			t.Errorf("outcome %+v", a.Outcomes.Comments)
		}
	})
	t.Run("truncated jobs page: checks fetch_failed, the other pipeline's checks kept", func(t *testing.T) {
		f := httpfake.New(t)
		base(t, f)
		f.Expect("GET", pPipelines, page(t, "mr/pipelines.json", 0))
		f.Expect("GET", pJobs801+"?include_retried=true&per_page=100", httpfake.TruncatedJSON(fixture(t, "mr/jobs_801_page1.json")))
		f.Expect("GET", pJobs802, page(t, "mr/jobs_802.json", 0))
		expectActors(t, f, 101)
		a := run(t, f, "checks")
		// jobs_802 holds 9021 and 9022, one of them invalid_metadata (its own row).
		if len(a.Checks) != 1 || gapCount(a.Outcomes.Checks, "invalid_metadata") != 1 || gapCount(a.Outcomes.Checks, "fetch_failed") != 1 {
			t.Errorf("checks %d outcome %+v", len(a.Checks), a.Outcomes.Checks)
		}
	})
	t.Run("pipelines cut mid-body: checks fetch_failed", func(t *testing.T) {
		f := httpfake.New(t)
		base(t, f)
		f.Expect("GET", pPipelines, httpfake.CutConnection(fixture(t, "mr/pipelines.json"))).Optional()
		f.Expect("GET", pPipelines, httpfake.CutConnection(fixture(t, "mr/pipelines.json")), httpfake.CutConnection(fixture(t, "mr/pipelines.json"))).Optional()
		expectActors(t, f, 101)
		a := run(t, f, "checks")
		if len(a.Checks) != 0 || gapCount(a.Outcomes.Checks, "fetch_failed") != 1 {
			t.Errorf("checks %d outcome %+v", len(a.Checks), a.Outcomes.Checks)
		}
	})
	t.Run("trace fails: the log outcome is fetch_failed, the check stays", func(t *testing.T) {
		f := httpfake.New(t)
		base(t, f)
		f.Expect("GET", pPipelines, httpfake.JSON(200, `[{"id":802,"sha":"`+headSHA+`"}]`))
		f.Expect("GET", pJobs802, httpfake.JSON(200, `[{"id":77,"name":"unit","status":"failed","created_at":"2026-01-01T00:00:00Z","started_at":"2026-01-01T00:00:01Z","finished_at":"2026-01-01T00:00:02Z","commit":{"id":"`+headSHA+`"}}]`))
		f.Expect("GET", "/api/v4/projects/42/jobs/77/trace", fail...)
		expectActors(t, f, 101)
		a := run(t, f, "checks", "check_logs")
		if len(a.Checks) != 1 || a.Checks[0].Log == nil || a.Checks[0].Log.Outcome != "fetch_failed" {
			t.Errorf("checks %+v", a.Checks)
		}
	})
	t.Run("membership lookup fails: role null unverified and actors fetch_failed", func(t *testing.T) {
		f := httpfake.New(t)
		base(t, f)
		f.Expect("GET", "/api/v4/users/101", httpfake.JSON(200, fixture(t, "common/user_101.json")))
		f.Expect("GET", "/api/v4/projects/42/members/all/101", fail...)
		a := run(t, f)
		if len(a.Actors) != 1 || a.Actors[0].Role != nil || a.Actors[0].RoleVerified || gapCount(a.Outcomes.Actors, "fetch_failed") != 1 {
			t.Errorf("actors %+v outcome %+v", a.Actors, a.Outcomes.Actors)
		}
	})
	t.Run("user lookup fails: human, role null, actors fetch_failed, no membership guess", func(t *testing.T) {
		f := httpfake.New(t)
		base(t, f)
		f.Expect("GET", "/api/v4/users/101", fail...)
		a := run(t, f)
		if a.Actors[0].Kind != "human" || a.Actors[0].Role != nil || gapCount(a.Outcomes.Actors, "fetch_failed") != 1 {
			t.Errorf("actors %+v outcome %+v", a.Actors, a.Outcomes.Actors)
		}
	})
	t.Run("unknown access level: role null, actors invalid_metadata", func(t *testing.T) {
		f := httpfake.New(t)
		base(t, f)
		f.Expect("GET", "/api/v4/users/101", httpfake.JSON(200, fixture(t, "common/user_101.json")))
		f.Expect("GET", "/api/v4/projects/42/members/all/101", httpfake.JSON(200, `{"id":101,"username":"alice","state":"active","access_level":35}`))
		a := run(t, f)
		if a.Actors[0].Role != nil || gapCount(a.Outcomes.Actors, "invalid_metadata") != 1 {
			t.Errorf("actors %+v outcome %+v", a.Actors, a.Outcomes.Actors)
		}
	})
	t.Run("blocked member: role null unverified", func(t *testing.T) {
		f := httpfake.New(t)
		base(t, f)
		f.Expect("GET", "/api/v4/users/101", httpfake.JSON(200, fixture(t, "common/user_101.json")))
		f.Expect("GET", "/api/v4/projects/42/members/all/101", httpfake.JSON(200, `{"id":101,"username":"alice","state":"blocked","access_level":50}`))
		a := run(t, f)
		if a.Actors[0].Role != nil || a.Actors[0].RoleVerified || len(a.Outcomes.Actors) != 0 {
			t.Errorf("actors %+v outcome %+v", a.Actors, a.Outcomes.Actors)
		}
	})
	t.Run("bot flag false never makes a bot, whatever the username", func(t *testing.T) {
		f := httpfake.New(t)
		base(t, f)
		f.Expect("GET", "/api/v4/users/101", httpfake.JSON(200, `{"id":101,"username":"project_42_bot_lookalike","bot":false}`))
		f.Expect("GET", "/api/v4/projects/42/members/all/101", httpfake.JSON(200, fixture(t, "common/member_101.json")))
		a := run(t, f)
		if a.Actors[0].Kind != "human" || str(a.Actors[0].Role) != "write" {
			t.Errorf("actors %+v", a.Actors)
		}
	})
	t.Run("merge request without a valid sha: checks invalid_metadata, nothing fetched", func(t *testing.T) {
		f := httpfake.New(t)
		f.Expect("GET", pProject, httpfake.JSON(200, fixture(t, "common/project.json")))
		mr := strings.ReplaceAll(string(fixture(t, "mr/merge_request.json")), headSHA, "not-a-sha")
		f.Expect("GET", pMR, httpfake.JSON(200, mr))
		expectActors(t, f, 101)
		a := run(t, f, "checks")
		if len(a.Checks) != 0 || gapCount(a.Outcomes.Checks, "invalid_metadata") != 1 {
			t.Errorf("outcome %+v", a.Outcomes.Checks)
		}
	})
}

// FuzzServerWait: arbitrary Retry-After / RateLimit-Reset values never panic and never yield
// a negative wait or one past the cap.
func FuzzServerWait(f *testing.F) {
	f.Add("7", "")
	f.Add("Wed, 21 Oct 2026 07:28:00 GMT", "")
	f.Add("", "1800000030")
	f.Add("-1", "99999999999999999999")
	now := time.Unix(1_800_000_000, 0)
	b := Backoff(func() time.Time { return now }, time.Minute)
	f.Fuzz(func(t *testing.T, retryAfter, reset string) {
		r := &http.Response{StatusCode: 429, Header: http.Header{}}
		r.Header.Set("Retry-After", retryAfter)
		r.Header.Set("RateLimit-Reset", reset)
		if d := b(10*time.Millisecond, time.Second, 1, r); d < 0 || d > time.Minute {
			t.Fatalf("wait %v", d)
		}
	})
}
