package gitlab

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
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
	link string // the Link rel="next" URL opt follows ("" for an offset page)
}

// key identifies the request a cursor makes, for forge.Prefetch: the offset page and the
// followed link's query in canonical order.
func (c cursor) key() string {
	q := ""
	if c.link != "" {
		if u, err := url.Parse(c.link); err == nil {
			q = u.Query().Encode()
		}
	}
	return fmt.Sprintf("%d|%s", c.page, q)
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
	// Workers is how many of the pages the first answer declares (X-Total-Pages) are asked
	// for at once (forge.PaginatePrefetch; 0 or 1: one after another). The services set it
	// to the client's Concurrency; a read with Enough reads one page at a time (its bound
	// depends on the rows, and a page it does not need must not be asked for).
	Workers int
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
	take := func(cur cursor, a glAnswer[T]) (forge.Page[cursor], error) {
		if a.pre != nil {
			return forge.Page[cursor]{}, a.pre
		}
		items, resp, err := a.items, a.resp, a.err
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
	}
	workers := lo.Workers
	if lo.Enough != nil {
		workers = 1
	}
	pg, err := forge.PaginatePrefetch(cursor{page: 1}, rules, forge.Prefetch[cursor, glAnswer[T]]{
		Workers: workers,
		Context: ctx,
		Get: func(ctx context.Context, cur cursor) glAnswer[T] {
			if !lo.Complete && cur.prev > 0 && cur.page != cur.prev+1 {
				return glAnswer[T]{pre: fmt.Errorf("pagination: next page %d after page %d", cur.page, cur.prev)}
			}
			opts := []gl.RequestOptionFunc{gl.WithContext(ctx)}
			if cur.opt != nil {
				opts = append(opts, cur.opt)
			}
			var a glAnswer[T]
			a.items, a.resp, a.err = fetch(opts...)
			return a
		},
		Take:     take,
		Declared: func(_ cursor, a glAnswer[T]) []cursor { return declaredPages(a.resp, lo) },
		Key:      cursor.key,
	})
	return List[T]{Rows: rows, Pages: pg.Pages, NextDeclared: pg.Stop == forge.StopBound, Lost: pg.Lost()}, drift.Moved(), err
}

// glAnswer is one page's raw answer (pre: the page was not asked for).
type glAnswer[T any] struct {
	items []T
	resp  *gl.Response
	err   error
	pre   error
}

// declaredPages are the cursors of pages 2..X-Total-Pages that the first offset page declares
// (at most lo.MaxPages, and forge.MaxPages), each asked the way the sequential read would ask
// for it: the first answer's Link rel="next" with its page replaced when a complete read
// follows links, else the X-Next-Page offset. A keyset answer (no X-Total-Pages, no
// X-Next-Page) declares nothing.
func declaredPages[T any](resp *gl.Response, lo ListOptions[T]) []cursor {
	if resp == nil || resp.PageInfo != nil || resp.TotalPages < 2 || resp.NextPage != 2 {
		return nil
	}
	last := min(resp.TotalPages, forge.MaxPages)
	if lo.MaxPages > 0 {
		last = min(last, int64(lo.MaxPages))
	}
	var out []cursor
	for n := int64(2); n <= last; n++ {
		c := cursor{opt: gl.WithOffsetPaginationParameters(n), page: n}
		switch {
		case !lo.Complete:
			c.prev = n - 1
		case resp.NextLink != "":
			link, ok := withPage(resp.NextLink, n)
			if !ok {
				return nil // a link without its page: only the sequential read can follow it
			}
			c.opt, c.link = gl.WithKeysetPaginationParameters(link), link
		}
		out = append(out, c)
	}
	return out
}

// pageParam is the page parameter of an offset Link URL's query.
var pageParam = regexp.MustCompile(`([?&])page=[0-9]+`)

// withPage is link with its page parameter set to n (false when it has none).
func withPage(link string, n int64) (string, bool) {
	if !pageParam.MatchString(link) {
		return "", false
	}
	return pageParam.ReplaceAllString(link, "${1}page="+strconv.FormatInt(n, 10)), true
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
	link := ""
	if resp.PageInfo == nil {
		link = resp.NextLink
	}
	return true, cursor{opt: n, page: resp.NextPage, link: link}, fmt.Sprintf("%s|%d", resp.NextLink, resp.NextPage)
}
