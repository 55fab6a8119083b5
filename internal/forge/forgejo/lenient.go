package forgejo

// The lenient walk is the Reader's second way of reading a list, for a caller that archives
// what it could read rather than deciding on a whole collection (the snapshot): a page that
// fails is skipped and counted as lost (its rows become the caller's gap), the list is checked
// for drift (forge.DriftCheck) and read once more when it moved, and the pages read are
// counted for the --stats figures. It pages by the same forge.TotalCountRules as the strict
// walk (Reader.list) and requests the same URLs (limit, then page).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/forgectx/forgectx/internal/forge"
)

// LenientOptions are what a lenient walk asks of its caller.
type LenientOptions struct {
	// Rereading, when not nil, is called before the list is read a second time because it
	// moved (the caller logs it).
	Rereading func()
}

// LenientList is one lenient list read: the rows of the read that stands, why the list is
// incomplete (nil: complete), the declared rows it lost (0: unknown), the pages read over
// every attempt (the --stats pages figure) and the pagination of the read that stands (the
// --stats lower bound counts its pages at the page size the server served).
type LenientList[T any] struct {
	Rows       []T
	Err        error
	Lost       int
	Pages      int
	Pagination forge.Pagination
}

// rowKey is what the drift check knows of a row: its ID and creation time (zero when the
// row has none).
type rowKey struct {
	id      int64
	created time.Time
}

// lenientList describes one list endpoint for the lenient walk: its path (escaped, relative
// to the API base), its operation template (errors and logs name it, never an owner or a
// number), how a page body splits into rows (and, for an endpoint that counts in its body,
// the total it declares: -1 when none) and each row's drift key.
type lenientList[T any] struct {
	path  string
	query string // more query parameters ("&name=value"), after limit and page
	op    string
	split func(body []byte) ([]T, int, error)
	key   func(T) rowKey
}

// readLenient reads every page of l. It keeps what can be kept — a page that fails after
// X-Total-Count declared rows beyond it is skipped, so only its rows are lost — and it checks
// that the list did not move between its pages (forge.DriftCheck: totals, repeated IDs, rows
// newer than the read; no request). A read stops at the page that shows the move, and the list
// is read once more from page 1; if it moved again, the listing is incomplete (forge.ErrDrift),
// keeping the rows read. So the drift check adds requests only when the list did change, and a
// server that loops (serves the same rows again) is stopped at its first repeat.
func readLenient[T any](ctx context.Context, r *Reader, l lenientList[T], o LenientOptions) LenientList[T] {
	var out LenientList[T]
	pages := 0
	for attempt := 0; attempt < 2; attempt++ {
		var rows []T
		var drift forge.DriftCheck
		take := func(n int, a lenientAnswer[T]) (forge.Page[int], error) {
			got, p, err := a.rows, a.p, a.err
			if err != nil {
				if ctx.Err() != nil {
					return forge.Page[int]{}, err // out of time: no later page can be read either
				}
				return forge.Page[int]{Err: err, Next: n + 1}, nil
			}
			drift.Page(p.date, p.total)
			for _, row := range got {
				k := l.key(row)
				id := ""
				if k.id > 0 {
					id = strconv.FormatInt(k.id, 10)
				}
				drift.Row(id, k.created)
			}
			rows = append(rows, got...)
			if drift.Moved() {
				// Reading on would only read a moving (or looping) list further.
				return forge.Page[int]{}, forge.ErrDrift
			}
			return forge.Page[int]{Rows: len(got), HasNext: p.next != 0, Next: n + 1, Total: p.total}, nil
		}
		pg, err := forge.PaginatePrefetch(1, forge.TotalCountRules, forge.Prefetch[int, lenientAnswer[T]]{
			Workers: r.lim.Concurrency,
			Context: ctx,
			Get: func(ctx context.Context, n int) lenientAnswer[T] {
				rows, p, err := lenientPage(ctx, r, l, n)
				return lenientAnswer[T]{rows, p, err}
			},
			Take: take,
			Declared: func(_ int, a lenientAnswer[T]) []int {
				return declaredPages(a.p.total, nil, len(a.rows), r.lim.PageSize, forge.MaxPages)
			},
			Key: strconv.Itoa,
		})
		pages += pg.Pages
		out = LenientList[T]{Rows: rows, Err: err, Lost: pg.Lost(), Pages: pages, Pagination: pg}
		if !drift.Moved() || attempt == 1 {
			if drift.Moved() {
				out.Lost = 0 // unknown: the pages no longer say where the rows are
			}
			return out
		}
		if o.Rereading != nil {
			o.Rereading()
		}
	}
	return out
}

// lenientAnswer is one page as lenientPage read it (the request and the decoding, which may
// run concurrently); the walk's rules and drift check take it in page order.
type lenientAnswer[T any] struct {
	rows []T
	p    page
	err  error
}

// walkPages reads the pages of l in order by forge.TotalCountRules, handing each page's rows
// to each, and ends at the first page that fails (its error: nothing is skipped), when each
// returns errStopWalk (no error: the caller found what it looked for), or with errWalkLimit
// past maxPages pages (0: no bound but forge.MaxPages). No drift check: a search that stops
// early (the status commenter's own comments, the reconciler's run) reads no whole list to
// check.
func walkPages[T any](ctx context.Context, r *Reader, l lenientList[T], maxPages int, each func(rows []T) error) error {
	_, err := forge.Paginate(1, forge.TotalCountRules, func(n int) (forge.Page[int], error) {
		if maxPages > 0 && n > maxPages {
			return forge.Page[int]{}, errWalkLimit // before the request: page maxPages+1 is never asked for
		}
		rows, p, err := lenientPage(ctx, r, l, n)
		if err != nil {
			return forge.Page[int]{}, err
		}
		if err := each(rows); err != nil {
			return forge.Page[int]{}, err
		}
		return forge.Page[int]{Rows: len(rows), HasNext: p.next != 0, Next: n + 1, Total: p.total}, nil
	})
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

// errStopWalk ends walkPages early without an error; errWalkLimit is a walk past its bound.
var (
	errStopWalk  = errors.New("forgejo: walk stopped by its caller")
	errWalkLimit = errors.New("forgejo: walk past its page bound")
)

// lenientPage reads page n of l through the Reader. A failure is an *APIError naming the
// operation and the status (0 without an answer), never the body.
func lenientPage[T any](ctx context.Context, r *Reader, l lenientList[T], n int) ([]T, page, error) {
	body, h, status, err := r.get(ctx, fmt.Sprintf("%s?limit=%d&page=%d%s", l.path, r.lim.PageSize, n, l.query))
	if err != nil {
		return nil, page{}, lenientErr(l.op, status, body, err)
	}
	rows, total, err := l.split(body)
	if err != nil {
		return nil, page{}, &APIError{Op: l.op, Status: status, Err: fmt.Errorf("decode: %w", err)}
	}
	p := pageOf(h, nextPage(h), len(rows))
	if p.total < 0 && total > 0 {
		p.total = total
	}
	return rows, p, nil
}

// splitArray decodes a page that is a JSON array of T (the whole page at once: one malformed
// row fails the page, as it always has for the snapshot).
func splitArray[T any](body []byte) ([]T, int, error) {
	var rows []T
	if err := json.Unmarshal(body, &rows); err != nil {
		return nil, -1, err
	}
	return rows, -1, nil
}

// ListCommentsLenient reads GET /repos/{owner}/{repo}/issues/{n}/comments by the lenient walk,
// in the SDK's wire shape (gitea.Comment) the snapshot maps from.
func (s IssueService) ListCommentsLenient(ctx context.Context, n int64, o LenientOptions) LenientList[*gitea.Comment] {
	return readLenient(ctx, s.r, lenientList[*gitea.Comment]{
		path: fmt.Sprintf("%s/issues/%d/comments", s.path, n), op: "GET /repos/{owner}/{repo}/issues/{n}/comments",
		split: splitArray[*gitea.Comment],
		key: func(c *gitea.Comment) rowKey {
			if c == nil {
				return rowKey{}
			}
			return rowKey{id: c.ID, created: c.Created}
		},
	}, o)
}

// ListLenient reads GET /repos/{owner}/{repo}/pulls/{n}/reviews by the lenient walk, with the
// timestamps as sent (nativeReview: created_at and an absent submitted_at kept).
func (s ReviewService) ListLenient(ctx context.Context, pr int64, o LenientOptions) LenientList[nativeReview] {
	return readLenient(ctx, s.r, lenientList[nativeReview]{
		path: fmt.Sprintf("%s/pulls/%d/reviews", s.path, pr), op: "GET /repos/{owner}/{repo}/pulls/{n}/reviews",
		split: splitArray[nativeReview], key: reviewKey,
	}, o)
}

// ActionService reads a repository's Actions.
type ActionService struct{ scope }

// ListTasksLenient reads GET /repos/{owner}/{repo}/actions/tasks by the lenient walk. The body
// is an object; its total_count stands in for an absent X-Total-Count.
func (s ActionService) ListTasksLenient(ctx context.Context, o LenientOptions) LenientList[task] {
	return readLenient(ctx, s.r, lenientList[task]{
		path: s.path + "/actions/tasks", op: "GET /repos/{owner}/{repo}/actions/tasks",
		split: func(b []byte) ([]task, int, error) {
			var body taskList
			if err := json.Unmarshal(b, &body); err != nil {
				return nil, -1, err
			}
			return body.Tasks, int(body.TotalCount), nil
		},
		key: taskKey,
	}, o)
}

// CommitService reads commit statuses.
type CommitService struct{ scope }

// ListStatusesLenient reads GET /repos/{owner}/{repo}/commits/{sha}/status (the latest status
// per context) by the lenient walk. Its body's total_count counts one page only, so the total
// is X-Total-Count alone.
func (s CommitService) ListStatusesLenient(ctx context.Context, sha string, o LenientOptions) LenientList[commitStatus] {
	return readLenient(ctx, s.r, lenientList[commitStatus]{
		path: s.path + "/commits/" + url.PathEscape(sha) + "/status", op: "GET /repos/{owner}/{repo}/commits/{sha}/status",
		split: func(b []byte) ([]commitStatus, int, error) {
			var body combinedStatus
			if err := json.Unmarshal(b, &body); err != nil {
				return nil, -1, err
			}
			return body.Statuses, -1, nil
		},
		key: func(st commitStatus) rowKey { return rowKey{id: st.ID, created: rawTime(st.CreatedAt)} },
	}, o)
}

// lenientErr is the *APIError of a failed lenient read: the operation, the status (0 without
// an answer) and, for an error answer, the server's message when it is one short line (the
// gitea SDK's "message" field, else the status text; serverMessage), never the body.
func lenientErr(op string, status int, body []byte, err error) error {
	var se *StatusError
	if errors.As(err, &se) {
		return &APIError{Op: op, Status: status, Err: errors.New(serverMessage(status, answerMessage(status, body)))}
	}
	if inner := errors.Unwrap(err); inner != nil {
		err = inner // the Reader's "GET <path>: " prefix: the operation names the endpoint
	}
	return &APIError{Op: op, Status: status, Err: err}
}

// answerMessage is what the gitea SDK makes of an error answer's body: its "message" field, or
// the status and body of a JSON object without one; nil when the body is not a JSON object
// (serverMessage then falls back to the status text).
func answerMessage(status int, body []byte) error {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	if msg, ok := m["message"]; ok {
		return fmt.Errorf("%v", msg)
	}
	return fmt.Errorf("%d %s: %s", status, http.StatusText(status), body)
}

// getLenient reads the single object at rel into a T the way the snapshot always decoded it
// (encoding/json into the gitea SDK's wire shape: a null body is the zero value, which the
// caller's own checks refuse). A failure is an *APIError like lenientErr's; a body that does
// not decode keeps the status of its answer.
func getLenient[T any](ctx context.Context, r *Reader, rel, op string) (*T, error) {
	body, _, status, err := r.get(ctx, rel)
	if err != nil {
		return nil, lenientErr(op, status, body, err)
	}
	v := new(T)
	if err := json.Unmarshal(body, v); err != nil {
		return nil, &APIError{Op: op, Status: status, Err: err}
	}
	return v, nil
}

// GetLenient reads GET /repos/{owner}/{repo} in the SDK's wire shape (gitea.Repository).
func (p Repo) GetLenient(ctx context.Context) (*gitea.Repository, error) {
	return getLenient[gitea.Repository](ctx, p.r, p.path, "GET /repos/{owner}/{repo}")
}

// GetLenient reads GET /repos/{owner}/{repo}/issues/{n} in the SDK's wire shape (gitea.Issue).
func (s IssueService) GetLenient(ctx context.Context, n int64) (*gitea.Issue, error) {
	return getLenient[gitea.Issue](ctx, s.r, fmt.Sprintf("%s/issues/%d", s.path, n), "GET /repos/{owner}/{repo}/issues/{n}")
}

// GetLenient reads GET /repos/{owner}/{repo}/pulls/{n} in the SDK's wire shape
// (gitea.PullRequest).
func (s PullService) GetLenient(ctx context.Context, n int64) (*gitea.PullRequest, error) {
	return getLenient[gitea.PullRequest](ctx, s.r, fmt.Sprintf("%s/pulls/%d", s.path, n), "GET /repos/{owner}/{repo}/pulls/{n}")
}

// ListOnce reads GET /repos/{owner}/{repo}/pulls/{n}/reviews/{id}/comments in one request,
// without page or limit: Gitea answers a review's comments whole on this endpoint (it neither
// pages them nor sends X-Total-Count), and the snapshot has always read them so.
func (s ReviewCommentService) ListOnce(ctx context.Context, pr, review int64) ([]*gitea.PullReviewComment, error) {
	rows, err := getLenient[[]*gitea.PullReviewComment](ctx, s.r, fmt.Sprintf("%s/pulls/%d/reviews/%d/comments", s.path, pr, review),
		"GET /repos/{owner}/{repo}/pulls/{n}/reviews/{id}/comments")
	if err != nil {
		return nil, err
	}
	return *rows, nil
}

// CollaboratorService reads repository permissions.
type CollaboratorService struct{ scope }

// Permission reads GET /repos/{owner}/{repo}/collaborators/{user}/permission in the SDK's
// wire shape (gitea.CollaboratorPermissionResult).
func (s CollaboratorService) Permission(ctx context.Context, login string) (*gitea.CollaboratorPermissionResult, error) {
	return getLenient[gitea.CollaboratorPermissionResult](ctx, s.r, s.path+"/collaborators/"+url.PathEscape(login)+"/permission",
		"GET /repos/{owner}/{repo}/collaborators/{user}/permission")
}

// Me reads GET /user (the token's own identity) in the SDK's wire shape (gitea.User).
func (r *Reader) Me(ctx context.Context) (*gitea.User, error) {
	return getLenient[gitea.User](ctx, r, "/user", "GET /user")
}

// eachComment hands every page of GET /repos/{owner}/{repo}/issues/{n}/comments to each, in
// order, until a page fails (the error) or each returns errStopWalk.
func (s IssueService) eachComment(ctx context.Context, n int64, each func(rows []*gitea.Comment) error) error {
	return walkPages(ctx, s.r, lenientList[*gitea.Comment]{
		path: fmt.Sprintf("%s/issues/%d/comments", s.path, n), op: "GET /repos/{owner}/{repo}/issues/{n}/comments",
		split: splitArray[*gitea.Comment],
	}, 0, each)
}

// eachRun hands the pages of GET /repos/{owner}/{repo}/actions/runs?run_number=… (newest first)
// to each, at most maxPages of them (then errWalkLimit), until a page fails (the error) or each
// returns errStopWalk. The body is an object; its total_count stands in for an absent
// X-Total-Count.
func (s ActionService) eachRun(ctx context.Context, number int64, maxPages int, each func(rows []actionRun) error) error {
	return walkPages(ctx, s.r, lenientList[actionRun]{
		path: s.path + "/actions/runs", query: "&run_number=" + strconv.FormatInt(number, 10), op: "GET /repos/{owner}/{repo}/actions/runs",
		split: func(b []byte) ([]actionRun, int, error) {
			var body actionRunList
			if err := json.Unmarshal(b, &body); err != nil {
				return nil, -1, err
			}
			return body.Runs, int(body.TotalCount), nil
		},
	}, maxPages, each)
}
