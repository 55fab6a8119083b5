package forge_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
)

// gauge counts the requests a test server is answering at once.
type gauge struct {
	mu       sync.Mutex
	now, max int
}

func (g *gauge) enter() {
	g.mu.Lock()
	g.now++
	g.max = max(g.max, g.now)
	g.mu.Unlock()
}

func (g *gauge) leave() {
	g.mu.Lock()
	g.now--
	g.mu.Unlock()
}

func (g *gauge) peak() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.max
}

// slowServer answers 200 after d, counting requests in flight (left before the answer is
// written, so the count is what the client waits for).
func slowServer(t *testing.T, g *gauge, d time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.enter()
		time.Sleep(d)
		g.leave()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func getAll(t *testing.T, hc *http.Client, urls []string) {
	t.Helper()
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := hc.Get(u)
			if err != nil {
				t.Errorf("GET: %v", err)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// The pool lets at most its limit of requests to one host be in flight, whichever client
// sends them, and reaches that limit when callers ask for more.
func TestPoolLimitHoldsAcrossClients(t *testing.T) {
	var g gauge
	srv := slowServer(t, &g, 30*time.Millisecond)
	pool := forge.NewPool(3, zerolog.Nop())
	a := &http.Client{Transport: pool.Wrap(nil)}
	b := &http.Client{Transport: pool.Wrap(nil)}
	var wg sync.WaitGroup
	for _, hc := range []*http.Client{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); getAll(t, hc, repeat(srv.URL, 8)) }()
	}
	wg.Wait()
	if g.peak() != 3 {
		t.Errorf("server saw at most %d requests at once, want exactly the limit 3", g.peak())
	}
	tm := pool.Timing()
	if tm.MaxInFlight != 3 || tm.Requests != 16 || tm.Concurrency != 3 {
		t.Errorf("timing = %+v, want 16 requests, at most 3 in flight", tm)
	}
	if tm.LongestChain < 16/3 || tm.LongestChain >= 16 {
		t.Errorf("longest chain %d, want about 16/3 rounds", tm.LongestChain)
	}
	if tm.WallMS < 5*30 {
		t.Errorf("wall %d ms, want at least 6 rounds of 30 ms", tm.WallMS)
	}
}

// Limit 1 sends one request at a time: the chain is every request.
func TestPoolLimitOneIsSequential(t *testing.T) {
	var g gauge
	srv := slowServer(t, &g, 5*time.Millisecond)
	pool := forge.NewPool(1, zerolog.Nop())
	getAll(t, &http.Client{Transport: pool.Wrap(nil)}, repeat(srv.URL, 6))
	if g.peak() != 1 {
		t.Errorf("peak %d, want 1", g.peak())
	}
	if tm := pool.Timing(); tm.LongestChain != 6 || tm.MaxInFlight != 1 {
		t.Errorf("timing %+v, want a chain of 6 with 1 in flight", tm)
	}
}

// The limit is per host: two hosts each get their own slots.
func TestPoolLimitIsPerHost(t *testing.T) {
	var g1, g2 gauge
	s1, s2 := slowServer(t, &g1, 40*time.Millisecond), slowServer(t, &g2, 40*time.Millisecond)
	pool := forge.NewPool(2, zerolog.Nop())
	hc := &http.Client{Transport: pool.Wrap(nil)}
	getAll(t, hc, append(repeat(s1.URL, 6), repeat(s2.URL, 6)...))
	if g1.peak() != 2 || g2.peak() != 2 {
		t.Errorf("peaks %d and %d, want 2 on each host", g1.peak(), g2.peak())
	}
	if tm := pool.Timing(); tm.MaxInFlight != 4 {
		t.Errorf("max in flight %d, want 4 (2 per host)", tm.MaxInFlight)
	}
}

// A rate limit with Retry-After pauses every request to the host for the wait, and the host
// is then read one request at a time; the retry's log line says so. Another host is not
// affected.
func TestPoolPausesAndShrinksOnRateLimit(t *testing.T) {
	var g gauge
	var limited atomic.Bool
	var mu sync.Mutex
	var after []time.Time
	var limitedAt time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/limit" && limited.CompareAndSwap(false, true) {
			mu.Lock()
			limitedAt = time.Now()
			mu.Unlock()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		g.enter()
		mu.Lock()
		if r.URL.Path == "/after" {
			after = append(after, time.Now())
		}
		mu.Unlock()
		time.Sleep(10 * time.Millisecond)
		g.leave()
	}))
	defer srv.Close()
	var logs bytes.Buffer
	pool := forge.NewPool(4, zerolog.Nop())
	hc, err := forge.NewHTTPClient(forge.Options{APIURL: srv.URL, Pool: pool, Log: zerolog.New(&logs)}, forge.ClientSpec{
		Forge: "test", Retry: forge.Retry{Max: 2, WaitMin: time.Millisecond, WaitMax: time.Millisecond, MaxServerWait: 300 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	limitedDone := make(chan struct{})
	go func() {
		defer close(limitedDone)
		resp, err := hc.Get(srv.URL + "/limit")
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("limited request: %v %v, want 200 after the retry", resp, err)
			return
		}
		resp.Body.Close()
	}()
	// Once the 429 is seen (the host dropped to 1), requests sent during the pause wait it out.
	for deadline := time.Now().Add(5 * time.Second); pool.HostLimit(host) != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the 429 never dropped the host to one request at a time")
		}
	}
	getAll(t, hc, repeat(srv.URL+"/after", 6))
	<-limitedDone
	if g.peak() != 1 {
		t.Errorf("after the rate limit the server saw %d requests at once, want 1", g.peak())
	}
	mu.Lock()
	for _, at := range after {
		if at.Sub(limitedAt) < 250*time.Millisecond {
			t.Errorf("a request arrived %v after the 429, inside the 300ms pause", at.Sub(limitedAt))
		}
	}
	mu.Unlock()
	line := logs.String()
	if !strings.Contains(line, `"host_concurrency":1`) || !strings.Contains(line, `"host_paused":true`) || !strings.Contains(line, "request failed; retrying") {
		t.Errorf("retry log line does not say the host is paused and serial: %s", line)
	}
	// Another host keeps the full limit.
	if got := pool.HostLimit("other.example:443"); got != 4 {
		t.Errorf("another host's limit = %d, want 4", got)
	}
}

// A pause holds requests that were waiting for a slot too, and a waiting request whose
// context ends leaves without a slot; a request cancelled in flight frees its slot.
func TestPoolCancellationReleasesSlot(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		if r.URL.Path == "/hang" {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
	}))
	defer srv.Close()
	defer close(release)
	pool := forge.NewPool(1, zerolog.Nop())
	hc := &http.Client{Transport: pool.Wrap(nil)}
	ctx, cancel := context.WithCancel(context.Background())
	hung := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/hang", nil)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		hung <- err
	}()
	<-arrived
	// The only slot is taken: a request with a short deadline gives up waiting for it.
	wctx, wcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer wcancel()
	req, _ := http.NewRequestWithContext(wctx, http.MethodGet, srv.URL+"/wait", nil)
	if _, err := hc.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting request: %v, want its deadline", err)
	}
	select {
	case <-arrived:
		t.Fatal("a request reached the server while the only slot was taken")
	default:
	}
	cancel()
	if err := <-hung; !errors.Is(err, context.Canceled) {
		t.Fatalf("hung request: %v, want cancelled", err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := hc.Get(srv.URL + "/next")
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled request kept its slot: the next request never ran")
	}
}

// NewPool clamps its limit and keeps idle connections to match; a nil pool wraps nothing.
func TestPoolDefaultsAndNil(t *testing.T) {
	if got := forge.NewPool(0, zerolog.Nop()).Limit(); got != forge.DefaultConcurrency {
		t.Errorf("NewPool(0) limit %d, want %d", got, forge.DefaultConcurrency)
	}
	p := forge.NewPool(8, zerolog.Nop())
	if p.Base().MaxIdleConnsPerHost != 8 || !p.Base().ForceAttemptHTTP2 {
		t.Errorf("base transport: idle per host %d, HTTP/2 %v; want 8 and true", p.Base().MaxIdleConnsPerHost, p.Base().ForceAttemptHTTP2)
	}
	var none *forge.Pool
	rt := http.DefaultTransport
	if none.Wrap(rt) != rt || none.RetryLimiter() != nil {
		t.Error("a nil pool must leave the transport alone and offer no limiter")
	}
}
