package httpfake

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Latency is a RoundTripper that puts a round trip's worth of delay in front of another (a
// cassette replay, a fake server's client transport) and observes the requests: the order
// they were sent in, and the most that were ever in flight at once. The parallel-read tests
// use it to answer in a shuffled completion order (Jitter), to measure wall time against a
// fixed per-request delay (Fixed), and to check that a run never exceeds its concurrency.
type Latency struct {
	Next http.RoundTripper
	// Delay returns the wait before req is passed on.
	Delay func(req *http.Request) time.Duration
	// Fail, when set and returning a status, answers the request with that status and a JSON
	// error body instead of passing it on (after its delay, like the real answer would).
	Fail func(req *http.Request) int

	mu       sync.Mutex
	sent     []string
	inFlight int
	maxIn    int
}

// Fixed waits d before every request.
func Fixed(d time.Duration) func(*http.Request) time.Duration {
	return func(*http.Request) time.Duration { return d }
}

// Jitter waits a pseudo-random 0..max before each request, from seed: requests answer in an
// order that has nothing to do with the order they were sent in, reproducibly per seed.
func Jitter(seed uint64, max time.Duration) func(*http.Request) time.Duration {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func(*http.Request) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return time.Duration(rng.Int64N(int64(max) + 1))
	}
}

// RoundTrip records req, waits its delay and passes it on.
func (l *Latency) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.sent = append(l.sent, req.Method+" "+req.URL.RequestURI())
	l.inFlight++
	l.maxIn = max(l.maxIn, l.inFlight)
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.inFlight--
		l.mu.Unlock()
	}()
	if l.Delay != nil {
		if d := l.Delay(req); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-req.Context().Done():
				t.Stop()
				return nil, req.Context().Err()
			}
		}
	}
	if l.Fail != nil {
		if status := l.Fail(req); status != 0 {
			return &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
				Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req,
				Header: http.Header{"Content-Type": {"application/json"}},
				Body:   io.NopCloser(strings.NewReader(`{"message":"injected fault"}`)), ContentLength: 28}, nil
		}
	}
	return l.Next.RoundTrip(req)
}

// Sent returns the requests in the order they were sent ("METHOD /path?query").
func (l *Latency) Sent() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.sent...)
}

// MaxInFlight is the most requests that were in flight at once.
func (l *Latency) MaxInFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.maxIn
}

// BenchDelay is the per-request delay of the latency benchmarks: FORGECTX_LATENCY_MS
// milliseconds when set to a positive integer (to reproduce a distant forge, e.g. 150), else def.
func BenchDelay(def time.Duration) time.Duration {
	if ms, err := strconv.Atoi(os.Getenv("FORGECTX_LATENCY_MS")); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return def
}
