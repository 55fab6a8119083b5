package gitlab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"
	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/httpfake"
	"github.com/forgectx/forgectx/test/snapshottest"
)

// realHead is the head revision of client-go's get_merge_request.json.
const realHead = "8e0b45049b6253b8984cde9241830d2851168142"

// rewriteTransport sends requests addressed to a self-managed instance (any host, port and
// sub-path) to the fake, stripping prefix from the path, and remembers what the client asked.
type rewriteTransport struct {
	target *url.URL
	prefix string
	mu     sync.Mutex
	seen   []string // scheme://host/path as the client sent it
}

func (r *rewriteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req.URL.Scheme+"://"+req.URL.Host+req.URL.EscapedPath())
	r.mu.Unlock()
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host = r.target.Scheme, r.target.Host
	out.URL.Path = strings.TrimPrefix(req.URL.Path, r.prefix)
	out.URL.RawPath = ""
	out.Host = r.target.Host
	return http.DefaultTransport.RoundTrip(out)
}

// realPage is a JSON page with the headers GitLab really sends for offset pagination: X-Page,
// X-Per-Page, X-Total, X-Total-Pages, an empty X-Next-Page on the last page, and a Link
// header whose URLs repeat the route parameters (id, merge_request_iid) as query parameters.
// X-Total is the listing's real row count: the rows of every page's fixture (all names each
// page of the listing; GitLab counts what its pages hold, and the adapter checks it).
func realPage(t testing.TB, rel string, pageNo, pages int, linkBase string, all ...string) httpfake.Reply {
	r := httpfake.JSON(http.StatusOK, fixture(t, rel))
	r.Header.Set("X-Page", itoa(pageNo))
	r.Header.Set("X-Per-Page", "100")
	r.Header.Set("X-Total-Pages", itoa(pages))
	if len(all) == 0 {
		all = []string{rel}
	}
	total := 0
	for _, a := range all {
		var rows []json.RawMessage
		if err := json.Unmarshal(fixture(t, a), &rows); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		total += len(rows)
	}
	r.Header.Set("X-Total", itoa(total))
	r.Header.Set("X-Prev-Page", "")
	r.Header.Set("X-Next-Page", "")
	var links []string
	if pageNo < pages {
		r.Header.Set("X-Next-Page", itoa(pageNo+1))
		links = append(links, "<"+linkBase+"&page="+itoa(pageNo+1)+"&per_page=100>; rel=\"next\"")
	}
	if pageNo > 1 {
		r.Header.Set("X-Prev-Page", itoa(pageNo-1))
		links = append(links, "<"+linkBase+"&page="+itoa(pageNo-1)+"&per_page=100>; rel=\"prev\"")
	}
	links = append(links, "<"+linkBase+"&page=1&per_page=100>; rel=\"first\"", "<"+linkBase+"&page="+itoa(pages)+"&per_page=100>; rel=\"last\"")
	r.Header.Set("Link", strings.Join(links, ", "))
	return r
}

// expectRealScenario registers merge request !14656 of project 278964 built from real GitLab
// response bodies (test/fixtures/gitlab/real/README.md).
func expectRealScenario(t testing.TB, f *httpfake.Server) {
	const p = "/api/v4/projects/278964"
	disc := "https://gitlab.example.com:8443/gitlab/api/v4/projects/278964/merge_requests/14656/discussions?id=278964&merge_request_iid=14656"
	f.Expect("GET", p, httpfake.JSON(200, fixture(t, "real/project.json")))
	f.Expect("GET", p+"/merge_requests/14656", httpfake.JSON(200, fixture(t, "real/merge_request.json")))
	f.Expect("GET", p+"/merge_requests/14656/discussions?per_page=100", realPage(t, "real/discussions_page1.json", 1, 2, disc, "real/discussions_page1.json", "real/discussions_page2.json"))
	f.Expect("GET", p+"/merge_requests/14656/discussions?id=278964&merge_request_iid=14656&page=2&per_page=100", realPage(t, "real/discussions_page2.json", 2, 2, disc, "real/discussions_page1.json", "real/discussions_page2.json"))
	f.Expect("GET", p+"/pipelines?order_by=id&per_page=100&sha="+realHead+"&sort=asc",
		realPage(t, "real/pipelines.json", 1, 1, "https://gitlab.example.com:8443/gitlab/api/v4/projects/278964/pipelines?id=278964&order_by=id&sha="+realHead+"&sort=asc"))
	f.Expect("GET", p+"/pipelines/77056819/jobs?include_retried=true&per_page=100",
		realPage(t, "real/jobs.json", 1, 1, "https://gitlab.example.com:8443/gitlab/api/v4/projects/278964/pipelines/77056819/jobs?id=278964&include_retried=true&pipeline_id=77056819"))
	f.Expect("GET", p+"/jobs/301/trace", httpfake.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: fixture(t, "real/trace_301.txt")})
	for _, id := range []string{"1", "2", "3614858"} {
		f.Expect("GET", "/api/v4/users/"+id, httpfake.JSON(200, fixture(t, "real/user_"+id+".json")))
	}
	for _, id := range []string{"1", "3614858"} {
		f.Expect("GET", p+"/members/all/"+id, httpfake.JSON(200, fixture(t, "real/member_"+id+".json")))
	}
}

// TestGitLabRealResponsesMapEveryRow feeds real GitLab bodies and headers (client-go's testdata
// and GitLab's API documentation examples) through a self-managed instance on a non-default
// port under a sub-path, and checks every mapping row and null/missing field.
func TestGitLabRealResponsesMapEveryRow(t *testing.T) {
	f := httpfake.New(t)
	expectRealScenario(t, f)
	target, _ := url.Parse(f.URL)
	rt := &rewriteTransport{target: target, prefix: "/gitlab"}
	var logs bytes.Buffer
	c, err := New(Options{APIURL: "https://GitLab.Example.com:8443/gitlab/api/v4", Token: testToken,
		HTTPClient: &http.Client{Transport: rt}, Log: zerolog.New(zerolog.SyncWriter(&logs)).Level(zerolog.TraceLevel)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Acquire(context.Background(), forge.Ref{Forge: "gitlab", Repo: "278964", Number: 14656}, profileMR())
	if err != nil {
		t.Fatal(err)
	}
	t.Run("sub-path install on a non-default port: requests under the path, source.host without it", func(t *testing.T) {
		for _, s := range rt.seen {
			if !strings.HasPrefix(strings.ToLower(s), "https://gitlab.example.com:8443/gitlab/api/v4/") {
				t.Errorf("request to %s", s)
			}
		}
		want := acquisition.Source{Forge: "gitlab", Host: "gitlab.example.com:8443", RepositoryID: "278964", Repository: "gitlab-org/gitlab"}
		if a.Source != want {
			t.Errorf("source = %+v", a.Source)
		}
	})
	t.Run("entity from client-go's get_merge_request.json", func(t *testing.T) {
		e := a.Entity
		if e.Kind != "change_proposal" || e.ID != "33092005" || e.Number != 14656 || e.State != "open" ||
			e.Title != "Add deletion support for designs" || str(e.Author.ID) != "3614858" || str(e.Author.Login) != "alexkalderimis" {
			t.Errorf("entity = %+v", e)
		}
		if len(e.Labels) != 9 || e.HeadSHA != realHead || e.CreatedAt != "2019-07-11T22:34:43.5Z" || e.UpdatedAt != "2019-08-20T09:09:56.69Z" {
			t.Errorf("labels/head/times = %d %s %s %s", len(e.Labels), e.HeadSHA, e.CreatedAt, e.UpdatedAt)
		}
		if !strings.Contains(e.Body, "\r\n") {
			t.Error("description CRLF should reach the filter unchanged (it normalises line endings)")
		}
	})
	t.Run("notes: forge order across real Link pages, system note in a DiffNote discussion excluded", func(t *testing.T) {
		var ids []string
		for _, cm := range a.Comments {
			ids = append(ids, cm.ID)
		}
		if got := strings.Join(ids, ","); got != "1126,1129,1127,1128,1132" {
			t.Errorf("comments = %s (1131 is a system note)", got)
		}
		if cm := commentByID(a, "1132"); cm == nil || cm.UpdatedAt != "2018-03-06T08:30:00Z" || str(cm.Author.ID) != "3614858" {
			t.Errorf("comment 1132 = %+v", cm)
		}
	})
	t.Run("threads: discussion ids, resolved_by, null resolved_by, line_range with null types, removed lines", func(t *testing.T) {
		if len(a.Threads) != 3 || threadByID(a, "3c4ba3c3e5c2d0bd1c3b5ba6a3a1b4d3c4f70e21") != nil {
			t.Fatalf("threads = %+v (the individual note is not a thread)", a.Threads)
		}
		th := threadByID(a, "6a9c1750b37d513a43987b574953fceb50b03ce7")
		if th == nil || !th.Resolved || th.ResolvedBy == nil || str(th.ResolvedBy.ID) != "1" || th.Path != "" ||
			strings.Join(th.CommentIDs, ",") != "1126,1129" || len(th.Replies) != 1 || th.Replies[0] != (acquisition.Reply{ID: "1129", ParentID: "1126"}) {
			t.Errorf("resolved thread = %+v", th)
		}
		th = threadByID(a, "87805b7c09016a7058e91bdbe7b29d1f284a39e6")
		if th == nil || th.Resolved || th.ResolvedBy != nil || th.Path != "package.json" || th.Side != "right" ||
			th.Line != 11 || th.StartLine != 10 || th.ReviewedSHA != realHead || strings.Join(th.CommentIDs, ",") != "1128" {
			t.Errorf("multi-line DiffNote thread = %+v", th)
		}
		th = threadByID(a, "a7f1d3b2c6e54f8e9d0c1b2a3f4e5d6c7b8a9012")
		if th == nil || th.Path != "lib/old_name.rb" || th.Side != "left" || th.Line != 42 || th.StartLine != 40 {
			t.Errorf("removed-line DiffNote thread = %+v", th)
		}
		for _, th := range a.Threads {
			if th.Outdated {
				t.Errorf("thread %s outdated: GitLab exposes no outdated observation", th.ID)
			}
		}
	})
	t.Run("reviews: history_unavailable", func(t *testing.T) {
		if len(a.Reviews) != 0 || gapCount(a.Outcomes.Reviews, "history_unavailable") != 1 {
			t.Errorf("reviews %v gaps %v", a.Reviews, a.Outcomes.Reviews)
		}
	})
	t.Run("jobs: every status row and null started_at", func(t *testing.T) {
		yes, no := true, false
		want := map[string]acquisition.Check{
			"301": {Status: "completed", Conclusion: "failure", StartedAt: "2019-08-19T09:51:06.545Z", CompletedAt: "2019-08-19T10:02:11.101Z", NeverStarted: &no},
			"302": {Status: "completed", Conclusion: "success", StartedAt: "2019-08-19T10:03:05Z", CompletedAt: "2019-08-19T10:14:00Z", NeverStarted: &no},
			"303": {Status: "queued"},
			"304": {Status: "completed", Conclusion: "cancelled", CompletedAt: "2019-08-19T09:55:00Z", NeverStarted: &yes},
			"305": {Status: "completed", Conclusion: "skipped", CompletedAt: "2019-08-19T09:50:58.6Z", NeverStarted: &yes},
			"306": {Status: "in_progress", StartedAt: "2019-08-19T09:52:00Z"},
			"307": {Status: "completed", Conclusion: "cancelled", StartedAt: "2019-08-19T09:51:30Z", CompletedAt: "2019-08-19T09:53:00Z", NeverStarted: &no},
			"309": {Status: "queued"},
		}
		if len(a.Checks) != len(want) || gapCount(a.Outcomes.Checks, "invalid_metadata") != 1 {
			t.Errorf("%d checks, gaps %v (308, failed without started_at, is invalid_metadata)", len(a.Checks), a.Outcomes.Checks)
		}
		for _, ck := range a.Checks {
			w, ok := want[ck.ID]
			if !ok {
				t.Errorf("unexpected check %s", ck.ID)
				continue
			}
			if ck.Status != w.Status || ck.Conclusion != w.Conclusion || ck.StartedAt != w.StartedAt || ck.CompletedAt != w.CompletedAt ||
				(ck.NeverStarted == nil) != (w.NeverStarted == nil) || (ck.NeverStarted != nil && *ck.NeverStarted != *w.NeverStarted) || ck.HeadSHA != realHead {
				t.Errorf("check %s = %+v, want %+v", ck.ID, ck, w)
			}
		}
		ck := checkByID(a, "301")
		if ck == nil || ck.Log == nil || ck.Log.Outcome != acquisition.LogFetched || !bytes.Equal(ck.Log.Content, fixture(t, "real/trace_301.txt")) {
			t.Errorf("trace of 301 = %+v", ck)
		}
	})
	t.Run("actors: users bot flag, members/all access level, awaiting membership unverified", func(t *testing.T) {
		if ac := actorByID(a, "2"); ac == nil || ac.Kind != acquisition.ActorBot || ac.Role != nil || ac.RoleVerified {
			t.Errorf("bot = %+v", ac)
		}
		if ac := actorByID(a, "3614858"); ac == nil || ac.Kind != acquisition.ActorHuman || str(ac.Role) != "write" || !ac.RoleVerified {
			t.Errorf("developer = %+v", ac)
		}
		if ac := actorByID(a, "1"); ac == nil || ac.Role != nil || ac.RoleVerified || str(ac.Login) != "john_smith" {
			t.Errorf("awaiting maintainer = %+v (membership_state awaiting holds no role)", ac)
		}
		if len(a.Actors) != 3 || len(a.Outcomes.Actors) != 0 {
			t.Errorf("actors %d, gaps %v", len(a.Actors), a.Outcomes.Actors)
		}
	})
	t.Run("stats: 12 requests, ratio 1, no token in logs", func(t *testing.T) {
		s := c.Stats()
		if s.Requests != 12 || s.LowerBound != 12 || s.Ratio != 1 {
			t.Errorf("stats = %+v", s)
		}
		if s.RequestsByEndpoint["GET projects/:id/merge_requests/:id/discussions"] != 2 || s.RequestsByEndpoint["GET projects/:id/members/all/:id"] != 2 {
			t.Errorf("by endpoint = %v", s.RequestsByEndpoint)
		}
		if strings.Contains(logs.String(), testToken) {
			t.Error("token logged")
		}
	})
	t.Run("assembles, validates against both bundles and verifies", func(t *testing.T) {
		tree := assemble(t, a, profileMR(), "observation")
		snapshottest.Check(t, tree)
		// root's membership awaits approval: its two notes are unverified and omitted; the
		// project bot (id 2) is not in the test bot registry, so its note is omitted too.
		if gapOf(tree, "comments", "authorization_failed") != 3 {
			t.Errorf("gaps %+v", tree.Summary.Gaps)
		}
	})
}

// TestGitLabMalformedLinkHeadersNeverPanic: client-go indexes Link parameters without a
// length check; every malformed Link a server can send ends in a result, never a panic.
func TestGitLabMalformedLinkHeadersNeverPanic(t *testing.T) {
	for _, link := range []string{
		`<http://x/?page=2>; rel`,
		`<http://x/?page=2>;`,
		`<http://x/?page=2>; rel=`,
		`<http://x/?page=2;rel=x>; foo`,
		`<http://x/?a=1,2>; rel="next"`,
		`; rel="next"`,
		`<>; rel="next"`,
		`garbage`,
		`<http://x/?page=2>; rel="next"; rel`,
		strings.Repeat(`<a>;rel,`, 1000),
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", link)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`[]`))
		}))
		c, err := New(Options{APIURL: srv.URL + "/api/v4", RetryMax: -1})
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("Link %q: panic %v", link, p)
				}
			}()
			if err := c.discussions(context.Background(), int64(1), 1, true).err; err != nil && !strings.Contains(err.Error(), "repeats") {
				t.Logf("Link %q: %v", link, err)
			}
		}()
		srv.Close()
	}
	h := http.Header{"Link": {`<https://h/api/v4/x?page=2&per_page=100>; rel="next", <https://h/api/v4/x?page=9>; rel="last"`}}
	sanitizeLink(h)
	if h.Get("Link") != `<https://h/api/v4/x?page=2&per_page=100>; rel="next", <https://h/api/v4/x?page=9>; rel="last"` {
		t.Errorf("well-formed Link rewritten: %q", h.Get("Link"))
	}
}

// TestGitLabRedirectToAnotherOriginIsRefused: PRIVATE-TOKEN and JOB-TOKEN are custom headers
// that net/http copies onto a redirect to another host; forgectx refuses such a redirect, so
// the other host never sees a request, for API calls and for the trace reader alike.
func TestGitLabRedirectToAnotherOriginIsRefused(t *testing.T) {
	var leaked []string
	var mu sync.Mutex
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Header.Get(headerPrivateToken)+r.Header.Get(headerJobToken))
		mu.Unlock()
		w.Write([]byte(`{"id":42,"path_with_namespace":"evil/evil"}`))
	}))
	defer evil.Close()
	// localhost vs 127.0.0.1: another host for net/http, the same machine for the test.
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
	var homeHits atomic.Int32
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		homeHits.Add(1)
		http.Redirect(w, r, evilURL+r.URL.Path, http.StatusFound)
	}))
	defer home.Close()
	for _, kind := range []TokenKind{tokenAccess, tokenJob} {
		// Default retries: a refused redirect is not retried (the test would take 15 s).
		c, err := New(Options{APIURL: home.URL + "/api/v4", Token: testToken, TokenKind: kind})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Acquire(context.Background(), forge.Ref{Repo: "42", Number: 1}, profileMR())
		var ee *EntityError
		if !errors.As(err, &ee) || ee.Code != acquisition.GapFetchFailed || statusOf(err) != http.StatusFound {
			t.Errorf("redirected project read: %v", err)
		}
		if l := c.Trace(context.Background(), 42, 1, 100); l.Outcome != acquisition.LogFetchFailed {
			t.Errorf("redirected trace: %+v", l)
		}
	}
	if n := homeHits.Load(); n != 4 {
		t.Errorf("%d requests for 2 reads and 2 traces: a refused redirect must not be retried", n)
	}
	if len(leaked) != 0 {
		t.Errorf("the other origin received %d requests (%q)", len(leaked), leaked)
	}
	// A same-origin redirect is still followed.
	same := httptest.NewServer(nil)
	same.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v4/users/1" {
			http.Redirect(w, r, "/api/v4/users/2", http.StatusMovedPermanently)
			return
		}
		w.Write([]byte(`{"id":2}`))
	})
	defer same.Close()
	c, _ := New(Options{APIURL: same.URL + "/api/v4", Token: testToken, RetryMax: -1})
	if u, _, err := c.gl.Users.GetUser(1, gl.GetUsersOptions{}); err != nil || u.ID != 2 {
		t.Errorf("same-origin redirect: %v %v", u, err)
	}
}

// TestGitLabResponseBodiesAreCapped: an endless list page fails the source (fetch_failed)
// after the cap instead of growing memory without bound; a body of exactly the cap decodes.
func TestGitLabResponseBodiesAreCapped(t *testing.T) {
	old := responseCap
	responseCap = 1 << 16
	defer func() { responseCap = old }()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/v4/users/1" {
			body := `{"id":1,"username":"` + strings.Repeat("a", int(responseCap)-len(`{"id":1,"username":""}`)) + `"}`
			w.Write([]byte(body))
			return
		}
		w.Write([]byte("["))
		for i := 0; i < 1<<20; i++ {
			if _, err := w.Write([]byte(`{"id":"x","notes":[]},`)); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c, err := New(Options{APIURL: srv.URL + "/api/v4", RetryMax: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.discussions(context.Background(), int64(1), 1, true).err; !errors.Is(err, errResponseTooLarge) {
		t.Errorf("endless page: %v", err)
	}
	if u, _, err := c.gl.Users.GetUser(1, gl.GetUsersOptions{}); err != nil || u.ID != 1 {
		t.Errorf("body of exactly the cap: %v", err)
	}
}

// TestGitLabPageShiftRepeatsAreOneRecord: a discussion or a job listed again on the next page
// (the list shifted while it was read) is drift: the listing is read once more, and every row
// is one record, not a duplicate the assembler would drop, with no gap.
func TestGitLabPageShiftRepeatsAreOneRecord(t *testing.T) {
	f := httpfake.New(t)
	const p = "/api/v4/projects/278964"
	f.Expect("GET", p, httpfake.JSON(200, fixture(t, "real/project.json")))
	f.Expect("GET", p+"/merge_requests/14656", httpfake.JSON(200, fixture(t, "real/merge_request.json")))
	page1 := fixture(t, "real/discussions_page1.json")
	var d1 []json.RawMessage
	if err := json.Unmarshal(page1, &d1); err != nil {
		t.Fatal(err)
	}
	// Page 2 starts with page 1's last discussion again.
	var d2 []json.RawMessage
	if err := json.Unmarshal(fixture(t, "real/discussions_page2.json"), &d2); err != nil {
		t.Fatal(err)
	}
	d2 = append([]json.RawMessage{d1[len(d1)-1]}, d2...)
	b2, _ := json.Marshal(d2)
	r1 := httpfake.JSON(200, page1)
	r1.Header.Set("X-Next-Page", "2")
	// The repeat is drift (the list moved while read): the listing is read once more, and
	// this time the pages are consistent.
	f.Expect("GET", p+"/merge_requests/14656/discussions?per_page=100", r1, r1)
	f.Expect("GET", p+"/merge_requests/14656/discussions?page=2&per_page=100", httpfake.JSON(200, b2), httpfake.JSON(200, fixture(t, "real/discussions_page2.json")))
	f.Expect("GET", p+"/pipelines?order_by=id&per_page=100&sha="+realHead+"&sort=asc", httpfake.JSON(200, fixture(t, "real/pipelines.json")))
	var jobs []json.RawMessage
	if err := json.Unmarshal(fixture(t, "real/jobs.json"), &jobs); err != nil {
		t.Fatal(err)
	}
	j1, _ := json.Marshal(jobs[:5])
	j2, _ := json.Marshal(jobs[4:]) // job 305 twice
	j2ok, _ := json.Marshal(jobs[5:])
	r := httpfake.JSON(200, j1)
	r.Header.Set("X-Next-Page", "2")
	f.Expect("GET", p+"/pipelines/77056819/jobs?include_retried=true&per_page=100", r, r)
	f.Expect("GET", p+"/pipelines/77056819/jobs?include_retried=true&page=2&per_page=100", httpfake.JSON(200, j2), httpfake.JSON(200, j2ok))
	f.Expect("GET", p+"/jobs/301/trace", httpfake.Reply{Status: 200, Body: fixture(t, "real/trace_301.txt")})
	for _, id := range []string{"1", "2", "3614858"} {
		f.Expect("GET", "/api/v4/users/"+id, httpfake.JSON(200, fixture(t, "real/user_"+id+".json")))
	}
	for _, id := range []string{"1", "3614858"} {
		f.Expect("GET", p+"/members/all/"+id, httpfake.JSON(200, fixture(t, "real/member_"+id+".json")))
	}
	a, err := testClient(t, f).Acquire(context.Background(), forge.Ref{Repo: "278964", Number: 14656}, profileMR())
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Comments) != 5 || len(a.Checks) != 8 || gapCount(a.Outcomes.Checks, "invalid_metadata") != 1 {
		t.Errorf("%d comments, %d checks, gaps %v", len(a.Comments), len(a.Checks), a.Outcomes.Checks)
	}
	tree := assemble(t, a, profileMR(), "observation")
	if gapOf(tree, "comments", "invalid_metadata") != 0 || gapOf(tree, "checks", "invalid_metadata") != 1 {
		t.Errorf("gaps %+v", tree.Summary.Gaps)
	}
}

// TestGitLabRealIssueShape: a real single-issue body (milestone, _links, references, epic: null,
// type ISSUE) and issue discussions map to a work item whose author is a verified Developer;
// the system label note is not a comment; the snapshot verifies.
func TestGitLabRealIssueShape(t *testing.T) {
	f := httpfake.New(t)
	const p = "/api/v4/projects/278964"
	f.Expect("GET", p, httpfake.JSON(200, fixture(t, "real/project.json")))
	f.Expect("GET", p+"/issues/14", httpfake.JSON(200, fixture(t, "real/issue.json")))
	f.Expect("GET", p+"/issues/14/discussions?per_page=100", realPage(t, "real/issue_discussions.json", 1, 1,
		"https://gitlab.example.com/api/v4/projects/278964/issues/14/discussions?id=278964&noteable_id=14"))
	for _, id := range []string{"1", "3614858"} {
		f.Expect("GET", "/api/v4/users/"+id, httpfake.JSON(200, fixture(t, "real/user_"+id+".json")))
		f.Expect("GET", p+"/members/all/"+id, httpfake.JSON(200, fixture(t, "real/member_"+id+".json")))
	}
	a, err := testClient(t, f).Acquire(context.Background(), forge.Ref{Repo: "278964", Number: 14}, profileIssue())
	if err != nil {
		t.Fatal(err)
	}
	e := a.Entity
	if e.Kind != "work_item" || e.ID != "84" || e.Number != 14 || e.State != "open" || e.HeadSHA != "" ||
		strings.Join(e.Labels, ",") != "bug,priority::1" || str(e.Author.ID) != "3614858" || e.CreatedAt != "2016-01-04T15:31:51.081Z" {
		t.Errorf("entity = %+v", e)
	}
	if len(a.Comments) != 1 || a.Comments[0].ID != "1226" || len(a.Threads) != 0 {
		t.Errorf("comments %+v threads %+v", a.Comments, a.Threads)
	}
	if ac := actorByID(a, "3614858"); ac == nil || str(ac.Role) != "write" || !ac.RoleVerified {
		t.Errorf("author = %+v", ac)
	}
	tree := assemble(t, a, profileIssue(), "observation")
	snapshottest.Check(t, tree)
}

// TestGitLabMembershipFieldRules: the members/all answer decides a verified role only when it
// is complete and about the asked user: a missing or null access_level, an answer for another
// id, an awaiting membership or a blocked user leave the role null and unverified.
func TestGitLabMembershipFieldRules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		member string
		role   string
		gap    string
	}{
		{"developer", `{"id":3614858,"state":"active","access_level":30,"membership_state":"active"}`, "write", ""},
		{"no membership_state (older GitLab)", `{"id":3614858,"state":"active","access_level":20}`, "triage", ""},
		{"access level 0 is No access", `{"id":3614858,"state":"active","access_level":0}`, "none", ""},
		{"access level missing", `{"id":3614858,"state":"active"}`, "", "invalid_metadata"},
		{"access level null", `{"id":3614858,"state":"active","access_level":null}`, "", "invalid_metadata"},
		{"access level 60 (admin) is outside the table", `{"id":3614858,"state":"active","access_level":60}`, "", "invalid_metadata"},
		{"another account", `{"id":1,"state":"active","access_level":50}`, "", "invalid_metadata"},
		{"awaiting", `{"id":3614858,"state":"active","access_level":50,"membership_state":"awaiting"}`, "", ""},
		{"blocked user", `{"id":3614858,"state":"blocked","access_level":50,"membership_state":"active"}`, "", ""},
		{"access level a string", `{"id":3614858,"state":"active","access_level":"50"}`, "", "fetch_failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := httpfake.New(t)
			f.Expect("GET", "/api/v4/users/3614858", httpfake.JSON(200, fixture(t, "real/user_3614858.json")))
			f.Expect("GET", "/api/v4/projects/278964/members/all/3614858", httpfake.JSON(200, tc.member))
			out := testClient(t, f).actor(context.Background(), int64(278964), "3614858", nil)
			want := tc.role
			if want == "" {
				want = "<nil>"
			}
			if str(out.actor.Role) != want || out.actor.RoleVerified != (tc.role != "") || out.gap != tc.gap {
				t.Errorf("actor %+v role %s gap %q, want role %q gap %q", out.actor, str(out.actor.Role), out.gap, tc.role, tc.gap)
			}
		})
	}
}

// FuzzSanitizeLink: whatever Link header a server sends, what client-go sees parses under
// client-go's own unchecked indexing (every ','-entry has a ';'-part containing '=').
func FuzzSanitizeLink(f *testing.F) {
	f.Add(`<https://h/api/v4/x?page=2&per_page=100>; rel="next", <https://h/api/v4/x?page=9>; rel="last"`)
	f.Add(`<http://x/?page=2>; rel`)
	f.Add(`<a;b>; rel="next"`)
	f.Add(`,,;;==<>`)
	f.Fuzz(func(t *testing.T, link string) {
		h := http.Header{"Link": {link}}
		sanitizeLink(h)
		v := h.Get("Link")
		if v == "" {
			return
		}
		for _, entry := range strings.Split(v, ",") {
			parts := strings.Split(entry, ";")
			if len(parts) < 2 || len(strings.Split(parts[1], "=")) < 2 {
				t.Fatalf("entry %q of %q would panic client-go", entry, v)
			}
		}
	})
}
