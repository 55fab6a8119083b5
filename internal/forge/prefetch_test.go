package forge_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
)

// listServer is an in-process paginated list in the Gitea/Forgejo dialect: pages of size
// rows, X-Total-Count, Link next while rows remain. Faults: a page that fails (Page.Err), a
// page that fails hard (the fetch's error), a total that changes from a page on (drift),
// rows counted but hidden. It records the requests and the most in flight at once, and
// answers after a random delay so that concurrent pages complete out of order.
type listServer struct {
	rows, size int
	failed     map[int]bool // page → Page.Err
	hard       int          // page whose fetch errors (0: none)
	driftFrom  int          // from this page on, the total says one row more (0: never)
	hidden     map[int]bool // rows (0-based) counted but not served
	rng        *rand.Rand
	mu         *sync.Mutex // set by read: the cases are copied
	requested  []int
	now, peak  int
}

type answer struct {
	page, total int
	rows        []int
	next        bool
	err         error
}

func (s *listServer) get(page int) answer {
	s.mu.Lock()
	s.requested = append(s.requested, page)
	s.now++
	s.peak = max(s.peak, s.now)
	d := time.Duration(0)
	if s.rng != nil {
		d = time.Duration(s.rng.Intn(3000)) * time.Microsecond
	}
	s.mu.Unlock()
	time.Sleep(d)
	defer func() { s.mu.Lock(); s.now--; s.mu.Unlock() }()
	total := s.rows
	if s.driftFrom > 0 && page >= s.driftFrom {
		total++
	}
	a := answer{page: page, total: total}
	switch {
	case page == s.hard:
		a.err = fmt.Errorf("page %d: hard failure", page)
		return a
	case s.failed[page]:
		a.err = forge.ErrIncomplete // any error: the page could not be read
		return a
	}
	for i := (page - 1) * s.size; i < min(page*s.size, total); i++ {
		if !s.hidden[i] {
			a.rows = append(a.rows, i)
		}
	}
	a.next = page*s.size < total
	return a
}

// read pages the list by TotalCountRules, sequentially (workers 1) or with prefetch.
func (s *listServer) read(workers int) ([]int, forge.Pagination, error) {
	s.mu = &sync.Mutex{}
	var got []int
	pg, err := forge.PaginatePrefetch(1, forge.TotalCountRules, forge.Prefetch[int, answer]{
		Workers: workers,
		Get:     func(_ context.Context, n int) answer { return s.get(n) },
		Take: func(n int, a answer) (forge.Page[int], error) {
			if a.err != nil {
				if !errors.Is(a.err, forge.ErrIncomplete) {
					return forge.Page[int]{}, a.err
				}
				return forge.Page[int]{Err: a.err, Next: n + 1}, nil
			}
			got = append(got, a.rows...)
			return forge.Page[int]{Rows: len(a.rows), HasNext: a.next, Next: n + 1, NextKey: strconv.Itoa(n + 1), Total: a.total}, nil
		},
		Declared: func(_ int, a answer) []int {
			if a.total < 0 || len(a.rows) != s.size {
				return nil
			}
			var out []int
			for p := 2; p <= (a.total+s.size-1)/s.size; p++ {
				out = append(out, p)
			}
			return out
		},
		Key: strconv.Itoa,
	})
	return got, pg, err
}

// The prefetching read gives the sequential read's rows, pagination and error on every fault
// (a failed middle page, a hard failure, a total that drifts between pages, hidden rows), asks
// for no page beyond those the sequential read asked for and those the first page declared,
// and never has more than its workers in flight.
func TestPaginatePrefetchEqualsSequential(t *testing.T) {
	cases := []struct {
		name string
		s    listServer
	}{
		{"whole list", listServer{rows: 47, size: 5}},
		{"exact pages", listServer{rows: 40, size: 5}},
		{"one page", listServer{rows: 3, size: 5}},
		{"empty", listServer{rows: 0, size: 5}},
		{"failed middle page", listServer{rows: 47, size: 5, failed: map[int]bool{4: true}}},
		{"failed last page", listServer{rows: 47, size: 5, failed: map[int]bool{10: true}}},
		{"three failed pages in a row", listServer{rows: 47, size: 5, failed: map[int]bool{3: true, 4: true, 5: true}}},
		{"hard failure mid-way", listServer{rows: 47, size: 5, hard: 6}},
		{"total drifts up", listServer{rows: 45, size: 5, driftFrom: 4}},
		{"hidden rows", listServer{rows: 30, size: 5, hidden: map[int]bool{7: true, 28: true, 29: true}}},
		{"hidden first row (short first page)", listServer{rows: 30, size: 5, hidden: map[int]bool{0: true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seq := tc.s
			wantRows, wantPg, wantErr := seq.read(1)
			for _, workers := range []int{2, 4, 8} {
				for seed := int64(1); seed <= 5; seed++ {
					par := tc.s
					par.rng = rand.New(rand.NewSource(seed))
					par.requested, par.peak = nil, 0
					rows, pg, err := par.read(workers)
					if !reflect.DeepEqual(rows, wantRows) || !reflect.DeepEqual(pg, wantPg) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
						t.Fatalf("workers %d seed %d:\n got %v %+v %v\nwant %v %+v %v", workers, seed, rows, pg, err, wantRows, wantPg, wantErr)
					}
					if par.peak > workers {
						t.Errorf("workers %d: %d requests in flight", workers, par.peak)
					}
					declared := (tc.s.rows + tc.s.size - 1) / tc.s.size
					for _, p := range par.requested {
						if !slices.Contains(seq.requested, p) && p > declared {
							t.Errorf("workers %d: page %d asked for, neither read sequentially nor declared", workers, p)
						}
					}
				}
			}
		})
	}
}

// Without a declared total (no full first page, no total) nothing is read ahead: the pages are
// asked for in order, one at a time.
func TestPaginatePrefetchNeedsDeclaredTotal(t *testing.T) {
	s := listServer{rows: 30, size: 5, hidden: map[int]bool{2: true}} // short first page
	s.rng = rand.New(rand.NewSource(1))
	if _, _, err := s.read(8); err == nil {
		t.Log("read completed")
	}
	if s.peak != 1 || !slices.IsSorted(s.requested) {
		t.Errorf("requests %v with %d in flight: a listing without a full first page must read in order", s.requested, s.peak)
	}
}

// A listing whose next page skips declared pages (page 2 names page 9 next) still gets page 9
// from the pages read ahead, without waiting on pages it skipped: no deadlock, no re-request.
func TestPaginatePrefetchSkipsAhead(t *testing.T) {
	var mu sync.Mutex
	asked := map[int]int{}
	next := map[int]int{1: 2, 2: 9, 9: 10}
	done := make(chan struct{})
	go func() {
		defer close(done)
		pg, err := forge.PaginatePrefetch(1, forge.PageRules{}, forge.Prefetch[int, int]{
			Workers: 2,
			Get:     func(_ context.Context, n int) int { mu.Lock(); asked[n]++; mu.Unlock(); return n },
			Take: func(n, _ int) (forge.Page[int], error) {
				return forge.Page[int]{Rows: 1, HasNext: next[n] != 0, Next: next[n], Total: -1}, nil
			},
			Declared: func(int, int) []int { return []int{2, 3, 4, 5, 6, 7, 8, 9, 10} },
			Key:      strconv.Itoa,
		})
		if err != nil || pg.Pages != 4 {
			t.Errorf("%+v %v, want 4 pages", pg, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the listing waited for a page it skipped")
	}
	for n, k := range asked {
		if k != 1 {
			t.Errorf("page %d asked for %d times", n, k)
		}
	}
}

// A listing that ends early cancels the pages still being read ahead: a page stuck until its
// context ends (a request deep in its retries) does not hold the listing.
func TestPaginatePrefetchCancelsPagesItNoLongerNeeds(t *testing.T) {
	hard := errors.New("page 2: refused")
	done := make(chan error, 1)
	go func() {
		_, err := forge.PaginatePrefetch(1, forge.PageRules{}, forge.Prefetch[int, error]{
			Workers: 4,
			Get: func(ctx context.Context, n int) error {
				switch n {
				case 1:
					return nil
				case 2:
					return hard
				}
				<-ctx.Done() // pages 3..5 never answer on their own
				return ctx.Err()
			},
			Take: func(n int, err error) (forge.Page[int], error) {
				if err != nil {
					return forge.Page[int]{}, err
				}
				return forge.Page[int]{Rows: 1, HasNext: true, Next: n + 1, Total: -1}, nil
			},
			Declared: func(int, error) []int { return []int{2, 3, 4, 5} },
			Key:      strconv.Itoa,
		})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, hard) {
			t.Errorf("err %v, want page 2's", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the listing waited for pages it no longer needed")
	}
}
