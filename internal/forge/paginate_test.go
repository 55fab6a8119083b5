package forge_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/forgectx/forgectx/internal/forge"
)

// Paginate follows the declared next page, applies the forge's end rules and reports what it
// knows: pages, rows per page as answered, the declared total, a declared-but-unfollowed next.
func TestPaginateRulesAndResult(t *testing.T) {
	type pg = forge.Page[int]
	pages := func(ps ...pg) func(int) (pg, error) {
		return func(n int) (pg, error) { return ps[n], nil }
	}
	for _, tc := range []struct {
		name  string
		rules forge.PageRules
		fetch func(int) (pg, error)
		want  forge.Pagination
	}{
		{"no next", forge.PageRules{}, pages(pg{Rows: 2, HasNext: true, Next: 1, Total: -1}, pg{Rows: 1, Total: -1}),
			forge.Pagination{Pages: 2, RowsPerPage: []int{2, 1}, Rows: 3, Total: -1, Stop: forge.StopNoNext}},
		{"total reached with a next declared", forge.PageRules{TotalEnds: true}, pages(pg{Rows: 2, HasNext: true, Next: 1, Total: 2}),
			forge.Pagination{Pages: 1, RowsPerPage: []int{2}, Rows: 2, Total: 2, NextDeclared: true, Stop: forge.StopTotalReached}},
		{"total short without a next link continues", forge.PageRules{TotalEnds: true}, pages(pg{Rows: 1, Next: 1, Total: 2}, pg{Rows: 1, Next: 2, Total: 2}),
			forge.Pagination{Pages: 2, RowsPerPage: []int{1, 1}, Rows: 2, Total: 2, Stop: forge.StopTotalReached}},
		{"empty page ends when the total is reached", forge.PageRules{EmptyEnds: true}, pages(pg{Rows: 2, HasNext: true, Next: 1, Total: 2}, pg{Rows: 0, Next: 2, Total: 2}),
			forge.Pagination{Pages: 2, RowsPerPage: []int{2, 0}, Rows: 2, Total: 2, Stop: forge.StopEmptyPage}},
		{"empty page short of the total is not the end", forge.PageRules{EmptyEnds: true, TotalEnds: true},
			pages(pg{Rows: 1, Next: 1, Total: 3}, pg{Rows: 0, Next: 2, Total: 3}, pg{Rows: 2, Next: 3, Total: 3}),
			forge.Pagination{Pages: 3, RowsPerPage: []int{1, 0, 2}, Rows: 3, Total: 3, Stop: forge.StopTotalReached}},
	} {
		got, err := forge.Paginate(0, tc.rules, tc.fetch)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	// Hidden rows: the search for the declared total is bounded by the largest page seen (2
	// rows a page, 5 declared: 3 pages), then the listing is incomplete, never silently short.
	p, err := forge.Paginate(0, forge.PageRules{EmptyEnds: true, TotalEnds: true},
		pages(pg{Rows: 2, Next: 1, Total: 5}, pg{Rows: 0, Next: 2, Total: 5}, pg{Rows: 0, Next: 3, Total: 5}))
	if !errors.Is(err, forge.ErrIncomplete) || p.Pages != 3 || p.Rows != 2 {
		t.Errorf("hidden rows: %+v, %v; want 3 pages and ErrIncomplete", p, err)
	}
	if n := p.Needed(); n != 3 {
		t.Errorf("needed %d for an incomplete listing of 3 pages", n)
	}
	// The bound is counted at the size the answers had, not the size asked for: one answer of
	// 55 rows (an endpoint that ignores page/limit) needs one request; 5 rows at 2 a page, 3.
	if n := (forge.Pagination{Pages: 1, RowsPerPage: []int{55}, Rows: 55, Total: -1}).Needed(); n != 1 {
		t.Errorf("needed %d for one answer", n)
	}
	if n := (forge.Pagination{Pages: 3, RowsPerPage: []int{2, 2, 1}, Rows: 5, Total: 5}).Needed(); n != 3 {
		t.Errorf("needed %d for 5 rows served 2 a page", n)
	}
	// At the server's page size (2, shown by another listing): 7 declared rows of which every
	// page showed one need 4 requests, not the 7 read; a listing without a total needs every
	// page; the served size is read only from listings that went past their first page.
	short := forge.Pagination{Pages: 7, RowsPerPage: []int{1, 1, 1, 0, 0, 0, 0}, Rows: 3, Total: 7}
	if n := short.NeededAt(2); n != 4 {
		t.Errorf("needed %d at a served page size of 2, want 4", n)
	}
	// Without a known page size the empty pages that end it lie past the server's last page
	// (or at most the last real page was hidden whole): the 3 pages that held a row are the
	// lower bound, not the 7 read.
	if n := short.NeededAt(0); n != 3 {
		t.Errorf("needed %d without a known page size, want 3 (the pages that held a row)", n)
	}
	if n := short.NeededAt(1); n != 3 {
		t.Errorf("needed %d at its own page size, want 3 (the pages that held a row)", n)
	}
	// A failed page hides where the rows were: every page read still counts at the size seen.
	failed := forge.Pagination{Pages: 3, Failed: 1, RowsPerPage: []int{1, 0, 0}, Rows: 1, Total: 4}
	if n := failed.NeededAt(0); n != 3 {
		t.Errorf("needed %d with a failed page, want 3", n)
	}
	if n := (forge.Pagination{Pages: 3, RowsPerPage: []int{1, 1, 1}, Rows: 3, Total: -1}).NeededAt(2); n != 3 {
		t.Errorf("needed %d for a listing without a total, want 3", n)
	}
	lists := []forge.Pagination{{Pages: 1, RowsPerPage: []int{55}}, {Pages: 4, RowsPerPage: []int{2, 2, 2, 1}}, short}
	if n := forge.ServedPageSize(lists); n != 2 {
		t.Errorf("served page size %d, want 2 (the one-answer listing of 55 says nothing)", n)
	}
	// A next page that repeats is an error, not a loop.
	_, err = forge.Paginate(0, forge.PageRules{}, func(int) (pg, error) { return pg{Rows: 1, HasNext: true, NextKey: "same", Total: -1}, nil })
	if err == nil {
		t.Error("a repeating next page was followed")
	}
	// A fetch error ends the listing with it.
	boom := errors.New("boom")
	p, err = forge.Paginate(0, forge.PageRules{}, func(n int) (pg, error) {
		if n == 1 {
			return pg{}, boom
		}
		return pg{Rows: 1, HasNext: true, Next: 1, Total: -1}, nil
	})
	if !errors.Is(err, boom) || p.Pages != 1 {
		t.Errorf("pages %d, err %v", p.Pages, err)
	}
}

// A page that fails after the provider declared rows beyond it is skipped: the listing loses
// only its rows (Lost counts them), reads on to the total, and ends in ErrIncomplete wrapping
// the page's error. A failed first page (nothing declared yet) ends the listing with its
// error; a failed last page ends it without a further request.
func TestPaginateSkipsAFailedPage(t *testing.T) {
	type pg = forge.Page[int]
	boom := errors.New("boom")
	rules := forge.PageRules{EmptyEnds: true, TotalEnds: true}
	// 7 rows, 2 a page: pages 1..4. fail names the failing page; calls counts requests.
	run := func(fail int) (forge.Pagination, int, error) {
		calls := 0
		p, err := forge.Paginate(1, rules, func(n int) (pg, error) {
			calls++
			if n == fail {
				return pg{Err: boom, Next: n + 1}, nil
			}
			rows := 2
			if n == 4 {
				rows = 1
			}
			if n > 4 {
				rows = 0
			}
			return pg{Rows: rows, Next: n + 1, Total: 7}, nil
		})
		return p, calls, err
	}
	for _, tc := range []struct {
		fail, calls, rows, lost int
	}{{2, 4, 5, 2}, {3, 4, 5, 2}, {4, 4, 6, 1}} {
		p, calls, err := run(tc.fail)
		if !errors.Is(err, forge.ErrIncomplete) || !errors.Is(err, boom) {
			t.Errorf("fail page %d: err %v, want ErrIncomplete wrapping the page's error", tc.fail, err)
		}
		if calls != tc.calls || p.Rows != tc.rows || p.Lost() != tc.lost || p.Failed != 1 {
			t.Errorf("fail page %d: %d calls, %+v lost %d; want %d calls, %d rows, %d lost", tc.fail, calls, p, p.Lost(), tc.calls, tc.rows, tc.lost)
		}
	}
	p, calls, err := run(1)
	if err != boom || calls != 1 || p.Failed != 0 {
		t.Errorf("failed first page: %v after %d calls (%+v); want the page's error after 1", err, calls, p)
	}
	// A server that fails every page after the first is down: the listing stops after
	// MaxConsecutiveFailed failed pages in a row, not after trying all 50.
	calls = 0
	p, err = forge.Paginate(1, rules, func(n int) (pg, error) {
		calls++
		if n > 1 {
			return pg{Err: boom, Next: n + 1}, nil
		}
		return pg{Rows: 2, Next: 2, Total: 100}, nil
	})
	if !errors.Is(err, forge.ErrIncomplete) || calls != 1+forge.MaxConsecutiveFailed || p.Lost() != 98 {
		t.Errorf("every page failing: %d calls, lost %d, %v", calls, p.Lost(), err)
	}
}

// FuzzPaginate drives the Forgejo rules with arbitrary answers (rows, declared total, a failed
// page) and checks the completeness invariants: the loop ends within the declared total's
// pages (plus the failure and hidden-row bounds), and it never reports a complete listing
// short of the total it was last told.
func FuzzPaginate(f *testing.F) {
	f.Add([]byte{2, 7, 2, 7, 0, 7, 255, 7, 1, 7})
	f.Add([]byte{0, 9, 0, 9})
	f.Add([]byte{3, 3})
	f.Fuzz(func(t *testing.T, script []byte) {
		type pg = forge.Page[int]
		calls := 0
		p, err := forge.Paginate(0, forge.PageRules{EmptyEnds: true, TotalEnds: true}, func(n int) (pg, error) {
			calls++
			if calls > 300 {
				t.Fatalf("no end after %d pages: %v", calls, script)
			}
			i := 2 * n
			if i+1 >= len(script) {
				return pg{Rows: 0, Next: n + 1, Total: 0}, nil
			}
			if script[i] == 255 {
				return pg{Err: errors.New("boom"), Next: n + 1}, nil
			}
			return pg{Rows: int(script[i] % 8), Next: n + 1, Total: int(script[i+1] % 64)}, nil
		})
		if err == nil && p.Total >= 0 && p.Rows < p.Total {
			t.Fatalf("complete listing of %d rows short of the declared %d: %+v", p.Rows, p.Total, p)
		}
		if err == nil && p.Failed > 0 {
			t.Fatalf("a failed page but no error: %+v", p)
		}
	})
}

// A caller's bound ends the listing before a declared next page: the page is never fetched,
// the declared next page stays visible (NextDeclared) and a total the bound left unread is an
// omission the caller reports, not ErrIncomplete. Without a next page the bound is not asked.
func TestPaginateBoundStopsBeforeDeclaredNext(t *testing.T) {
	type pg = forge.Page[int]
	fetched := 0
	fetch := func(n int) (pg, error) {
		fetched++
		if n > 1 {
			t.Fatalf("page %d fetched past the bound", n)
		}
		return pg{Rows: 2, HasNext: true, Next: n + 1, NextKey: "k", Total: 9}, nil
	}
	asked := 0
	bound := func(p forge.Pagination) bool { asked++; return p.Pages >= 1 }
	got, err := forge.Paginate(1, forge.PageRules{TotalBinds: true, Bound: bound}, fetch)
	want := forge.Pagination{Pages: 1, RowsPerPage: []int{2}, Rows: 2, Total: 9, NextDeclared: true, Stop: forge.StopBound}
	if err != nil || !reflect.DeepEqual(got, want) || fetched != 1 || asked != 1 {
		t.Fatalf("bound: %+v, %v, %d fetches, %d asks; want %+v, nil, 1, 1", got, err, fetched, asked, want)
	}
	asked = 0
	last := func(int) (pg, error) { return pg{Rows: 1, Total: -1}, nil }
	if got, err := forge.Paginate(1, forge.PageRules{Bound: bound}, last); err != nil || got.Stop != forge.StopNoNext || asked != 0 {
		t.Fatalf("no next: %+v, %v, asked %d; want no_next and no ask", got, err, asked)
	}
}
