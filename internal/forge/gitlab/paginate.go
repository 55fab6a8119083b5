package gitlab

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge"
)

// PerPage is the page size requested from every list endpoint (GitLab's maximum).
const PerPage = 100

// listFunc fetches one page; opts carry the context and the next-page parameters.
type listFunc[T any] func(opts ...gl.RequestOptionFunc) ([]T, *gl.Response, error)

// cursor is the next request of a listing: its pagination option (nil: the first page as the
// caller's options ask for it), the offset page it asks for (0: a keyset link) and, for a
// bounded read, the page that declared it (0: none).
type cursor struct {
	opt  gl.RequestOptionFunc
	page int64
	prev int64
}

// ListOptions say how a service reads one list; every list goes through forge.Paginate. The
// zero value reads the offset pages X-Next-Page declares, one after another, and ends at the
// first failed page with its error; X-Total is recorded (List.Lost) but does not bind.
type ListOptions[T any] struct {
	// Complete reads the list as the snapshot must have it: it follows the keyset next link
	// (Link rel="next") when the server offers one and X-Next-Page otherwise; a listing that
	// ends with fewer rows than X-Total declared is forge.ErrIncomplete, never a silently
	// short list; an offset page that fails (the transport's retries spent) after X-Total
	// declared rows beyond it is skipped, so only its rows are lost (keyset pages cannot be
	// skipped: the next link is in the failed answer). Without it the read trusts X-Next-Page
	// alone and a next page that is not the one after is an error.
	Complete bool
	// DriftKey, when set, checks the listing did not move while read (forge.DriftCheck:
	// totals, repeated IDs, rows created after the first page's Date; no request): a read
	// stops at the page that shows the move and the listing is read once more; a second
	// move is forge.ErrDrift (the rows read are kept).
	DriftKey func(T) (string, time.Time)
	// MaxPages bounds the pages read (0: forge.MaxPages, reaching which is an error). A next
	// page declared beyond the bound is not fetched: List.NextDeclared records it, an
	// omission the caller reports.
	MaxPages int
	// Enough is asked with every row read so far before a declared next page is fetched;
	// true ends the listing there like MaxPages (the caller has what its bounds admit).
	Enough func(rows []T) bool
}

// List is one list read: its rows in the order served, the pages read, whether a bound
// (ListOptions.MaxPages, Enough) left a declared next page unread, and how many rows the
// provider declared (X-Total) that the read did not deliver (0: none or unknown).
type List[T any] struct {
	Rows         []T
	Pages        int
	NextDeclared bool
	Lost         int
}

// listed is one read listing as the acquisition keeps it: its rows and, when it is
// incomplete, why and how many rows the provider declared that it did not deliver.
type listed[T any] struct {
	rows []T
	err  error
	lost int
}

// all reads every page of a list completely (ListOptions.Complete, without the drift check),
// failing on an incomplete one. The commenter's own-note search uses it.
func all[T any](ctx context.Context, fetch listFunc[T]) ([]T, error) {
	l, err := list(ctx, fetch, ListOptions[T]{Complete: true})
	return l.Rows, err
}

// kept is a complete list read as the acquisition keeps it: the rows read, the error that
// made it incomplete and the rows lost.
func kept[T any](l List[T], err error) listed[T] {
	return listed[T]{rows: l.Rows, err: err, lost: l.Lost}
}

// list is the one page loop of the GitLab adapter: every service's list reads through it,
// by the options' rules (ListOptions).
func list[T any](ctx context.Context, fetch listFunc[T], lo ListOptions[T]) (List[T], error) {
	var out List[T]
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		var moved bool
		out, moved, err = listOnce(ctx, fetch, lo)
		if lo.DriftKey == nil || !moved {
			return out, err
		}
		if attempt == 1 {
			out.Lost = 0 // unknown: the pages no longer say where the rows are
		}
	}
	return out, err
}

// listOnce reads the listing once; moved reports that the drift check saw it move.
func listOnce[T any](ctx context.Context, fetch listFunc[T], lo ListOptions[T]) (List[T], bool, error) {
	var rows []T
	var drift forge.DriftCheck
	rules := forge.PageRules{TotalBinds: lo.Complete}
	if lo.MaxPages > 0 || lo.Enough != nil {
		rules.Bound = func(pg forge.Pagination) bool {
			return (lo.MaxPages > 0 && pg.Pages >= lo.MaxPages) || (lo.Enough != nil && lo.Enough(rows))
		}
	}
	pg, err := forge.Paginate(cursor{page: 1}, rules, func(cur cursor) (forge.Page[cursor], error) {
		if !lo.Complete && cur.prev > 0 && cur.page != cur.prev+1 {
			return forge.Page[cursor]{}, fmt.Errorf("pagination: next page %d after page %d", cur.page, cur.prev)
		}
		opts := []gl.RequestOptionFunc{gl.WithContext(ctx)}
		if cur.opt != nil {
			opts = append(opts, cur.opt)
		}
		items, resp, err := fetch(opts...)
		if err != nil {
			if lo.Complete && cur.page > 0 && ctx.Err() == nil {
				return forge.Page[cursor]{Err: err, Next: cursor{opt: gl.WithOffsetPaginationParameters(cur.page + 1), page: cur.page + 1}}, nil
			}
			return forge.Page[cursor]{}, err
		}
		rows = append(rows, items...)
		p := forge.Page[cursor]{Rows: len(items), Total: -1}
		if resp == nil {
			return p, nil
		}
		if resp.Header.Get("X-Total") != "" {
			p.Total = int(resp.TotalItems)
		}
		if lo.DriftKey != nil {
			var date time.Time
			if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
				date = d
			}
			drift.Page(date, p.Total)
			for _, it := range items {
				drift.Row(lo.DriftKey(it))
			}
			if drift.Moved() {
				// Reading on would only read a moving (or looping) list further.
				return forge.Page[cursor]{}, forge.ErrDrift
			}
		}
		p.HasNext, p.Next, p.NextKey = nextPage(resp, cur, lo.Complete)
		return p, nil
	})
	return List[T]{Rows: rows, Pages: pg.Pages, NextDeclared: pg.Stop == forge.StopBound, Lost: pg.Lost()}, drift.Moved(), err
}

// nextPage is the request after resp. A complete read follows client-go's WithNext: the
// keyset link when offered (X-Next-Page is offset pagination, which also sends a Link next;
// keyset pagination sends only the link, and its pages cannot be skipped to), else the
// X-Next-Page offset. Any other read follows X-Next-Page alone.
func nextPage(resp *gl.Response, cur cursor, complete bool) (bool, cursor, string) {
	if !complete {
		if resp.NextPage == 0 {
			return false, cursor{}, ""
		}
		next := cursor{opt: gl.WithOffsetPaginationParameters(resp.NextPage), page: resp.NextPage, prev: cur.page}
		return true, next, strconv.FormatInt(resp.NextPage, 10)
	}
	n, ok := gl.WithNext(resp)
	if !ok {
		return false, cursor{}, ""
	}
	return true, cursor{opt: n, page: resp.NextPage}, fmt.Sprintf("%s|%d", resp.NextLink, resp.NextPage)
}
