package forge

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge/retry"
	"github.com/forgectx/forgectx/internal/forge/stats"
)

// Pool is the request pool of one run (docs/request-pool.md): every client a Session (or one
// Connect) builds sends through it, so that at most Limit requests to one host are in flight
// at a time whichever client, source or page sends them. A slot is held from the moment a
// request is handed to the transport until its answer's headers arrive (or it fails); the
// body is read outside the slot, so a slow reader can never hold the pool.
//
// When a host rate-limits the run (a 429, a rate-limit 403, any Retry-After; the retry policy
// reports it through Limited), every request to that host waits out the pause the server
// named, and the host is read one request at a time for the rest of the run: a forge that
// said "slow down" once is not pushed again.
//
// A Pool also measures the run's request shape for --stats (Timing): wall time, the most
// requests in flight at once, and the longest chain of requests each sent only after the
// one before had answered.
type Pool struct {
	limit int
	base  *http.Transport
	log   zerolog.Logger
	now   func() time.Time

	mu    sync.Mutex
	hosts map[string]*hostSlots
	// Timing: first send, last answer, requests, in flight now and at most, and the chain
	// depths (done: the deepest chain among requests that have answered).
	first, last         time.Time
	requests            int
	inFlight, maxFlight int
	done, chain         int
}

// hostSlots is one host's share of the pool.
type hostSlots struct {
	limit    int
	inFlight int
	paused   time.Time     // no request starts before this instant
	changed  chan struct{} // closed (and replaced) whenever a slot frees or the pause moves
}

// NewPool returns the pool of one run with limit requests in flight per host (0 takes
// DefaultConcurrency; values above MaxConcurrency are clamped: the flag refuses them before).
// Its base transport is one clone of http.DefaultTransport shared by every client of the run,
// keeping as many idle connections per host as requests may be in flight and negotiating
// HTTP/2 where the server offers it.
func NewPool(limit int, log zerolog.Logger) *Pool {
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	limit = min(limit, MaxConcurrency)
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = max(limit, 2)
	base.ForceAttemptHTTP2 = true
	return &Pool{limit: limit, base: base, log: log, now: time.Now, hosts: map[string]*hostSlots{}}
}

// RetryLimiter is the pool as the retry policy's Limiter (nil for a nil Pool, so a policy
// built without a run has none).
func (p *Pool) RetryLimiter() retry.Limiter {
	if p == nil {
		return nil
	}
	return p
}

// Limit is the pool's configured requests in flight per host.
func (p *Pool) Limit() int { return p.limit }

// Base is the shared innermost transport of the run (the one a recorder records through).
func (p *Pool) Base() *http.Transport { return p.base }

// Wrap returns next sending through the pool (next nil: the pool's shared base transport).
// A nil Pool returns next unchanged, so code that builds clients without a run (unit tests
// of one adapter) keeps its own transport.
func (p *Pool) Wrap(next http.RoundTripper) http.RoundTripper {
	if p == nil {
		return next
	}
	if next == nil {
		next = p.base
	}
	return &poolTransport{pool: p, next: next}
}

type poolTransport struct {
	pool *Pool
	next http.RoundTripper
}

func (t *poolTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	host := strings.ToLower(req.URL.Host)
	depth, err := t.pool.acquire(req.Context(), host)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // a RoundTripper always closes the request body
		}
		return nil, err
	}
	defer t.pool.release(host, depth)
	return t.next.RoundTrip(req)
}

func (p *Pool) slots(host string) *hostSlots {
	h := p.hosts[host]
	if h == nil {
		h = &hostSlots{limit: p.limit, changed: make(chan struct{})}
		p.hosts[host] = h
	}
	return h
}

// acquire waits for a slot of host (and for the end of its pause), or for ctx to end. It
// returns the request's chain depth.
func (p *Pool) acquire(ctx context.Context, host string) (int, error) {
	for {
		p.mu.Lock()
		h := p.slots(host)
		wait := h.paused.Sub(p.now())
		if wait <= 0 && h.inFlight < h.limit {
			h.inFlight++
			p.inFlight++
			p.maxFlight = max(p.maxFlight, p.inFlight)
			p.requests++
			if p.first.IsZero() {
				p.first = p.now()
			}
			depth := p.done + 1
			p.mu.Unlock()
			return depth, nil
		}
		changed := h.changed
		p.mu.Unlock()
		var timer *time.Timer
		var fire <-chan time.Time
		if wait > 0 {
			timer = time.NewTimer(wait)
			fire = timer.C
		}
		select {
		case <-changed:
		case <-fire:
		case <-ctx.Done():
		}
		if timer != nil {
			timer.Stop()
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
	}
}

func (p *Pool) release(host string, depth int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.slots(host)
	h.inFlight--
	p.inFlight--
	p.done = max(p.done, depth)
	p.chain = max(p.chain, depth)
	p.last = p.now()
	h.broadcast()
}

func (h *hostSlots) broadcast() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// Limited is called by the retry policy when host rate-limited a request and the server asked
// for wait: no request to host starts before the wait is over, and from now on the host is
// read one request at a time. It returns the host's limit now (1).
func (p *Pool) Limited(host string, wait time.Duration) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.slots(strings.ToLower(host))
	if until := p.now().Add(wait); until.After(h.paused) {
		h.paused = until
	}
	if h.limit > 1 {
		p.log.Warn().Str("host", host).Int("concurrency", 1).Int64("pause_ms", wait.Milliseconds()).
			Msg("rate limited: requests to this host paused as asked, then sent one at a time for the rest of the run")
	}
	h.limit = 1
	h.broadcast()
	return h.limit
}

// HostLimit is host's limit now: the pool's, or 1 after a rate limit.
func (p *Pool) HostLimit(host string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.slots(strings.ToLower(host)).limit
}

// Timing returns what the pool measured so far.
func (p *Pool) Timing() stats.Timing {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := stats.Timing{Concurrency: p.limit, Requests: p.requests, MaxInFlight: p.maxFlight, LongestChain: p.chain}
	if !p.first.IsZero() && p.last.After(p.first) {
		t.WallMS = p.last.Sub(p.first).Milliseconds()
	}
	return t
}
