package github

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v66/github"
	"github.com/hashicorp/go-retryablehttp"
	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/retry"
	"github.com/forgectx/forgectx/internal/forge/stats"
	"github.com/forgectx/forgectx/internal/platform/version"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// DefaultAPIURL is github.com's REST API base URL.
const DefaultAPIURL = "https://api.github.com"

// Options configure a Client. The zero value (plus a token) talks to github.com with the
// production retry policy.
type Options struct {
	// APIURL is the REST base URL: https://api.github.com (default), https://HOST/api/v3 for
	// GitHub Enterprise Server, or a test server's URL.
	APIURL string
	// Token authenticates every API request. Empty is allowed (replay, public data); it is
	// never logged and never recorded.
	Token string
	// Transport is the innermost transport (default: a clone of http.DefaultTransport). A
	// cassette.Replayer here makes the client offline.
	Transport http.RoundTripper
	// SourceHost overrides source.host (replay uses the recorded cassette's host so the
	// acquisition does not depend on the replay address). Default: derived from APIURL.
	SourceHost string
	// Concurrency bounds in-flight requests (default 4).
	Concurrency int
	// Limiter is told of every retried rate limit (the run's request pool; nil: none).
	Limiter retry.Limiter
	// Timeout bounds each attempt of a request (default 60s). The caller's context bounds
	// the whole run.
	Timeout time.Duration
	// RetryMax is the number of retries after the first attempt (default 4; negative: none).
	RetryMax int
	// RetryWaitMin and RetryWaitMax bound the exponential back-off for 5xx and transport
	// errors (defaults 1s and 30s).
	RetryWaitMin, RetryWaitMax time.Duration
	// MaxRateLimitWait caps a wait demanded by Retry-After or x-ratelimit-reset (default 15
	// minutes); a longer demand waits the cap and the retry most likely fails into a gap.
	MaxRateLimitWait time.Duration
	// Receipts reads agent-run receipts back for the agent_runs source (default: none, and no
	// gap; ReceiptsFromComments reads the receipts of docs/receipts.md).
	Receipts ReceiptReader
	// Log receives structured retry and request events (counts, endpoints, status codes only).
	Log zerolog.Logger
}

// Client is a GitHub API client: go-github for REST, a minimal GraphQL poster, both on one
// retrying, rate-limit-aware, request-counting, optionally recording transport.
type Client struct {
	rest       *gh.Client
	restNoAuth *http.Client // for pre-signed log URLs: never carries the token
	gql        *http.Client
	gqlURL     string
	token      string
	host       string
	counter    *counter
	log        zerolog.Logger
	limiter    retry.Limiter // the run's request pool, told of rate limits (nil: none)
	// concurrency is how many declared pages of one REST list are asked for at once.
	concurrency int

	permMu sync.Mutex
	perms  map[string]*forge.Future[permission]

	receipts ReceiptReader

	statsMu sync.Mutex
	stats   *stats.Stats
}

// New builds a Client from opts.
func New(opts Options) (*Client, error) {
	if opts.APIURL == "" {
		opts.APIURL = DefaultAPIURL
	}
	base, err := url.Parse(strings.TrimSuffix(opts.APIURL, "/") + "/")
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("github: api url %q: must be an absolute http(s) URL", opts.APIURL)
	}
	host := opts.SourceHost
	if host == "" {
		if host, err = SourceHost(opts.APIURL); err != nil {
			return nil, err
		}
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	pol := newPolicy(retry.Limits{Max: opts.RetryMax, WaitMin: opts.RetryWaitMin, WaitMax: opts.RetryWaitMax, MaxServerWait: opts.MaxRateLimitWait}.Defaults(retryDefaults), opts.Log)
	pol.Limiter = opts.Limiter
	inner := opts.Transport
	if inner == nil {
		inner = http.DefaultTransport.(*http.Transport).Clone()
	}
	c := &Client{token: opts.Token, host: host, log: opts.Log, receipts: opts.Receipts, limiter: opts.Limiter, concurrency: opts.Concurrency}
	c.counter = &counter{next: inner, sem: make(chan struct{}, opts.Concurrency), byEndpoint: map[string]int{}}

	apiOrigin := base.Scheme + "://" + base.Host
	retrying := func(follow func(*http.Request, []*http.Request) error) *http.Client {
		rc := retryablehttp.NewClient()
		// The inner client never follows a redirect: the outer client decides (below), so a
		// redirect is seen once, after retries, by one policy.
		noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		rc.HTTPClient = &http.Client{Transport: c.counter, Timeout: opts.Timeout, CheckRedirect: noRedirect}
		pol.Apply(rc)
		sc := retry.StandardClient(rc)
		sc.CheckRedirect = follow
		// go-github short-circuits every later request (no request, an error) once a response
		// said x-ratelimit-remaining: 0. A successful response at the end of the quota says
		// so too, and the next list would then fail into a gap without trying; the retrying
		// transport below waits for x-ratelimit-reset instead, so go-github is not told.
		sc.Transport = quotaHeaderHider{sc.Transport}
		return sc
	}
	restHTTP := retrying(func(req *http.Request, via []*http.Request) error {
		return sameOriginMove(apiOrigin, req, via)
	})
	c.restNoAuth = retrying(func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse })
	c.rest = gh.NewClient(restHTTP)
	c.rest.BaseURL = base
	c.rest.UserAgent = "forgectx/" + version.String()
	if opts.Token != "" {
		c.rest = c.rest.WithAuthToken(opts.Token)
	}
	c.gql = restHTTP
	c.gqlURL = graphqlURL(base)
	return c, nil
}

// Host is the normalised source.host of this client.
func (c *Client) Host() string { return c.host }

// graphqlURL derives the GraphQL endpoint from the REST base: /api/v3/ → /api/graphql on
// GitHub Enterprise Server, otherwise <base>graphql (api.github.com/graphql, test servers).
func graphqlURL(base *url.URL) string {
	u := *base
	if strings.HasSuffix(u.Path, "/api/v3/") {
		u.Path = strings.TrimSuffix(u.Path, "/api/v3/") + "/api/graphql"
	} else {
		u.Path += "graphql"
	}
	return u.String()
}

// SourceHost normalises an API URL to the spec's source.host: the API host of github.com
// (api.github.com) and of GHE.com data residency (api.<tenant>.ghe.com) is the web host
// without "api."; a GitHub Enterprise Server URL (https://ghe.example.com/api/v3) is its host.
// Ports other than 443 are kept.
func SourceHost(apiURL string) (string, error) {
	h, err := canon.Host(apiURL)
	if err != nil {
		return "", fmt.Errorf("github: api url: %w", err)
	}
	if h == "api.github.com" || (strings.HasPrefix(h, "api.") && strings.HasSuffix(h, ".ghe.com")) {
		h = strings.TrimPrefix(h, "api.")
	}
	return h, nil
}

// retryDefaults are GitHub's retry numbers: 4 retries, 1s–30s back-off, server-demanded waits
// up to 15 minutes (an exhausted primary limit resets hourly; a longer demand waits the cap
// and the retry most likely fails into a gap).
var retryDefaults = retry.Limits{Max: 4, WaitMin: time.Second, WaitMax: 30 * time.Second, MaxServerWait: 15 * time.Minute}

// newPolicy is the shared retry policy (internal/forge/retry) with GitHub's additions: a 403 whose
// body names a secondary rate limit (or abuse detection) without headers, and a GraphQL
// RATE_LIMITED answer (HTTP 200, sometimes 403), are retried; a rate limit that names no wait
// waits a minute, as GitHub asks. Everything else is the shared rule: a permission 403 or a
// 404 never improves.
func newPolicy(l retry.Limits, log zerolog.Logger) *retry.Policy {
	return retry.New(retry.Policy{
		Forge:            "github",
		Limits:           l,
		Endpoint:         func(r *http.Request) string { return endpointOf(r.Context()) },
		Retryable:        retryableAnswer,
		Limited:          func(resp *http.Response) bool { return resp.Header.Get(rateLimitedMark) != "" },
		UnnamedLimitWait: secondaryLimitWait,
		Log:              log,
		Now:              func() time.Time { return now() },
	})
}

// retryableAnswer is GitHub's addition to the shared retry rule (see newPolicy).
func retryableAnswer(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusForbidden:
		if graphQLRateLimited(resp) {
			return true
		}
		b := strings.ToLower(string(peekBody(resp, 4096)))
		return strings.Contains(b, "secondary rate limit") || strings.Contains(b, "abuse detection")
	case http.StatusOK:
		if graphQLRateLimited(resp) {
			// The body is drained before the back-off runs: leave it the verdict.
			resp.Header.Set(rateLimitedMark, "1")
			return true
		}
	}
	return false
}

// rateLimitedMark is set by the retry policy on a retried 200 that was a GraphQL RATE_LIMITED
// answer, so the back-off (which no longer sees the body) waits like for a rate limit.
const rateLimitedMark = "X-Forgectx-Rate-Limited"

// graphQLRateLimited reports a GraphQL response whose errors include type RATE_LIMITED
// (GitHub's GraphQL primary limit: HTTP 200, sometimes 403, with or without "data": null and
// rate-limit headers). Only a JSON object whose "errors" array carries that type counts: the
// string inside a comment body does not.
func graphQLRateLimited(resp *http.Response) bool {
	if !strings.Contains(strings.ToLower(resp.Header.Get("Content-Type")), "json") && resp.Header.Get("Content-Type") != "" {
		return false
	}
	b := peekBody(resp, 8192)
	if !bytes.Contains(b, []byte("RATE_LIMITED")) {
		return false
	}
	var env struct {
		Errors []struct {
			Type string `json:"type"`
		} `json:"errors"`
	}
	// A rate-limit answer is small; a body longer than the peek is a real page, not one.
	if err := json.Unmarshal(b, &env); err != nil {
		return false
	}
	for _, e := range env.Errors {
		if e.Type == "RATE_LIMITED" {
			return true
		}
	}
	return false
}

// sameOriginMove is the REST client's redirect policy: only a GET moved permanently (301,
// 307, 308 — GitHub's answer for a renamed or transferred repository) to the API's own
// scheme and host is followed, at most 3 times. Anything else (the logs endpoint's 302 to a
// storage host, a move to another host) is returned to the caller unfollowed: the token is
// added by the transport to every request this client makes, so following a redirect off
// the API origin would send it there.
func sameOriginMove(origin string, req *http.Request, via []*http.Request) error {
	if len(via) == 0 || len(via) > 3 || via[0].Method != http.MethodGet || req.Response == nil {
		return http.ErrUseLastResponse
	}
	switch req.Response.StatusCode {
	case http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return http.ErrUseLastResponse
	}
	if req.URL.Scheme+"://"+req.URL.Host != origin || req.URL.User != nil {
		return http.ErrUseLastResponse
	}
	return nil
}

// quotaHeaderHider drops the primary rate-limit headers from successful responses before
// go-github reads them (see New). Failed responses keep them: after the retrying transport
// gave up, go-github's fail-fast until the reset is the right behaviour.
type quotaHeaderHider struct{ next http.RoundTripper }

func (q quotaHeaderHider) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := q.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode/100 == 2 && resp.Header.Get("X-Ratelimit-Remaining") == "0" {
		resp.Header.Del("X-Ratelimit-Remaining")
		resp.Header.Del("X-Ratelimit-Reset")
	}
	if endpointOf(req.Context()) != logDownloadEndpoint && resp.Body != nil {
		// An API page larger than maxAPIBody is refused rather than decoded into memory (log
		// downloads have their own bound, max_source_bytes).
		resp.Body = forge.CapBody(resp.Body, maxAPIBody, errBodyTooLarge)
	}
	return resp, nil
}

// logDownloadEndpoint labels the pre-signed log download (bounded by max_source_bytes).
const logDownloadEndpoint = "GET {job log download}"

// errBodyTooLarge is returned by a read past maxAPIBody.
var errBodyTooLarge = fmt.Errorf("github: response body larger than %d bytes", maxAPIBody)

// peekBody returns up to n leading bytes of resp's body and leaves the body readable in full.
func peekBody(resp *http.Response, n int64) []byte {
	if resp.Body == nil {
		return nil
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, n))
	rest := resp.Body
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), rest), rest}
	return head
}

// secondaryLimitWait is waited after a rate-limit response that names no time: GitHub asks
// clients to wait at least a minute.
const secondaryLimitWait = time.Minute

// now is the clock the back-off reads x-ratelimit-reset against (tests pin it).
var now = time.Now

type endpointKey struct{}

// withEndpoint labels the requests made under ctx with a templated endpoint for --stats.
func withEndpoint(ctx context.Context, endpoint string) context.Context {
	return context.WithValue(ctx, endpointKey{}, endpoint)
}

func endpointOf(ctx context.Context) string {
	if s, ok := ctx.Value(endpointKey{}).(string); ok {
		return s
	}
	return "other"
}

// counter counts every attempt by endpoint label and the response bytes read, and bounds
// in-flight requests.
type counter struct {
	next       http.RoundTripper
	sem        chan struct{}
	mu         sync.Mutex
	total      int
	byEndpoint map[string]int
	bytes      int64 // response body bytes read (forge.CountBody): chunked answers have no Content-Length
}

func (c *counter) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case c.sem <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	defer func() { <-c.sem }()
	c.mu.Lock()
	c.total++
	c.byEndpoint[endpointOf(req.Context())]++
	c.mu.Unlock()
	resp, err := c.next.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		resp.Body = forge.CountBody(resp.Body, c.read)
	}
	return resp, err
}

func (c *counter) read(n int64) {
	c.mu.Lock()
	c.bytes += n
	c.mu.Unlock()
}

func (c *counter) snapshot() (int, map[string]int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, stats.Copy(c.byEndpoint), c.bytes
}
