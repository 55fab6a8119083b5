package retry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/retry"
)

// client is a retrying client configured by the policy, logging into logs.
func client(t *testing.T, logs *bytes.Buffer, max int) *http.Client {
	t.Helper()
	rc := retryablehttp.NewClient()
	retry.New(retry.Policy{
		Forge:    "testforge",
		Limits:   retry.Limits{Max: max, WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond, MaxServerWait: 5 * time.Millisecond},
		Endpoint: func(r *http.Request) string { return r.Method + " /items/{id}" },
		Log:      zerolog.New(logs),
	}).Apply(rc)
	return rc.StandardClient()
}

// Every retry is one log line naming the endpoint template, the status, the attempt
// and the wait; the URL's path values, its query and the headers never appear.
func TestEachRetryIsLoggedWithoutURLOrHeaders(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) < 3 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	var logs bytes.Buffer
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/items/4711?private_token=s3cr3t", nil)
	req.Header.Set("Authorization", "token hdr-s3cr3t")
	resp, err := client(t, &logs, 3).Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("resp %v, %v", resp, err)
	}
	resp.Body.Close()
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want one per retry (2):\n%s", len(lines), logs.String())
	}
	for i, l := range lines {
		for _, want := range []string{`"endpoint":"GET /items/{id}"`, `"status":502`, `"forge":"testforge"`, `"of":3`, `"wait_ms":`, `"retry":` + string(rune('1'+i))} {
			if !strings.Contains(l, want) {
				t.Errorf("line %d lacks %s: %s", i, want, l)
			}
		}
		for _, leak := range []string{"4711", "s3cr3t", "private_token", "127.0.0.1"} {
			if strings.Contains(l, leak) {
				t.Errorf("line %d leaks %q: %s", i, leak, l)
			}
		}
	}
}

// A transport failure is logged with its cause class; the last attempt says the retries are
// exhausted.
func TestTransportFailureCauseIsNamed(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // connection refused from now on
	var logs bytes.Buffer
	_, err := client(t, &logs, 1).Get(url + "/items/1")
	if err == nil {
		t.Fatal("a closed server answered")
	}
	if got := retry.Cause(err); got != "connection refused" {
		t.Errorf("Cause = %q, want connection refused (%v)", got, err)
	}
	s := logs.String()
	if !strings.Contains(s, `"cause":"connection refused"`) || !strings.Contains(s, "retries exhausted") || strings.Contains(s, url) {
		t.Errorf("logs = %s", s)
	}
}

// A write marked Once is not repeated after a 5xx (it may have been applied) but is after a
// 429, where the server did nothing.
func TestOnceRetriesOnlyRateLimits(t *testing.T) {
	for _, tc := range []struct {
		first int
		want  int32
	}{{http.StatusInternalServerError, 1}, {http.StatusBadGateway, 1}, {http.StatusTooManyRequests, 2}} {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 1 {
				w.WriteHeader(tc.first)
				return
			}
			w.WriteHeader(http.StatusCreated)
		}))
		var logs bytes.Buffer
		req, _ := http.NewRequestWithContext(retry.Once(context.Background()), http.MethodPost, srv.URL+"/items", strings.NewReader("{}"))
		resp, err := client(t, &logs, 3).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if n.Load() != tc.want {
			t.Errorf("first answer %d: %d requests, want %d", tc.first, n.Load(), tc.want)
		}
		srv.Close()
	}
}

// Back-off: a named wait is honoured (floored at the minimum, capped); an unnamed rate limit
// waits UnnamedLimitWait when the forge sets one; 5xx is exponential.
func TestBackoffRules(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := retry.New(retry.Policy{Limits: retry.Limits{MaxServerWait: time.Minute}, UnnamedLimitWait: 30 * time.Second, Now: func() time.Time { return now }})
	resp := func(code int, h ...string) *http.Response {
		r := &http.Response{StatusCode: code, Header: http.Header{}}
		for i := 0; i+1 < len(h); i += 2 {
			r.Header.Set(h[i], h[i+1])
		}
		return r
	}
	for _, tc := range []struct {
		name string
		resp *http.Response
		want time.Duration
	}{
		{"Retry-After", resp(429, "Retry-After", "7"), 7 * time.Second},
		{"x-ratelimit-reset plus a second", resp(403, "X-Ratelimit-Remaining", "0", "X-Ratelimit-Reset", "1800000010"), 11 * time.Second},
		{"RateLimit-Reset", resp(429, "RateLimit-Reset", "1800000020"), 20 * time.Second},
		{"capped", resp(429, "Retry-After", "3600"), time.Minute},
		{"floored at min", resp(429, "Retry-After", "0"), time.Second},
		{"unnamed limit", resp(429), 30 * time.Second},
		{"503 without a wait is exponential", resp(503), 2 * time.Second},
		{"500 ignores Retry-After", resp(500, "Retry-After", "40"), 2 * time.Second},
	} {
		if got := p.Backoff(time.Second, 10*time.Second, 1, tc.resp); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := retry.Cause(errors.New("x")); got != "transport error" {
		t.Errorf("Cause = %q", got)
	}
}

// A body read past its bound is reported with the bound, not as a bare transport error.
func TestCauseNamesABodyBound(t *testing.T) {
	err := fmt.Errorf("list: %w", &forge.BodyTooLargeError{Limit: 67108864, Err: errors.New("github: too large")})
	if got := retry.Cause(err); got != "response body over the 67108864-byte bound (reading stopped there)" {
		t.Fatalf("Cause = %q", got)
	}
}
