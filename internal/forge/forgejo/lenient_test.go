package forgejo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"code.gitea.io/sdk/gitea"

	"github.com/forgectx/forgectx/test/httpfake"
)

const reviewsTemplate = "/api/v1/repos/{owner}/{repo}/pulls/{n}/reviews"

// snapshotReviewRows are n review rows in the shape the snapshot decodes (nativeReview).
func snapshotReviewRows(n int) []any {
	rows := make([]any, n)
	for i := range rows {
		rows[i] = fmt.Sprintf(`{"id":%d,"state":"COMMENTED","created_at":"2026-01-01T00:00:00Z","submitted_at":"2026-01-01T00:00:00Z"}`, i+1)
	}
	return rows
}

// TestLenientWalkSkipsAFailedPageTheStrictWalkStopsAt: the same Reader, two walks over one
// list whose page 2 fails persistently. The strict walk ends with the error; the lenient one
// skips the page, reads page 3, reports the declared rows it lost and the pages it read, and
// names the operation and status (never the body) in its error.
func TestLenientWalkSkipsAFailedPageTheStrictWalkStopsAt(t *testing.T) {
	f := httpfake.NewFaults(t, giteaReviewPaging)
	f.List("/api/v1/repos/acme/demo/pulls/9/reviews", snapshotReviewRows(120)...)
	f.FailPage(reviewsTemplate, 2)
	var n atomic.Int64
	rd := newTestReader(t, f.Start(unexpected(t)), testLimits, &n)
	svc := rd.Repo("acme", "demo").Reviews

	if _, err := svc.List(context.Background(), 9); err == nil {
		t.Fatal("strict walk: a failed page must end the list with an error")
	}
	l := svc.ListLenient(context.Background(), 9, LenientOptions{})
	if len(l.Rows) != 70 || l.Lost != 50 || l.Pages != 2 {
		t.Fatalf("lenient walk: %d rows, %d lost, %d pages; want 70 rows (pages 1 and 3), 50 lost, 2 pages", len(l.Rows), l.Lost, l.Pages)
	}
	var e *APIError
	if !errors.As(l.Err, &e) || e.Status != http.StatusInternalServerError || e.Op != "GET /repos/{owner}/{repo}/pulls/{n}/reviews" {
		t.Fatalf("lenient walk error %v: want an APIError naming the operation with status 500", l.Err)
	}
	if l.Rows[0].ID != 1 || l.Rows[69].ID != 120 || l.Rows[50].ID != 101 {
		t.Fatalf("rows out of order: first %d, 51st %d, last %d", l.Rows[0].ID, l.Rows[50].ID, l.Rows[69].ID)
	}
	if got := l.Pagination.Pages; got != 2 {
		t.Fatalf("standing pagination counts %d pages, want 2", got)
	}
}

// TestLenientWalkRereadsAListThatMoved: a review deleted after page 1 shifts page 2 and
// changes the total; the walk stops at the page that shows it, tells the caller, and reads
// the list once more, which stands complete.
func TestLenientWalkRereadsAListThatMoved(t *testing.T) {
	f := httpfake.NewFaults(t, giteaReviewPaging)
	f.List("/api/v1/repos/acme/demo/pulls/9/reviews", snapshotReviewRows(120)...)
	f.Drift(reviewsTemplate, 1, httpfake.Change{Delete: []int{0}})
	rd := newTestReader(t, f.Start(unexpected(t)), testLimits, nil)
	rereads := 0
	l := rd.Repo("acme", "demo").Reviews.ListLenient(context.Background(), 9, LenientOptions{Rereading: func() { rereads++ }})
	if l.Err != nil || rereads != 1 {
		t.Fatalf("error %v after %d re-reads; want a complete list after one", l.Err, rereads)
	}
	if len(l.Rows) != 119 || l.Rows[0].ID != 2 {
		t.Fatalf("%d rows starting at %d; want the 119 left, from id 2", len(l.Rows), l.Rows[0].ID)
	}
	// Stopped at page 2 of the first read (page 1 counted), then 3 pages of the re-read.
	if l.Pages != 4 || l.Pagination.Pages != 3 || f.Requests() != 5 {
		t.Fatalf("%d pages counted, %d standing, %d requests; want 4, 3 and 5", l.Pages, l.Pagination.Pages, f.Requests())
	}
}

// TestSnapshotReaderSendsTheTokenAndQuotesOneLineMessages: the client's Reader (the snapshot's
// way in) carries the token, reads a review's comments in one request without page or limit,
// and keeps the server's one-line message of an error answer but never an HTML page.
func TestSnapshotReaderSendsTheTokenAndQuotesOneLineMessages(t *testing.T) {
	var unauth atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/repos/acme/demo/pulls/9/reviews/5/comments", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" {
			t.Errorf("review comments asked with query %q, want none", r.URL.RawQuery)
		}
		if r.Header.Get("Authorization") != "token tok-123" {
			unauth.Add(1)
		}
		_, _ = w.Write([]byte(`[{"id":7,"pull_request_review_id":5,"body":"x"}]`))
	})
	mux.HandleFunc("/api/v1/repos/acme/demo/issues/3", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message":"issue does not exist"}`))
	})
	mux.HandleFunc("/api/v1/repos/acme/demo/pulls/3", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("<html>\n<body>proxy error</body></html>"))
	})
	fake := httpfake.NewFaults(t, httpfake.ForgejoPaging)
	base := fake.Start(mux)
	c, err := New(Options{APIURL: base + "/api/v1", Token: "tok-123", RetryMax: -1})
	if err != nil {
		t.Fatal(err)
	}
	repo := c.reader.Repo("acme", "demo")
	cs, err := repo.ReviewComments.ListOnce(context.Background(), 9, 5)
	if err != nil || len(cs) != 1 || cs[0].ID != 7 || unauth.Load() != 0 {
		t.Fatalf("review comments %v, %v (%d requests without the token)", cs, err, unauth.Load())
	}
	_, err = repo.Issues.GetLenient(context.Background(), 3)
	if err == nil || err.Error() != "GET /repos/{owner}/{repo}/issues/{n}: HTTP 404: issue does not exist" {
		t.Fatalf("404 error %v", err)
	}
	_, err = repo.Pulls.GetLenient(context.Background(), 3)
	if err == nil || err.Error() != "GET /repos/{owner}/{repo}/pulls/{n}: HTTP 502: Bad Gateway" {
		t.Fatalf("502 error %v", err)
	}
}

// TestWalkPagesStopsAtTheFirstFailureAndBeforeItsBound: the search walk (the commenter's and
// the reconciler's) skips nothing — a failed page ends it with that page's error and no later
// page is asked for — and a bound stops it before the request past it.
func TestWalkPagesStopsAtTheFirstFailureAndBeforeItsBound(t *testing.T) {
	const comments = "/api/v1/repos/acme/demo/issues/4/comments"
	const runs = "/api/v1/repos/acme/demo/actions/runs"
	f := httpfake.NewFaults(t, httpfake.ForgejoPaging)
	cs := make([]any, 120)
	rs := make([]any, 120)
	for i := range cs {
		cs[i] = fmt.Sprintf(`{"id":%d,"body":"b","user":{"id":1}}`, i+1)
		rs[i] = fmt.Sprintf(`{"id":%d,"run_number":%d,"status":"completed"}`, 500-i, 500-i)
	}
	f.List(comments, cs...)
	f.List(runs, rs...).Envelope("workflow_runs", "total_count")
	f.FailPage("/api/v1/repos/{owner}/{repo}/issues/{n}/comments", 2)
	rd := newTestReader(t, f.Start(unexpected(t)), testLimits, nil)
	repo := rd.Repo("acme", "demo")

	seen := 0
	err := repo.Issues.eachComment(context.Background(), 4, func(rows []*gitea.Comment) error { seen += len(rows); return nil })
	var e *APIError
	if !errors.As(err, &e) || e.Status != http.StatusInternalServerError || seen != 50 || f.RequestsTo(comments) != 1+2 {
		// page 1, then page 2 and its one retry (the test client retries once)
		t.Fatalf("comments walk: err %v after %d rows and %d requests; want the page-2 500 after 50 rows, page 3 never asked", err, seen, f.RequestsTo(comments))
	}
	pages := 0
	err = repo.Actions.eachRun(context.Background(), 1, 2, func([]actionRun) error { pages++; return nil })
	if !errors.Is(err, errWalkLimit) || pages != 2 || f.RequestsTo(runs) != 2 {
		t.Fatalf("runs walk: err %v after %d pages and %d requests; want errWalkLimit after 2 pages, page 3 never asked", err, pages, f.RequestsTo(runs))
	}
}
