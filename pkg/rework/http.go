package rework

// All of the gate's HTTP plumbing lives in this one file: client construction, the token
// header, retries, the GET-only guard and the Link/X-Total-Count pagination walk with its
// provenance. It is a seam: Getter takes an *http.Client and a base URL, so the gate can be
// rewired onto the shared forge provider client without touching capture or decision code.

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

	"github.com/hashicorp/go-retryablehttp"
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

// errNotGET is returned for any non-GET request: the gate never writes to the forge.
var errNotGET = errors.New("rework: only GET requests are allowed")

// getOnly refuses every method but GET before it reaches the network. It wraps the innermost
// transport, so a retry or a redirect cannot smuggle another method through either.
type getOnly struct {
	next     http.RoundTripper
	requests *atomic.Int64
}

func (g getOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet {
		return nil, errNotGET
	}
	g.requests.Add(1)
	return g.next.RoundTrip(r)
}

// NewHTTPClient builds the retrying, GET-only client the gate uses when no client is injected:
// transport errors, 429 and 5xx (not 501) are retried up to 3 times with capped exponential
// backoff; each attempt has a 60 s timeout; a redirect leaving the API's origin is refused so
// the token never reaches another host. next nil means http.DefaultTransport.
func NewHTTPClient(next http.RoundTripper, counter *atomic.Int64, retryWaitMin, retryWaitMax time.Duration) *http.Client {
	if next == nil {
		next = http.DefaultTransport
	}
	rc := retryablehttp.NewClient()
	rc.Logger = nil // it would log URLs
	rc.HTTPClient = &http.Client{Transport: getOnly{next: next, requests: counter}, Timeout: 60 * time.Second, CheckRedirect: sameOrigin}
	rc.RetryMax = 3
	rc.RetryWaitMin, rc.RetryWaitMax = 500*time.Millisecond, 10*time.Second
	if retryWaitMin > 0 {
		rc.RetryWaitMin = retryWaitMin
	}
	if retryWaitMax > 0 {
		rc.RetryWaitMax = retryWaitMax
	}
	rc.CheckRetry = func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if errors.Is(err, errNotGET) || errors.Is(err, errCrossOrigin) {
			return false, err
		}
		if err != nil {
			return true, nil
		}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented {
			return true, nil
		}
		return false, nil
	}
	rc.Backoff = func(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
		return minDuration(retryablehttp.DefaultBackoff(min, max, attempt, resp), 2*time.Minute)
	}
	rc.ErrorHandler = retryablehttp.PassthroughErrorHandler
	return &http.Client{Transport: &retryablehttp.RoundTripper{Client: rc}, CheckRedirect: sameOrigin}
}

func minDuration(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

var errCrossOrigin = errors.New("rework: redirect to another origin refused")

func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("rework: stopped after 10 redirects")
	}
	if len(via) > 0 && (!strings.EqualFold(req.URL.Scheme, via[0].URL.Scheme) || !strings.EqualFold(req.URL.Host, via[0].URL.Host)) {
		return errCrossOrigin
	}
	return nil
}

// Getter performs the gate's authenticated GETs against one API base URL (…/api/v1).
type Getter struct {
	base  *url.URL
	token string
	hc    *http.Client
}

// NewGetter returns a Getter for apiURL using hc (which must not be nil). An injected client
// (the seam for the shared forge client) gets the GET-only guard around its transport too, so
// the rule holds whatever client is plugged in.
func NewGetter(apiURL, token string, hc *http.Client) (*Getter, error) {
	u, err := ParseAPIURL(apiURL)
	if err != nil {
		return nil, err
	}
	if _, guarded := hc.Transport.(*retryablehttp.RoundTripper); !guarded {
		next := hc.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		if _, ok := next.(getOnly); !ok {
			c := *hc
			c.Transport = getOnly{next: next, requests: &atomic.Int64{}}
			hc = &c
		}
	}
	return &Getter{base: u, token: token, hc: hc}, nil
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
	if g.token != "" {
		req.Header.Set("Authorization", "token "+g.token)
	}
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

// list reads every page of a list endpoint: page=1,2,… with limit=PageSize, following Link
// rel="next" (which must point at the same endpoint on the same origin, one page further).
// The walk ends on the page without rel="next"; X-Total-Count, when sent, must be the same on
// every page and equal the number of rows read. decode splits one page body into rows.
func (g *Getter) list(ctx context.Context, path string, decode func([]byte) (int, error)) ([]Page, error) {
	var pages []Page
	rows := 0
	var total *string
	for n := 1; ; n++ {
		if n > MaxPages {
			return pages, &PaginationError{Path: path, Rule: fmt.Sprintf("more than %d pages", MaxPages)}
		}
		rel := fmt.Sprintf("%s?limit=%d&page=%d", path, PageSize, n)
		body, h, status, err := g.get(ctx, rel)
		pg := Page{Request: rel, Status: status, TotalCount: headerPtr(h, "X-Total-Count"), Link: headerPtr(h, "Link")}
		if err != nil {
			pages = append(pages, pg)
			return pages, err
		}
		k, err := decode(body)
		pg.Rows = k
		pages = append(pages, pg)
		if err != nil {
			return pages, err
		}
		rows += k
		if rows > MaxListItems {
			return pages, &PaginationError{Path: path, Rule: fmt.Sprintf("more than %d rows", MaxListItems)}
		}
		if pg.TotalCount != nil {
			if total != nil && *total != *pg.TotalCount {
				return pages, &PaginationError{Path: path, Rule: "X-Total-Count changed between pages"}
			}
			total = pg.TotalCount
		}
		next, err := nextLink(g.base, path, h, n)
		if err != nil {
			return pages, &PaginationError{Path: path, Rule: err.Error()}
		}
		if !next {
			break
		}
		if k == 0 {
			return pages, &PaginationError{Path: path, Rule: "an empty page announces a next page"}
		}
	}
	if total != nil {
		t, err := strconv.Atoi(*total)
		if err != nil || t < 0 {
			return pages, &PaginationError{Path: path, Rule: "X-Total-Count is not a non-negative integer"}
		}
		if t != rows {
			return pages, &PaginationError{Path: path, Rule: fmt.Sprintf("read %d rows, X-Total-Count says %d", rows, t)}
		}
	}
	return pages, nil
}

// nextLink reports whether h carries Link rel="next". Its target must be this endpoint with
// page=n+1. The walk never requests the Link URL itself — it builds the next request from the
// API base — so the token cannot be steered to another host; the Link's origin is therefore
// not compared (Gitea renders it from its configured ROOT_URL, which may name the server
// differently from --api-url) and is kept as provenance.
func nextLink(_ *url.URL, path string, h http.Header, n int) (bool, error) {
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
