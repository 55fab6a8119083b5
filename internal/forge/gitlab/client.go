package gitlab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	retryablehttp "github.com/hashicorp/go-retryablehttp"
	"github.com/rs/zerolog"
	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge/retry"
	"github.com/forgectx/forgectx/internal/forge/stats"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// DefaultAPIURL is GitLab.com's REST API base, used when Options.APIURL is empty.
const DefaultAPIURL = "https://gitlab.com/api/v4"

// Auth header names (GitLab REST API authentication). A personal, project or group access
// token goes in PRIVATE-TOKEN; a CI/CD job token goes in JOB-TOKEN.
const (
	headerPrivateToken = "PRIVATE-TOKEN"
	headerJobToken     = "JOB-TOKEN"
)

// TokenKind says how the token authenticates.
type TokenKind int

const (
	// tokenAccess is a personal, project or group access token (PRIVATE-TOKEN header).
	tokenAccess TokenKind = iota
	// tokenJob is a CI/CD job token (JOB-TOKEN header). GitLab allows it on a small set of
	// endpoints only; the others answer 401/403 and surface as errors or gaps.
	tokenJob
)

// jobTokenPrefix is the prefix GitLab gives CI/CD job tokens ("glcbt-").
const jobTokenPrefix = "glcbt-"

// kindForToken picks the token kind from the name of the environment variable that held it
// and from the token's own prefix: CI_JOB_TOKEN, or any glcbt- token, is a job token.
func kindForToken(envName, token string) TokenKind {
	if envName == "CI_JOB_TOKEN" || strings.HasPrefix(token, jobTokenPrefix) {
		return tokenJob
	}
	return tokenAccess
}

// Options configure a Client. The zero value (plus a token) talks to gitlab.com.
type Options struct {
	// APIURL is the REST base, e.g. https://gitlab.example.com:8443/api/v4. A URL without a
	// path gets /api/v4 appended.
	APIURL string
	// Token is the credential value; it is only ever placed in the auth header and is never
	// logged. Empty means unauthenticated (public projects, replay).
	Token     string
	TokenKind TokenKind
	// HTTPClient carries the transport (a cassette recorder/replayer in record/replay mode).
	// Nil means a pooled client with a 60s per-request timeout.
	HTTPClient *http.Client
	// Concurrency bounds parallel requests for job logs and actor lookups (default 4).
	Concurrency int
	// Limiter is told of every retried rate limit (the run's request pool; nil: none).
	Limiter retry.Limiter
	// RetryMax is the number of retries after the first attempt (default 5; negative: none).
	RetryMax int
	// RetryWaitMin and RetryWaitMax bound the exponential backoff for 5xx and transport
	// errors (defaults 500ms and 8s).
	RetryWaitMin, RetryWaitMax time.Duration
	// MaxServerWait caps a wait the server asks for through Retry-After or RateLimit-Reset
	// (default 60s); a longer request is honoured only up to this cap.
	MaxServerWait time.Duration
	// Log receives structured request counts and outcomes; never bodies or header values.
	Log zerolog.Logger
	// Now is the clock used only to turn RateLimit-Reset / Retry-After dates into waits.
	Now func() time.Time
	// ReceiptAuthor, when set, restricts the receipts read into agent_runs to notes authored
	// by the user id it returns: forgectx's own comment identity (`forgectx run` passes its
	// Commenter's Self). See receiptsBy. Nil reads every author's receipts.
	ReceiptAuthor func(context.Context) (int64, error)
}

// Client is a GitLab API client configured for forgectx.
type Client struct {
	gl      *gl.Client
	base    *url.URL // API base, with trailing slash
	host    string   // source.host
	opts    Options
	httpc   *http.Client
	retrier *retryablehttp.Client // for the bounded trace reader
	counter *counter
	stats   *stats.Stats // of the last Acquire, guarded by counter.mu
	// pageSize overrides PerPage for the acquisition's lists (in-package tests page small
	// lists; 0: PerPage).
	pageSize int64
}

// perPage is the page size the acquisition's lists request.
func (c *Client) perPage() int64 {
	if c.pageSize > 0 {
		return c.pageSize
	}
	return PerPage
}

// New builds a Client. It fails on an unusable API URL.
func New(o Options) (*Client, error) {
	if o.APIURL == "" {
		o.APIURL = DefaultAPIURL
	}
	base, err := parseAPIURL(o.APIURL)
	if err != nil {
		return nil, err
	}
	host, err := sourceHost(base)
	if err != nil {
		return nil, err
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	lim := retry.Limits{Max: o.RetryMax, WaitMin: o.RetryWaitMin, WaitMax: o.RetryWaitMax, MaxServerWait: o.MaxServerWait}.Defaults(retryDefaults)
	if lim.Max < 0 {
		lim.Max = 0
	}
	o.RetryMax, o.RetryWaitMin, o.RetryWaitMax, o.MaxServerWait = lim.Max, lim.WaitMin, lim.WaitMax, lim.MaxServerWait
	if o.Now == nil {
		o.Now = time.Now
	}
	httpc := &http.Client{Timeout: 60 * time.Second}
	if o.HTTPClient != nil {
		cp := *o.HTTPClient
		httpc = &cp
	}
	// The token travels in PRIVATE-TOKEN / JOB-TOKEN, which net/http, unlike Authorization,
	// copies onto a redirect to another host. No endpoint forgectx reads answers with a
	// redirect (the trace endpoint streams the log itself), so a redirect to another origin is
	// refused before it is followed: the credential is never sent anywhere but the configured
	// instance, and content from elsewhere is never staged as the instance's.
	httpc.CheckRedirect = sameOriginRedirect(httpc.CheckRedirect)
	// Every attempt, retries included, passes the counter (--stats).
	cnt := &counter{next: httpc.Transport, basePath: strings.TrimSuffix(base.EscapedPath(), "/")}
	cnt.reset()
	httpc.Transport = cnt
	basePath := cnt.basePath
	pol := retry.New(retry.Policy{
		Forge:  "gitlab",
		Limits: lim,
		Endpoint: func(r *http.Request) string {
			return r.Method + " " + templatePath(strings.TrimPrefix(r.URL.EscapedPath(), basePath))
		},
		Final:   []error{errCrossOriginRedirect},
		Log:     o.Log,
		Now:     o.Now,
		Limiter: o.Limiter,
	})
	var auth gl.AuthSource = gl.AccessTokenAuthSource{Token: o.Token}
	if o.TokenKind == tokenJob {
		auth = gl.JobTokenAuthSource{Token: o.Token}
	}
	if o.Token == "" {
		auth = gl.Unauthenticated{}
	}
	client, err := gl.NewAuthSourceClient(auth,
		gl.WithBaseURL(base.String()),
		gl.WithHTTPClient(httpc),
		gl.WithCustomBackoff(pol.Backoff),
		gl.WithCustomRetry(pol.CheckRetry),
		gl.WithCustomRetryMax(o.RetryMax),
		gl.WithCustomRetryWaitMinMax(o.RetryWaitMin, o.RetryWaitMax),
		gl.WithCustomLeveledLogger(quietLogger{}),
		gl.WithURLWarningLogger(slog.New(slog.DiscardHandler)),
		gl.WithUserAgent("forgectx"),
	)
	if err != nil {
		return nil, fmt.Errorf("gitlab: client: %w", err)
	}
	retrier := &retryablehttp.Client{HTTPClient: httpc}
	pol.Apply(retrier)
	return &Client{gl: client, base: base, host: host, opts: o, httpc: httpc, retrier: retrier, counter: cnt}, nil
}

// Host is the normalised source.host of the configured instance.
func (c *Client) Host() string { return c.host }

// errCrossOriginRedirect names the refusal of a redirect to another scheme, host or port in
// logs and docs; the request itself ends with the unfollowed 3xx answer.
var errCrossOriginRedirect = errors.New("gitlab: redirect to another origin refused (the token is never sent there)")

// sameOriginRedirect returns a redirect policy that does not follow any hop leaving the
// origin of the first request (the 3xx answer is returned as the result) and otherwise
// defers to next (net/http's default when nil).
func sameOriginRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 {
			first := via[0].URL
			if !strings.EqualFold(req.URL.Scheme, first.Scheme) || !strings.EqualFold(req.URL.Host, first.Host) {
				// Hand the 3xx back unfollowed: an HTTP error client-go does not retry (a
				// transport error would be retried five times) and the caller reports as
				// fetch_failed.
				return http.ErrUseLastResponse
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("gitlab: stopped after 10 redirects")
		}
		return nil
	}
}

// parseAPIURL validates the REST base URL: http or https, a host, no query, no user info.
func parseAPIURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("gitlab: api url: %w", err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("gitlab: api url %q: scheme must be https or http", raw)
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("gitlab: api url %q: must be scheme://host[:port][/path] without credentials, query or fragment", raw)
	}
	p := strings.TrimSuffix(u.Path, "/")
	if p == "" {
		p = "/api/v4"
	}
	u.Path = p + "/"
	u.RawPath = ""
	return u, nil
}

// sourceHost normalises an instance URL to the spec's source.host through canon.Host (the
// one normaliser every adapter shares): the lowercase DNS name, with ":port" appended only
// when the port is not 443. An https URL without a port has the default port and gets none;
// a plain-http URL without a port is on port 80, which is not the default HTTPS port, so it
// is written out (such URLs occur only for local test servers). A sub-path install
// (https://example.com/gitlab/api/v4) has the host of its URL: the path is not part of
// source.host. Host names outside [a-z0-9.-] (an IDN in Unicode form, an underscore, a
// trailing dot) and IP literals in brackets are refused rather than emitted as an invalid
// source.host.
func sourceHost(u *url.URL) (string, error) {
	if u.Hostname() == "" {
		return "", errors.New("gitlab: api url: no host")
	}
	if strings.Contains(u.Hostname(), ":") {
		return "", fmt.Errorf("gitlab: api url host %q: an IPv6 literal cannot be a source.host", u.Hostname())
	}
	hostOnly := &url.URL{Scheme: u.Scheme, Host: u.Host}
	h, err := canon.Host(hostOnly.String())
	if err != nil {
		if p := u.Port(); p != "" {
			return "", fmt.Errorf("gitlab: api url port %q or host: %w", p, err)
		}
		return "", fmt.Errorf("gitlab: api url host %q: %w", u.Hostname(), err)
	}
	return h, nil
}

// retryDefaults are GitLab's retry numbers: 5 retries (the fault scenarios and their request
// counts were fixed with this count; docs/forges.md, "Retries"), 500ms–8s back-off,
// server-demanded waits up to 60s.
var retryDefaults = retry.Limits{Max: 5, WaitMin: 500 * time.Millisecond, WaitMax: 8 * time.Second, MaxServerWait: 60 * time.Second}

// Backoff is the shared back-off (internal/forge/retry) as GitLab configures it: a wait the server
// asks for (Retry-After in seconds or as an HTTP date, else RateLimit-Reset as a Unix time) on
// 429 and 503 answers and on a 403 that reports RateLimit-Remaining: 0, capped at
// maxServerWait and never below min; otherwise exponential backoff min·2^attempt capped at
// max. client-go's own backoff reads only RateLimit-Reset and ignores Retry-After, which is
// why forgectx replaces it.
func Backoff(now func() time.Time, maxServerWait time.Duration) retryablehttp.Backoff {
	return retry.New(retry.Policy{Forge: "gitlab", Limits: retry.Limits{MaxServerWait: maxServerWait}, Now: now}).Backoff
}

// quietLogger discards retryablehttp's log lines: they contain URLs with query strings and
// are not structured; request outcomes are logged by this package instead.
type quietLogger struct{}

func (quietLogger) Error(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Warn(string, ...any)  {}
