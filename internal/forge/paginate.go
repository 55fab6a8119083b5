package forge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
)

// MaxConsecutiveFailed bounds the failed pages a listing skips in a row (Page.Err): one
// failed page loses only its rows, but a server that fails every page is down, and trying
// each remaining page through the transport's retries would spend the run's deadline.
const MaxConsecutiveFailed = 3

// MaxPages bounds one listing so that a server that never stops paginating cannot keep a run
// alive forever; reaching it is an error (a fetch failure), never a silent cut.
const MaxPages = 10000

// Page is what one list answer said about the listing, whatever the forge's mechanism:
// Link rel="next", X-Next-Page, go-github's NextPage, a GraphQL pageInfo.
type Page[C any] struct {
	// Rows is how many rows this answer actually held.
	Rows int
	// HasNext says the provider declared a next page (Link next, X-Next-Page, NextPage,
	// hasNextPage); Next is how to ask for it.
	HasNext bool
	Next    C
	// NextKey identifies Next for repeat detection ("" skips the check).
	NextKey string
	// Total is the provider-declared size of the listing (X-Total-Count, X-Total,
	// totalCount), -1 when the answer declared none.
	Total int
	// Err reports that this page could not be read (the transport's retries spent); Rows,
	// HasNext and Total are then ignored and Next names the page after it. The listing skips
	// the page when the provider already declared rows beyond the pages read (a total the
	// pages read, at the largest page seen, do not cover), so one failed page loses only its
	// own rows; otherwise the listing ends with Err. A fetch that returns an error instead
	// never skips.
	Err error
}

// PageRules say when a listing ends besides "no next page declared".
type PageRules struct {
	// EmptyEnds ends the listing at an empty page when nothing the provider declared is still
	// unread. An empty page is not the end while a declared total is unreached (Gitea counts
	// rows it then hides from the token, so a page of hidden rows is empty but not last): the
	// listing continues until the pages read cover the total at the largest page seen, and
	// then ends in ErrIncomplete.
	EmptyEnds bool
	// TotalEnds ends the listing once the rows read reach the declared total, and continues
	// to Next while they fall short of it even without a declared next page (Forgejo clamps
	// the page size, so a short page proves nothing).
	TotalEnds bool
	// TotalBinds makes a listing that ends (no next page declared) with fewer rows than the
	// last declared total incomplete (ErrIncomplete): GitLab's X-Total counts what its
	// pages hold, so a shortfall is rows the pages did not deliver.
	TotalBinds bool
	// Bound, when set, is asked before a declared next page is fetched; true ends the listing
	// there (StopBound) with NextDeclared kept: the caller's own bound (a page budget, or rows
	// enough for what it selects) cut the listing, an omission it reports, not an error.
	Bound func(pg Pagination) bool
}

// TotalCountRules are the rules of a Gitea or Forgejo list: X-Total-Count, when sent, decides
// (the listing pages on while the rows read fall short of it, with or without Link
// rel="next", because the server clamps the page size and some lists send no Link at all),
// an empty page short of the total is not the end, and without a total Link rel="next"
// decides. Every reader of a Gitea or Forgejo list (the snapshot adapter, its commenter and
// the rework gate) pages by these rules, so they cannot disagree on where a list ends.
var TotalCountRules = PageRules{EmptyEnds: true, TotalEnds: true}

// Pagination is what a paginated read knows at its end, so completeness accounting can be
// built on it: pages read, the rows of each answer as it actually was, the provider's last
// declared total, and whether a next page was declared but not followed.
type Pagination struct {
	Pages        int
	RowsPerPage  []int
	Rows         int
	Total        int // last declared total, -1 when none was
	NextDeclared bool
	Stop         StopReason
	// Failed counts the pages skipped because they could not be read (Page.Err).
	Failed int
}

// Lost is how many declared rows the listing did not deliver: the declared total minus the
// rows read, or 0 when no total was declared (the loss is then unknown, not zero: the caller
// still has ErrIncomplete or the page's error).
func (pg Pagination) Lost() int {
	if pg.Total < 0 {
		return 0
	}
	return max(pg.Total-pg.Rows, 0)
}

// covered is how many rows the pages tried (read and failed) can hold at the largest page
// seen.
func (pg Pagination) covered() int { return (pg.Pages + pg.Failed) * pg.Largest() }

// StopReason is why a listing ended.
type StopReason string

// Stop reasons.
const (
	StopNoNext       StopReason = "no_next"
	StopTotalReached StopReason = "total_reached"
	StopEmptyPage    StopReason = "empty_page"
	// StopCovered: the pages tried cover the declared total at the largest page seen, yet
	// rows are missing; the listing is incomplete.
	StopCovered StopReason = "pages_cover_total"
	// StopBound: the caller's PageRules.Bound ended the listing before a declared next page.
	StopBound StopReason = "bound"
)

// ErrIncomplete is returned (wrapped) when a listing ended before the total or next page the
// provider declared was reached: a provider-declared total or next page that was not reached
// is a gap (fetch_failed), never a silently short list.
var ErrIncomplete = errors.New("pagination: listing ended short of what the provider declared")

// ErrTooManyPages is returned (wrapped) when a listing exceeds MaxPages.
var ErrTooManyPages = errors.New("pagination: too many pages")

// Paginate reads a listing page by page from first: fetch asks for one page and reports what
// the answer declared. It is the one pagination loop of every adapter. A fetch error ends the
// listing with that error and the pagination so far.
func Paginate[C any](first C, rules PageRules, fetch func(C) (Page[C], error)) (Pagination, error) {
	pg := Pagination{Total: -1}
	cursor := first
	seen := map[string]bool{}
	var failed error // the first skipped page's error
	streak := 0      // failed pages in a row
	incomplete := func() error {
		return fmt.Errorf("%w: %d of %d declared rows in %d pages, %d pages failed: %w", ErrIncomplete, pg.Rows, pg.Total, pg.Pages, pg.Failed, failed)
	}
	for {
		if pg.Pages+pg.Failed >= MaxPages {
			return pg, fmt.Errorf("%w: more than %d", ErrTooManyPages, MaxPages)
		}
		p, err := fetch(cursor)
		if err != nil {
			return pg, err
		}
		if p.Err != nil {
			if failed == nil && (pg.Total < 0 || pg.Largest() == 0) {
				return pg, p.Err // nothing declared lies beyond: the page's failure ends the listing
			}
			pg.Failed++
			streak++
			failed = cmp.Or(failed, p.Err)
			if pg.covered() >= pg.Total || streak >= MaxConsecutiveFailed {
				return pg, incomplete()
			}
			cursor = p.Next
			continue
		}
		streak = 0
		pg.Pages++
		pg.Rows += p.Rows
		pg.RowsPerPage = append(pg.RowsPerPage, p.Rows)
		if p.Total >= 0 {
			pg.Total = p.Total
		}
		pg.NextDeclared = p.HasNext
		next, stop := decideNext(rules, pg, p)
		if next {
			if early := endsEarly(rules, pg); early != "" {
				next, stop = false, early
			}
		}
		if !next {
			pg.Stop = stop
			if failed != nil {
				return pg, incomplete()
			}
			if endsShort(rules, stop) && pg.Total > pg.Rows {
				return pg, fmt.Errorf("%w: %d of %d declared rows in %d pages", ErrIncomplete, pg.Rows, pg.Total, pg.Pages)
			}
			return pg, nil
		}
		if p.NextKey != "" {
			if seen[p.NextKey] {
				return pg, fmt.Errorf("pagination: next page %q repeats", p.NextKey)
			}
			seen[p.NextKey] = true
		}
		cursor = p.Next
	}
}

// endsEarly is why a listing that would read on ends here all the same ("" when it reads
// on): rows are missing (hidden, or lost in a failed page) but the pages tried already cover
// every offset of the total at the largest page seen, a lower bound of the real page size, so
// reading on would only find empty pages (StopCovered); or the caller's bound says so
// (StopBound).
func endsEarly(rules PageRules, pg Pagination) StopReason {
	if (rules.TotalEnds || pg.Failed > 0) && pg.Total >= 0 && pg.covered() >= pg.Total {
		return StopCovered
	}
	if rules.Bound != nil && rules.Bound(pg) {
		return StopBound
	}
	return ""
}

// endsShort says whether a listing that ended for stop, with fewer rows than its declared
// total, is incomplete: after an empty page or covering pages, or under TotalBinds; never when
// the caller's own bound ended it.
func endsShort(rules PageRules, stop StopReason) bool {
	return stop != StopBound && (stop == StopEmptyPage || stop == StopCovered || rules.TotalBinds)
}

func decideNext[C any](rules PageRules, pg Pagination, p Page[C]) (bool, StopReason) {
	switch {
	case rules.EmptyEnds && p.Rows == 0 && !(pg.Total > pg.Rows && pg.Largest() > 0 && pg.covered() < pg.Total):
		// Empty and either nothing declared is unread, or the pages read already cover the
		// declared total at the largest page seen (rows are missing, not unread), or no page
		// held a row so no page size bounds the search.
		return false, StopEmptyPage
	case rules.EmptyEnds && p.Rows == 0:
		return true, ""
	case rules.TotalEnds && p.Total >= 0:
		if pg.Rows >= p.Total {
			return false, StopTotalReached
		}
		return true, ""
	case !p.HasNext:
		return false, StopNoNext
	}
	return true, ""
}

// Largest is the most rows one answer held (0 before any).
func (pg Pagination) Largest() int {
	n := 0
	for _, r := range pg.RowsPerPage {
		n = max(n, r)
	}
	return n
}

// Needed is how many requests a perfect run needs for this listing, counted at the size each
// answer actually had: every page read when the listing had no declared total or ended short,
// else the declared total at the largest page seen (at least one).
func (pg Pagination) Needed() int {
	if pg.Total < 0 || pg.Rows < pg.Total || pg.Largest() == 0 {
		return max(1, pg.Pages)
	}
	return max(1, min(pg.Pages, (pg.Total+pg.Largest()-1)/pg.Largest()))
}

// NeededAt is Needed with the server's page size known to be at least size (another listing of
// the same server served pages that large: a page size is the server's, not the listing's).
// Needed alone counts at the largest page this listing served, which overstates what a perfect
// run needs when every page of the listing was short (rows the server counts, pages and then
// hides from the token): a perfect run at the server's page size reads the pages covering
// the declared total and no more. Without a declared total every page read was needed.
//
// When no other listing showed a larger page than this one's, its own short pages are no
// evidence of the server's page size, and the empty pages that end it are not counted: they
// lie past the server's last page (Gitea hides another user's pending reviews from a page but
// counts them in X-Total-Count, so a reader asks on until its short pages could hold the
// total), or at most the last real page was hidden whole. The pages up to the last one that
// held a row are then the lower bound.
func (pg Pagination) NeededAt(size int) int {
	own := pg.Largest()
	size = max(size, own)
	if pg.Total < 0 || size == 0 {
		return max(1, pg.Pages)
	}
	n := min(pg.Pages, (pg.Total+size-1)/size)
	if pg.Failed == 0 && size == own {
		held := len(pg.RowsPerPage)
		for held > 0 && pg.RowsPerPage[held-1] == 0 {
			held--
		}
		n = min(n, held)
	}
	return max(1, n)
}

// ServedPageSize is the largest page any of these listings served and then read on from: a
// page the server followed with another was cut at its page size (or short of it by hidden
// rows), so the largest such page is a lower bound of the server's page size. A listing read
// in one answer says nothing (an endpoint that ignores paging answers everything at once).
func ServedPageSize(lists []Pagination) int {
	n := 0
	for _, pg := range lists {
		if pg.Pages+pg.Failed > 1 {
			n = max(n, pg.Largest())
		}
	}
	return n
}

// Prefetch splits the fetch of one page in two, so that Paginate can ask for the pages a
// listing declares concurrently and still decide everything in page order
// (docs/request-pool.md, "Parallel pages"): Get sends the request and returns its raw answer,
// Take turns a raw answer into the page exactly as a sequential fetch would have (decoding,
// counting, drift checks, keeping rows). Only Get ever runs concurrently; Take runs one page at
// a time in the order the listing reads its pages, so every rule of Paginate (completeness,
// skipped failed pages, drift, bounds, repeats) sees the same pages in the same order and
// decides the same: rows, Pagination, errors and gaps are those of a sequential read.
type Prefetch[C, R any] struct {
	// Workers is how many declared pages are asked for at once (1 or less: none ahead; the
	// listing is read one page after another, as Paginate does).
	Workers int
	// Context is the listing's context (nil: context.Background()). A page read ahead is
	// asked under a child of it that is cancelled when the listing ends, so a request the
	// listing no longer needs (stuck in its retries, say) does not keep it waiting.
	Context context.Context
	// Get sends the request for the page at cursor c under ctx and returns its raw answer,
	// failure included. It may run concurrently with other Gets: it must change nothing but
	// what the transport counts.
	Get func(ctx context.Context, c C) R
	// Take is the page of a raw answer (see Paginate's fetch).
	Take func(c C, r R) (Page[C], error)
	// Declared lists the cursors of the later pages the first answer declares with a total
	// (GitHub's Link rel="last", GitLab's X-Total-Pages, X-Total-Count over a full first page
	// on Gitea and Forgejo); nil when it declares none: the listing then reads one page after
	// another. It is asked once, after the first page was taken without a failure.
	Declared func(c C, r R) []C
	// Key identifies a cursor: a page read ahead is used when the listing asks for a cursor of
	// the same key, and otherwise never (a page the listing does not reach is dropped).
	Key func(c C) string
}

// PaginatePrefetch is Paginate with the declared pages read ahead (Prefetch). Pages beyond the
// first are requested only when the first answer declared them, at most f.Workers at a time
// and at most f.Workers pages ahead of the page the listing uses, in page order; a listing
// that ends early (a failure, a drift, a bound) stops asking for more, cancels the requests
// still out and waits for them before it returns, so no request outlives it.
// Without Workers > 1 it is exactly Paginate over Take(Get(c)).
func PaginatePrefetch[C, R any](first C, rules PageRules, f Prefetch[C, R]) (Pagination, error) {
	ctx := f.Context
	if ctx == nil {
		ctx = context.Background()
	}
	seq := func(c C) (Page[C], error) { return f.Take(c, f.Get(ctx, c)) }
	if f.Workers <= 1 || f.Declared == nil || f.Key == nil {
		return Paginate(first, rules, seq)
	}
	actx, cancel := context.WithCancel(ctx)
	ahead := &prefetcher[C, R]{get: func(c C) R { return f.Get(actx, c) }, workers: f.Workers, pending: map[string]*ahead[R]{}}
	ahead.moved = sync.NewCond(&ahead.mu)
	defer ahead.stop()
	defer cancel() // runs first: the requests still out are cancelled, then waited for
	asked := false
	return Paginate(first, rules, func(c C) (Page[C], error) {
		if r, ok := ahead.take(f.Key(c)); ok {
			return f.Take(c, r)
		}
		r := f.Get(ctx, c)
		p, err := f.Take(c, r)
		if !asked && err == nil && p.Err == nil {
			asked = true
			ahead.start(f.Key, f.Declared(c, r))
		}
		return p, err
	})
}

// prefetcher reads declared pages ahead of the listing.
type prefetcher[C, R any] struct {
	get     func(C) R
	workers int

	mu      sync.Mutex
	queue   []queued[C, R]
	next    int
	pending map[string]*ahead[R]
	stopped bool
	wg      sync.WaitGroup
	// base is the queue index of the page the listing wants next; a page is asked for only
	// while it is fewer than workers pages ahead of it, so a listing that ends early leaves
	// at most workers requests it did not need (moved signals base and stopped).
	base  int
	moved *sync.Cond
}

type queued[C, R any] struct {
	c C
	p *ahead[R]
}

// ahead is one page read ahead: done closes when r is its answer.
type ahead[R any] struct {
	done chan struct{}
	r    R
	idx  int // its place in the queue
}

func (a *prefetcher[C, R]) start(key func(C) string, cursors []C) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range cursors {
		if len(a.queue) >= MaxPages {
			break
		}
		k := key(c)
		if _, dup := a.pending[k]; dup {
			continue
		}
		p := &ahead[R]{done: make(chan struct{}), idx: len(a.queue)}
		a.pending[k] = p
		a.queue = append(a.queue, queued[C, R]{c, p})
	}
	for range min(a.workers, len(a.queue)) {
		a.wg.Add(1)
		go a.work()
	}
}

// work asks for queued pages in page order until none is left or the listing ended.
func (a *prefetcher[C, R]) work() {
	defer a.wg.Done()
	for {
		a.mu.Lock()
		for !a.stopped && a.next < len(a.queue) && a.next >= a.base+a.workers {
			a.moved.Wait()
		}
		if a.stopped || a.next >= len(a.queue) {
			a.mu.Unlock()
			return
		}
		q := a.queue[a.next]
		a.next++
		a.mu.Unlock()
		q.p.r = a.get(q.c)
		close(q.p.done)
	}
}

// take returns the answer read ahead for key, waiting for it if it is on its way; false when
// the page was not declared (or was already used).
func (a *prefetcher[C, R]) take(key string) (R, bool) {
	a.mu.Lock()
	p, ok := a.pending[key]
	if ok {
		delete(a.pending, key)
		a.base = max(a.base, p.idx)
		a.moved.Broadcast()
	}
	a.mu.Unlock()
	if !ok {
		var zero R
		return zero, false
	}
	<-p.done
	a.mu.Lock()
	a.base = max(a.base, p.idx+1)
	a.moved.Broadcast()
	a.mu.Unlock()
	return p.r, true
}

// stop asks for no further page and waits for the requests already sent.
func (a *prefetcher[C, R]) stop() {
	a.mu.Lock()
	a.stopped = true
	a.moved.Broadcast()
	a.mu.Unlock()
	a.wg.Wait()
}
