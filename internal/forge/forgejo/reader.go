package forgejo

// The Reader is the adapter's strict, read-only access to the Forgejo/Gitea REST API for a
// caller that must keep the provider's own bytes (the rework gate's raw_input_snapshot): every
// object and every list row is handed back as the server sent it, with the provenance of the
// answer (request, status, X-Total-Count, Link, rows), and every list is walked by
// forge.Paginate under forge.TotalCountRules, the rules the snapshot's reader pages by. On top
// of those rules a strict walk refuses what a caller deciding on a whole collection cannot
// accept (docs/forgejo.md, "Strict reader"). The typed services (services.go) are built on it.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/forgectx/forgectx/internal/forge"
)

// ReaderLimits are the bounds of one Reader. A list longer than MaxPages pages or MaxRows rows,
// or an answer larger than MaxResponseBytes, is an error (never a silent cut).
type ReaderLimits struct {
	// PageSize is the `limit` of every list request.
	PageSize int
	// MaxPages and MaxRows bound one list; MaxResponseBytes bounds one answer's body.
	MaxPages, MaxRows int
	MaxResponseBytes  int
	// Concurrency is how many declared pages of one list are asked for at once
	// (forge.PaginatePrefetch: only when X-Total-Count over a full first page declares
	// them); 0 or 1 reads the pages one after another. It bounds no other limit.
	Concurrency int
}

// errNotGET is returned for any non-GET request: a read-only client never writes.
var errNotGET = errors.New("forgejo: read-only client: only GET requests are allowed")

// getOnly refuses every method but GET before it reaches the network. The read-only client has
// it twice: outermost, so a refused request is not retried, and innermost (counting the
// attempts that reach the transport), so neither a retry nor a redirect can smuggle another
// method through.
type getOnly struct {
	next     http.RoundTripper
	requests *atomic.Int64 // nil: not counted
}

func (g getOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet {
		if r.Body != nil {
			_ = r.Body.Close() // a RoundTripper must close the body it does not send
		}
		return nil, errNotGET
	}
	if g.requests != nil {
		g.requests.Add(1)
	}
	return g.next.RoundTrip(r)
}

// NewReadOnlyClient builds a GET-only client on the shared forge client (forge.NewHTTPClient:
// token on the API's origin only as "Authorization: token …", the transport rule,
// cross-origin redirects handed back unfollowed, the internal/forge/retry policy) from o
// (APIURL, Token, Transport as the innermost layer, Retry over defaults, InsecureHTTP, Log).
// counter, when not nil, counts the attempts that reach o.Transport.
func NewReadOnlyClient(o forge.Options, defaults forge.Retry, counter *atomic.Int64) (*http.Client, error) {
	inner := o.Transport
	if inner == nil && o.Pool != nil {
		inner = o.Pool.Base()
	} else if inner == nil {
		inner = http.DefaultTransport.(*http.Transport).Clone()
	}
	o.Transport = getOnly{next: inner, requests: counter}
	hc, err := forge.NewHTTPClient(o, forge.ClientSpec{
		Forge: Forge, Auth: forge.BearerAuth("token"), Endpoint: endpointOf, Retry: defaults,
	})
	if err != nil {
		return nil, err
	}
	hc.Transport = getOnly{next: hc.Transport}
	return hc, nil
}

// endpointOf templates a request for the retry log line (endpointClass: no owner, repository,
// number or query).
func endpointOf(r *http.Request) string { return r.Method + " " + endpointClass(r.URL.Path) }

// Reader performs strict GETs against one API base URL (…/api/v1) with a client from
// NewReadOnlyClient, which carries the token. Its typed services are Pulls, Issues, Reviews,
// ReviewComments, Repos and Version.
type Reader struct {
	base *url.URL
	hc   *http.Client
	lim  ReaderLimits
}

// NewReader returns a Reader for apiURL (absolute http(s), ending in /api/v1) using hc, which
// must not be nil, within lim (every field must be positive).
func NewReader(apiURL string, hc *http.Client, lim ReaderLimits) (*Reader, error) {
	u, err := url.Parse(strings.TrimRight(apiURL, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || !strings.HasSuffix(u.Path, "/api/v1") {
		return nil, errors.New("forgejo: reader: the API URL must be an absolute http(s) URL ending in /api/v1")
	}
	if hc == nil || lim.PageSize <= 0 || lim.MaxPages <= 0 || lim.MaxRows <= 0 || lim.MaxResponseBytes <= 0 {
		return nil, errors.New("forgejo: reader: a client and positive limits (page size, pages, rows, response bytes) are required")
	}
	return &Reader{base: u, hc: hc, lim: lim}, nil
}

// StatusError is a non-2xx answer.
type StatusError struct {
	Path   string
	Status int
}

func (e *StatusError) Error() string { return fmt.Sprintf("GET %s: HTTP %d", e.Path, e.Status) }

// PaginationError is an incomplete or inconsistent listing; Rule says which rule broke.
type PaginationError struct {
	Path string
	Rule string
}

func (e *PaginationError) Error() string { return "GET " + e.Path + ": pagination: " + e.Rule }

// DecodeError is an answer that is not the JSON the endpoint promises. Its message names the
// rule and the decoder's complaint, never the body.
type DecodeError struct{ Msg string }

func (d *DecodeError) Error() string { return d.Msg }

// RawPage is the provenance of one answer: the request path and query (relative to the API
// base), status, X-Total-Count as sent (null when absent), the Link header as sent and the
// number of rows it held. Its JSON form is part of the rework receipt.
type RawPage struct {
	Request    string  `json:"request"`
	Status     int     `json:"status"`
	TotalCount *string `json:"x_total_count"`
	Link       *string `json:"link"`
	Rows       int     `json:"rows"`
}

// get fetches one path (relative to the base, with query) and returns its body (with a
// *StatusError, the error answer's body).
func (r *Reader) get(ctx context.Context, rel string) ([]byte, http.Header, int, error) {
	u := *r.base
	p, q, _ := strings.Cut(rel, "?")
	u.Path = r.base.Path + p
	u.RawPath = ""
	u.RawQuery = q
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("GET %s: %w", p, err)
	}
	resp, body, err := doGET(r.hc, req, r.lim.MaxResponseBytes)
	if resp == nil {
		return nil, nil, 0, fmt.Errorf("GET %s: %w", p, scrubURLError(err))
	}
	if err != nil {
		return nil, nil, resp.StatusCode, fmt.Errorf("GET %s: read body: %w", p, err)
	}
	if resp.StatusCode/100 != 2 {
		// The body (bounded) goes back with the error: a lenient caller quotes the server's
		// one-line message; a strict one ignores it.
		return body, resp.Header, resp.StatusCode, &StatusError{Path: p, Status: resp.StatusCode}
	}
	if len(body) > r.lim.MaxResponseBytes {
		return nil, resp.Header, resp.StatusCode, fmt.Errorf("GET %s: response larger than %d bytes", p, r.lim.MaxResponseBytes)
	}
	return body, resp.Header, resp.StatusCode, nil
}

// scrubURLError drops the URL from a *url.Error (it names the host; the message names the
// path already).
func scrubURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// getObject fetches a single-object endpoint and its provenance.
func (r *Reader) getObject(ctx context.Context, rel string) ([]byte, RawPage, error) {
	body, h, status, err := r.get(ctx, rel)
	pg := RawPage{Request: rel, Status: status, TotalCount: headerPtr(h, "X-Total-Count"), Link: headerPtr(h, "Link"), Rows: 1}
	if err != nil {
		pg.Rows = 0
	}
	return body, pg, err
}

func headerPtr(h http.Header, k string) *string {
	if h == nil {
		return nil
	}
	vs, ok := h[http.CanonicalHeaderKey(k)]
	if !ok {
		return nil
	}
	v := strings.Join(vs, ", ")
	return &v
}

// list reads every page of a list endpoint: page=1,2,… with limit=PageSize, by
// forge.TotalCountRules — the rules every Gitea/Forgejo list reader of forgectx pages by (the
// snapshot's lenient walk included): X-Total-Count, when sent, decides where the list ends, with
// or without Link (Gitea's review list sends X-Total-Count and no Link, and clamps the page
// size to its MAX_RESPONSE_ITEMS); an empty page short of the total is not the end; without a
// total the walk follows Link rel="next". On top of those rules the walk is strict, because
// its caller must not decide on a partial collection: a failed page ends the walk (never
// skipped), a list that ends short of its total is incomplete, X-Total-Count must be the same
// on every page and equal the rows read, Link rel="next" when sent must name the following
// page of the same endpoint, an empty page announcing a next one is an error, and the page and
// row bounds apply. decode splits one page body into rows; every answer's provenance is kept.
func (r *Reader) list(ctx context.Context, path string, decode func([]byte) (int, error)) ([]RawPage, error) {
	var pages []RawPage
	rows := 0
	var total *string
	lastRows := 0 // the rows of the page Take handled last (Declared reads the first's)
	take := func(n int, a strictAnswer) (forge.Page[int], error) {
		if a.pre != nil {
			return forge.Page[int]{}, a.pre
		}
		rel, body, h, status, err := a.rel, a.body, a.h, a.status, a.err
		pg := RawPage{Request: rel, Status: status, TotalCount: headerPtr(h, "X-Total-Count"), Link: headerPtr(h, "Link")}
		if err != nil {
			pages = append(pages, pg)
			return forge.Page[int]{}, err // a failed page ends the list: a strict walk never skips one
		}
		k, err := decode(body)
		pg.Rows = k
		pages = append(pages, pg)
		if err != nil {
			return forge.Page[int]{}, err
		}
		rows += k
		if rows > r.lim.MaxRows {
			return forge.Page[int]{}, &PaginationError{Path: path, Rule: fmt.Sprintf("more than %d rows", r.lim.MaxRows)}
		}
		declared, err := declaredTotal(path, pg.TotalCount, total)
		if err != nil {
			return forge.Page[int]{}, err
		}
		if pg.TotalCount != nil {
			total = pg.TotalCount
		}
		next, err := nextLink(path, h, n)
		if err != nil {
			return forge.Page[int]{}, &PaginationError{Path: path, Rule: err.Error()}
		}
		if next && k == 0 {
			return forge.Page[int]{}, &PaginationError{Path: path, Rule: "an empty page announces a next page"}
		}
		lastRows = k
		return forge.Page[int]{Rows: k, HasNext: next, Next: n + 1, NextKey: strconv.Itoa(n + 1), Total: declared}, nil
	}
	pgn, err := forge.PaginatePrefetch(1, forge.TotalCountRules, forge.Prefetch[int, strictAnswer]{
		Workers: r.lim.Concurrency,
		Context: ctx,
		Get: func(ctx context.Context, n int) strictAnswer {
			if n > r.lim.MaxPages {
				return strictAnswer{pre: &PaginationError{Path: path, Rule: fmt.Sprintf("more than %d pages", r.lim.MaxPages)}}
			}
			a := strictAnswer{rel: fmt.Sprintf("%s?limit=%d&page=%d", path, r.lim.PageSize, n)}
			a.body, a.h, a.status, a.err = r.get(ctx, a.rel)
			return a
		},
		Take: take,
		Declared: func(_ int, a strictAnswer) []int {
			t, err := strconv.Atoi(a.h.Get("X-Total-Count"))
			return declaredPages(t, err, lastRows, r.lim.PageSize, r.lim.MaxPages)
		},
		Key: strconv.Itoa,
	})
	if err != nil {
		if errors.Is(err, forge.ErrIncomplete) {
			// The pages read cover every offset of the declared total, yet rows are missing:
			// rows the server counts but does not list (another user's pending review).
			return pages, &PaginationError{Path: path, Rule: fmt.Sprintf("read %d rows, X-Total-Count says %d", pgn.Rows, pgn.Total)}
		}
		if errors.Is(err, forge.ErrTooManyPages) {
			return pages, &PaginationError{Path: path, Rule: fmt.Sprintf("more than %d pages", r.lim.MaxPages)}
		}
		return pages, err
	}
	if total != nil {
		if t, _ := strconv.Atoi(*total); t != rows {
			return pages, &PaginationError{Path: path, Rule: fmt.Sprintf("read %d rows, X-Total-Count says %d", rows, t)}
		}
	}
	return pages, nil
}

// strictAnswer is one page's raw answer as Get returns it (pre: the page was not asked for).
type strictAnswer struct {
	rel    string
	body   []byte
	h      http.Header
	status int
	err    error
	pre    error
}

// declaredPages are the pages 2..⌈total/size⌉ (at most maxPages) that a first page declares:
// only a full first page (rows == size, the page size asked for) with a valid total declares
// any — a server that clamps the page size serves a short first page, and its page count is
// then unknown, so the list is read one page after another.
func declaredPages(total int, err error, rows, size, maxPages int) []int {
	if err != nil || total < 0 || size <= 0 || rows != size {
		return nil
	}
	var out []int
	for n := 2; n <= min((total+size-1)/size, maxPages); n++ {
		out = append(out, n)
	}
	return out
}

// declaredTotal parses one page's X-Total-Count (-1 when not sent). It must be a
// non-negative integer and the same as every earlier page's (prev, nil before the first).
func declaredTotal(path string, sent, prev *string) (int, error) {
	if sent == nil {
		return -1, nil
	}
	t, err := strconv.Atoi(*sent)
	if err != nil || t < 0 {
		return 0, &PaginationError{Path: path, Rule: "X-Total-Count is not a non-negative integer"}
	}
	if prev != nil && *prev != *sent {
		return 0, &PaginationError{Path: path, Rule: "X-Total-Count changed between pages"}
	}
	return t, nil
}

// nextLink reports whether h carries Link rel="next". Its target must be this endpoint with
// page=n+1. The walk never requests the Link URL itself — it builds the next request from the
// API base — so the token cannot be steered to another host; the Link's origin is therefore
// not compared (Gitea renders it from its configured ROOT_URL, which may name the server
// differently from the API URL) and is kept as provenance.
func nextLink(path string, h http.Header, n int) (bool, error) {
	for _, part := range strings.Split(h.Get("Link"), ",") {
		target, params, ok := strings.Cut(part, ";")
		if !ok || !hasRelNext(params) {
			continue
		}
		u, err := url.Parse(strings.Trim(strings.TrimSpace(target), "<>"))
		if err != nil {
			return false, errors.New(`the Link rel="next" is not a URL`)
		}
		if !strings.HasSuffix(u.Path, "/api/v1"+path) {
			return false, errors.New(`the Link rel="next" points at another endpoint`)
		}
		if u.Query().Get("page") != strconv.Itoa(n+1) {
			return false, errors.New(`the Link rel="next" does not point at the following page`)
		}
		return true, nil
	}
	return false, nil
}

func hasRelNext(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.TrimSpace(k) == "rel" {
			for _, r := range strings.Fields(strings.Trim(strings.TrimSpace(v), `"`)) {
				if r == "next" {
					return true
				}
			}
		}
	}
	return false
}
