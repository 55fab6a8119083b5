package forgejo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/httpfake"
)

// replyOf turns a scenario exchange into an httpfake reply.
func replyOf(t *testing.T, e exchange) httpfake.Reply {
	t.Helper()
	r := httpfake.JSON(e.status, e.body)
	for k, v := range e.header {
		r.Header[k] = v
	}
	return r
}

func target(e exchange) string {
	p := "/api/v1" + e.path
	if len(e.query) > 0 {
		p += "?" + e.query.Encode()
	}
	return p
}

// fakeWith registers a scenario's exchanges on a fresh fake, replacing the replies of the
// requests named in override (by path below /api/v1, query included) and dropping those in
// drop (requests the fault makes unnecessary).
func fakeWith(t *testing.T, s scenarioDef, override map[string][]httpfake.Reply, drop ...string) *httpfake.Server {
	t.Helper()
	fake := httpfake.New(t)
	dropped := map[string]bool{}
	for _, d := range drop {
		dropped[d] = true
	}
	used := map[string]bool{}
	for _, e := range s.exchanges {
		key := target(e)[len("/api/v1"):]
		if dropped[key] {
			continue
		}
		if rs, ok := override[key]; ok {
			fake.Expect(e.method, target(e), rs...)
			used[key] = true
			continue
		}
		fake.Expect(e.method, target(e), replyOf(t, e))
	}
	for k := range override {
		if !used[k] {
			t.Fatalf("override %s matches no scenario request", k)
		}
	}
	return fake
}

func fakeClient(t *testing.T, fake *httpfake.Server, pageSize int) *Client {
	t.Helper()
	cl, err := New(Options{APIURL: fake.URL + "/api/v1", Token: "secret-token", PageSize: pageSize,
		RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func acquire(t *testing.T, cl *Client, s scenarioDef) (*acquisition.Acquisition, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return cl.Acquire(ctx, s.ref, s.profile)
}

func gapCount(gs []acquisition.Gap, code string) int {
	for _, g := range gs {
		if g.Code == code {
			return g.Count
		}
	}
	return 0
}

const commentsPath = "/repos/Acme/Widgets/issues/7/comments?limit=50&page=1"

func issueComments(n int) []any {
	var out []any
	for i := 1; i <= n; i++ {
		out = append(out, comment(int64(9000+i), bob, fmt.Sprintf("comment %d", i), fmt.Sprintf("2026-09-08T11:%02d:00Z", i), fmt.Sprintf("2026-09-08T11:%02d:00Z", i)))
	}
	return out
}

// withHeader sets response headers on a reply.
func withHeader(r httpfake.Reply, kv ...string) httpfake.Reply {
	for i := 0; i+1 < len(kv); i += 2 {
		r.Header.Set(kv[i], kv[i+1])
	}
	return r
}

// onlyPermission is the issue scenario trimmed to bob's permission lookup (all paged comments
// below are bob's).
func pagedIssueScenario() scenarioDef {
	s := issueScenario()
	var ex []exchange
	for _, e := range s.exchanges {
		switch e.path {
		case "/repos/Acme/Widgets", "/repos/Acme/Widgets/issues/7",
			"/repos/Acme/Widgets/collaborators/alice/permission", "/repos/Acme/Widgets/collaborators/bob/permission":
			ex = append(ex, e)
		}
	}
	s.exchanges = ex
	return s
}

// TestPaginationReadsEveryPageByTotalCount: X-Total-Count drives the page loop, including when
// the server returns fewer items than `limit` (Forgejo clamps limit to MAX_RESPONSE_ITEMS).
func TestPaginationReadsEveryPageByTotalCount(t *testing.T) {
	s := pagedIssueScenario()
	all := issueComments(5)
	fake := fakeWith(t, s, nil)
	// limit=3, but the server clamps to 2 per page: a short page is not the last page.
	for p, items := range [][]any{all[0:2], all[2:4], all[4:5]} {
		fake.Expect("GET", "/api/v1/repos/Acme/Widgets/issues/7/comments?limit=3&page="+strconv.Itoa(p+1),
			withHeader(httpfake.JSON(200, items), "X-Total-Count", "5"))
	}
	a, err := acquire(t, fakeClient(t, fake, 3), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Comments) != 5 || len(a.Outcomes.Comments) != 0 {
		t.Fatalf("comments = %d, gaps %+v; want 5, none", len(a.Comments), a.Outcomes.Comments)
	}
}

// TestPaginationFollowsLinkWithoutTotalCount: without X-Total-Count the Link rel="next" header
// decides, and a page without it is the last.
func TestPaginationFollowsLinkWithoutTotalCount(t *testing.T) {
	s := pagedIssueScenario()
	all := issueComments(4)
	fake := fakeWith(t, s, nil)
	next := func(n int) string {
		return fmt.Sprintf(`<%s/api/v1/repos/Acme/Widgets/issues/7/comments?limit=2&page=%d>; rel="next", <x?page=2>; rel="last"`, fake.URL, n)
	}
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets/issues/7/comments?limit=2&page=1", withHeader(httpfake.JSON(200, all[0:2]), "Link", next(2)))
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets/issues/7/comments?limit=2&page=2", httpfake.JSON(200, all[2:4]))
	a, err := acquire(t, fakeClient(t, fake, 2), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Comments) != 4 {
		t.Fatalf("comments = %d, want 4", len(a.Comments))
	}
}

// TestEmptyPageShortOfTotalIsAGap: an empty page is not the last while X-Total-Count is
// unreached, and the search is bounded (never loops).
func TestEmptyPageShortOfTotalIsAGap(t *testing.T) {
	// Gitea counts rows it hides from the token (other users' pending reviews) in
	// X-Total-Count: an empty page is not the end while the total is unreached. The listing
	// goes on until the pages read cover the total at the largest page seen (5 pages of 2 for
	// 9), keeps the rows found past the empty page, and then ends in a fetch_failed gap
	// counting the 6 declared rows it did not find. The 3 comments read are kept (their
	// author's permission is looked up).
	s := pagedIssueScenario()
	all := issueComments(3)
	fake := fakeWith(t, s, nil)
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets/issues/7/comments?limit=2&page=1", withHeader(httpfake.JSON(200, all[0:2]), "X-Total-Count", "9"))
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets/issues/7/comments?limit=2&page=2", withHeader(httpfake.JSON(200, []any{}), "X-Total-Count", "9"))
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets/issues/7/comments?limit=2&page=3", withHeader(httpfake.JSON(200, all[2:3]), "X-Total-Count", "9"))
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets/issues/7/comments?limit=2&page=4", withHeader(httpfake.JSON(200, []any{}), "X-Total-Count", "9"))
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets/issues/7/comments?limit=2&page=5", withHeader(httpfake.JSON(200, []any{}), "X-Total-Count", "9"))
	a, err := acquire(t, fakeClient(t, fake, 2), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Comments) != 3 || gapCount(a.Outcomes.Comments, acquisition.GapFetchFailed) != 6 {
		t.Fatalf("comments = %d, gaps %+v: an empty page short of X-Total-Count ended the list silently", len(a.Comments), a.Outcomes.Comments)
	}
}

// TestPageBoundaryShiftDoesNotDuplicate: a comment served on two pages is drift (the list
// moved while read): the list is read once more and every comment is one record.
func TestPageBoundaryShiftDoesNotDuplicate(t *testing.T) {
	s := pagedIssueScenario()
	all := issueComments(3)
	fake := fakeWith(t, s, nil)
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets/issues/7/comments?limit=2&page=1",
		withHeader(httpfake.JSON(200, all[0:2]), "X-Total-Count", "4"), withHeader(httpfake.JSON(200, all[0:2]), "X-Total-Count", "3"))
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets/issues/7/comments?limit=2&page=2",
		withHeader(httpfake.JSON(200, all[1:3]), "X-Total-Count", "4"), withHeader(httpfake.JSON(200, all[2:3]), "X-Total-Count", "3"))
	a, err := acquire(t, fakeClient(t, fake, 2), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Comments) != 3 || len(a.Outcomes.Comments) != 0 {
		t.Fatalf("comments = %d, gaps %+v; want 3 unique, no gap", len(a.Comments), a.Outcomes.Comments)
	}
}

// TestRetriesRecoverTransientFailures: 502, 500 and 429 are retried and the source is complete.
func TestRetriesRecoverTransientFailures(t *testing.T) {
	s := issueScenario()
	var good exchange
	for _, e := range s.exchanges {
		if e.path == "/repos/Acme/Widgets/issues/7/comments" {
			good = e
		}
	}
	fake := fakeWith(t, s, map[string][]httpfake.Reply{
		commentsPath: {httpfake.BadGateway(), httpfake.ServerError(), httpfake.TooManyRequests(0), replyOf(t, good)},
	})
	cl := fakeClient(t, fake, 0)
	a, err := acquire(t, cl, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Comments) != 7 || len(a.AgentRuns) != 2 || len(a.Outcomes.Comments) != 0 {
		t.Fatalf("comments = %d, gaps %+v", len(a.Comments), a.Outcomes.Comments)
	}
	if st := cl.Stats(); st.Retries != 3 || st.Requests != 10 || st.LowerBound != 7 {
		t.Errorf("stats = %+v, want 3 retries, 10 requests against a lower bound of 7 (ratio 1.43)", st)
	}
}

// TestOptionalScopeFailuresAreGaps: each optional scope's failure is its own typed gap and
// never aborts the acquisition or empties another scope.
func TestOptionalScopeFailuresAreGaps(t *testing.T) {
	const (
		reviews  = "/repos/Acme/Widgets/pulls/12/reviews?limit=50&page=1"
		tasks    = "/repos/Acme/Widgets/actions/tasks?limit=50&page=1"
		comments = "/repos/Acme/Widgets/issues/12/comments?limit=50&page=1"
		rc302    = "/repos/Acme/Widgets/pulls/12/reviews/302/comments"
		// An incomplete tasks list is the checks gap already; the statuses are not read.
		statuses = "/repos/Acme/Widgets/commits/" + headSHA + "/status?limit=50&page=1"
	)
	reviewComments := []string{
		"/repos/Acme/Widgets/pulls/12/reviews/301/comments", rc302,
		"/repos/Acme/Widgets/pulls/12/reviews/303/comments", "/repos/Acme/Widgets/pulls/12/reviews/304/comments",
		"/repos/Acme/Widgets/pulls/12/reviews/307/comments",
	}
	persistent500 := []httpfake.Reply{httpfake.ServerError(), httpfake.ServerError(), httpfake.ServerError(), httpfake.ServerError()}
	for _, tc := range []struct {
		name     string
		override map[string][]httpfake.Reply
		drop     []string
		scope    func(acquisition.Outcomes) []acquisition.Gap
		code     string
		check    func(t *testing.T, a *acquisition.Acquisition)
	}{
		{
			name:     "reviews 500 after retries is fetch_failed",
			override: map[string][]httpfake.Reply{reviews: persistent500},
			drop: append(reviewComments, "/repos/Acme/Widgets/collaborators/alice/permission",
				"/repos/Acme/Widgets/collaborators/erin/permission", "/repos/Acme/Widgets/collaborators/dave/permission"),
			scope: func(o acquisition.Outcomes) []acquisition.Gap { return o.Reviews },
			code:  "fetch_failed",
			check: func(t *testing.T, a *acquisition.Acquisition) {
				if len(a.Reviews) != 0 || len(a.Threads) != 0 || len(a.Checks) != 12 || len(a.Comments) != 1 {
					t.Errorf("reviews %d threads %d checks %d comments %d", len(a.Reviews), len(a.Threads), len(a.Checks), len(a.Comments))
				}
			},
		},
		{
			name:     "review comments 500 is fetch_failed for reviews and comments",
			override: map[string][]httpfake.Reply{rc302: persistent500},
			drop:     []string{"/repos/Acme/Widgets/collaborators/dave/permission"},
			scope:    func(o acquisition.Outcomes) []acquisition.Gap { return append(o.Reviews, o.Comments...) },
			code:     "fetch_failed",
			check: func(t *testing.T, a *acquisition.Acquisition) {
				if len(a.Threads) != 1 || gapCount(a.Outcomes.Comments, "fetch_failed") != 1 {
					t.Errorf("threads %d, comment gaps %+v", len(a.Threads), a.Outcomes.Comments)
				}
			},
		},
		{
			name:     "tasks 403 is authorization_failed",
			override: map[string][]httpfake.Reply{tasks: {httpfake.JSON(403, `{"message":"token does not have at least one of required scope(s): [read:repository]"}`)}},
			drop:     []string{statuses},
			scope:    func(o acquisition.Outcomes) []acquisition.Gap { return o.Checks },
			code:     "authorization_failed",
		},
		{
			name:     "tasks 404 is unsupported",
			override: map[string][]httpfake.Reply{tasks: {httpfake.JSON(404, `{"message":"Not Found"}`)}},
			drop:     []string{statuses},
			scope:    func(o acquisition.Outcomes) []acquisition.Gap { return o.Checks },
			code:     "unsupported",
		},
		{
			name:     "truncated JSON is fetch_failed",
			override: map[string][]httpfake.Reply{comments: {httpfake.TruncatedJSON([]byte(`[{"id":9101,"body":"x","created_at":"2026-09-08T14:30:00Z"}]`))}},
			drop:     []string{"/repos/Acme/Widgets/collaborators/carol/permission"},
			scope:    func(o acquisition.Outcomes) []acquisition.Gap { return o.Comments },
			code:     "fetch_failed",
			check: func(t *testing.T, a *acquisition.Acquisition) {
				for _, c := range a.Comments {
					if c.ID == "9101" {
						t.Error("comment from a truncated page was kept")
					}
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := pullScenario()
			fake := fakeWith(t, s, tc.override, tc.drop...)
			a, err := acquire(t, fakeClient(t, fake, 0), s)
			if err != nil {
				t.Fatalf("optional-scope failure aborted: %v", err)
			}
			if n := gapCount(tc.scope(a.Outcomes), tc.code); n < 1 {
				t.Errorf("gaps %+v, want %s", a.Outcomes, tc.code)
			}
			if tc.check != nil {
				tc.check(t, a)
			}
		})
	}
}

// TestEntityFailuresAbort: the repository or entity cannot be read → a typed EntityError.
func TestEntityFailuresAbort(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		reply      httpfake.Reply
		code       string
	}{
		{"pull 404", "/api/v1/repos/Acme/Widgets/pulls/12", httpfake.JSON(404, `{"message":"The target couldn't be found."}`), "fetch_failed"},
		{"repository 401", "/api/v1/repos/Acme/Widgets", httpfake.JSON(401, `{"message":"token is required"}`), "authorization_failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := httpfake.New(t)
			if tc.path != "/api/v1/repos/Acme/Widgets" {
				fake.Expect("GET", "/api/v1/repos/Acme/Widgets", httpfake.JSON(200, repository))
			}
			fake.Expect("GET", tc.path, tc.reply)
			_, err := acquire(t, fakeClient(t, fake, 0), pullScenario())
			var ee *EntityError
			if !errors.As(err, &ee) || ee.Code != tc.code {
				t.Fatalf("err = %v, want EntityError %s", err, tc.code)
			}
		})
	}
}

func TestEntityTimeoutAbortsWithinDeadline(t *testing.T) {
	fake := httpfake.New(t)
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets", httpfake.Timeout())
	cl := fakeClient(t, fake, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := cl.Acquire(ctx, pullScenario().ref, pullScenario().profile)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}

// TestEntityMappingRows: merged: true with state closed is merged; an issue number that is a
// pull request under a work_item profile aborts; an unknown state aborts; a malformed head
// SHA aborts.
func TestEntityMappingRows(t *testing.T) {
	pr := func(mut func(m map[string]any)) map[string]any {
		var m map[string]any
		b, _ := json.Marshal(pullScenario().exchanges[1].body)
		_ = json.Unmarshal(b, &m)
		mut(m)
		return m
	}
	cases := []struct {
		name  string
		body  any
		path  string
		kind  string
		state string
		code  string
	}{
		{"merged and closed is merged", pr(func(m map[string]any) { m["state"] = "closed"; m["merged"] = true }), "pulls/12", "change_proposal", "merged", ""},
		{"closed not merged is closed", pr(func(m map[string]any) { m["state"] = "closed" }), "pulls/12", "change_proposal", "closed", ""},
		{"unknown state aborts", pr(func(m map[string]any) { m["state"] = "draft" }), "pulls/12", "change_proposal", "", "invalid_metadata"},
		{"malformed head sha aborts", pr(func(m map[string]any) { m["head"].(map[string]any)["sha"] = "main" }), "pulls/12", "change_proposal", "", "invalid_metadata"},
		{"issue that is a pull request", map[string]any{"id": 5012, "number": 12, "state": "open", "title": "t", "created_at": "2026-09-08T14:00:00Z",
			"pull_request": map[string]any{"merged": false, "merged_at": nil}}, "issues/12", "work_item", "", "invalid_metadata"},
		{"an answer for another pull request aborts", pr(func(m map[string]any) { m["number"] = 13 }), "pulls/12", "change_proposal", "", "invalid_metadata"},
		{"an answer for another issue aborts", map[string]any{"id": 5012, "number": 7, "state": "open", "title": "t", "created_at": "2026-09-08T14:00:00Z", "pull_request": nil}, "issues/12", "work_item", "", "invalid_metadata"},
		{"closed issue", map[string]any{"id": 5012, "number": 12, "state": "closed", "title": "t", "created_at": "2026-09-08T14:00:00Z", "pull_request": nil}, "issues/12", "work_item", "closed", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := httpfake.New(t)
			fake.Expect("GET", "/api/v1/repos/Acme/Widgets", httpfake.JSON(200, repository))
			fake.Expect("GET", "/api/v1/repos/Acme/Widgets/"+tc.path, httpfake.JSON(200, tc.body))
			if tc.code == "" {
				perm := "/api/v1/repos/Acme/Widgets/collaborators/bob/permission"
				fake.Expect("GET", perm, httpfake.JSON(200, map[string]any{"permission": "write", "user": bob})).Optional()
			}
			s := pullScenario()
			s.profile = acquisition.Profile{EntityKind: tc.kind, IncludedSources: []string{"entity"}}
			a, err := acquire(t, fakeClient(t, fake, 0), s)
			if tc.code != "" {
				var ee *EntityError
				if !errors.As(err, &ee) || ee.Code != tc.code {
					t.Fatalf("err = %v, want EntityError %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Entity.State != tc.state || a.Entity.Kind != tc.kind {
				t.Errorf("entity = %s %s, want %s %s", a.Entity.Kind, a.Entity.State, tc.kind, tc.state)
			}
		})
	}
}

// TestPermissionFailures: a 5xx is an actors fetch_failed gap, a 403 authorization_failed, a
// user-id mismatch (a login reused after a rename) or an unknown access mode invalid_metadata;
// each leaves the role null and unverified.
func TestPermissionFailures(t *testing.T) {
	const bobPerm = "/repos/Acme/Widgets/collaborators/bob/permission"
	persistent := []httpfake.Reply{httpfake.ServerError(), httpfake.ServerError(), httpfake.ServerError(), httpfake.ServerError()}
	for _, tc := range []struct {
		name  string
		reply []httpfake.Reply
		code  string
	}{
		{"500", persistent, "fetch_failed"},
		{"403", []httpfake.Reply{httpfake.JSON(403, `{"message":"forbidden"}`)}, "authorization_failed"},
		{"other account", []httpfake.Reply{httpfake.JSON(200, map[string]any{"permission": "admin", "user": user(999, "bob")})}, "invalid_metadata"},
		{"no user", []httpfake.Reply{httpfake.JSON(200, map[string]any{"permission": "admin"})}, "invalid_metadata"},
		{"unknown mode", []httpfake.Reply{httpfake.JSON(200, map[string]any{"permission": "maintain", "user": bob})}, "invalid_metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := issueScenario()
			fake := fakeWith(t, s, map[string][]httpfake.Reply{bobPerm: tc.reply})
			a, err := acquire(t, fakeClient(t, fake, 0), s)
			if err != nil {
				t.Fatal(err)
			}
			if gapCount(a.Outcomes.Actors, tc.code) != 1 {
				t.Errorf("actors gaps = %+v, want %s", a.Outcomes.Actors, tc.code)
			}
			for _, ac := range a.Actors {
				if ac.ID == "102" && (ac.Role != nil || ac.RoleVerified) {
					t.Errorf("bob = %+v, want role null unverified", ac)
				}
			}
		})
	}
}

// TestInvalidRecordsAreGapsNotRecords: a review with an unknown state or no timestamp, a task
// with a malformed head_sha or an unknown status, a comment without an id are counted as
// invalid_metadata in their scope and not emitted.
func TestInvalidRecordsAreGapsNotRecords(t *testing.T) {
	s := pullScenario()
	badReviews := []any{
		review(401, bob, "APPROVED", "ok", headSHA, "2026-09-09T10:00:00Z", false, 0),
		review(402, bob, "SHRUG", "?", headSHA, "2026-09-09T10:00:00Z", false, 0),
		review(403, bob, "COMMENT", "no time", headSHA, "", false, 0),
	}
	tasks := []any{
		taskRow(601, "ok", headSHA, "success", "2026-09-10T08:00:00Z", "2026-09-10T08:01:00Z", "2026-09-10T08:00:05Z"),
		taskRow(602, "bad sha", "HEAD", "success", "2026-09-10T08:00:00Z", "2026-09-10T08:01:00Z", "2026-09-10T08:00:05Z"),
		taskRow(603, "bad status", headSHA, "unknown", "2026-09-10T08:00:00Z", "2026-09-10T08:01:00Z", "2026-09-10T08:00:05Z"),
		taskRow(604, "failure never started", headSHA, "failure", "2026-09-10T08:00:00Z", "2026-09-10T08:01:00Z", "1970-01-01T00:00:00Z"),
	}
	comments := []any{comment(0, erin, "no id", "2026-09-08T14:30:00Z", "2026-09-08T14:30:00Z"), comment(9101, erin, "fine", "2026-09-08T14:30:00Z", "2026-09-08T14:30:00Z")}
	var ex []exchange
	for _, e := range s.exchanges {
		switch {
		case e.path == "/repos/Acme/Widgets/pulls/12/reviews":
			ex = append(ex, listed(e.path, e.query, 3, badReviews))
			ex = append(ex, ok("GET", "/repos/Acme/Widgets/pulls/12/reviews/401/comments", nil, []any{}))
		case e.path == "/repos/Acme/Widgets/actions/tasks":
			ex = append(ex, listed(e.path, e.query, 4, map[string]any{"total_count": 4, "workflow_runs": tasks}))
		case e.path == "/repos/Acme/Widgets/issues/12/comments":
			ex = append(ex, listed(e.path, e.query, 2, comments))
		case e.path == "/repos/Acme/Widgets/collaborators/dave/permission",
			e.path == "/repos/Acme/Widgets/collaborators/alice/permission",
			e.path == "/repos/Acme/Widgets/collaborators/carol/permission",
			len(e.path) > len("/repos/Acme/Widgets/pulls/12/reviews/") && e.path[:len("/repos/Acme/Widgets/pulls/12/reviews/")] == "/repos/Acme/Widgets/pulls/12/reviews/":
		default:
			ex = append(ex, e)
		}
	}
	s.exchanges = ex
	fake := fakeWith(t, s, nil)
	a, err := acquire(t, fakeClient(t, fake, 0), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Reviews) != 1 || gapCount(a.Outcomes.Reviews, "invalid_metadata") != 2 {
		t.Errorf("reviews %d, gaps %+v", len(a.Reviews), a.Outcomes.Reviews)
	}
	if len(a.Checks) != 1 || gapCount(a.Outcomes.Checks, "invalid_metadata") != 3 {
		t.Errorf("checks %d, gaps %+v", len(a.Checks), a.Outcomes.Checks)
	}
	if len(a.Comments) != 1 || gapCount(a.Outcomes.Comments, "invalid_metadata") != 1 {
		t.Errorf("comments %d, gaps %+v", len(a.Comments), a.Outcomes.Comments)
	}
}

// TestReceiptsFromIssueComments: receipt comments (marker on the first line) become agent
// runs with the comment's id and author; a malformed receipt is invalid_metadata; a marker
// elsewhere is ignored; with comments not selected the list is still read for receipts.
func TestReceiptsFromIssueComments(t *testing.T) {
	s := pagedIssueScenario()
	s.profile.IncludedSources = []string{"agent_runs", "entity"}
	var ex []exchange
	for _, e := range s.exchanges {
		if e.path != "/repos/Acme/Widgets/collaborators/alice/permission" && e.path != "/repos/Acme/Widgets/collaborators/bob/permission" {
			ex = append(ex, e)
		}
	}
	ex = append(ex, permission("alice", alice, "owner", "owner"), permission("release-bot", releaseBot, "write", "write"))
	s.exchanges = ex
	fake := fakeWith(t, s, nil)
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets/issues/7/comments?limit=50&page=1", withHeader(httpfake.JSON(200, []any{
		comment(1, releaseBot, receiptBody("fj-1-1", "2026-09-08T13:30:00.000000000Z"), "2026-09-08T13:30:00Z", "2026-09-08T13:30:00Z"),
		comment(2, releaseBot, status.ReceiptMarker+"\nnot a receipt", "2026-09-08T13:31:00Z", "2026-09-08T13:31:00Z"),
		comment(3, bob, "quoting\n"+receiptBody("fj-1-2", "2026-09-08T13:32:00.000000000Z"), "2026-09-08T13:32:00Z", "2026-09-08T13:32:00Z"),
	}), "X-Total-Count", "3"))
	a, err := acquire(t, fakeClient(t, fake, 0), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.AgentRuns) != 1 || a.AgentRuns[0].ID != "1" || deref(a.AgentRuns[0].Author.ID) != "150" || a.AgentRuns[0].Agent != "triage" {
		t.Fatalf("agent runs = %+v", a.AgentRuns)
	}
	if gapCount(a.Outcomes.AgentRuns, "invalid_metadata") != 1 {
		t.Errorf("agent_runs gaps = %+v", a.Outcomes.AgentRuns)
	}
	if len(a.Comments) != 0 {
		t.Errorf("comments not selected but %d records", len(a.Comments))
	}
}

// TestReceiptsListFailureIsAGap: an incomplete comments list is an agent_runs gap, never an
// empty history.
func TestReceiptsListFailureIsAGap(t *testing.T) {
	s := issueScenario()
	fake := fakeWith(t, s, map[string][]httpfake.Reply{
		commentsPath: {httpfake.JSON(403, `{"message":"forbidden"}`)},
	}, "/repos/Acme/Widgets/collaborators/bob/permission", "/repos/Acme/Widgets/collaborators/release-bot/permission",
		"/repos/Acme/Widgets/collaborators/dave/permission")
	a, err := acquire(t, fakeClient(t, fake, 0), s)
	if err != nil {
		t.Fatal(err)
	}
	if gapCount(a.Outcomes.AgentRuns, "authorization_failed") != 1 || gapCount(a.Outcomes.Comments, "authorization_failed") != 1 {
		t.Errorf("gaps = %+v", a.Outcomes)
	}
}

// TestTokenIsSentAsForgejoTokenHeader: every request (SDK and direct) carries the token.
func TestTokenIsSentAsForgejoTokenHeader(t *testing.T) {
	var seen []string
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization"))
		return nil, errors.New("stop")
	})
	cl, err := New(Options{APIURL: fixtureAPI, Token: "tok", Transport: rt, RetryMax: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, _ = cl.reader.get(context.Background(), "/x")
	_, _ = cl.Acquire(context.Background(), pullScenario().ref, pullScenario().profile)
	if len(seen) != 2 || seen[0] != "/api/v1/x token tok" || seen[1] != "/api/v1/repos/Acme/Widgets token tok" {
		t.Errorf("requests = %q", seen)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestRetryAfterIsCapped: a Retry-After of a day does not hold the run for a day, while a
// short one is honoured.
func TestRetryAfterIsCapped(t *testing.T) {
	long := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"86400"}}}
	if d := policy(Options{RetryWaitMin: time.Millisecond, RetryWaitMax: time.Second}).Backoff(time.Millisecond, time.Second, 1, long); d != maxRetryAfter {
		t.Errorf("wait = %v, want the %v cap", d, maxRetryAfter)
	}
	short := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3"}}}
	if d := policy(Options{RetryWaitMin: time.Millisecond, RetryWaitMax: time.Second}).Backoff(time.Millisecond, time.Second, 1, short); d != 3*time.Second {
		t.Errorf("wait = %v, want Retry-After's 3s", d)
	}
}

// TestResponseBodyLimit: a body at the limit reads completely; one byte more is an error,
// never a silently shorter document.
func TestResponseBodyLimit(t *testing.T) {
	read := func(body string, limit int64) (string, error) {
		b := forge.CapBody(io.NopCloser(strings.NewReader(body)), limit, errResponseTooLarge)
		out, err := io.ReadAll(b)
		return string(out), err
	}
	if got, err := read("[1,2,3]", 7); err != nil || got != "[1,2,3]" {
		t.Errorf("at the limit: %q, %v", got, err)
	}
	if _, err := read("[1,2,3]", 6); !errors.Is(err, errResponseTooLarge) {
		t.Errorf("over the limit: err = %v", err)
	}
}

// TestHTTPErrorTextNeverQuotesTheBody: a non-JSON error page (a proxy's HTML) is reported by
// its status text, a short JSON message as is.
func TestHTTPErrorTextNeverQuotesTheBody(t *testing.T) {
	fake := httpfake.New(t)
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets", httpfake.Reply{Status: 502, Header: http.Header{"Content-Type": {"text/html"}},
		Body: []byte("<html>secret-looking proxy page\nline 2</html>")})
	fake.Expect("GET", "/api/v1/repos/Acme/Other", httpfake.JSON(404, `{"message":"The target couldn't be found."}`))
	cl, _ := New(Options{APIURL: fake.URL + "/api/v1", RetryMax: -1})
	_, err := cl.Acquire(context.Background(), pullScenario().ref, pullScenario().profile)
	if err == nil || strings.Contains(err.Error(), "proxy page") || !strings.Contains(err.Error(), "Bad Gateway") {
		t.Errorf("err = %v", err)
	}
	ref := pullScenario().ref
	ref.Repo = "Acme/Other"
	_, err = cl.Acquire(context.Background(), ref, pullScenario().profile)
	if err == nil || !strings.Contains(err.Error(), "The target couldn't be found.") {
		t.Errorf("err = %v", err)
	}
}

// TestRedirectToAnotherOriginIsRefused: a redirect leaving the API origin is not followed (not
// even to a subdomain, where net/http would still send Authorization), not retried, and the
// entity read fails closed.
func TestRedirectToAnotherOriginIsRefused(t *testing.T) {
	var leaked atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
		w.Write([]byte(`{"id":1,"full_name":"evil/evil"}`))
	}))
	defer evil.Close()
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
	var hits atomic.Int32
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, evilURL+r.URL.Path, http.StatusFound)
	}))
	defer home.Close()
	cl, err := New(Options{APIURL: home.URL + "/api/v1", Token: "secret-token", RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cl.Acquire(context.Background(), forge.Ref{Repo: "Acme/Widgets", Number: 7}, acquisition.Profile{EntityKind: acquisition.KindWorkItem, IncludedSources: []string{"entity"}})
	var ee *EntityError
	if !errors.As(err, &ee) || ee.Code != acquisition.GapFetchFailed || !errors.Is(err, ErrCrossOriginRedirect) {
		t.Errorf("err = %v", err)
	}
	if leaked.Load() != 0 || hits.Load() != 1 {
		t.Errorf("other origin got %d requests, home %d (want 0 and 1: no retry)", leaked.Load(), hits.Load())
	}
}

// TestCommitStatusesWithoutTasksAreAChecksGap: with Actions disabled the tasks endpoint
// answers 200 and an empty list, but external CI reports on the head through commit
// statuses: the head must not look check-free, so the statuses are the checks scope's
// unsupported gap (they lack the check-run lifecycle the spec's check rules require).
func TestCommitStatusesWithoutTasksAreAChecksGap(t *testing.T) {
	s := pullScenario()
	fake := fakeWith(t, s, map[string][]httpfake.Reply{
		"/repos/Acme/Widgets/actions/tasks?limit=50&page=1": {withHeader(httpfake.JSON(200, `{"total_count":0,"workflow_runs":[]}`), "X-Total-Count", "0")},
		"/repos/Acme/Widgets/commits/" + headSHA + "/status?limit=50&page=1": {withHeader(httpfake.JSON(200,
			`{"state":"failure","total_count":2,"statuses":[{"id":1,"status":"failure","context":"woodpecker/test"},{"id":2,"status":"success","context":"drone/build"}]}`), "X-Total-Count", "2")},
	})
	a, err := acquire(t, fakeClient(t, fake, 0), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Checks) != 0 || gapCount(a.Outcomes.Checks, acquisition.GapUnsupported) != 2 {
		t.Fatalf("checks %d, gaps %+v: a head with 2 commit statuses looks check-free", len(a.Checks), a.Outcomes.Checks)
	}
}

// TestWaitingJobBesideTasksIsAChecksGap is the waiting-job checks defect with the HTTP fake:
// a job no runner has taken (or one blocked on needs:) has no task, only the pending commit
// status Gitea wrote when it created the run. Beside the head's other tasks it vanished with
// no gap, because statuses were read only when no task matched the head. Now every status no
// task accounts for is a checks unsupported gap: here the waiting job and an external CI's.
func TestWaitingJobBesideTasksIsAChecksGap(t *testing.T) {
	s := pullScenario()
	var tasks []any
	for _, e := range s.exchanges {
		if strings.HasSuffix(e.path, "/actions/tasks") {
			tasks = e.body.(map[string]any)["workflow_runs"].([]any)
		}
	}
	sts := append(actionsStatuses(tasks, headSHA),
		statusRow(2001, "pending", "ci.yml / package (pull_request)", "2026-09-10T08:00:00Z"), // needs: build, no task yet
		statusRow(2002, "success", "woodpecker/lint", "2026-09-10T08:00:00Z"))
	st := combined(headSHA, sts)
	fake := fakeWith(t, s, map[string][]httpfake.Reply{
		"/repos/Acme/Widgets/commits/" + headSHA + "/status?limit=50&page=1": {replyOf(t, st)},
	})
	a, err := acquire(t, fakeClient(t, fake, 0), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Checks) != 12 || gapCount(a.Outcomes.Checks, acquisition.GapUnsupported) != 2 {
		t.Fatalf("checks %d, gaps %+v: want the 12 tasks and 2 unsupported gaps (the waiting job, the external status)", len(a.Checks), a.Outcomes.Checks)
	}
}

// TestUnaccountedStatuses pins what "accounted for" means: each head task claims at most one
// status, by its workflow file name or (for a workflow with a name:) by one prefix per
// workflow; anything else is a gap.
func TestUnaccountedStatuses(t *testing.T) {
	tk := func(id int64, wf, name, event string) task {
		return task{ID: id, Name: name, WorkflowID: wf, Event: event}
	}
	st := func(ctxs ...string) []commitStatus {
		var out []commitStatus
		for i, c := range ctxs {
			out = append(out, commitStatus{ID: int64(i + 1), Context: c})
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		statuses []commitStatus
		tasks    []task
		want     int
	}{
		{"file name", st("ci.yml / build (pull_request)"), []task{tk(1, "ci.yml", "build", "pull_request")}, 0},
		{"waiting job beside a task", st("ci.yml / build (pull_request)", "ci.yml / lint (pull_request)"),
			[]task{tk(1, "ci.yml", "build", "pull_request")}, 1},
		{"workflow name:", st("CI / build (pull_request)", "CI / test (pull_request)"),
			[]task{tk(1, ".gitea/workflows/ci.yml", "build", "pull_request"), tk(2, ".gitea/workflows/ci.yml", "test", "pull_request")}, 0},
		{"same job in two named workflows, one waiting", st("CI / build (pull_request)", "Nightly / build (pull_request)"),
			[]task{tk(1, "ci.yml", "build", "pull_request")}, 1},
		{"one prefix per workflow", st("A / build (pull_request)", "B / test (pull_request)"),
			[]task{tk(1, "ci.yml", "build", "pull_request"), tk(2, "ci.yml", "test", "pull_request")}, 1},
		{"a workflow shown by file name has no name:", st("ci.yml / build (pull_request)", "Other / test (pull_request)"),
			[]task{tk(1, "ci.yml", "build", "pull_request"), tk(2, "ci.yml", "test", "pull_request")}, 1},
		{"Gitea 1.25: an empty name:, trimmed", st("/ build (pull_request)", "/ lint (pull_request)"),
			[]task{tk(1, "ci.yml", "build", "pull_request")}, 1},
		{"an empty name: is one prefix too", st("/ build (pull_request)", "CI / test (pull_request)"),
			[]task{tk(1, "ci.yml", "build", "pull_request"), tk(2, "ci.yml", "test", "pull_request")}, 1},
		{"another event", st("ci.yml / build (push)"), []task{tk(1, "ci.yml", "build", "pull_request")}, 1},
		{"a task without event claims nothing", st("ci.yml / build ()"), []task{tk(1, "ci.yml", "build", "")}, 1},
		{"one status per task", st("ci.yml / build (pull_request)", "x / build (pull_request)"), []task{tk(1, "ci.yml", "build", "pull_request")}, 1},
		{"a rerun's tasks share one status", st("ci.yml / build (pull_request)"),
			[]task{tk(1, "ci.yml", "build", "pull_request"), tk(2, "ci.yml", "build", "pull_request")}, 0},
		{"external CI", st("woodpecker/test", "drone/build"), nil, 2},
	} {
		if got := unaccounted(tc.statuses, tc.tasks); got != tc.want {
			t.Errorf("%s: %d unaccounted, want %d", tc.name, got, tc.want)
		}
	}
}
