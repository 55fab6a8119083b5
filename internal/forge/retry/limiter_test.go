package retry_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge/retry"
)

// limiter records what the policy reported.
type limiter struct {
	mu    sync.Mutex
	hosts []string
	waits []time.Duration
}

func (l *limiter) Limited(host string, wait time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hosts, l.waits = append(l.hosts, host), append(l.waits, wait)
	return 1
}

// The limiter hears of every retried rate limit — a 429, a 403 with a limit signal, a 403
// the forge's Retryable marks (GitHub's secondary limit without headers), a 503 with
// Retry-After — with the host and the wait the retry waits, and the retry line says the host is
// now paused and serial; a plain 500 is no rate limit.
func TestLimiterHearsOfRateLimits(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  func(w http.ResponseWriter)
		limited bool
	}{
		{"429", func(w http.ResponseWriter) { w.Header().Set("Retry-After", "0"); w.WriteHeader(429) }, true},
		{"403 remaining 0", func(w http.ResponseWriter) { w.Header().Set("X-Ratelimit-Remaining", "0"); w.WriteHeader(403) }, true},
		{"403 secondary, no headers", func(w http.ResponseWriter) { w.WriteHeader(403); _, _ = w.Write([]byte("secondary rate limit")) }, true},
		{"503 Retry-After", func(w http.ResponseWriter) { w.Header().Set("Retry-After", "0"); w.WriteHeader(503) }, true},
		{"500", func(w http.ResponseWriter) { w.WriteHeader(500) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 1 {
					tc.answer(w)
				}
			}))
			defer srv.Close()
			var logs bytes.Buffer
			lim := &limiter{}
			rc := retryablehttp.NewClient()
			retry.New(retry.Policy{
				Forge:  "testforge",
				Limits: retry.Limits{Max: 2, WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond, MaxServerWait: 5 * time.Millisecond},
				Retryable: func(resp *http.Response) bool {
					return resp.StatusCode == 403 && resp.Header.Get("X-Ratelimit-Remaining") == "" // stands for GitHub's body peek
				},
				Limiter:          lim,
				UnnamedLimitWait: 3 * time.Millisecond,
				Log:              zerolog.New(&logs),
			}).Apply(rc)
			resp, err := rc.StandardClient().Get(srv.URL)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("%v %v", resp, err)
			}
			resp.Body.Close()
			host := strings.TrimPrefix(srv.URL, "http://")
			if !tc.limited {
				if len(lim.hosts) != 0 || strings.Contains(logs.String(), "host_paused") {
					t.Errorf("a 500 was reported as a rate limit: %v %s", lim.hosts, logs.String())
				}
				return
			}
			if len(lim.hosts) != 1 || lim.hosts[0] != host || lim.waits[0] <= 0 {
				t.Errorf("limiter heard %v %v, want %s once with a positive wait", lim.hosts, lim.waits, host)
			}
			if !strings.Contains(logs.String(), `"host_concurrency":1`) || !strings.Contains(logs.String(), `"host_paused":true`) {
				t.Errorf("retry line does not say the host is paused and serial: %s", logs.String())
			}
		})
	}
}
