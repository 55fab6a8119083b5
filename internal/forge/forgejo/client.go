package forgejo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"code.gitea.io/sdk/gitea"
	"github.com/hashicorp/go-retryablehttp"
	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/retry"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// Forge is the source.forge value of this adapter.
const Forge = "forgejo"

// DefaultPageSize is the `limit` sent on every list request. It equals Forgejo's default
// MAX_RESPONSE_ITEMS (50): asking for more would be clamped by the server, and pagination
// never relies on a page being full anyway (it follows X-Total-Count and Link).
const DefaultPageSize = 50

// maxRetryAfter caps a server-requested wait (Retry-After, a reset instant).
const maxRetryAfter = 2 * time.Minute

// retryDefaults are Forgejo's retry numbers: 3 retries (the fault scenarios and their request
// counts were fixed with this count; see docs/forges.md, "Retries"), 500ms–10s back-off.
var retryDefaults = retry.Limits{Max: 3, WaitMin: 500 * time.Millisecond, WaitMax: 10 * time.Second, MaxServerWait: maxRetryAfter}

// policy is the shared retry policy (internal/forge/retry) with Forgejo's defaults and endpoint
// templates; a cross-origin redirect refusal is never retried.
func policy(opts Options) *retry.Policy {
	return retry.New(retry.Policy{
		Forge:    Forge,
		Limits:   retry.Limits{Max: opts.RetryMax, WaitMin: opts.RetryWaitMin, WaitMax: opts.RetryWaitMax}.Defaults(retryDefaults),
		Endpoint: func(r *http.Request) string { return r.Method + " " + endpointClass(r.URL.Path) },
		Final:    []error{ErrCrossOriginRedirect},
		Log:      opts.Log,
		Limiter:  opts.Limiter,
	})
}

// maxResponseBytes bounds one API response body read by a direct call.
const maxResponseBytes = 64 << 20

// Options configure a Client.
type Options struct {
	// APIURL is the API base URL, ending in /api/v1 (for example
	// https://codeberg.org/api/v1). Required: Forgejo has no public default instance, and a
	// token must never be sent to a host the operator did not name.
	APIURL string
	// Token is the API token (sent as "Authorization: token …"); empty means anonymous. It is
	// never logged.
	Token string
	// Transport is the innermost round-tripper: a cassette recorder or replayer, a test
	// transport, or nil for http.DefaultTransport. Retries and statistics wrap it.
	Transport http.RoundTripper
	// RetryMax is the number of retries of an idempotent request after a transport error, a
	// 429 or a 5xx (0 means 3; negative disables retries).
	RetryMax int
	// RetryWaitMin and RetryWaitMax bound the exponential backoff (defaults 500ms and 10s).
	RetryWaitMin, RetryWaitMax time.Duration
	// Timeout bounds each attempt of a request (default 60s); the caller's context bounds the
	// whole run.
	Timeout time.Duration
	// PageSize is the `limit` of list requests (default DefaultPageSize).
	PageSize int
	// SelfID is the numeric user id of the token's own identity, used by FindComments to
	// recognise forgectx's comments. 0 means ask the API (GET /user). The automatic Forgejo
	// Actions token writes as the Actions pseudo-user, id -2.
	SelfID int64
	// ReceiptsBySelf restricts the receipts read into agent_runs to comments posted as the
	// token's own identity (SelfID, else GET /user during the acquisition), like
	// FindComments: receipt comments by anyone else are counted as agent_runs
	// authorization_failed. `forgectx run` sets it. See receiptRuns.
	ReceiptsBySelf bool
	// Concurrency is the run's --concurrency (forge.Options.Concurrency): how many sources
	// and lookups one acquisition reads at once, and how many declared pages of one list are
	// asked for at once; 1 reads strictly in order. 0 (a client built outside a run, with no
	// request pool to bound what is in flight) reads sources at forge.DefaultConcurrency and
	// pages one after another.
	Concurrency int
	// Log receives structured progress (counts, IDs, status codes; never bodies or tokens).
	Log zerolog.Logger
	// Limiter is told of every retried rate limit (the run's request pool; nil: none).
	Limiter retry.Limiter
}

// Client is a Forgejo API client for one base URL. It implements forge.Acquirer and
// forge.Commenter. It is safe for concurrent use.
type Client struct {
	apiURL   string // …/api/v1, no trailing slash
	rootURL  string // apiURL without /api/v1: what the gitea SDK wants
	host     string // canonical source.host
	token    string
	http     *http.Client
	pageSize int
	log      zerolog.Logger
	stats    *counters
	selfID   int64
	// reader is the typed services' access (services.go) on this client's transport (retries,
	// cassette, statistics), the token and its page size: the snapshot's lists are read
	// through it.
	reader *Reader
	// receiptsBySelf: Options.ReceiptsBySelf.
	receiptsBySelf bool
	// concurrency: Options.Concurrency.
	concurrency int
}

// New validates opts and builds a client. It makes no request.
func New(opts Options) (*Client, error) {
	api := strings.TrimRight(opts.APIURL, "/")
	if api == "" {
		return nil, errors.New("forgejo: API URL: required (for example https://codeberg.org/api/v1)")
	}
	u, err := url.Parse(api)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("forgejo: API URL %q: must be an absolute http(s) URL without query or fragment", opts.APIURL)
	}
	if !strings.HasSuffix(u.Path, "/api/v1") {
		return nil, fmt.Errorf("forgejo: API URL %q: must end with /api/v1 (the server URL plus /api/v1)", opts.APIURL)
	}
	host, err := canon.Host(api)
	if err != nil {
		return nil, fmt.Errorf("forgejo: API URL %q: %w", opts.APIURL, err)
	}
	pageSize := opts.PageSize
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	stats := newStats()
	base := opts.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	rc := retryablehttp.NewClient()
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	rc.HTTPClient = &http.Client{Transport: &countingTransport{next: base, stats: stats}, Timeout: timeout, CheckRedirect: innerRedirect}
	policy(opts).Apply(rc)
	rc.RequestLogHook = func(_ retryablehttp.Logger, _ *http.Request, attempt int) {
		if attempt > 0 {
			stats.retried()
		}
	}
	hc := retry.StandardClient(rc)
	hc.CheckRedirect = sameOriginRedirect
	// The reader's requests carry the token the way the SDK's do. Its page and
	// row bounds only bound the strict walk, which the snapshot does not use (the lenient walk
	// stops at forge.MaxPages by itself).
	reader, err := NewReader(api, &http.Client{Transport: tokenHeader{token: opts.Token, next: hc.Transport}, CheckRedirect: sameOriginRedirect},
		ReaderLimits{PageSize: pageSize, MaxPages: forge.MaxPages, MaxRows: forge.MaxPages * pageSize, MaxResponseBytes: maxResponseBytes, Concurrency: opts.Concurrency})
	if err != nil {
		return nil, fmt.Errorf("forgejo: API URL %q: %w", opts.APIURL, err)
	}
	return &Client{
		apiURL:   api,
		rootURL:  strings.TrimSuffix(api, "/api/v1"),
		host:     host,
		token:    opts.Token,
		http:     hc,
		pageSize: pageSize,
		log:      opts.Log,
		stats:    stats,
		selfID:   opts.SelfID,
		reader:   reader,

		receiptsBySelf: opts.ReceiptsBySelf,
		concurrency:    opts.Concurrency,
	}, nil
}

// tokenHeader sets "Authorization: token …" on every request it forwards (none when the token
// is empty). The client's sameOriginRedirect keeps it on the API's origin.
type tokenHeader struct {
	token string
	next  http.RoundTripper
}

func (t tokenHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.token == "" {
		return t.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "token "+t.token)
	return t.next.RoundTrip(r)
}

// ErrCrossOriginRedirect is returned (wrapped) when the instance redirects a request to another
// scheme, host or port.
var ErrCrossOriginRedirect = errors.New("forgejo: redirect to another origin refused")

// sameOriginRedirect refuses a redirect that leaves the first request's scheme and host:port.
// net/http drops Authorization only when the new host is not the old one or a subdomain of
// it, so a hop to evil.git.example.com would still carry the token; and content fetched from
// another origin must never be staged as the instance's. No endpoint forgectx reads redirects
// elsewhere; same-origin hops (a renamed repository) are followed up to 10 times.
func sameOriginRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("forgejo: stopped after 10 redirects")
	}
	if len(via) > 0 {
		first := via[0].URL
		if !strings.EqualFold(req.URL.Scheme, first.Scheme) || !strings.EqualFold(req.URL.Host, first.Host) {
			return ErrCrossOriginRedirect
		}
	}
	return nil
}

// innerRedirect is the redirect policy of the retrying client inside the transport: a
// cross-origin hop is handed back unfollowed (a 3xx, not an error that would be retried), and
// the outer client's sameOriginRedirect then refuses it with ErrCrossOriginRedirect.
func innerRedirect(req *http.Request, via []*http.Request) error {
	if err := sameOriginRedirect(req, via); errors.Is(err, ErrCrossOriginRedirect) {
		return http.ErrUseLastResponse
	} else if err != nil {
		return err
	}
	return nil
}

// Host is the canonical source.host of the client's API URL.
func (c *Client) Host() string { return c.host }

// sdk returns a gitea SDK client bound to ctx. The SDK takes its context per client, so each
// operation builds a fresh, cheap one over the shared http.Client. SetGiteaVersion("") skips
// the SDK's /version probe: Forgejo reports its own version scheme, and no call here depends
// on a Gitea version gate.
func (c *Client) sdk(ctx context.Context) (*gitea.Client, error) {
	opts := []gitea.ClientOption{
		gitea.SetHTTPClient(c.http),
		gitea.SetContext(ctx),
		gitea.SetGiteaVersion(""),
		gitea.SetUserAgent("forgectx"),
	}
	if c.token != "" {
		opts = append(opts, gitea.SetToken(c.token))
	}
	return gitea.NewClient(c.rootURL, opts...)
}

// APIError is a failed API call: the operation, the HTTP status (0 for a transport error) and
// the cause. Callers classify it with Status, never by its text.
type APIError struct {
	Op     string // e.g. "GET /repos/{owner}/{repo}/pulls/{n}"
	Status int
	Err    error
}

func (e *APIError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: HTTP %d: %v", e.Op, e.Status, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Op, e.Err)
}

func (e *APIError) Unwrap() error { return e.Err }

// apiErr wraps an SDK or transport error with the status of resp (when there is one). For an
// HTTP error the SDK's text can quote the whole response body (its "unknown API error" form
// for a non-JSON answer, such as a proxy's HTML page); errors are printed, so only the status
// text, or a short single-line server message, is kept.
func apiErr(op string, resp *gitea.Response, err error) error {
	e := &APIError{Op: op, Err: err}
	if resp != nil && resp.Response != nil {
		e.Status = resp.StatusCode
		if resp.StatusCode/100 != 2 {
			e.Err = errors.New(serverMessage(resp.StatusCode, err))
		}
	}
	return e
}

// serverMessage is the printable form of an HTTP error: the server's message when it is one
// short line, else the status text.
func serverMessage(status int, err error) string {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg == "" || len(msg) > 200 || strings.ContainsAny(msg, "\r\n") || strings.HasPrefix(msg, "unknown API error") {
		return http.StatusText(status)
	}
	return msg
}

// statusOf returns the HTTP status of an *APIError in err's chain, or 0.
func statusOf(err error) int {
	var e *APIError
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// gapFor classifies a failed optional-scope call: 401 and 403 are authorization_failed,
// everything else (404 of a list, 5xx after retries, transport errors, undecodable bodies)
// is fetch_failed.
func gapFor(err error) string {
	switch statusOf(err) {
	case http.StatusUnauthorized, http.StatusForbidden:
		return "authorization_failed"
	}
	return "fetch_failed"
}

// page is what one list request returned besides its items.
type page struct {
	total   int       // X-Total-Count, -1 when absent or malformed
	next    int       // Link rel="next" page, 0 when absent
	decoded int       // items on this page
	date    time.Time // the answer's Date header (zero when absent): the drift check's clock
}

func pageOf(h http.Header, next, decoded int) page {
	p := page{total: -1, next: next, decoded: decoded}
	if v := h.Get("X-Total-Count"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			p.total = n
		}
	}
	if d, err := http.ParseTime(h.Get("Date")); err == nil {
		p.date = d
	}
	return p
}

// doGET sends req (a GET its caller built) with the adapter's Accept and User-Agent headers
// and reads at most limit+1 bytes of the answer's body, so that the caller can tell a body
// over limit from one at it. A nil response means no answer came (err is the transport's);
// with a response, err is a failed body read. Judging the status is the caller's.
func doGET(hc *http.Client, req *http.Request, limit int) (*http.Response, []byte, error) {
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "forgectx")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	return resp, body, err
}

// nextPage extracts the page number of Link rel="next", or 0.
func nextPage(h http.Header) int {
	for _, link := range strings.Split(h.Get("Link"), ",") {
		target, params, ok := strings.Cut(link, ";")
		if !ok || !strings.Contains(params, `rel="next"`) {
			continue
		}
		u, err := url.Parse(strings.Trim(strings.TrimSpace(target), "<>"))
		if err != nil {
			continue
		}
		if n, err := strconv.Atoi(u.Query().Get("page")); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

// endpointClass replaces the variable path segments of an API path with placeholders, so the
// statistics name endpoints, never owners, repositories, users or numbers.
func endpointClass(p string) string {
	i := strings.Index(p, "/api/v1/")
	if i < 0 {
		return "other"
	}
	segs := strings.Split(p[i+len("/api/v1/"):], "/")
	if len(segs) >= 3 && segs[0] == "repos" {
		segs[1], segs[2] = "{owner}", "{repo}"
		for j := 3; j < len(segs); j++ {
			if _, err := strconv.ParseInt(segs[j], 10, 64); err == nil {
				segs[j] = "{n}"
			} else if segs[j-1] == "collaborators" {
				segs[j] = "{user}"
			} else if segs[j-1] == "commits" {
				segs[j] = "{sha}" // a revision names no endpoint either
			}
		}
	}
	return "/" + strings.Join(segs, "/")
}
