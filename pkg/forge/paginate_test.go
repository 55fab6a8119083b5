package forge_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/forgectx/forgectx/pkg/forge"
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
		{"empty page ends", forge.PageRules{EmptyEnds: true, TotalEnds: true}, pages(pg{Rows: 1, Next: 1, Total: 9}, pg{Rows: 0, HasNext: true, Next: 2, Total: 9}),
			forge.Pagination{Pages: 2, RowsPerPage: []int{1, 0}, Rows: 1, Total: 9, NextDeclared: true, Stop: forge.StopEmptyPage}},
	} {
		got, err := forge.Paginate(0, tc.rules, tc.fetch)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	// A next page that repeats is an error, not a loop.
	_, err := forge.Paginate(0, forge.PageRules{}, func(int) (pg, error) { return pg{Rows: 1, HasNext: true, NextKey: "same", Total: -1}, nil })
	if err == nil {
		t.Error("a repeating next page was followed")
	}
	// A fetch error ends the listing with it.
	boom := errors.New("boom")
	p, err := forge.Paginate(0, forge.PageRules{}, func(n int) (pg, error) {
		if n == 1 {
			return pg{}, boom
		}
		return pg{Rows: 1, HasNext: true, Next: 1, Total: -1}, nil
	})
	if !errors.Is(err, boom) || p.Pages != 1 {
		t.Errorf("pages %d, err %v", p.Pages, err)
	}
}
