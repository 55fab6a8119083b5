package gitlab

import (
	"context"
	"fmt"
	"net/http"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge"
)

// PerPage is the page size requested from every list endpoint (GitLab's maximum).
const PerPage = 100

// listFunc fetches one page; opts carry the context and the next-page parameters.
type listFunc[T any] func(opts ...gl.RequestOptionFunc) ([]T, *gl.Response, error)

// cursor is the next request of a listing: its pagination option (nil: the first page) and,
// for offset pagination, the page number it asks for (0: a keyset link).
type cursor struct {
	opt  gl.RequestOptionFunc
	page int64
}

// listed is one read listing: its rows and, when it is incomplete, why and how many rows the
// provider declared that it did not deliver (0: unknown).
type listed[T any] struct {
	rows []T
	err  error
	lost int
}

// all reads every page of a list (read without the drift check), failing on an incomplete
// one. The commenter's own-note search uses it.
func all[T any](ctx context.Context, fetch listFunc[T]) ([]T, error) {
	l := read(ctx, fetch, nil)
	return l.rows, l.err
}

// read reads every page of a list through the shared forge.Paginate. It follows the keyset
// next link (Link: rel="next") when the server offers one and the X-Next-Page offset otherwise
// (client-go's WithNext), and fails on a next page that does not advance. The listing ends
// when GitLab declares no next page; X-Total is checked then: fewer rows than it declared is
// ErrIncomplete, never a silently short list.
//
// It keeps what can be kept: an offset page that fails (the transport's retries spent) after
// X-Total declared rows beyond it is skipped, so only its rows are lost (keyset pages cannot
// be skipped: the next link is in the failed answer). And with key set it checks the listing
// did not move while read (forge.DriftCheck: totals, repeated IDs, rows created after the
// first page's Date; no request); a read stops at the page that shows the move and the
// listing is read once more; a second move is forge.ErrDrift (the rows read are kept).
func read[T any](ctx context.Context, fetch listFunc[T], key func(T) (string, time.Time)) listed[T] {
	var out listed[T]
	for attempt := 0; attempt < 2; attempt++ {
		var rows []T
		var drift forge.DriftCheck
		pg, err := forge.Paginate(cursor{page: 1}, forge.PageRules{TotalBinds: true}, func(cur cursor) (forge.Page[cursor], error) {
			opts := []gl.RequestOptionFunc{gl.WithContext(ctx)}
			if cur.opt != nil {
				opts = append(opts, cur.opt)
			}
			items, resp, err := fetch(opts...)
			if err != nil {
				if cur.page > 0 && ctx.Err() == nil {
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
			var date time.Time
			if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
				date = d
			}
			drift.Page(date, p.Total)
			if key != nil {
				for _, it := range items {
					drift.Row(key(it))
				}
				if drift.Moved() {
					// Reading on would only read a moving (or looping) list further.
					return forge.Page[cursor]{}, forge.ErrDrift
				}
			}
			if n, ok := gl.WithNext(resp); ok {
				// X-Next-Page is offset pagination (which also sends a Link next); keyset
				// pagination sends only the link, and its pages cannot be skipped to.
				next := cursor{opt: n, page: resp.NextPage}
				p.HasNext, p.Next, p.NextKey = true, next, fmt.Sprintf("%s|%d", resp.NextLink, resp.NextPage)
			}
			return p, nil
		})
		out = listed[T]{rows: rows, err: err, lost: pg.Lost()}
		if key == nil || !drift.Moved() {
			return out
		}
		if attempt == 1 {
			out.lost = 0 // unknown: the pages no longer say where the rows are
			return out
		}
	}
	return out
}
