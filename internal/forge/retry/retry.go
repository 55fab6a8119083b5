// Package retry is the one retry and back-off policy of every forge adapter (docs/architecture.md,
// "Package map": internal/forge owns the shared retry), applied through go-retryablehttp: which
// answers are retried (transport errors and time-outs, 429, 5xx but 501, a 403 that carries a
// rate-limit signal, plus what a forge adds, such as GitHub's secondary limits), how long to
// wait (Retry-After in seconds or as an HTTP date, x-ratelimit-reset, RateLimit-Reset, else
// exponential), and one structured log line per retry naming the endpoint template, the
// status or cause, the attempt and the wait — never the full URL, a query value or a header.
//
// A write that must not be repeated (creating a comment: a 5xx may have created it) is marked
// with Once and is retried only after a rate-limit refusal, where the server did nothing.
package retry

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge/cassette"
)

// Policy configures the retries of one adapter client. Build it with the adapter's values,
// then use CheckRetry and Backoff (or Apply) on its retryablehttp.Client.
type Policy struct {
	// Forge names the adapter in log lines.
	Forge string
	// Limits hold the attempt count and the waits (already defaulted by the adapter).
	Limits
	// Endpoint templates a request for the log line ("GET /repos/{owner}/{repo}/pulls/{n}").
	// Nil logs the method only.
	Endpoint func(*http.Request) string
	// Retryable adds forge-specific retryable answers (GitHub: a 403 whose body names a
	// secondary rate limit, a GraphQL RATE_LIMITED answer). It may read the body only
	// through a peek that leaves it readable.
	Retryable func(*http.Response) bool
	// Limited reports a rate-limited answer that names no wait and was retried for a reason
	// Retryable knows (GitHub marks a GraphQL RATE_LIMITED 200 this way).
	Limited func(*http.Response) bool
	// UnnamedLimitWait is waited after a rate-limit answer (403, 429, Limited) that names no
	// wait; 0 backs off exponentially. GitHub documents at least one minute.
	UnnamedLimitWait time.Duration
	// Final lists errors that are policy refusals, never retried (a cross-origin redirect).
	Final []error
	// Log receives one line per retry (warn) and per give-up (warn).
	Log zerolog.Logger
	// Now is the clock that turns HTTP dates and reset instants into waits (default time.Now).
	Now func() time.Time
	// Limiter, when set, is told of every rate-limited answer that is retried (a 429, a 403
	// with a limit signal or one Retryable or Limited marks, any answer with Retry-After),
	// with the wait the retry will wait: the run's request pool (forge.Pool) then pauses every
	// request to that host as long and reads it one request at a time from then on.
	Limiter Limiter

	attempts *sync.Map // attemptKey → int: attempts seen per request, for the log line
}

// Limiter is what the retry policy tells of a rate limit (forge.Pool implements it). Limited
// returns the host's requests-in-flight limit from now on, which the retry log line reports.
type Limiter interface {
	Limited(host string, wait time.Duration) int
}

// New returns p ready for use (the attempt bookkeeping of its log lines initialised).
func New(p Policy) *Policy {
	p.attempts = &sync.Map{}
	if p.Now == nil {
		p.Now = time.Now
	}
	return &p
}

// Apply configures rc with the policy: attempt count, waits, CheckRetry, Backoff, no
// retryablehttp logger (its lines carry full URLs) and the last response handed back rather
// than an opaque "giving up" error, so callers classify by status.
func (p *Policy) Apply(rc *retryablehttp.Client) {
	rc.Logger = nil
	rc.RetryMax = p.Max
	if rc.RetryMax < 0 {
		rc.RetryMax = 0
	}
	rc.RetryWaitMin, rc.RetryWaitMax = p.WaitMin, p.WaitMax
	rc.CheckRetry = p.CheckRetry
	rc.Backoff = p.Backoff
	rc.ErrorHandler = retryablehttp.PassthroughErrorHandler
}

// Limits are the numbers of a retry policy (forge.Options.Retry).
type Limits struct {
	// Max is the number of retries after the first attempt (negative: none).
	Max int
	// WaitMin and WaitMax bound the exponential back-off of 5xx and transport errors.
	WaitMin, WaitMax time.Duration
	// MaxServerWait caps a wait the server demands (Retry-After, x-ratelimit-reset,
	// RateLimit-Reset).
	MaxServerWait time.Duration
}

// Defaults returns l with every zero field taken from d.
func (l Limits) Defaults(d Limits) Limits {
	if l.Max == 0 {
		l.Max = d.Max
	}
	if l.WaitMin <= 0 {
		l.WaitMin = d.WaitMin
	}
	if l.WaitMax <= 0 {
		l.WaitMax = d.WaitMax
	}
	if l.MaxServerWait <= 0 {
		l.MaxServerWait = d.MaxServerWait
	}
	return l
}

type onceKey struct{}

// Once marks the requests made under ctx as writes that must not be repeated: they are
// retried only after a rate-limit refusal (429, or a 403 with a limit signal).
func Once(ctx context.Context) context.Context { return context.WithValue(ctx, onceKey{}, true) }

func isOnce(ctx context.Context) bool { v, _ := ctx.Value(onceKey{}).(bool); return v }

// CheckRetry is the retryablehttp.CheckRetry of the policy.
func (p *Policy) CheckRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		p.forget(ctx, resp, err)
		return false, ctx.Err()
	}
	retry, perr := p.decide(ctx, resp, err)
	if !retry {
		p.forget(ctx, resp, err)
		return false, perr
	}
	p.logRetry(ctx, resp, err)
	return true, nil
}

// rateLimited reports an answer that asks the client to slow down: a 429, a 403 with a limit
// signal, one the forge marks (Limited, or a 403 its Retryable retries: GitHub's secondary
// limit), or any answer naming a wait in Retry-After.
func (p *Policy) rateLimited(resp *http.Response) bool {
	if resp == nil {
		return false
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests, resp.Header.Get("Retry-After") != "":
		return true
	case resp.StatusCode == http.StatusForbidden && (limitSignal(resp.Header) || (p.Retryable != nil && p.Retryable(resp))):
		return true
	}
	return p.Limited != nil && p.Limited(resp)
}

func (p *Policy) decide(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if err != nil {
		if errors.Is(err, cassette.ErrNotRecorded) || errors.Is(err, context.Canceled) || isOnce(ctx) {
			return false, err
		}
		for _, f := range p.Final {
			if errors.Is(err, f) {
				return false, err
			}
		}
		// retryablehttp's own classification: redirect loops, a bad scheme and untrusted
		// certificates never improve.
		if ok, _ := retryablehttp.DefaultRetryPolicy(context.Background(), nil, err); !ok {
			return false, err
		}
		return true, nil
	}
	limited := resp.StatusCode == http.StatusTooManyRequests ||
		(resp.StatusCode == http.StatusForbidden && limitSignal(resp.Header))
	switch {
	case limited:
		return true, nil
	case isOnce(ctx):
		return false, nil
	case resp.StatusCode == 0 || (resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented):
		return true, nil
	case p.Retryable != nil && p.Retryable(resp):
		return true, nil
	}
	return false, nil
}

// limitSignal reports a 403 that says it is a rate limit: Retry-After, or an exhausted
// x-ratelimit-remaining (GitHub, Forgejo) or RateLimit-Remaining (GitLab).
func limitSignal(h http.Header) bool {
	return h.Get("Retry-After") != "" || h.Get("X-Ratelimit-Remaining") == "0" || h.Get("RateLimit-Remaining") == "0"
}

// Backoff is the retryablehttp.Backoff of the policy: a rate-limited answer (429, 403, 503, or
// one Limited reports) waits what the server names — Retry-After, else the reset instant of an
// exhausted quota — at least min and at most MaxServerWait; one that names nothing waits
// UnnamedLimitWait (403, 429, Limited; when set). Everything else backs off exponentially,
// min·2^attempt up to max.
func (p *Policy) Backoff(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		limited := p.Limited != nil && p.Limited(resp)
		switch resp.StatusCode {
		case http.StatusTooManyRequests, http.StatusForbidden:
			limited = true
		case http.StatusServiceUnavailable:
			if d, ok := serverWait(resp.Header, p.Now()); ok {
				return clamp(d, min, p.MaxServerWait)
			}
		}
		if limited {
			if d, ok := serverWait(resp.Header, p.Now()); ok {
				return clamp(d, min, p.MaxServerWait)
			}
			if p.UnnamedLimitWait > 0 {
				return clamp(p.UnnamedLimitWait, 0, p.MaxServerWait)
			}
		}
	}
	d := time.Duration(float64(min) * math.Pow(2, float64(attempt)))
	if d > max || d <= 0 {
		d = max
	}
	if d < min {
		d = min
	}
	return d
}

// serverWait is the wait an answer names: Retry-After (delta seconds or HTTP date), else the
// reset instant of an exhausted quota (x-ratelimit-reset with x-ratelimit-remaining 0, plus
// one second for whole-second clocks; else RateLimit-Reset), relative to now and never
// negative.
func serverWait(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
			if s > math.MaxInt32 {
				s = math.MaxInt32
			}
			return time.Duration(s) * time.Second, true
		}
		if t, err := http.ParseTime(v); err == nil {
			return nonNegative(t.Sub(now)), true
		}
	}
	if h.Get("X-Ratelimit-Remaining") == "0" {
		if s, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-Ratelimit-Reset")), 10, 64); err == nil && s > 0 {
			return nonNegative(time.Unix(s, 0).Sub(now) + time.Second), true
		}
	}
	if v := strings.TrimSpace(h.Get("RateLimit-Reset")); v != "" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil && s > 0 {
			return nonNegative(time.Unix(s, 0).Sub(now)), true
		}
	}
	return 0, false
}

func nonNegative(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	return d
}

func clamp(d, lo, hi time.Duration) time.Duration {
	if d < lo {
		d = lo
	}
	if hi > 0 && d > hi {
		d = hi
	}
	return d
}

// attemptKey identifies one logical request across its attempts: retryablehttp hands
// CheckRetry the request's own context on every attempt.
type attemptKey struct {
	ctx    context.Context
	method string
	url    string
}

func keyOf(ctx context.Context, resp *http.Response, err error) (attemptKey, *http.Request) {
	if resp != nil && resp.Request != nil {
		return attemptKey{ctx, resp.Request.Method, resp.Request.URL.String()}, resp.Request
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			m := strings.ToUpper(ue.Op)
			return attemptKey{ctx, m, ue.URL}, &http.Request{Method: m, URL: u}
		}
	}
	return attemptKey{ctx: ctx}, nil
}

func (p *Policy) forget(ctx context.Context, resp *http.Response, err error) {
	if p.attempts == nil {
		return
	}
	k, _ := keyOf(ctx, resp, err)
	p.attempts.Delete(k)
}

// logRetry writes the retry's one line: endpoint template, status or cause, attempt and the
// wait Backoff will choose (the same function on the same answer). The last retry's give-up
// is logged by the caller's error, which names the cause (Cause).
func (p *Policy) logRetry(ctx context.Context, resp *http.Response, err error) {
	if p.attempts == nil {
		return
	}
	k, req := keyOf(ctx, resp, err)
	n := 1
	if v, ok := p.attempts.Load(k); ok {
		n = v.(int) + 1
	}
	ev := p.Log.Warn().Str("forge", p.Forge).Str("endpoint", p.endpoint(req))
	if resp != nil {
		ev = ev.Int("status", resp.StatusCode)
	} else {
		ev = ev.Str("cause", Cause(err))
	}
	max := p.Max
	if max < 0 {
		max = 0
	}
	if n > max {
		p.attempts.Delete(k)
		ev.Int("attempts", n).Msg("request failed; retries exhausted")
		return
	}
	p.attempts.Store(k, n)
	if p.Limiter != nil && req != nil && req.URL != nil && p.rateLimited(resp) {
		wait := p.Backoff(p.WaitMin, p.WaitMax, n-1, resp)
		ev = ev.Int("host_concurrency", p.Limiter.Limited(req.URL.Host, wait)).Bool("host_paused", true)
	}
	ev.Int("retry", n).Int("of", max).Int64("wait_ms", p.Backoff(p.WaitMin, p.WaitMax, n-1, resp).Milliseconds()).Msg("request failed; retrying")
}

func (p *Policy) endpoint(req *http.Request) string {
	switch {
	case req == nil:
		return "unknown"
	case p.Endpoint != nil:
		return p.Endpoint(req)
	}
	return req.Method
}

// Cause names why a request failed without quoting a URL, a header or a body: a class of
// transport error, or "" for nil.
func Cause(err error) string {
	var ne net.Error
	var dns *net.DNSError
	var cert x509.UnknownAuthorityError
	var host x509.HostnameError
	// A body read past its bound (forge.BodyTooLargeError, which this package cannot name:
	// internal/forge imports it).
	var tooLarge interface{ BodyLimit() int64 }
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, cassette.ErrNotRecorded):
		return "not in the replay cassette"
	case errors.As(err, &dns):
		return "DNS lookup failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(err, &cert), errors.As(err, &host):
		return "TLS certificate not trusted"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection closed mid-answer"
	case errors.As(err, &tooLarge):
		return fmt.Sprintf("response body over the %d-byte bound (reading stopped there)", tooLarge.BodyLimit())
	}
	return "transport error"
}
