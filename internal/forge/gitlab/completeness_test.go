package gitlab

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/httpfake"
)

// The completeness fault matrix (issue: no list is ever silently short), as for Forgejo. A
// world is merge request !7 (or issue iid 3) of project 42 whose discussions and pipelines are
// 7 rows each, and whose pipeline 801 has 7 jobs (the other pipelines one each): at a page
// size of 2 a list of 7 is 4 pages (2, 2, 2, 1), served with GitLab's real pagination headers
// (X-Total, X-Next-Page, X-Total-Pages, Link). Every paged listing of the adapter's dependency
// map (listings.Paged()) is broken in every way the fault injector offers, and the result is
// compared with an oracle: the world without the rows the fault loses, read without faults.

const (
	glRows  = 7
	glLimit = 2
)

type glWorld struct {
	discussions, pipelines []any
	jobs                   map[int64][]any
}

func glNote(id int64, created string) map[string]any {
	return map[string]any{"id": id, "type": nil, "body": fmt.Sprintf("note %d", id), "attachment": nil,
		"author":     map[string]any{"id": 101, "username": "alice", "name": "Alice Liddell", "state": "active"},
		"created_at": created, "updated_at": created, "system": false, "noteable_type": "MergeRequest",
		"project_id": 42, "resolvable": false, "confidential": false, "internal": false}
}

func glDiscussion(i int64, created string) map[string]any {
	return map[string]any{"id": fmt.Sprintf("%040x", i), "individual_note": true, "notes": []any{glNote(6000+i, created)}}
}

func glPipeline(id int64, created string) map[string]any {
	return map[string]any{"id": id, "iid": id - 770, "project_id": 42, "sha": headSHA, "ref": "widget-cache",
		"status": "success", "source": "merge_request_event", "created_at": created, "updated_at": created,
		"web_url": fmt.Sprintf("https://gitlab.example.com:8443/Acme/Platform/widgets/-/pipelines/%d", id)}
}

func glJob(id, pipeline int64, status, created string) map[string]any {
	return map[string]any{"id": id, "name": fmt.Sprintf("job %d", id), "stage": "test", "status": status,
		"ref": "widget-cache", "tag": false, "allow_failure": false, "created_at": created,
		"started_at": created, "finished_at": created,
		"commit":   map[string]any{"id": headSHA},
		"pipeline": map[string]any{"id": pipeline, "project_id": 42, "sha": headSHA, "status": "success"}}
}

func glMatrixWorld() glWorld {
	w := glWorld{jobs: map[int64][]any{}}
	for i := int64(1); i <= glRows; i++ {
		ts := fmt.Sprintf("2026-11-20T10:%02d:00.000Z", i)
		w.discussions = append(w.discussions, glDiscussion(i, ts))
		pid := 800 + i
		w.pipelines = append(w.pipelines, glPipeline(pid, ts))
		w.jobs[pid] = []any{glJob(9200+i, pid, "failed", ts)}
	}
	w.jobs[801] = nil
	for k := int64(1); k <= glRows; k++ {
		status := "success"
		if k%2 == 0 {
			status = "failed"
		}
		w.jobs[801] = append(w.jobs[801], glJob(9100+k, 801, status, fmt.Sprintf("2026-11-20T11:%02d:00.000Z", k)))
	}
	return w
}

func (w glWorld) clone() glWorld {
	c := glWorld{discussions: w.discussions, pipelines: w.pipelines, jobs: map[int64][]any{}}
	for k, v := range w.jobs {
		c.jobs[k] = v
	}
	return c
}

// rowsOf is the world's rows of a paged listing (jobs: pipeline 801's, the one with pages); a
// paged listing the matrix does not know fails the test, so a new endpoint cannot be missed.
func (w *glWorld) rowsOf(t *testing.T, name string) *[]any {
	switch name {
	case listMRDiscussions, listIssueDiscussions:
		return &w.discussions
	case listPipelines:
		return &w.pipelines
	case listJobs:
		j := w.jobs[801] // read-only: change writes the jobs back
		return &j
	}
	t.Fatalf("paged listing %q has no rows in the GitLab fault-matrix world: add it", name)
	return nil
}

// change applies a drift (or a loss) to a copy of w.
func (w glWorld) change(t *testing.T, name string, c httpfake.Change) glWorld {
	out := w.clone()
	drop := map[int]bool{}
	for _, i := range c.Delete {
		drop[i] = true
	}
	var rows []any
	for i, r := range *out.rowsOf(t, name) {
		if !drop[i] {
			rows = append(rows, r)
		}
	}
	rows = append(rows, c.Append...)
	switch name {
	case listMRDiscussions, listIssueDiscussions:
		out.discussions = rows
	case listPipelines:
		out.pipelines = rows
	case listJobs:
		out.jobs[801] = rows
	}
	return out
}

func (w glWorld) serve(t *testing.T, f *httpfake.Faults) string {
	const p = "/api/v4/projects/42"
	f.List(p+"/merge_requests/7/discussions", w.discussions...)
	f.List(p+"/issues/3/discussions", w.discussions...)
	f.List(p+"/pipelines", w.pipelines...)
	for id := int64(800); id <= 810; id++ {
		f.List(fmt.Sprintf("%s/pipelines/%d/jobs", p, id), w.jobs[id]...)
	}
	mux := http.NewServeMux()
	file := func(rel string) http.HandlerFunc {
		b := fixture(t, rel)
		return func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Content-Type", "application/json")
			rw.Write(b)
		}
	}
	mux.Handle("GET "+p, file("common/project.json"))
	mux.Handle("GET "+p+"/merge_requests/7", file("mr/merge_request.json"))
	mux.Handle("GET "+p+"/issues/3", file("issue/issue.json"))
	mux.Handle("GET /api/v4/users/101", file("common/user_101.json"))
	mux.Handle("GET "+p+"/members/all/101", file("common/member_101.json"))
	mux.HandleFunc("GET "+p+"/jobs/{id}/trace", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(rw, "trace of %s\n", r.PathValue("id"))
	})
	return f.Start(mux)
}

func glMatrixProfile(name string) acquisition.Profile {
	p := profileMR()
	p.IncludedSources = []string{"agent_runs", "check_logs", "checks", "comments", "entity"}
	if name == listIssueDiscussions {
		p.EntityKind = acquisition.KindWorkItem
		p.IncludedSources = []string{"agent_runs", "comments", "entity"}
		p.CheckLogSelection = "none"
	}
	return p
}

func glAcquire(t *testing.T, url, name string) *acquisition.Acquisition {
	t.Helper()
	return glAcquireAt(t, url, name, 1)
}

// glAcquireAt is glAcquire through a request pool of concurrency requests per host, the
// client reading that many declared pages at once.
func glAcquireAt(t *testing.T, url, name string, concurrency int) *acquisition.Acquisition {
	t.Helper()
	pool := forge.NewPool(concurrency, zerolog.Nop())
	c, err := New(Options{APIURL: url + "/api/v4", Token: testToken, RetryMax: 2, RetryWaitMin: time.Millisecond,
		RetryWaitMax: 2 * time.Millisecond, Log: zerolog.Nop(), Concurrency: concurrency, Limiter: pool.RetryLimiter(),
		HTTPClient: &http.Client{Transport: pool.Wrap(nil), Timeout: 60 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	c.pageSize = glLimit
	number := 7
	if name == listIssueDiscussions {
		number = 3
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, err := c.Acquire(ctx, forge.Ref{Repo: "42", Number: number}, glMatrixProfile(name))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

type glRecords struct {
	Comments  []acquisition.Comment
	Threads   []acquisition.Thread
	Checks    []acquisition.Check
	AgentRuns []acquisition.AgentRun
	Actors    []acquisition.Actor
}

func glRecordsOf(a *acquisition.Acquisition) glRecords {
	return glRecords{a.Comments, a.Threads, a.Checks, a.AgentRuns, a.Actors}
}

func glGapSet(o acquisition.Outcomes) []string {
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

// The fakes' clock, as for Forgejo: the k-th answer of one list is dated k*10 minutes after
// glReadAt; a row a drift adds was created 15 minutes after it; the oracle reads a day later.
var (
	glReadAt   = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	glOracleAt = glReadAt.Add(24 * time.Hour)
)

func glTicking() func(string) time.Time { return httpfake.Ticking(glReadAt, 10*time.Minute) }

func glNewRow(name string) any {
	ts := glReadAt.Add(15 * time.Minute).Format(time.RFC3339)
	switch name {
	case listMRDiscussions, listIssueDiscussions:
		return glDiscussion(99, ts)
	case listPipelines:
		return glPipeline(809, ts)
	}
	return glJob(9199, 801, "success", ts)
}

func TestGitLabFaultMatrix(t *testing.T) {
	paged := listings.Paged()
	if len(paged) < 4 {
		t.Fatalf("paged listings %v: the matrix expects both discussions, pipelines and jobs", paged)
	}
	for _, l := range paged {
		// A fault targets the endpoint; jobs are broken on pipeline 801's list, the one with
		// pages.
		tmpl := "/api/v4" + strings.Replace(l.Endpoint, "{pipeline_id}", "801", 1)
		for _, tc := range glCases() {
			for _, conc := range []int{1, 4, 8} {
				t.Run(fmt.Sprintf("%s/%s/concurrency-%d", l.Name, tc.name, conc), func(t *testing.T) {
					w := glMatrixWorld()
					f := httpfake.NewFaults(t, httpfake.GitLabPaging)
					f.Now = glTicking()
					var oracle glWorld
					if tc.drift {
						ch := httpfake.Change{}
						if strings.Contains(tc.name, "delete") {
							ch.Delete = []int{0}
						}
						if strings.Contains(tc.name, "add") {
							ch.Append = []any{glNewRow(l.Name)}
						}
						f.Drift(tmpl, 1, ch)
						oracle = w.change(t, l.Name, ch)
						if l.Name == listPipelines && len(ch.Append) > 0 {
							oracle.jobs[809] = nil
						}
					} else {
						tc.inject(f, tmpl)
						oracle = w.change(t, l.Name, httpfake.Change{Delete: tc.lost})
					}
					got := glAcquireAt(t, w.serve(t, f), l.Name, conc)
					of := httpfake.NewFaults(t, httpfake.GitLabPaging)
					of.Now = func(string) time.Time { return glOracleAt }
					want := glAcquire(t, oracle.serve(t, of), l.Name)
					if g := glGapSet(want.Outcomes); len(g) != 0 {
						t.Fatalf("the oracle world has gaps %v", g)
					}
					var wantGaps []string
					if tc.count > 0 {
						sel := forge.Selected(glMatrixProfile(l.Name))
						for _, s := range listings.Shortens(l.Name) {
							if sel(s) {
								wantGaps = append(wantGaps, fmt.Sprintf("%s/%s=%d", s, acquisition.GapFetchFailed, tc.count))
							}
						}
						sort.Strings(wantGaps)
					}
					if g := glGapSet(got.Outcomes); !reflect.DeepEqual(g, wantGaps) {
						t.Errorf("gaps %v, want %v", g, wantGaps)
					}
					if g, w := glRecordsOf(got), glRecordsOf(want); !reflect.DeepEqual(g, w) {
						gj, _ := json.Marshal(g)
						wj, _ := json.Marshal(w)
						t.Errorf("records differ from the oracle's:\n got %s\nwant %s", gj, wj)
					}
					if n := f.RequestsTo(tmpl); tc.drift && n > 2*4+1 || !tc.drift && n > 4*3 {
						t.Errorf("%d requests to the list", n)
					}
					if m := f.MaxInFlight(); m > conc {
						t.Errorf("%d requests in flight at concurrency %d", m, conc)
					}
				})
			}
		}
	}
}

type glCase struct {
	name   string
	inject func(f *httpfake.Faults, tmpl string)
	lost   []int
	count  int
	drift  bool
}

func glCases() []glCase {
	return []glCase{
		// Page 1 declares nothing before it fails: the listing is lost, by a count of 1.
		{name: "fail first page", inject: func(f *httpfake.Faults, tm string) { f.FailPage(tm, 1) }, lost: []int{0, 1, 2, 3, 4, 5, 6}, count: 1},
		{name: "fail middle page", inject: func(f *httpfake.Faults, tm string) { f.FailPage(tm, 2) }, lost: []int{2, 3}, count: 2},
		{name: "fail last page", inject: func(f *httpfake.Faults, tm string) { f.FailPage(tm, 4) }, lost: []int{6}, count: 1},
		// X-Total counts rows a page then does not hold: the listing reads on (X-Next-Page)
		// and ends short of the total, a gap counting the rows missing.
		{name: "invisible page", inject: func(f *httpfake.Faults, tm string) { f.HidePage(tm, 2, -1) }, lost: []int{2, 3}, count: 2},
		{name: "invisible row", inject: func(f *httpfake.Faults, tm string) { f.HidePage(tm, 3, 1) }, lost: []int{4}, count: 1},
		{name: "drift delete", drift: true},
		{name: "drift add", drift: true},
		{name: "drift delete+add", drift: true},
	}
}

// TestGitLabFaultMatrixUnpagedEndpoints: every one-response endpoint of the dependency map
// fails persistently; the adapter reports exactly the map's gaps (a trace failure is the
// check's log outcome, which the assembler turns into the check_logs gap) and keeps the rest.
// A new unpaged endpoint without a case fails.
func TestGitLabFaultMatrixUnpagedEndpoints(t *testing.T) {
	cases := map[string]struct {
		gaps  []string
		check func(t *testing.T, a *acquisition.Acquisition)
	}{
		listTraces: {nil, func(t *testing.T, a *acquisition.Acquisition) {
			failed := 0
			for _, c := range a.Checks {
				if c.Log != nil {
					failed++
					if c.Log.Outcome != acquisition.LogFetchFailed {
						t.Errorf("check %s log outcome %q, want fetch_failed", c.ID, c.Log.Outcome)
					}
				}
			}
			if len(a.Checks) != 13 || failed != 9 { // 801: 7 jobs, 3 failed; 802–807: 1 failed each
				t.Errorf("%d checks, %d selected logs; want 13 and 9", len(a.Checks), failed)
			}
		}},
		listUsers: {[]string{"actors/fetch_failed=1"}, func(t *testing.T, a *acquisition.Acquisition) {
			if len(a.Actors) != 1 || a.Actors[0].RoleVerified || len(a.Comments) != 7 {
				t.Errorf("actors %+v, %d comments", a.Actors, len(a.Comments))
			}
		}},
		listMembers: {[]string{"actors/fetch_failed=1"}, func(t *testing.T, a *acquisition.Acquisition) {
			if len(a.Actors) != 1 || a.Actors[0].RoleVerified || len(a.Comments) != 7 {
				t.Errorf("actors %+v, %d comments", a.Actors, len(a.Comments))
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
			f := httpfake.NewFaults(t, httpfake.GitLabPaging)
			f.FailPage("/api/v4"+l.Endpoint, 1)
			a := glAcquire(t, glMatrixWorld().serve(t, f), listMRDiscussions)
			if g := glGapSet(a.Outcomes); !reflect.DeepEqual(g, tc.gaps) {
				t.Errorf("gaps %v, want %v", g, tc.gaps)
			}
			tc.check(t, a)
		})
	}
}

// TestGitLabDriftCheckCost: without faults the matrix world needs exactly its lower bound
// (the drift check costs no request); a delete+add drift on a paged listing costs the pages
// read before the move showed plus one re-read, within a request ratio of 1.2.
func TestGitLabDriftCheckCost(t *testing.T) {
	run := func(f *httpfake.Faults) *forge.Stats {
		c, err := New(Options{APIURL: glMatrixWorld().serve(t, f) + "/api/v4", Token: testToken, RetryMax: 2,
			RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond, Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		c.pageSize = glLimit
		if _, err := c.Acquire(context.Background(), forge.Ref{Repo: "42", Number: 7}, glMatrixProfile(listMRDiscussions)); err != nil {
			t.Fatal(err)
		}
		return c.Stats()
	}
	if s := run(httpfake.NewFaults(t, httpfake.GitLabPaging)); s.Requests != s.LowerBound {
		t.Errorf("no fault: %d requests, lower bound %d", s.Requests, s.LowerBound)
	}
	for _, l := range []string{listMRDiscussions, listPipelines, listJobs} {
		f := httpfake.NewFaults(t, httpfake.GitLabPaging)
		f.Now = glTicking()
		tmpl := "/api/v4" + strings.Replace(listings[l].Endpoint, "{pipeline_id}", "801", 1)
		f.Drift(tmpl, 1, httpfake.Change{Delete: []int{0}, Append: []any{glNewRow(l)}})
		s := run(f)
		t.Logf("%s drift delete+add: %d requests, lower bound %d, ratio %.2f", l, s.Requests, s.LowerBound, s.Ratio)
		if s.Ratio > 1.2 {
			t.Errorf("%s: ratio %.2f over 1.2", l, s.Ratio)
		}
	}
}
