package forgejo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/test/httpfake"
)

// giteaReviewPaging is Gitea's pull request review list: X-Total-Count, no Link, limit
// clamped to MAX_RESPONSE_ITEMS (50).
var giteaReviewPaging = func() httpfake.Dialect { d := httpfake.ForgejoPaging; d.Link = false; return d }()

var testLimits = ReaderLimits{PageSize: 50, MaxPages: 100, MaxRows: 5000, MaxResponseBytes: 8 << 20}

// unexpected is the handler behind a Faults injector: any request that is not a registered
// list fails the test.
func unexpected(t *testing.T) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL)
		http.Error(w, "unexpected", http.StatusTeapot)
	})
}

func newTestReader(t *testing.T, url string, lim ReaderLimits, counter *atomic.Int64) *Reader {
	t.Helper()
	hc, err := NewReadOnlyClient(forge.Options{APIURL: url + "/api/v1", Token: "secret-token-value"},
		forge.Retry{Max: 1, WaitMin: 1, WaitMax: 1, MaxServerWait: 1}, counter)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := NewReader(url+"/api/v1", hc, lim)
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// reviewRows are n review rows whose bytes a re-encoding would change: keys out of order, an
// integer no int64 or float64 holds exactly, an escaped character.
func reviewRows(n int) []any {
	rows := make([]any, n)
	for i := range rows {
		rows[i] = json.RawMessage(fmt.Sprintf(`{"state":"COMMENT","id":%d,"big":123456789012345678901234567890,"body":"caf\u00e9 %d","comments_count":0}`, 1000-i, i))
	}
	return rows
}

// TestReviewsListReadsEveryPageWithoutLinkKeepingBytes: Gitea's review list sends
// X-Total-Count and no Link and clamps the page size; the service reads every page, in the
// order served, and hands each row back with the provider's exact bytes.
func TestReviewsListReadsEveryPageWithoutLinkKeepingBytes(t *testing.T) {
	f := httpfake.NewFaults(t, giteaReviewPaging)
	rows := reviewRows(120)
	f.List("/api/v1/repos/acme/demo/pulls/9/reviews", rows...)
	lim := testLimits
	lim.PageSize = 100 // asks for more than the server's 50: the clamp must not end the list
	var n atomic.Int64
	rd := newTestReader(t, f.Start(unexpected(t)), lim, &n)
	l, err := rd.Repo("acme", "demo").Reviews.List(context.Background(), 9)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Rows) != 120 || len(l.Pages) != 3 || n.Load() != 3 {
		t.Fatalf("%d rows in %d pages (%d requests), want 120 in 3", len(l.Rows), len(l.Pages), n.Load())
	}
	for i, r := range l.Rows {
		if string(r.Raw) != string(rows[i].(json.RawMessage)) {
			t.Fatalf("row %d bytes %s, want %s", i, r.Raw, rows[i])
		}
		if r.Value.ID == nil || *r.Value.ID != int64(1000-i) || *r.Value.State != "COMMENT" {
			t.Fatalf("row %d typed %+v", i, r.Value)
		}
	}
	p := l.Pages[1]
	if p.Request != "/repos/acme/demo/pulls/9/reviews?limit=100&page=2" || p.Rows != 50 || p.Status != 200 || p.Link != nil || p.TotalCount == nil || *p.TotalCount != "120" {
		t.Errorf("page 2 provenance %+v", p)
	}
}

// TestReviewsListHiddenRowsIncomplete: rows the server counts but does not serve (another
// user's pending review) make the list incomplete, naming both numbers.
func TestReviewsListHiddenRowsIncomplete(t *testing.T) {
	f := httpfake.NewFaults(t, giteaReviewPaging)
	f.List("/api/v1/repos/acme/demo/pulls/9/reviews", reviewRows(60)...)
	f.HidePage("/api/v1/repos/{owner}/{repo}/pulls/{n}/reviews", 2, 1)
	rd := newTestReader(t, f.Start(unexpected(t)), testLimits, nil)
	l, err := rd.Repo("acme", "demo").Reviews.List(context.Background(), 9)
	var pe *PaginationError
	if !errors.As(err, &pe) || pe.Rule != "read 59 rows, X-Total-Count says 60" {
		t.Fatalf("err = %v, want the incomplete-list rule", err)
	}
	if len(l.Rows) != 59 || len(l.Pages) != 2 {
		t.Errorf("%d rows in %d pages kept, want 59 in 2", len(l.Rows), len(l.Pages))
	}
}

// TestListBounds: the page, row and response-size bounds end a list with an error, never a
// silent cut.
func TestListBounds(t *testing.T) {
	for name, c := range map[string]struct {
		lim  func(*ReaderLimits)
		want string
	}{
		"pages": {func(l *ReaderLimits) { l.MaxPages = 2 }, "pagination: more than 2 pages"},
		"rows":  {func(l *ReaderLimits) { l.MaxRows = 70 }, "pagination: more than 70 rows"},
		"bytes": {func(l *ReaderLimits) { l.MaxResponseBytes = 1000 }, "response larger than 1000 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			f := httpfake.NewFaults(t, httpfake.ForgejoPaging)
			f.List("/api/v1/repos/acme/demo/issues/7/comments", reviewRows(120)...)
			lim := testLimits
			c.lim(&lim)
			rd := newTestReader(t, f.Start(unexpected(t)), lim, nil)
			_, err := rd.Repo("acme", "demo").Issues.ListComments(context.Background(), 7)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// TestDecodeErrorKeepsEarlierRows: a malformed row ends the list with a DecodeError naming the
// row (not its content); the rows before it are kept for the caller's archive.
func TestDecodeErrorKeepsEarlierRows(t *testing.T) {
	f := httpfake.NewFaults(t, httpfake.ForgejoPaging)
	f.List("/api/v1/repos/acme/demo/pulls/9/reviews/5/comments", json.RawMessage(`{"id":1,"pull_request_review_id":5}`), json.RawMessage(`"secret text"`))
	rd := newTestReader(t, f.Start(unexpected(t)), testLimits, nil)
	l, err := rd.Repo("acme", "demo").ReviewComments.List(context.Background(), 9, 5)
	var de *DecodeError
	if !errors.As(err, &de) || !strings.HasPrefix(de.Msg, "row 2 is not a well-typed JSON object") || strings.Contains(de.Msg, "secret") {
		t.Fatalf("err = %v, want the row-2 decode error without the row's text", err)
	}
	if len(l.Rows) != 1 || *l.Rows[0].Value.ReviewID != 5 || len(l.Pages) != 1 || l.Pages[0].Rows != 0 {
		t.Errorf("kept %d rows, pages %+v", len(l.Rows), l.Pages)
	}
}

// TestObjectServices: the single-object services read their endpoint, keep the body's bytes
// and fill the provenance also on failure.
func TestObjectServices(t *testing.T) {
	f := httpfake.New(t)
	f.Expect("GET", "/api/v1/version", httpfake.JSON(200, `{"version":"1.27.3"}`))
	f.Expect("GET", "/api/v1/repos/acme/demo", httpfake.JSON(200, `{"id":77,"default_branch":"main","full_name":"acme/demo"}`))
	f.Expect("GET", "/api/v1/repos/acme/demo/pulls/9", httpfake.JSON(200, `{"id":9009,"number":9,"comments":1.5,"head":{"sha":"abc"}}`))
	f.Expect("GET", "/api/v1/repos/acme/demo/issues/7", httpfake.JSON(404, `{"message":"not found"}`))
	rd := newTestReader(t, f.URL, testLimits, nil)
	ctx := context.Background()
	v, err := rd.Version(ctx)
	if err != nil || *v.Value.Version != "1.27.3" || string(v.Raw) != `{"version":"1.27.3"}` || v.Page.Request != "/version" || v.Page.Rows != 1 {
		t.Fatalf("version %+v, %v", v, err)
	}
	r, err := rd.Repo("acme", "demo").Get(ctx)
	if err != nil || *r.Value.ID != 77 || *r.Value.DefaultBranch != "main" {
		t.Fatalf("repo %+v, %v", r, err)
	}
	p, err := rd.Repo("acme", "demo").Pulls.Get(ctx, 9)
	if err != nil || string(p.Value.Comments) != "1.5" || *p.Value.Head.SHA != "abc" || p.Value.Merged != nil {
		t.Fatalf("pull %+v, %v", p, err)
	}
	is, err := rd.Repo("acme", "demo").Issues.Get(ctx, 7)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 404 || is.Page.Status != 404 || is.Page.Rows != 0 || is.Raw != nil {
		t.Fatalf("issue %+v, %v: want the 404 with its provenance", is, err)
	}
}

// TestNewReaderRefusesBadSettings: the API URL rule and the limits are checked up front.
func TestNewReaderRefusesBadSettings(t *testing.T) {
	hc := &http.Client{}
	for _, c := range []struct {
		url string
		hc  *http.Client
		lim ReaderLimits
	}{
		{"ftp://h/api/v1", hc, testLimits},
		{"https://h/api", hc, testLimits},
		{"https://h/api/v1", nil, testLimits},
		{"https://h/api/v1", hc, ReaderLimits{PageSize: 50}},
	} {
		if _, err := NewReader(c.url, c.hc, c.lim); err == nil {
			t.Errorf("NewReader(%q, %v, %+v) accepted", c.url, c.hc != nil, c.lim)
		}
	}
}

// TestReadOnlyClientRefusesWrites: no method but GET reaches the transport, and a refused
// request is not counted.
func TestReadOnlyClientRefusesWrites(t *testing.T) {
	var n atomic.Int64
	hc, err := NewReadOnlyClient(forge.Options{APIURL: "http://127.0.0.1:1/api/v1", Token: "secret-token-value",
		Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
			t.Error("a non-GET request reached the transport")
			return nil, errors.New("unreachable")
		})}, forge.Retry{}, &n)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		req, _ := http.NewRequest(m, "http://127.0.0.1:1/api/v1/version", nil)
		if _, err := hc.Do(req); err == nil || !strings.Contains(err.Error(), "only GET") {
			t.Errorf("%s: err = %v, want the GET-only refusal", m, err)
		}
	}
	if n.Load() != 0 {
		t.Errorf("%d requests counted", n.Load())
	}
}

// TestRetryLogEndpointNamesNoRepository: the retry log line's endpoint template carries no
// owner, repository, number or query.
func TestRetryLogEndpointNamesNoRepository(t *testing.T) {
	for in, want := range map[string]string{
		"https://git.example/api/v1/version":                                         "GET /version",
		"https://git.example/api/v1/repos/acme/demo":                                 "GET /repos/{owner}/{repo}",
		"https://git.example/api/v1/repos/acme/demo/pulls/9/reviews?limit=50&page=2": "GET /repos/{owner}/{repo}/pulls/{n}/reviews",
		"https://git.example/sub/api/v1/repos/acme/42/pulls/9/reviews/77/comments":   "GET /repos/{owner}/{repo}/pulls/{n}/reviews/{n}/comments",
	} {
		req, err := http.NewRequest(http.MethodGet, in, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := endpointOf(req); got != want {
			t.Errorf("endpointOf(%s) = %q, want %q", in, got, want)
		}
	}
}

// FuzzNextLink: the Link header is untrusted; it never steers the walk off the endpoint.
func FuzzNextLink(f *testing.F) {
	f.Add(`<http://h/api/v1/x?limit=50&page=2>; rel="next",<http://h/api/v1/x?limit=50&page=3>; rel="last"`)
	f.Add(`<//evil/api/v1/x?page=2>; rel=next`)
	f.Fuzz(func(t *testing.T, link string) {
		h := map[string][]string{"Link": {link}}
		if next, err := nextLink("/x", h, 1); next && (err != nil || !strings.Contains(link, "/api/v1/x") || !strings.Contains(link, "page=2")) {
			t.Fatalf("next page accepted from %q (err %v)", link, err)
		}
	})
}

// FuzzDecodeRows: list pages are untrusted; decoding never panics, every accepted row is a
// JSON object whose bytes are a sub-slice of the page, and an error names no content.
func FuzzDecodeRows(f *testing.F) {
	f.Add([]byte(`[{"id":1,"user":{"id":2},"state":"APPROVED"}]`))
	f.Add([]byte(`[{"id":"x"}]`))
	f.Add([]byte(`[1,{}]`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := DecodeRows[ReviewRecord](b)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error is not a *DecodeError: %v", err)
			}
		}
		for _, r := range rows {
			if !json.Valid(r.Raw) || r.Raw[0] != '{' {
				t.Fatalf("accepted row %q is not a JSON object", r.Raw)
			}
		}
	})
}
