package httpfake

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

type row struct {
	ID int `json:"id"`
}

func rows(ids ...int) []any {
	var out []any
	for _, id := range ids {
		out = append(out, row{ID: id})
	}
	return out
}

// getPage fetches one page and returns its status, row IDs and headers.
func getPage(t *testing.T, url string) (int, []int, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil, resp.Header
	}
	var rs []row
	if err := json.NewDecoder(resp.Body).Decode(&rs); err != nil {
		t.Fatal(err)
	}
	ids := []int{}
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	return resp.StatusCode, ids, resp.Header
}

const tmpl = "/api/v1/repos/{owner}/{repo}/pulls/{n}/reviews"

func TestFaultsServePagesInTheDialect(t *testing.T) {
	f := NewFaults(t, ForgejoPaging)
	f.List("/api/v1/repos/o/r/pulls/1/reviews", rows(1, 2, 3, 4, 5)...)
	base := f.Start(nil) + "/api/v1/repos/o/r/pulls/1/reviews"
	code, ids, h := getPage(t, base+"?limit=2&page=2")
	if code != 200 || !reflect.DeepEqual(ids, []int{3, 4}) || h.Get("X-Total-Count") != "5" {
		t.Fatalf("page 2: %d %v total %q", code, ids, h.Get("X-Total-Count"))
	}
	if l := h.Get("Link"); !strings.Contains(l, `page=3>; rel="next"`) || !strings.Contains(l, `page=3>; rel="last"`) {
		t.Fatalf("link %q", l)
	}
	_, ids, h = getPage(t, base+"?limit=2&page=3")
	if !reflect.DeepEqual(ids, []int{5}) || strings.Contains(h.Get("Link"), "next") {
		t.Fatalf("last page: %v link %q", ids, h.Get("Link"))
	}
	// The dialect's clamp: limit=100 is served 50 a page.
	big := NewFaults(t, ForgejoPaging)
	var many []int
	for i := 1; i <= 60; i++ {
		many = append(many, i)
	}
	big.List("/l", rows(many...)...)
	if _, ids, _ := getPage(t, big.Start(nil)+"/l?limit=100"); len(ids) != 50 {
		t.Fatalf("clamped page: %d rows", len(ids))
	}
	if f.Requests() != 2 || f.RequestsTo(tmpl) != 2 || f.RequestsTo("/other") != 0 {
		t.Fatalf("requests %d / %d", f.Requests(), f.RequestsTo(tmpl))
	}
}

func TestFaultsGitLabHeaders(t *testing.T) {
	f := NewFaults(t, GitLabPaging)
	f.List("/api/v4/projects/1/merge_requests/2/notes", rows(1, 2, 3)...)
	base := f.Start(nil) + "/api/v4/projects/1/merge_requests/2/notes"
	_, ids, h := getPage(t, base+"?per_page=2")
	if !reflect.DeepEqual(ids, []int{1, 2}) || h.Get("X-Next-Page") != "2" || h.Get("X-Total") != "3" || h.Get("X-Total-Pages") != "2" {
		t.Fatalf("page 1: %v %v", ids, h)
	}
	_, _, h = getPage(t, base+"?per_page=2&page=2")
	if v, ok := h["X-Next-Page"]; !ok || v[0] != "" || h.Get("X-Prev-Page") != "1" {
		t.Fatalf("page 2 headers %v", h)
	}
}

func TestFaultsFailHideAndDrift(t *testing.T) {
	f := NewFaults(t, ForgejoPaging)
	f.List("/api/v1/repos/o/r/pulls/1/reviews", rows(1, 2, 3, 4, 5, 6)...)
	f.List("/api/v1/repos/o/r/pulls/2/reviews", rows(1, 2, 3, 4, 5, 6)...)
	f.List("/api/v1/repos/o/r/issues/1/comments", rows(1, 2, 3, 4, 5, 6)...)
	f.FailPage(tmpl, 2)
	f.HidePage(tmpl, 3, 1)
	fake := New(t)
	fake.Expect("GET", "/api/v1/repos/o/r", JSON(200, `{"id":1}`))
	fake.Use(f.Wrap)
	base := fake.URL + "/api/v1/repos/o/r/"
	// Persistent: every request for the page fails, on every list the template matches.
	for range 2 {
		for _, p := range []string{"pulls/1/reviews", "pulls/2/reviews"} {
			if code, _, _ := getPage(t, base+p+"?limit=2&page=2"); code != 500 {
				t.Fatalf("%s page 2: %d, want 500", p, code)
			}
		}
	}
	// Not matched by the template: served normally.
	if code, ids, _ := getPage(t, base+"issues/1/comments?limit=2&page=2"); code != 200 || !reflect.DeepEqual(ids, []int{3, 4}) {
		t.Fatalf("comments page 2: %d %v", code, ids)
	}
	// Hidden rows: one row fewer, the total and next unchanged.
	_, ids, h := getPage(t, base+"pulls/1/reviews?limit=2&page=3")
	if !reflect.DeepEqual(ids, []int{6}) || h.Get("X-Total-Count") != "6" {
		t.Fatalf("hidden page: %v total %q", ids, h.Get("X-Total-Count"))
	}
	// Requests outside the lists reach the wrapped registry.
	if resp, err := http.Get(base[:len(base)-1]); err != nil || resp.StatusCode != 200 {
		t.Fatalf("registry request: %v %v", resp, err)
	}
	// An endpoint that is no list fails for page 1, persistently, before the registry sees it.
	f.FailPage("/api/v1/repos/{owner}/{repo}/collaborators/{user}/permission", 1)
	before := f.Requests()
	for range 2 {
		if code, _, _ := getPage(t, base+"collaborators/bob/permission"); code != 500 {
			t.Fatalf("unlisted endpoint: %d, want 500", code)
		}
	}
	if f.Requests() != before+2 {
		t.Errorf("failed unlisted requests not counted: %d → %d", before, f.Requests())
	}
}

func TestFaultsDrift(t *testing.T) {
	for _, tc := range []struct {
		name      string
		change    Change
		page2     []int
		total     string
		reread1   []int
		lastPage3 []int
	}{
		// A served row deleted: page 2 shifts left, row 3 is never served.
		{"delete", Change{Delete: []int{0}}, []int{4, 5}, "5", []int{2, 3}, []int{6}},
		// A row added at the end of an oldest-first list: nothing shifts.
		{"append", Change{Append: rows(7)}, []int{3, 4}, "7", []int{1, 2}, []int{5, 6}},
		// A row added at the front of a newest-first list: page 2 repeats row 2.
		{"prepend", Change{Prepend: rows(0)}, []int{2, 3}, "7", []int{0, 1}, []int{4, 5}},
		// Delete + add: the total is unchanged, yet row 3 is never served.
		{"delete+append", Change{Delete: []int{0}, Append: rows(7)}, []int{4, 5}, "6", []int{2, 3}, []int{6, 7}},
	} {
		f := NewFaults(t, ForgejoPaging)
		f.List("/api/v1/repos/o/r/pulls/1/reviews", rows(1, 2, 3, 4, 5, 6)...)
		f.Drift(tmpl, 1, tc.change)
		base := f.Start(nil) + "/api/v1/repos/o/r/pulls/1/reviews?limit=2&page="
		if _, ids, _ := getPage(t, base+"1"); !reflect.DeepEqual(ids, []int{1, 2}) {
			t.Fatalf("%s: page 1 %v", tc.name, ids)
		}
		_, ids, h := getPage(t, base+"2")
		if !reflect.DeepEqual(ids, tc.page2) || h.Get("X-Total-Count") != tc.total {
			t.Errorf("%s: page 2 %v total %s; want %v total %s", tc.name, ids, h.Get("X-Total-Count"), tc.page2, tc.total)
		}
		// The drift happened once: a re-read sees the changed list, consistently.
		if _, ids, _ := getPage(t, base+"1"); !reflect.DeepEqual(ids, tc.reread1) {
			t.Errorf("%s: page 1 re-read %v, want %v", tc.name, ids, tc.reread1)
		}
		if _, ids, _ := getPage(t, base+"3"); !reflect.DeepEqual(ids, tc.lastPage3) {
			t.Errorf("%s: page 3 %v, want %v", tc.name, ids, tc.lastPage3)
		}
	}
}

func TestFaultsClock(t *testing.T) {
	f := NewFaults(t, GitHubPaging)
	at := time.Date(2026, 9, 9, 10, 0, 0, 0, time.UTC)
	f.Now = func(path string) time.Time {
		if path != "/l" {
			t.Errorf("clock asked for %q", path)
		}
		return at
	}
	f.List("/l", rows(1)...)
	_, _, h := getPage(t, f.Start(nil)+"/l")
	if d, err := http.ParseTime(h.Get("Date")); err != nil || !d.Equal(at) {
		t.Fatalf("Date %q, want %v", h.Get("Date"), at)
	}
}

func TestTicking(t *testing.T) {
	at := time.Date(2026, 9, 9, 10, 0, 0, 0, time.UTC)
	c := Ticking(at, time.Minute)
	if a, b, x := c("/a"), c("/a"), c("/b"); !a.Equal(at.Add(time.Minute)) || !b.Equal(at.Add(2*time.Minute)) || !x.Equal(at.Add(time.Minute)) {
		t.Errorf("ticks %v %v %v", a, b, x)
	}
}

func TestFaultsEnvelope(t *testing.T) {
	f := NewFaults(t, ForgejoPaging)
	f.List("/api/v1/repos/o/r/actions/tasks", rows(1, 2, 3)...).Envelope("workflow_runs", "total_count")
	resp, err := http.Get(f.Start(nil) + "/api/v1/repos/o/r/actions/tasks?limit=2")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Total int   `json:"total_count"`
		Runs  []row `json:"workflow_runs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Total != 3 || len(body.Runs) != 2 {
		t.Fatalf("envelope %+v %v", body, err)
	}
}

func TestFaultsUnexpectedRequestFailsTheTest(t *testing.T) {
	spy := &spyTB{TB: t}
	f := NewFaults(spy, ForgejoPaging)
	url := f.Start(nil)
	if code, _, _ := getPage(t, url+"/nope"); code != http.StatusNotImplemented {
		t.Fatalf("code %d", code)
	}
	if errs := spy.finish(); len(errs) != 1 || !strings.Contains(errs[0], "unexpected request: GET /nope") {
		t.Fatalf("errors %q", errs)
	}
}
