package github_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

// The fault matrix (issue: completeness accounting). For every listing of the adapter's own
// dependency map (github.Listings), a scenario in which that listing has three pages (100,
// 100, 50 rows) is read under each fault: a persistent failure of its first, middle and last
// page; a middle page with two rows fewer than declared (rows the token cannot see); and
// drift between its first and second page (a row of the first page deleted, a row added at
// the end, both). Each case asserts the exact gap set and the exact set of the listing's
// records in the acquisition: every record outside what the fault took is present.

const matrixTime = "2026-09-08T10:00:00Z"

// matrixListing is the fault-matrix knowledge of one listing.
type matrixListing struct {
	scenario func() *ghscenario.Scenario
	// conn locates the listing's rows (and declared total) in one page's decoded body.
	conn func(doc any) (rows *[]any, setTotal func(int))
	// record is the acquisition record ID a row feeds ("" when none).
	record func(s *ghscenario.Scenario, row map[string]any) string
	// records are the acquisition's records of the listing's kind.
	records func(a *acquisition.Acquisition) map[string]bool
	// expect is the exact outcome of a case: the records lost (by row index of the listing)
	// and the gap set, or abort for an entity failure.
	expect func(c matrixCase) matrixWant
	// keepNumericID keeps a cloned row's numeric id (its job or run is the original's).
	keepNumericID bool
	// fromEnd says the listing is read from the other end after a failed page (the
	// "failboth" cases apply).
	fromEnd bool
}

type matrixCase struct {
	kind string // fail, invisible, drift
	page int    // failed / short page (0, 1, 2)
	drop bool   // drift: a row of the first page deleted
	add  bool   // drift: a row added at the end
}

func (c matrixCase) String() string {
	switch c.kind {
	case "fail":
		return fmt.Sprintf("persistent failure of page %d", c.page+1)
	case "invisible":
		return "middle page with two invisible rows"
	case "failboth":
		return fmt.Sprintf("persistent failure of page %d and of the page from the end holding its first row", c.page+1)
	}
	return fmt.Sprintf("drift delete=%v add=%v", c.drop, c.add)
}

type matrixWant struct {
	abort bool
	// lost are row indexes whose records must be absent; extra says the added row's record
	// is present, dropped that the deleted row's record is present.
	lost           func(i int) bool
	added, deleted bool
	gaps           acquisition.Outcomes
}

var matrixCases = []matrixCase{
	{kind: "fail", page: 0}, {kind: "fail", page: 1}, {kind: "fail", page: 2},
	{kind: "failboth", page: 0}, {kind: "failboth", page: 1}, {kind: "failboth", page: 2},
	{kind: "invisible", page: 1},
	{kind: "drift", drop: true}, {kind: "drift", add: true}, {kind: "drift", drop: true, add: true},
}

func matrixPR() *ghscenario.Scenario {
	t0, _ := time.Parse(time.RFC3339, matrixTime)
	return &ghscenario.Scenario{Owner: "octo-org", Repo: "Hello-World", RepoID: "R_kgDOLq3Xzw", Number: 77, NodeID: "PR_kwDOLq3Xz85xM077",
		PR: true, State: "OPEN", Title: "Fault matrix", Body: "b\n", Author: ghscenario.Alice, CreatedAt: t0, UpdatedAt: t0,
		HeadSHA: "6dcb09b5b57875f334f61aebed695e2e4193db5e", LogSelected: ghscenario.LogSelectedFailed}
}

func matrixAt(i int) time.Time {
	t0, _ := time.Parse(time.RFC3339, matrixTime)
	return t0.Add(time.Duration(i+1) * time.Minute)
}

func matrixUser(i int) *ghscenario.User {
	if i%2 == 0 {
		return ghscenario.Alice
	}
	return ghscenario.Carol
}

// matrixChecks are n Actions checks; run(i) is check i's workflow run. Every tenth fails
// (its log is selected).
func matrixChecks(n int, run func(i int) int64) []ghscenario.CheckRun {
	var out []ghscenario.CheckRun
	for i := range n {
		st, done := matrixAt(i), matrixAt(i+1)
		concl := "success"
		if i%10 == 0 {
			concl = "failure"
		}
		out = append(out, ghscenario.CheckRun{ID: int64(90000 + i), NodeID: fmt.Sprintf("CR_kwDOLq3Xz88M%05d", i), Name: fmt.Sprintf("job-%03d", i),
			HeadSHA: "6dcb09b5b57875f334f61aebed695e2e4193db5e", Status: "completed", Conclusion: concl, StartedAt: &st, CompletedAt: &done,
			Actions: true, RunID: run(i), JobCreated: matrixAt(i), Log: fmt.Sprintf("log %d\n", i)})
	}
	return out
}

func checkLost(s *ghscenario.Scenario, lost func(i int) bool) (checks, logs int) {
	for i, c := range s.Checks {
		if lost(i) {
			checks++
			if c.Conclusion == "failure" {
				logs++
			}
		}
	}
	return checks, logs
}

func gapsOf(scopeCounts ...any) acquisition.Outcomes {
	var o acquisition.Outcomes
	for i := 0; i < len(scopeCounts); i += 3 {
		o.Add(scopeCounts[i].(string), scopeCounts[i+1].(string), scopeCounts[i+2].(int))
	}
	return o
}

func pageRows(p int) func(i int) bool {
	return func(i int) bool { return i >= p*100 && i < (p+1)*100 }
}

// failBoth is what a cursor listing of 250 rows (or the 250 rows after a thread's first 100
// comments) loses when its page k fails and so does the page read from the end that holds
// page k's first row: the pages from the end are [150,250), [50,150), [0,50) (thread
// comments: [250,350), [150,250), [50,150) of the thread), so in every case the 50 rows from
// page k's start on are served by neither direction.
func failBoth(c matrixCase) func(i int) bool {
	return func(i int) bool { return i >= c.page*100 && i < c.page*100+50 }
}

func noRows(int) bool { return false }

func restArray(doc any) (*[]any, func(int)) {
	rows := doc.([]any)
	p := &rows
	return p, func(int) {}
}

func restWrapped(key string) func(doc any) (*[]any, func(int)) {
	return func(doc any) (*[]any, func(int)) {
		m := doc.(map[string]any)
		rows := m[key].([]any)
		p := &rows
		return p, func(n int) { m["total_count"] = n }
	}
}

func gqlConn(path ...string) func(doc any) (*[]any, func(int)) {
	return func(doc any) (*[]any, func(int)) {
		m := doc.(map[string]any)["data"].(map[string]any)
		for _, k := range path {
			m = m[k].(map[string]any)
		}
		rows := m["nodes"].([]any)
		p := &rows
		return p, func(n int) {
			if _, ok := m["totalCount"]; ok {
				m["totalCount"] = n
			}
		}
	}
}

func sval(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func ids[T any](items []T, id func(T) string) map[string]bool {
	out := map[string]bool{}
	for _, it := range items {
		out[id(it)] = true
	}
	return out
}

// restWant is the outcome for a REST listing whose lost rows become scope gaps of their count.
func restWant(c matrixCase, scope string, entityTotal bool) matrixWant {
	switch c.kind {
	case "fail":
		n := []int{100, 100, 50}[c.page]
		return matrixWant{lost: pageRows(c.page), gaps: gapsOf(scope, "fetch_failed", n)}
	case "invisible":
		return matrixWant{lost: func(i int) bool { return i == 100 || i == 101 }, gaps: gapsOf(scope, "fetch_failed", 2)}
	}
	w := matrixWant{lost: func(i int) bool { return c.drop && i == 5 }, added: c.add}
	if c.drop && !c.add && entityTotal {
		// The entity's count (read before the deletion) stays one above the list read again.
		w.gaps = gapsOf(scope, "fetch_failed", 1)
	}
	return w
}

// checksWant is the outcome for a listing that feeds Actions checks' created_at (workflow
// runs, jobs): a lost row loses its check and, for a failed check, its log.
func checksWant(s *ghscenario.Scenario, c matrixCase) matrixWant {
	var lost func(int) bool
	switch c.kind {
	case "fail":
		lost = pageRows(c.page)
	case "invisible":
		lost = func(i int) bool { return i == 100 || i == 101 }
	default:
		// The deleted row's check run is still listed but its creation time is gone: the check
		// is invalid_metadata (a check without an immutable creation time), never kept.
		w := matrixWant{lost: func(i int) bool { return c.drop && i == 5 }}
		if c.drop {
			w.gaps = gapsOf("checks", "invalid_metadata", 1)
		}
		return w
	}
	checks, logs := checkLost(s, lost)
	return matrixWant{lost: lost, gaps: gapsOf("checks", "fetch_failed", checks, "check_logs", "fetch_failed", logs)}
}

var matrixListings = map[string]matrixListing{
	"entity": {
		scenario: func() *ghscenario.Scenario {
			s := matrixPR()
			for i := range 250 {
				s.Labels = append(s.Labels, fmt.Sprintf("label-%03d", i))
			}
			return s
		},
		conn:   gqlConn("repository", "issueOrPullRequest", "labels"),
		record: func(_ *ghscenario.Scenario, row map[string]any) string { return sval(row, "name") },
		records: func(a *acquisition.Acquisition) map[string]bool {
			return ids(a.Entity.Labels, func(l string) string { return l })
		},
		expect: func(c matrixCase) matrixWant {
			if c.kind == "drift" {
				// Labels are a cursor connection: a deleted label was already read.
				return matrixWant{lost: noRows, added: c.add, deleted: c.drop}
			}
			return matrixWant{abort: true}
		},
	},
	"comments": {
		scenario: func() *ghscenario.Scenario {
			s := matrixPR()
			for i := range 250 {
				s.Comments = append(s.Comments, ghscenario.Comment{ID: int64(500000 + i), NodeID: fmt.Sprintf("IC_kwDOLq3Xz86M%07d", i), User: matrixUser(i),
					Body: fmt.Sprintf("comment %d", i), CreatedAt: matrixAt(i), UpdatedAt: matrixAt(i)})
			}
			return s
		},
		conn:   restArray,
		record: func(_ *ghscenario.Scenario, row map[string]any) string { return sval(row, "node_id") },
		records: func(a *acquisition.Acquisition) map[string]bool {
			return ids(a.Comments, func(c acquisition.Comment) string { return c.ID })
		},
		expect: func(c matrixCase) matrixWant { return restWant(c, "comments", true) },
	},
	"reviews": {
		scenario: func() *ghscenario.Scenario {
			s := matrixPR()
			for i := range 250 {
				s.Reviews = append(s.Reviews, ghscenario.Review{ID: int64(600000 + i), NodeID: fmt.Sprintf("PRR_kwDOLq3Xz86M%05d", i), User: matrixUser(i),
					State: "COMMENTED", Body: fmt.Sprintf("review %d", i), SubmittedAt: ptr(matrixAt(i)), CommitID: "6dcb09b5b57875f334f61aebed695e2e4193db5e"})
			}
			return s
		},
		conn:   restArray,
		record: func(_ *ghscenario.Scenario, row map[string]any) string { return sval(row, "node_id") },
		records: func(a *acquisition.Acquisition) map[string]bool {
			return ids(a.Reviews, func(v acquisition.Review) string { return v.ID })
		},
		expect: func(c matrixCase) matrixWant { return restWant(c, "reviews", true) },
	},
	"review_dismissals": {
		scenario: func() *ghscenario.Scenario {
			s := matrixPR()
			for i := range 250 {
				s.Reviews = append(s.Reviews, ghscenario.Review{ID: int64(600000 + i), NodeID: fmt.Sprintf("PRR_kwDOLq3Xz86M%05d", i), User: ghscenario.Alice,
					State: "DISMISSED", Body: fmt.Sprintf("review %d", i), SubmittedAt: ptr(matrixAt(i)), CommitID: "6dcb09b5b57875f334f61aebed695e2e4193db5e",
					DismissedBy: ghscenario.Carol, DismissedAt: ptr(matrixAt(i + 1))})
			}
			return s
		},
		conn:    gqlConn("repository", "pullRequest", "timelineItems"),
		fromEnd: true,
		record: func(_ *ghscenario.Scenario, row map[string]any) string {
			return sval(row["review"].(map[string]any), "id")
		},
		records: func(a *acquisition.Acquisition) map[string]bool {
			out := map[string]bool{}
			for _, v := range a.Reviews {
				if v.DismissedAt != nil {
					out[v.ID] = true
				}
			}
			return out
		},
		expect: func(c matrixCase) matrixWant {
			switch c.kind {
			case "fail":
				// The events after the failed page are read from the other end (last/before).
				return matrixWant{lost: noRows}
			case "failboth":
				// Neither direction serves the failed page's first half (see failBoth).
				return matrixWant{lost: failBoth(c), gaps: gapsOf("reviews", "fetch_failed", 1, "actors", "fetch_failed", 1)}
			case "invisible":
				// The timeline declares no total: rows it never serves cannot be counted, but a
				// short page is not taken for the end.
				return matrixWant{lost: func(i int) bool { return i == 100 || i == 101 }}
			}
			// An added event names a review that does not exist: it dismisses nothing.
			return matrixWant{lost: noRows, deleted: c.drop}
		},
	},
	"review_threads": {
		scenario: func() *ghscenario.Scenario {
			s := matrixPR()
			for i := range 250 {
				s.Threads = append(s.Threads, ghscenario.Thread{NodeID: fmt.Sprintf("PRRT_kwDOLq3Xz85M%05d", i), Path: "a.go", Line: ptr(i + 1), OriginalLine: ptr(i + 1), DiffSide: "RIGHT",
					Comments: []ghscenario.Comment{{NodeID: fmt.Sprintf("PRRC_kwDOLq3Xz86M%05d", i), User: matrixUser(i), Body: "t", CreatedAt: matrixAt(i), UpdatedAt: matrixAt(i)}}})
			}
			return s
		},
		conn:    gqlConn("repository", "pullRequest", "reviewThreads"),
		fromEnd: true,
		record:  func(_ *ghscenario.Scenario, row map[string]any) string { return sval(row, "id") },
		records: func(a *acquisition.Acquisition) map[string]bool {
			return ids(a.Threads, func(t acquisition.Thread) string { return t.ID })
		},
		expect: func(c matrixCase) matrixWant {
			switch c.kind {
			case "fail":
				// The threads after the failed page are read from the other end (last/before).
				return matrixWant{lost: noRows}
			case "failboth":
				return matrixWant{lost: failBoth(c), gaps: gapsOf("reviews", "fetch_failed", 50, "comments", "fetch_failed", 50)}
			case "invisible":
				return matrixWant{lost: func(i int) bool { return i == 100 || i == 101 }, gaps: gapsOf("reviews", "fetch_failed", 2, "comments", "fetch_failed", 2)}
			}
			return matrixWant{lost: noRows, added: c.add, deleted: c.drop}
		},
	},
	"review_thread_comments": {
		scenario: func() *ghscenario.Scenario {
			s := matrixPR()
			th := ghscenario.Thread{NodeID: "PRRT_kwDOLq3Xz85M00000", Path: "a.go", Line: ptr(1), OriginalLine: ptr(1), DiffSide: "RIGHT"}
			for i := range 350 {
				th.Comments = append(th.Comments, ghscenario.Comment{NodeID: fmt.Sprintf("PRRC_kwDOLq3Xz86M%05d", i), User: matrixUser(i), Body: "t", CreatedAt: matrixAt(i), UpdatedAt: matrixAt(i)})
			}
			s.Threads = []ghscenario.Thread{th}
			return s
		},
		conn:    gqlConn("node", "comments"),
		fromEnd: true,
		record:  func(_ *ghscenario.Scenario, row map[string]any) string { return sval(row, "id") },
		records: func(a *acquisition.Acquisition) map[string]bool {
			out := ids(a.Comments, func(c acquisition.Comment) string { return c.ID })
			// Rows of the listing are the comments after the thread's first page.
			for i := range 100 {
				delete(out, fmt.Sprintf("PRRC_kwDOLq3Xz86M%05d", i))
			}
			return out
		},
		expect: func(c matrixCase) matrixWant {
			switch c.kind {
			case "fail":
				// The comments after the failed page are read from the other end (last/before).
				return matrixWant{lost: noRows}
			case "failboth":
				return matrixWant{lost: failBoth(c), gaps: gapsOf("reviews", "fetch_failed", 50, "comments", "fetch_failed", 50)}
			case "invisible":
				return matrixWant{lost: func(i int) bool { return i == 100 || i == 101 }, gaps: gapsOf("reviews", "fetch_failed", 2, "comments", "fetch_failed", 2)}
			}
			return matrixWant{lost: noRows, added: c.add, deleted: c.drop}
		},
	},
	"check_runs": {
		scenario: func() *ghscenario.Scenario {
			s := matrixPR()
			s.Checks = matrixChecks(250, func(int) int64 { return 70001 })
			return s
		},
		conn:          restWrapped("check_runs"),
		record:        func(_ *ghscenario.Scenario, row map[string]any) string { return sval(row, "node_id") },
		records:       checkRecords,
		keepNumericID: true,
		expect: func(c matrixCase) matrixWant {
			w := restWant(c, "checks", false)
			if c.kind != "drift" {
				// The lost check runs' conclusions were never read: their logs' count is unknown.
				w.gaps.Add("check_logs", "fetch_failed", 1)
			}
			return w
		},
	},
	"workflow_runs": {
		scenario: func() *ghscenario.Scenario {
			s := matrixPR()
			s.Checks = matrixChecks(250, func(i int) int64 { return int64(71000 + i) })
			return s
		},
		conn: restWrapped("workflow_runs"),
		record: func(s *ghscenario.Scenario, row map[string]any) string {
			for _, c := range s.Checks {
				if float64(c.RunID) == row["id"].(float64) {
					return c.NodeID
				}
			}
			return ""
		},
		records:       checkRecords,
		keepNumericID: true,
		expect:        func(c matrixCase) matrixWant { return checksWant(matrixChecksOnly(), c) },
	},
	"workflow_jobs": {
		scenario: func() *ghscenario.Scenario {
			s := matrixPR()
			s.Checks = matrixChecks(250, func(int) int64 { return 70001 })
			return s
		},
		conn: restWrapped("jobs"),
		record: func(s *ghscenario.Scenario, row map[string]any) string {
			for _, c := range s.Checks {
				if float64(c.ID) == row["id"].(float64) {
					return c.NodeID
				}
			}
			return ""
		},
		records:       checkRecords,
		keepNumericID: true,
		expect:        func(c matrixCase) matrixWant { return checksWant(matrixChecksOnly(), c) },
	},
}

func ptr[T any](v T) *T { return &v }

// matrixChecksOnly carries the matrix's checks (their conclusions decide which logs a lost
// check takes with it; the run layout does not matter).
func matrixChecksOnly() *ghscenario.Scenario {
	s := matrixPR()
	s.Checks = matrixChecks(250, func(int) int64 { return 70001 })
	return s
}

func checkRecords(a *acquisition.Acquisition) map[string]bool {
	return ids(a.Checks, func(c acquisition.Check) string { return c.ID })
}

// endpointMatcher matches a cassette interaction against a listing's templated endpoint.
func endpointMatcher(endpoint string) func(in cassette.Interaction) bool {
	if op, ok := strings.CutPrefix(endpoint, "/graphql "); ok {
		return func(in cassette.Interaction) bool {
			b, _ := in.Request.Body.Bytes()
			return strings.Contains(string(b), `"operationName":"`+op+`"`)
		}
	}
	re := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[a-z_]+\\\}`).ReplaceAllString(regexp.QuoteMeta(endpoint), `[^/]+`) + "$")
	return func(in cassette.Interaction) bool {
		u, _ := url.Parse(in.Request.URL)
		return in.Request.Method == "GET" && re.MatchString(u.Path)
	}
}

type matrixRun struct {
	t    *testing.T
	s    *ghscenario.Scenario
	c    *cassette.Cassette
	spec matrixListing
	// pages are the listing's page interactions, in order; rows their rows.
	pages []int
	docs  []any
	rows  [][]any
}

func newMatrixRun(t *testing.T, l forge.Listing, spec matrixListing) *matrixRun {
	s := spec.scenario()
	c := build(t, s)
	m := &matrixRun{t: t, s: s, c: c, spec: spec}
	match := endpointMatcher(l.Endpoint)
	for i, in := range c.Interactions {
		if match(in) {
			m.pages = append(m.pages, i)
		}
	}
	if len(m.pages) != 3 {
		t.Fatalf("%s: the matrix scenario has %d pages, want 3", l.Name, len(m.pages))
	}
	for _, i := range m.pages {
		var doc any
		if err := json.Unmarshal(body(t, c, i), &doc); err != nil {
			t.Fatal(err)
		}
		rows, _ := spec.conn(doc)
		m.docs = append(m.docs, doc)
		m.rows = append(m.rows, *rows)
	}
	return m
}

// allRows are the listing's rows in order.
func (m *matrixRun) allRows() []any {
	var out []any
	for _, r := range m.rows {
		out = append(out, r...)
	}
	return out
}

// page renders page p with rows and declared total (-1: as recorded).
func (m *matrixRun) page(p int, rows []any, total int) httpfake.Reply {
	raw, _ := json.Marshal(m.docs[p])
	var doc any
	_ = json.Unmarshal(raw, &doc)
	_, setTotal := m.spec.conn(doc)
	if total >= 0 {
		setTotal(total)
	}
	replaceRows(doc, rows)
	r := replyOf(m.t, m.c.Interactions[m.pages[p]])
	r.Body, _ = json.Marshal(doc)
	return r
}

// replaceRows stores rows as the page's row list inside doc.
func replaceRows(doc any, rows []any) {
	if rows == nil {
		rows = []any{}
	}
	if d, ok := doc.(map[string]any); ok {
		if data, ok := d["data"].(map[string]any); ok {
			setNodes(data, rows)
			return
		}
		for _, k := range []string{"check_runs", "workflow_runs", "jobs"} {
			if _, ok := d[k]; ok {
				d[k] = rows
			}
		}
	}
}

// setNodes sets the "nodes" of the one connection in data that has them (the listing's).
func setNodes(m map[string]any, rows []any) bool {
	if _, ok := m["nodes"]; ok {
		m["nodes"] = rows
		return true
	}
	for _, v := range m {
		if sub, ok := v.(map[string]any); ok && setNodes(sub, rows) {
			return true
		}
	}
	return false
}

func replyOf(t *testing.T, in cassette.Interaction) httpfake.Reply {
	t.Helper()
	rb, err := in.Response.Body.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	r := httpfake.Reply{Status: in.Response.Status, Header: in.Response.Header.Clone(), Body: rb}
	r.Header.Del("Content-Length")
	if loc := r.Header.Get("Location"); loc != "" {
		if lu, err := url.Parse(loc); err == nil && lu.IsAbs() {
			lu.Scheme, lu.Host = "", ""
			r.Header.Set("Location", lu.String())
		}
	}
	return r
}

func (m *matrixRun) expect(f *httpfake.Server, i int, optional bool, replies ...httpfake.Reply) {
	meth, pq, b := target(m.t, m.c, i)
	e := f.ExpectBody(meth, pq, b, replies...)
	if optional {
		e.Optional()
	}
}

// bodyOf renders a page whose body is the rows themselves (a REST array) or the document.
func (m *matrixRun) render(p int, rows []any, total int) httpfake.Reply {
	if _, ok := m.docs[p].([]any); ok {
		r := replyOf(m.t, m.c.Interactions[m.pages[p]])
		if rows == nil {
			rows = []any{}
		}
		r.Body, _ = json.Marshal(rows)
		return r
	}
	return m.page(p, rows, total)
}

// clone is a new row: row with fresh IDs (a numeric id kept when the row's job or run is the
// original's).
func (m *matrixRun) clone(row any) any {
	raw, _ := json.Marshal(row)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	for _, k := range []string{"id", "node_id"} {
		switch v := out[k].(type) {
		case string:
			out[k] = v + "Z"
		case float64:
			if !m.spec.keepNumericID {
				out[k] = v + 1e6
			}
		}
	}
	if nm, ok := out["name"].(string); ok && out["id"] == nil {
		out["name"] = nm + "-added" // a label
	}
	if cs, ok := out["comments"].(map[string]any); ok {
		for _, n := range cs["nodes"].([]any) {
			n.(map[string]any)["id"] = n.(map[string]any)["id"].(string) + "Z"
		}
	}
	return out
}

// rowID is a row's node ID as the drift check asks for it.
func rowID(row any) string { return sval(row.(map[string]any), "node_id") }

// existsReply answers the drift check of a read whose rows before its last page are rows:
// ids not in live are null (deleted), with GitHub's NOT_FOUND errors.
func existsReply(t *testing.T, rows []any, live map[string]bool) ([]byte, httpfake.Reply) {
	t.Helper()
	var idList []string
	for _, r := range rows {
		idList = append(idList, rowID(r))
	}
	vars := github.ExistsVars(idList)
	data := map[string]any{}
	var errs []any
	for k, v := range vars {
		alias := "n" + strings.TrimPrefix(k, "ids")
		nodes := []any{}
		for j, id := range v.([]string) {
			if live[id] {
				nodes = append(nodes, map[string]any{"id": id})
			} else {
				nodes = append(nodes, nil)
				errs = append(errs, map[string]any{"type": "NOT_FOUND", "path": []any{alias, j}, "message": "Could not resolve to a node with the global id of '" + id + "'"})
			}
		}
		data[alias] = nodes
	}
	reqBody, err := github.GraphQLRequestBody("Exists", vars)
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{"data": data}
	if errs != nil {
		doc["errors"] = errs
	}
	return reqBody, httpfake.JSON(200, doc)
}

// run registers the case on a fake, acquires, and returns the outcome. Every interaction of
// the scenario is optional (twice: lists are read again when inconsistent, jobs listed once
// per run); the case's own replies are what the listing answers.
func (m *matrixRun) run(c matrixCase) (a *acquisition.Acquisition, all []any, added, deleted any, err error) {
	t := m.t
	f := httpfake.New(t)
	all = m.allRows()
	isPage := map[int]bool{}
	for p, i := range m.pages {
		isPage[i] = true
		r := replyOf(t, m.c.Interactions[i])
		switch {
		case c.kind == "drift":
		case (c.kind == "fail" || c.kind == "failboth") && p == c.page:
			m.expect(f, i, false, matrixPersist()...)
		case c.kind == "invisible" && p == c.page:
			r = m.render(p, m.rows[p][2:], -1)
			m.expect(f, i, false, r)
			m.expect(f, i, true, r)
		default:
			m.expect(f, i, true, r, r)
		}
	}
	if c.kind == "drift" {
		added, deleted = m.drift(f, c, all)
	}
	for i, in := range m.c.Interactions {
		if !isPage[i] {
			m.expect(f, i, true, replyOf(t, in), replyOf(t, in))
		}
	}
	m.fromEnd(f, c)
	cl, err := github.New(fastOptions(f.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err = cl.Acquire(ctx, refOf(m.s), testProfile(kindOf(m.s)))
	return a, all, added, deleted, err
}

func matrixPersist() []httpfake.Reply {
	return []httpfake.Reply{httpfake.BadGateway(), httpfake.BadGateway(), httpfake.BadGateway(), httpfake.BadGateway()}
}

// drift registers the listing's pages for a drift case: page 1 as it was (state A), the
// later pages and any re-read from state B (a row of page 1 deleted, a row added at the end),
// and the drift checks of both reads. It returns the added and the deleted row.
func (m *matrixRun) drift(f *httpfake.Server, c matrixCase, all []any) (added, deleted any) {
	t := m.t
	var b []any
	for i, r := range all {
		if c.drop && i == 5 {
			deleted = r
			continue
		}
		b = append(b, r)
	}
	if c.add {
		added = m.clone(all[len(all)-1])
		b = append(b, added)
	}
	var pagesB [][]any
	if !isREST(m.docs[0]) {
		// A cursor connection goes on after the last row served: its later pages are the
		// rows after page 1's last row, whatever changed before it.
		rest := b[len(m.rows[0])-boolInt(c.drop):]
		pagesB = [][]any{b[:min(len(b), 100)], rest[:min(len(rest), 100)], rest[min(len(rest), 100):]}
	} else {
		pagesB = [][]any{b[:100], b[100:200], b[200:]}
	}
	for p, i := range m.pages {
		rB := m.render(p, pagesB[p], len(b))
		if p == 0 {
			m.expect(f, i, false, replyOf(t, m.c.Interactions[i]))
			m.expect(f, i, true, rB)
		} else {
			m.expect(f, i, false, rB)
			m.expect(f, i, true, rB)
		}
	}
	if isREST(m.docs[0]) {
		live := map[string]bool{}
		for _, r := range b {
			live[rowID(r)] = true
		}
		first := append(append([]any{}, m.rows[0]...), pagesB[1]...)
		for _, rows := range [][]any{first, b[:200]} {
			rb, rep := existsReply(t, rows, live)
			f.ExpectBody("POST", "/graphql", rb, rep, rep).Optional()
		}
	}
	return added, deleted
}

// fromEnd registers every page the adapter may read from the other end; for a "failboth"
// case the one holding the failed page's first row fails too.
func (m *matrixRun) fromEnd(f *httpfake.Server, c matrixCase) {
	t := m.t
	ins, err := ghscenario.FromEnd(m.s)
	if err != nil {
		t.Fatal(err)
	}
	poison := ""
	if c.kind == "failboth" {
		poison = sval(m.rows[c.page][0].(map[string]any), "id")
	}
	for _, in := range ins {
		mm := &matrixRun{t: t, c: &cassette.Cassette{Interactions: []cassette.Interaction{in}}}
		if poison != "" && m.holds(in, poison) {
			mm.expect(f, 0, false, matrixPersist()...)
			continue
		}
		mm.expect(f, 0, true, replyOf(t, in))
	}
}

// holds reports whether a page from the end of the listing serves the row with node ID id.
func (m *matrixRun) holds(in cassette.Interaction, id string) bool {
	b, _ := in.Request.Body.Bytes()
	op := ""
	for _, o := range []string{"ThreadsFromEnd", "ThreadCommentsFromEnd", "DismissalsFromEnd"} {
		if strings.Contains(string(b), `"operationName":"`+o+`"`) {
			op = o
		}
	}
	if op == "" {
		return false
	}
	var doc any
	rb, _ := in.Response.Body.Bytes()
	if json.Unmarshal(rb, &doc) != nil {
		return false
	}
	defer func() { _ = recover() }() // a page of another connection has another shape
	rows, _ := m.spec.conn(doc)
	for _, r := range *rows {
		if sval(r.(map[string]any), "id") == id {
			return true
		}
	}
	return false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func isREST(doc any) bool {
	switch d := doc.(type) {
	case []any:
		return true
	case map[string]any:
		_, gql := d["data"]
		return !gql
	}
	return false
}

func TestFaultMatrix(t *testing.T) {
	for _, l := range github.Listings().Paged() {
		spec, ok := matrixListings[l.Name]
		if !ok {
			t.Errorf("listing %s (%s) has no fault-matrix entry", l.Name, l.Endpoint)
			continue
		}
		t.Run(l.Name, func(t *testing.T) {
			m := newMatrixRun(t, l, spec)
			for _, c := range matrixCases {
				if c.kind == "failboth" && !spec.fromEnd {
					continue // no other end to read: the forward failure is the whole case
				}
				t.Run(c.String(), func(t *testing.T) {
					m.t = t
					m.check(c)
				})
			}
		})
	}
}

func (m *matrixRun) check(c matrixCase) {
	t := m.t
	a, rows, added, deleted, err := m.run(c)
	want := m.spec.expect(c)
	if want.abort {
		var ee *forge.EntityError
		if !errors.As(err, &ee) || ee.Code != acquisition.GapFetchFailed {
			t.Fatalf("err = %v, want a fetch_failed entity error", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	wantRecs := map[string]bool{}
	for i, r := range rows {
		if id := m.spec.record(m.s, r.(map[string]any)); id != "" && !want.lost(i) {
			wantRecs[id] = true
		}
	}
	if deleted != nil {
		id := m.spec.record(m.s, deleted.(map[string]any))
		if want.deleted {
			wantRecs[id] = true
		} else {
			delete(wantRecs, id)
		}
	}
	if added != nil && want.added {
		if id := m.spec.record(m.s, added.(map[string]any)); id != "" {
			wantRecs[id] = true
		}
	}
	got := m.spec.records(a)
	if !reflect.DeepEqual(got, wantRecs) {
		t.Errorf("records: %d, want %d; missing %v, extra %v", len(got), len(wantRecs), diff(wantRecs, got), diff(got, wantRecs))
	}
	wantGaps := want.gaps
	sortGaps(&wantGaps)
	gotGaps := a.Outcomes
	sortGaps(&gotGaps)
	if !reflect.DeepEqual(norm(gotGaps), norm(wantGaps)) {
		t.Errorf("gaps = %+v, want %+v", gotGaps, wantGaps)
	}
}

func diff(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	if len(out) > 5 {
		out = append(out[:5], fmt.Sprintf("… %d in all", len(out)))
	}
	return out
}

func sortGaps(o *acquisition.Outcomes) {
	for _, s := range []*[]acquisition.Gap{&o.Comments, &o.Reviews, &o.Checks, &o.CheckLogs, &o.AgentRuns, &o.Actors} {
		sort.Slice(*s, func(i, j int) bool { return (*s)[i].Code < (*s)[j].Code })
	}
}

// norm makes empty and nil gap lists equal.
func norm(o acquisition.Outcomes) string {
	b, _ := json.Marshal(o)
	return string(b)
}

// Every unpaged endpoint of the dependency map fails persistently in its own case: what it
// feeds is a gap (or an outcome the assembler turns into one), the rest is kept.
func TestFaultMatrixUnpaged(t *testing.T) {
	cases := map[string]func(t *testing.T){
		// A failed check's log: the redirect endpoint fails; the check is kept with its log's
		// fetch_failed outcome (the assembler's check_logs gap), every other log is read.
		"job_logs": func(t *testing.T) {
			s := matrixChecksOnly()
			c := build(t, s)
			i := find(t, c, "/actions/jobs/90010/logs")
			a, _ := acquireOptional(t, s, c, func(f *httpfake.Server) {
				m, pq, b := target(t, c, i)
				f.ExpectBody(m, pq, b, matrixPersist()...)
			})
			failed, fetched := 0, 0
			for _, ck := range a.Checks {
				switch {
				case ck.Log == nil:
				case ck.Log.Outcome == acquisition.LogFetchFailed:
					failed++
				case ck.Log.Outcome == acquisition.LogFetched:
					fetched++
				}
			}
			if len(a.Checks) != 250 || failed != 1 || fetched != 24 || norm(a.Outcomes) != norm(acquisition.Outcomes{}) {
				t.Errorf("%d checks, logs %d failed %d fetched, gaps %+v; want 250, 1, 24, none", len(a.Checks), failed, fetched, a.Outcomes)
			}
		},
	}
	for name, l := range github.Listings() {
		if l.Paged || l.Endpoint == "" {
			continue // paged: TestFaultMatrix; no endpoint: a derived listing (receipts, actors)
		}
		run, ok := cases[name]
		if !ok {
			t.Errorf("unpaged listing %s (%s) has no fault case", name, l.Endpoint)
			continue
		}
		t.Run(name, run)
	}
}
