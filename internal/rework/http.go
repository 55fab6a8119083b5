package rework

// All of the gate's HTTP plumbing lives in this one file. The client is the shared forge
// client (forge.NewHTTPClient: token on the API's origin only, the transport rule
// https-except-loopback/--insecure-http, cross-origin redirects handed back unfollowed, the
// internal/forge/retry policy); this file adds what only the gate needs: the GET-only guard and
// the pagination walk with its provenance, driven by forge.Paginate under forge.TotalCountRules
// (the snapshot adapter's rules) plus the gate's stricter completeness checks.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
)

// PageSize is the `limit` of every list request: Gitea's default MAX_RESPONSE_ITEMS (50).
const PageSize = 50

// Bounds of one capture: a listing longer than MaxPages pages or MaxListItems rows, or a
// response larger than MaxResponseBytes, is an incomplete collection (blocking), never cut.
const (
	MaxPages         = 100
	MaxListItems     = 5000
	MaxResponseBytes = 8 << 20
)

// DefaultRetry are the gate's retry numbers: 3 retries of transport errors, 429 and 5xx (not
// 501), backing off from 500 ms to 10 s, a server-demanded wait capped at 2 minutes.
var DefaultRetry = forge.Retry{Max: 3, WaitMin: 500 * time.Millisecond, WaitMax: 10 * time.Second, MaxServerWait: 2 * time.Minute}

// errNotGET is returned for any non-GET request: the gate never writes to the forge.
var errNotGET = errors.New("rework: only GET requests are allowed")

// getOnly refuses every method but GET before it reaches the network. The gate's client has
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

// NewHTTPClient builds the gate's GET-only client on the shared forge client from o (APIURL,
// Token, Transport as the innermost layer, Retry over DefaultRetry, InsecureHTTP, Log).
// counter, when not nil, counts the attempts that reach o.Transport. The transport rule is
// checked here, before any request.
func NewHTTPClient(o forge.Options, counter *atomic.Int64) (*http.Client, error) {
	inner := o.Transport
	if inner == nil {
		inner = http.DefaultTransport.(*http.Transport).Clone()
	}
	o.Transport = getOnly{next: inner, requests: counter}
	hc, err := forge.NewHTTPClient(o, forge.ClientSpec{
		Forge: "forgejo", Auth: forge.BearerAuth("token"), Endpoint: endpointOf, Retry: DefaultRetry,
	})
	if err != nil {
		return nil, err
	}
	hc.Transport = getOnly{next: hc.Transport}
	return hc, nil
}

// endpointOf templates a request for the retry log line: owner, repository and numbers are
// replaced, so the line names no repository and no query.
func endpointOf(r *http.Request) string {
	p := r.URL.Path
	if i := strings.Index(p, "/api/v1/"); i >= 0 {
		p = p[i+len("/api/v1"):]
	}
	seg := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range seg {
		switch {
		case i > 0 && seg[0] == "repos" && i == 1:
			seg[i] = "{owner}"
		case i > 0 && seg[0] == "repos" && i == 2:
			seg[i] = "{repo}"
		case s != "" && strings.Trim(s, "0123456789") == "":
			seg[i] = "{n}"
		}
	}
	return r.Method + " /" + strings.Join(seg, "/")
}

// Getter performs the gate's GETs against one API base URL (…/api/v1) with the client from
// NewHTTPClient, which carries the token.
type Getter struct {
	base *url.URL
	hc   *http.Client
}

// NewGetter returns a Getter for apiURL using hc (which must not be nil).
func NewGetter(apiURL string, hc *http.Client) (*Getter, error) {
	u, err := ParseAPIURL(apiURL)
	if err != nil {
		return nil, err
	}
	return &Getter{base: u, hc: hc}, nil
}

// ParseAPIURL validates an API base URL: absolute http(s), no query, fragment or credentials,
// path ending in /api/v1.
func ParseAPIURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(s, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, inErr("--api-url", "", "must be an absolute http(s) URL without credentials, query or fragment")
	}
	if !strings.HasSuffix(u.Path, "/api/v1") {
		return nil, inErr("--api-url", "", "must end with /api/v1 (the server URL plus /api/v1)")
	}
	return u, nil
}

// StatusError is a non-2xx answer.
type StatusError struct {
	Path   string
	Status int
}

func (e *StatusError) Error() string { return fmt.Sprintf("GET %s: HTTP %d", e.Path, e.Status) }

// Page is the provenance of one response: the request path and query (relative to the API
// base), status, X-Total-Count as sent (null when absent), the Link header as sent and the
// number of rows it held.
type Page struct {
	Request    string  `json:"request"`
	Status     int     `json:"status"`
	TotalCount *string `json:"x_total_count"`
	Link       *string `json:"link"`
	Rows       int     `json:"rows"`
}

// get fetches one path (relative to the base, with query) and returns its body.
func (g *Getter) get(ctx context.Context, rel string) ([]byte, http.Header, int, error) {
	u := *g.base
	p, q, _ := strings.Cut(rel, "?")
	u.Path = g.base.Path + p
	u.RawPath = ""
	u.RawQuery = q
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("GET %s: %w", p, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "forgectx")
	resp, err := g.hc.Do(req)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("GET %s: %w", p, scrubURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, nil, resp.StatusCode, fmt.Errorf("GET %s: read body: %w", p, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, resp.Header, resp.StatusCode, &StatusError{Path: p, Status: resp.StatusCode}
	}
	if len(body) > MaxResponseBytes {
		return nil, resp.Header, resp.StatusCode, fmt.Errorf("GET %s: response larger than %d bytes", p, MaxResponseBytes)
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
func (g *Getter) getObject(ctx context.Context, rel string) ([]byte, Page, error) {
	body, h, status, err := g.get(ctx, rel)
	pg := Page{Request: rel, Status: status, TotalCount: headerPtr(h, "X-Total-Count"), Link: headerPtr(h, "Link"), Rows: 1}
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

// PaginationError is an incomplete or inconsistent listing.
type PaginationError struct {
	Path string
	Rule string
}

func (e *PaginationError) Error() string { return "GET " + e.Path + ": pagination: " + e.Rule }

// list reads every page of a list endpoint: page=1,2,… with limit=PageSize, by
// forge.TotalCountRules — the rules every Gitea/Forgejo list reader of forgectx pages by (the
// snapshot adapter's included): X-Total-Count, when sent, decides where the list ends, with or
// without Link (Gitea's review list sends X-Total-Count and no Link, and clamps the page size
// to its MAX_RESPONSE_ITEMS); an empty page short of the total is not the end; without a total
// the walk follows Link rel="next". On top of those rules the gate is stricter, because it
// must not decide on a partial collection: a failed page ends the walk (never skipped), a
// list that ends short of its total is incomplete, X-Total-Count must be the same on every
// page and equal the rows read, Link rel="next" when sent must name the following page of the
// same endpoint, an empty page announcing a next one is an error, and the gate's own page and
// row bounds apply. decode splits one page body into rows; every answer's provenance is kept.
func (g *Getter) list(ctx context.Context, path string, decode func([]byte) (int, error)) ([]Page, error) {
	var pages []Page
	rows := 0
	var total *string
	pgn, err := forge.Paginate(1, forge.TotalCountRules, func(n int) (forge.Page[int], error) {
		if n > MaxPages {
			return forge.Page[int]{}, &PaginationError{Path: path, Rule: fmt.Sprintf("more than %d pages", MaxPages)}
		}
		rel := fmt.Sprintf("%s?limit=%d&page=%d", path, PageSize, n)
		body, h, status, err := g.get(ctx, rel)
		pg := Page{Request: rel, Status: status, TotalCount: headerPtr(h, "X-Total-Count"), Link: headerPtr(h, "Link")}
		if err != nil {
			pages = append(pages, pg)
			return forge.Page[int]{}, err // a failed page ends the list: the gate never skips one
		}
		k, err := decode(body)
		pg.Rows = k
		pages = append(pages, pg)
		if err != nil {
			return forge.Page[int]{}, err
		}
		rows += k
		if rows > MaxListItems {
			return forge.Page[int]{}, &PaginationError{Path: path, Rule: fmt.Sprintf("more than %d rows", MaxListItems)}
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
		return forge.Page[int]{Rows: k, HasNext: next, Next: n + 1, NextKey: strconv.Itoa(n + 1), Total: declared}, nil
	})
	if err != nil {
		if errors.Is(err, forge.ErrIncomplete) {
			// The pages read cover every offset of the declared total, yet rows are missing:
			// rows the server counts but does not list (another user's pending review).
			return pages, &PaginationError{Path: path, Rule: fmt.Sprintf("read %d rows, X-Total-Count says %d", pgn.Rows, pgn.Total)}
		}
		if errors.Is(err, forge.ErrTooManyPages) {
			return pages, &PaginationError{Path: path, Rule: fmt.Sprintf("more than %d pages", MaxPages)}
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
// differently from --api-url) and is kept as provenance.
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
