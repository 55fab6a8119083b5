package forgejo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/httpfake"
)

// The completeness fault matrix (issue: no list is ever silently short). A world is a pull
// request whose issue comments, reviews (each with a two-comment conversation) and Actions
// tasks are each 7 rows: at a page size of 2 they are 4 pages (2, 2, 2, 1). Every paged
// listing of the adapter's own dependency map (listings.Paged()) is broken in every way the
// fault injector offers, and the acquisition is compared with an oracle: the same world
// without the rows the fault loses, read without faults. The records must be exactly the
// oracle's (every record outside the failed pages is present, nothing else is) and the gaps
// exactly the dependency map's for the listing, counted by the rows lost.

const (
	matrixRows  = 7
	matrixLimit = 2
)

// world is the data a fake Forgejo serves.
type world struct {
	comments, reviews, tasks []any
	// statuses are the head's commit statuses: one per task, each accounted for by it.
	statuses       []any
	reviewComments map[int64][]any
}

func matrixWorld() world {
	w := world{reviewComments: map[int64][]any{}}
	for i := int64(1); i <= matrixRows; i++ {
		ts := fmt.Sprintf("2026-09-09T10:%02d:00Z", i)
		w.comments = append(w.comments, comment(9000+i, bob, fmt.Sprintf("comment %d", i), ts, ts))
		rid := 300 + i
		w.reviews = append(w.reviews, review(rid, bob, "COMMENT", fmt.Sprintf("review %d", i), headSHA, ts, false, 2))
		path := fmt.Sprintf("src/f%d.go", i)
		w.reviewComments[rid] = []any{
			reviewComment(rid*10+1, rid, bob, nil, path, 10, 0, headSHA, "first", ts),
			reviewComment(rid*10+2, rid, bob, nil, path, 10, 0, headSHA, "reply", fmt.Sprintf("2026-09-09T11:%02d:00Z", i)),
		}
		status := "success"
		if i%2 == 0 {
			status = "failure"
		}
		w.tasks = append(w.tasks, taskRow(500+i, fmt.Sprintf("job %d", i), headSHA, status, ts, ts, ts))
	}
	w.statuses = actionsStatuses(w.tasks, headSHA)
	return w
}

// withoutStatusOf is statuses minus the status of task row t.
func withoutStatusOf(statuses []any, t any) []any {
	ctx := fmt.Sprintf("%s / %s (%s)", t.(map[string]any)["workflow_id"], t.(map[string]any)["name"], t.(map[string]any)["event"])
	var out []any
	for _, s := range statuses {
		if s.(map[string]any)["context"] != ctx {
			out = append(out, s)
		}
	}
	return out
}

// rowsOf is the world's rows of a paged listing; a paged listing the matrix does not know
// fails the test, so a new endpoint cannot be left out.
func (w *world) rowsOf(t *testing.T, name string) *[]any {
	switch name {
	case listIssueComments:
		return &w.comments
	case listReviews:
		return &w.reviews
	case listTasks:
		return &w.tasks
	case listStatuses:
		return &w.statuses
	}
	t.Fatalf("paged listing %q has no rows in the fault-matrix world: add it", name)
	return nil
}

func rowID(row any) int64 { return row.(map[string]any)["id"].(int64) }

// without is w minus the rows of listing name at the given indexes (and, for reviews, their
// conversations).
func (w world) without(t *testing.T, name string, idx ...int) world {
	c := world{comments: w.comments, reviews: w.reviews, tasks: w.tasks, statuses: w.statuses, reviewComments: map[int64][]any{}}
	for k, v := range w.reviewComments {
		c.reviewComments[k] = v
	}
	drop := map[int]bool{}
	for _, i := range idx {
		drop[i] = true
	}
	p := c.rowsOf(t, name)
	var kept []any
	for i, r := range *p {
		if drop[i] {
			if name == listReviews {
				delete(c.reviewComments, rowID(r))
			}
			if name == listTasks {
				// A world without a job has no status for it either.
				c.statuses = withoutStatusOf(c.statuses, r)
			}
			continue
		}
		kept = append(kept, r)
	}
	*p = kept
	return c
}

// serve starts a fake Forgejo for w: the lists through the fault injector, the repository,
// the pull request and bob's permission from a plain handler.
func (w world) serve(t *testing.T, f *httpfake.Faults) string {
	base := "/api/v1/repos/Acme/Widgets"
	f.List(base+"/issues/12/comments", w.comments...)
	f.List(base+"/pulls/12/reviews", w.reviews...)
	for _, r := range w.reviews {
		id := rowID(r)
		f.List(fmt.Sprintf("%s/pulls/12/reviews/%d/comments", base, id), w.reviewComments[id]...)
	}
	// The review a drift adds (newRow) has no comments.
	f.List(base + "/pulls/12/reviews/399/comments")
	f.List(base+"/actions/tasks", w.tasks...).Envelope("workflow_runs", "total_count")
	f.List(base+"/commits/"+headSHA+"/status", w.statuses...).Envelope("statuses", "total_count")
	pr := pullScenario().exchanges[1].body
	mux := http.NewServeMux()
	reply := func(v any) http.HandlerFunc {
		return func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(rw).Encode(v)
		}
	}
	mux.Handle("GET "+base, reply(repository))
	mux.Handle("GET "+base+"/pulls/12", reply(pr))
	mux.Handle("GET "+base+"/collaborators/bob/permission", reply(map[string]any{"permission": "write", "user": bob}))
	return f.Start(mux)
}

var matrixProfile = acquisition.Profile{EntityKind: acquisition.KindChangeProposal,
	IncludedSources: []string{"agent_runs", "check_logs", "checks", "comments", "entity", "reviews"},
	RecordSelection: "oldest", CheckLogSelection: "failed", Bounds: bounds}

func matrixAcquire(t *testing.T, url string) *acquisition.Acquisition {
	t.Helper()
	return matrixAcquireAt(t, url, 1)
}

// matrixAcquireAt is matrixAcquire through a request pool of concurrency requests per host,
// the client reading that many declared pages at once.
func matrixAcquireAt(t *testing.T, url string, concurrency int) *acquisition.Acquisition {
	t.Helper()
	pool := forge.NewPool(concurrency, zerolog.Nop())
	cl, err := New(Options{APIURL: url + "/api/v1", Token: "secret-token", PageSize: matrixLimit,
		RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond,
		Transport: pool.Wrap(nil), Limiter: pool.RetryLimiter(), Concurrency: concurrency})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, err := cl.Acquire(ctx, forge.Ref{Forge: Forge, Repo: "Acme/Widgets", Number: 12}, matrixProfile)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// records is what the matrix compares: every record array, not the gaps.
type records struct {
	Comments  []acquisition.Comment
	Reviews   []acquisition.Review
	Threads   []acquisition.Thread
	Checks    []acquisition.Check
	AgentRuns []acquisition.AgentRun
	Actors    []acquisition.Actor
}

func recordsOf(a *acquisition.Acquisition) records {
	return records{a.Comments, a.Reviews, a.Threads, a.Checks, a.AgentRuns, a.Actors}
}

// gapSet renders every gap as scope/code=count, sorted.
func gapSet(o acquisition.Outcomes) []string {
	var out []string
	for scope, gs := range map[string][]acquisition.Gap{
		acquisition.ScopeComments: o.Comments, acquisition.ScopeReviews: o.Reviews, acquisition.ScopeChecks: o.Checks,
		acquisition.ScopeCheckLogs: o.CheckLogs, acquisition.ScopeAgentRuns: o.AgentRuns, acquisition.ScopeActors: o.Actors,
	} {
		for _, g := range gs {
			out = append(out, fmt.Sprintf("%s/%s=%d", scope, g.Code, g.Count))
		}
	}
	sort.Strings(out)
	return out
}

// expectedGaps is the dependency map's gap set for an incomplete read of name.
func expectedGaps(name, code string, lost int) []string {
	var out []string
	for _, s := range listings.Shortens(name) {
		if forge.Selected(matrixProfile)(s) {
			out = append(out, fmt.Sprintf("%s/%s=%d", s, code, lost))
		}
	}
	sort.Strings(out)
	return out
}

type matrixCase struct {
	name   string
	inject func(f *httpfake.Faults, tmpl string)
	lost   []int // indexes of the listing's rows the fault loses
	count  int   // the gap count (0: no gap)
	// drift changes the list right after its page 1 was served; the oracle reads the
	// changed world.
	drift bool
}

// The fakes' clock: the faulty run's k-th answer for one list is dated k*10 minutes after
// readAt, a row added while the list is read (after its first page) is created 15 minutes
// after readAt, and the oracle reads the changed world a day later.
var (
	readAt   = time.Date(2026, 9, 10, 12, 0, 0, 0, time.UTC)
	oracleAt = readAt.Add(24 * time.Hour)
)

func ticking() func(string) time.Time { return httpfake.Ticking(readAt, 10*time.Minute) }

// newRow is a row added while the list is read: created after the read began.
func newRow(list string) any {
	ts := readAt.Add(15 * time.Minute).Format(time.RFC3339)
	switch list {
	case listIssueComments:
		return comment(9100, bob, "added", ts, ts)
	case listReviews:
		return review(399, bob, "COMMENT", "added", headSHA, ts, false, 0)
	case listStatuses:
		// A status no task accounts for (external CI): the oracle's one checks gap.
		return statusRow(1599, "pending", "woodpecker/added", ts)
	}
	return taskRow(599, "added", headSHA, "success", ts, ts, ts)
}

func matrixCases() []matrixCase {
	return []matrixCase{
		// Page 1 declares nothing before it fails: the listing is lost, by a count of 1.
		{name: "fail first page", inject: func(f *httpfake.Faults, tm string) { f.FailPage(tm, 1) }, lost: []int{0, 1, 2, 3, 4, 5, 6}, count: 1},
		{name: "fail middle page", inject: func(f *httpfake.Faults, tm string) { f.FailPage(tm, 2) }, lost: []int{2, 3}, count: 2},
		{name: "fail last page", inject: func(f *httpfake.Faults, tm string) { f.FailPage(tm, 4) }, lost: []int{6}, count: 1},
		{name: "invisible page", inject: func(f *httpfake.Faults, tm string) { f.HidePage(tm, 2, -1) }, lost: []int{2, 3}, count: 2},
		{name: "invisible row", inject: func(f *httpfake.Faults, tm string) { f.HidePage(tm, 3, 1) }, lost: []int{4}, count: 1},
		// Drift: re-read once, complete, no gap; the records are the changed world's.
		{name: "drift delete", drift: true},
		{name: "drift add", drift: true},
		{name: "drift delete+add", drift: true},
	}
}

func TestFaultMatrix(t *testing.T) {
	paged := listings.Paged()
	if len(paged) < 3 {
		t.Fatalf("paged listings %v: the matrix expects issue comments, reviews and tasks at least", paged)
	}
	for _, l := range paged {
		tmpl := "/api/v1" + l.Endpoint
		for _, tc := range matrixCases() {
			for _, conc := range []int{1, 4, 8} {
				t.Run(fmt.Sprintf("%s/%s/concurrency-%d", l.Name, tc.name, conc), func(t *testing.T) {
					w := matrixWorld()
					f := httpfake.NewFaults(t, httpfake.ForgejoPaging)
					f.Now = ticking()
					var oracle world
					if tc.drift {
						ch := driftChange(tc.name, l.Name)
						f.Drift(tmpl, 1, ch)
						oracle = w.without(t, l.Name, ch.Delete...)
						p := oracle.rowsOf(t, l.Name)
						*p = append(append([]any(nil), *p...), ch.Append...)
						if l.Name == listReviews && len(ch.Append) > 0 {
							oracle.reviewComments[399] = nil
						}
					} else {
						tc.inject(f, tmpl)
						oracle = w.without(t, l.Name, tc.lost...)
					}
					// A lost task's job is gone from the world served too (a faulted tasks read
					// reads no status; a drift deleting a task deletes its job).
					if l.Name == listTasks {
						w.statuses = oracle.statuses
					}
					got := matrixAcquireAt(t, w.serve(t, f), conc)
					of := httpfake.NewFaults(t, httpfake.ForgejoPaging)
					of.Now = func(string) time.Time { return oracleAt }
					want := matrixAcquire(t, oracle.serve(t, of))
					// Only a status added by a drift is the oracle's gap (no task accounts for it).
					var wantGaps []string
					if l.Name == listStatuses && strings.Contains(tc.name, "add") {
						wantGaps = []string{"checks/unsupported=1"}
					}
					if g := gapSet(want.Outcomes); !reflect.DeepEqual(g, wantGaps) {
						t.Fatalf("the oracle world has gaps %v, want %v", g, wantGaps)
					}
					if tc.count > 0 {
						wantGaps = append(wantGaps, expectedGaps(l.Name, acquisition.GapFetchFailed, tc.count)...)
						sort.Strings(wantGaps)
					}
					if g := gapSet(got.Outcomes); !reflect.DeepEqual(g, wantGaps) {
						t.Errorf("gaps %v, want %v", g, wantGaps)
					}
					if g, w := recordsOf(got), recordsOf(want); !reflect.DeepEqual(g, w) {
						t.Errorf("records differ from the oracle's:\n got %s\nwant %s", summary(g), summary(w))
					}
					// Cost: a drift re-reads the moved list once; without drift no page is read
					// twice (the fault's own failed attempts are the transport's retries).
					if n := f.RequestsTo(tmpl); tc.drift && n > 2*4+1 || !tc.drift && n > 4*5 {
						t.Errorf("%d requests to the list", n)
					}
					// The pool holds: never more requests at the server than the concurrency.
					if m := f.MaxInFlight(); m > conc {
						t.Errorf("%d requests in flight at concurrency %d", m, conc)
					}
				})
			}
		}
	}
}

// driftChange is the change of a drift case for one listing.
func driftChange(caseName, list string) httpfake.Change {
	var c httpfake.Change
	if strings.Contains(caseName, "delete") {
		c.Delete = []int{0}
	}
	if strings.Contains(caseName, "add") {
		c.Append = []any{newRow(list)}
	}
	return c
}

func summary(r records) string {
	ids := func(n int, id func(int) string) string {
		var s []string
		for i := 0; i < n; i++ {
			s = append(s, id(i))
		}
		return strings.Join(s, ",")
	}
	return fmt.Sprintf("comments[%s] reviews[%s] threads[%s] checks[%s] runs %d actors %d",
		ids(len(r.Comments), func(i int) string { return r.Comments[i].ID }),
		ids(len(r.Reviews), func(i int) string { return r.Reviews[i].ID }),
		ids(len(r.Threads), func(i int) string { return r.Threads[i].ID }),
		ids(len(r.Checks), func(i int) string { return r.Checks[i].ID }), len(r.AgentRuns), len(r.Actors))
}

// TestFailedReviewsPageGapsTheirComments is the defect on its own: a persistent 500 on page 3
// of a pull request's reviews wrote a reviews gap, but the comments of the reviews never read
// (and the threads they form) were simply absent, with no comments gap, and the reviews that
// were read were discarded. Now the failed page loses only its two reviews, and both scopes
// they feed say so.
func TestFailedReviewsPageGapsTheirComments(t *testing.T) {
	w := matrixWorld()
	f := httpfake.NewFaults(t, httpfake.ForgejoPaging)
	f.FailPage("/api/v1/repos/{owner}/{repo}/pulls/{n}/reviews", 3)
	a := matrixAcquire(t, w.serve(t, f))
	if gapCount(a.Outcomes.Comments, acquisition.GapFetchFailed) != 2 || gapCount(a.Outcomes.Reviews, acquisition.GapFetchFailed) != 2 {
		t.Fatalf("gaps %v: the comments of the 2 unread reviews are missing without a comments gap", gapSet(a.Outcomes))
	}
	if len(a.Reviews) != 5 || len(a.Threads) != 5 || len(a.Comments) != 7+10 {
		t.Fatalf("%d reviews, %d threads, %d comments; want 5, 5 and 17 (the reviews outside page 3 kept)", len(a.Reviews), len(a.Threads), len(a.Comments))
	}
}

// TestForgejoEntityErrorIsTheForgeOne: the one forge.EntityError, with the messages Forgejo
// always had ("entity <code>: <cause>", no forge prefix, no field suffix).
func TestForgejoEntityErrorIsTheForgeOne(t *testing.T) {
	fake := httpfake.New(t)
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets", httpfake.JSON(401, `{"message":"token is required"}`))
	_, err := acquire(t, fakeClient(t, fake, 0), pullScenario())
	var fe *forge.EntityError
	if !errors.As(err, &fe) || fe.Code != acquisition.GapAuthorizationFailed || fe.Field != "" {
		t.Fatalf("err = %#v, want *forge.EntityError authorization_failed", err)
	}
	if want := "entity authorization_failed: " + errors.Unwrap(fe).Error(); err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
	if code, field := fe.EntityFailure(); code != acquisition.GapAuthorizationFailed || field != "" {
		t.Errorf("EntityFailure = %q %q", code, field)
	}
	inv := entityInvalid("pull request head.sha: must be a 40- or 64-digit hexadecimal Git object ID")
	if inv.Error() != "entity invalid_metadata: pull request head.sha: must be a 40- or 64-digit hexadecimal Git object ID" {
		t.Errorf("invalid entity message %q", inv.Error())
	}
}

// TestLoopingServerIsBoundedAndGapped: a server that answers every page with the same rows
// and a total it never reaches is stopped at the first repeat, read once more, and then the
// listing is a gap — never an endless read, never a silently short list.
func TestLoopingServerIsBoundedAndGapped(t *testing.T) {
	s := pagedIssueScenario()
	all := issueComments(2)
	var calls atomic.Int32
	fake := fakeWith(t, s, nil)
	fake.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/api/v1/repos/Acme/Widgets/issues/7/comments" {
				next.ServeHTTP(w, r)
				return
			}
			calls.Add(1)
			w.Header().Set("X-Total-Count", "1000")
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(all)
		})
	})
	a, err := acquire(t, fakeClient(t, fake, 2), s)
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("%d requests to the looping list, want 4 (two reads stopped at their first repeat)", n)
	}
	if gapCount(a.Outcomes.Comments, acquisition.GapFetchFailed) != 1 || len(a.Comments) != 2 {
		t.Errorf("comments %d, gaps %v; want the 2 distinct comments and a fetch_failed gap", len(a.Comments), gapSet(a.Outcomes))
	}
}

// TestDriftCheckCost measures the request ratio of the matrix world: a run without faults
// needs exactly its lower bound (the drift check costs no request), and a drift on any paged
// listing costs the pages read before the move showed plus one re-read, within 1.2.
func TestDriftCheckCost(t *testing.T) {
	run := func(f *httpfake.Faults) *forge.Stats {
		w := matrixWorld()
		cl, err := New(Options{APIURL: w.serve(t, f) + "/api/v1", Token: "secret-token", PageSize: matrixLimit,
			RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Acquire(context.Background(), forge.Ref{Forge: Forge, Repo: "Acme/Widgets", Number: 12}, matrixProfile); err != nil {
			t.Fatal(err)
		}
		return cl.Stats()
	}
	f := httpfake.NewFaults(t, httpfake.ForgejoPaging)
	if s := run(f); s.Requests != s.LowerBound || s.Requests != f.Requests()+3 {
		t.Errorf("no fault: %d requests, lower bound %d, %d list requests", s.Requests, s.LowerBound, f.Requests())
	}
	for _, l := range listings.Paged() {
		f := httpfake.NewFaults(t, httpfake.ForgejoPaging)
		f.Now = ticking()
		f.Drift("/api/v1"+l.Endpoint, 1, driftChange("drift delete+add", l.Name))
		s := run(f)
		t.Logf("%s drift delete+add: %d requests, lower bound %d, ratio %.2f", l.Name, s.Requests, s.LowerBound, s.Ratio)
		if s.Ratio > 1.2 {
			t.Errorf("%s: ratio %.2f over 1.2", l.Name, s.Ratio)
		}
	}
}

// TestFaultMatrixUnpagedEndpoints: every endpoint of the dependency map that answers in one
// response fails persistently; each failure gaps exactly the scopes the map says, once per
// failed request, and keeps everything else. A new unpaged endpoint without a case fails.
func TestFaultMatrixUnpagedEndpoints(t *testing.T) {
	cases := map[string]struct {
		world func() world
		gaps  []string
		check func(t *testing.T, a *acquisition.Acquisition)
	}{
		listReviewComments: {matrixWorld, []string{"comments/fetch_failed=7", "reviews/fetch_failed=7"},
			func(t *testing.T, a *acquisition.Acquisition) {
				if len(a.Reviews) != 7 || len(a.Threads) != 0 || len(a.Comments) != 7 {
					t.Errorf("%d reviews, %d threads, %d comments; want 7, 0, 7 (the issue comments)", len(a.Reviews), len(a.Threads), len(a.Comments))
				}
			}},
		listPermissions: {matrixWorld, []string{"actors/fetch_failed=1"},
			func(t *testing.T, a *acquisition.Acquisition) {
				if len(a.Actors) != 1 || a.Actors[0].RoleVerified || a.Actors[0].Role != nil || len(a.Comments) != 21 {
					t.Errorf("actors %+v, %d comments; want bob unverified and every comment", a.Actors, len(a.Comments))
				}
			}},
	}
	for _, l := range listings {
		if l.Paged || l.Endpoint == "" {
			continue
		}
		tc, ok := cases[l.Name]
		if !ok {
			t.Errorf("unpaged listing %q has no fault case: add it", l.Name)
			continue
		}
		t.Run(l.Name, func(t *testing.T) {
			f := httpfake.NewFaults(t, httpfake.ForgejoPaging)
			f.FailPage("/api/v1"+l.Endpoint, 1)
			w := tc.world()
			url := w.serve(t, f)
			a := matrixAcquire(t, url)
			if g := gapSet(a.Outcomes); !reflect.DeepEqual(g, tc.gaps) {
				t.Errorf("gaps %v, want %v", g, tc.gaps)
			}
			tc.check(t, a)
		})
	}
}

// TestLowerBoundCountsPagesAtTheServedPageSize: the server serves 2 rows a page whatever limit
// is asked (MAX_RESPONSE_ITEMS 2; the client asks 50) and hides one review on every review
// page (rows the token may not see). The review listing's every page is short (1 row), so the
// adapter reads on until 7 one-row pages cover the 7 declared reviews; a perfect run at the
// server's page size, which the other listings show is 2, needs 4. The lower bound counts 4
// (it counted 7 when each listing was counted at its own largest page), so the reported ratio
// shows the 3 extra requests instead of hiding them.
func TestLowerBoundCountsPagesAtTheServedPageSize(t *testing.T) {
	run := func(hide bool) *forge.Stats {
		d := httpfake.ForgejoPaging
		d.MaxSize = 2
		f := httpfake.NewFaults(t, d)
		if hide {
			for p := 1; p <= 4; p++ {
				f.HidePage("/api/v1/repos/{owner}/{repo}/pulls/{n}/reviews", p, 1)
			}
		}
		w := matrixWorld()
		cl, err := New(Options{APIURL: w.serve(t, f) + "/api/v1", Token: "secret-token", PageSize: 50,
			RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Acquire(context.Background(), forge.Ref{Forge: Forge, Repo: "Acme/Widgets", Number: 12}, matrixProfile); err != nil {
			t.Fatal(err)
		}
		return cl.Stats()
	}
	clean := run(false)
	if clean.Requests != clean.LowerBound {
		t.Fatalf("no hidden rows: %d requests, lower bound %d: every request was needed", clean.Requests, clean.LowerBound)
	}
	hidden := run(true)
	if hidden.Pages["reviews"] != 7 {
		t.Fatalf("reviews read in %d pages, want 7 (one row each until the total is covered)", hidden.Pages["reviews"])
	}
	// 4 of the 7 review rows are hidden, so their 4 conversations are never requested; the
	// review listing still needs its 4 pages at 2 a page, as in the clean run.
	if want := clean.LowerBound - 4; hidden.LowerBound != want || hidden.Requests != want+3 {
		t.Errorf("hidden rows: %d requests, lower bound %d; want a bound of %d (reviews at 2 a page) and 3 requests over it", hidden.Requests, hidden.LowerBound, want)
	}
}
