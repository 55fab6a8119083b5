package forgejo

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/test/httpfake"
)

// A 429 storm: the first request for every page of every paged list answers 429, the very
// first with Retry-After: 1, the others with Retry-After: 0. Read through a pool of 4 the run pauses, continues one request at a time
// (the retry log says so), and ends with the records and gaps of a read one request at a
// time; the server never sees more requests at once than the pool allows, and none while
// the pause lasts (after a short grace for requests already sent when the 429 left).
func TestRateLimitStormSameResultAndSerial(t *testing.T) {
	type result struct {
		recs records
		gaps []string
	}
	run := func(conc int) (result, string, int) {
		w := matrixWorld()
		f := httpfake.NewFaults(t, httpfake.ForgejoPaging)
		f.Now = ticking()
		var mu sync.Mutex
		limited := map[string]bool{}
		var pausedAt time.Time
		inPause := 0
		world := w.serve(t, f)
		storm := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			mu.Lock()
			paged := strings.Contains(r.URL.RawQuery, "page=")
			first := paged && !limited[r.URL.String()]
			wait := "0"
			if first {
				limited[r.URL.String()] = true
				if pausedAt.IsZero() {
					pausedAt, wait = time.Now(), "1"
				}
			} else if !pausedAt.IsZero() && time.Since(pausedAt) > 100*time.Millisecond && time.Since(pausedAt) < 900*time.Millisecond {
				// Requests another source had already sent when the 429 left the server may
				// arrive just after it (the client learns of the pause only from the answer);
				// after a grace for those, nothing may arrive until the pause is over.
				inPause++
			}
			mu.Unlock()
			if first {
				rw.Header().Set("Retry-After", wait)
				rw.WriteHeader(http.StatusTooManyRequests)
				return
			}
			resp, err := http.Get(world + r.URL.RequestURI())
			if err != nil {
				rw.WriteHeader(http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			for k, vs := range resp.Header {
				rw.Header()[k] = vs
			}
			rw.WriteHeader(resp.StatusCode)
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			_, _ = rw.Write(b.Bytes())
		}))
		t.Cleanup(storm.Close)
		var logs bytes.Buffer
		pool := forge.NewPool(conc, zerolog.Nop())
		cl, err := New(Options{APIURL: storm.URL + "/api/v1", Token: "secret-token", PageSize: matrixLimit,
			RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond, Log: zerolog.New(zerolog.SyncWriter(&logs)),
			Transport: pool.Wrap(nil), Limiter: pool.RetryLimiter(), Concurrency: conc})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		a, err := cl.Acquire(ctx, forge.Ref{Forge: Forge, Repo: "Acme/Widgets", Number: 12}, matrixProfile)
		if err != nil {
			t.Fatal(err)
		}
		if pool.HostLimit(strings.TrimPrefix(storm.URL, "http://")) != 1 {
			t.Errorf("concurrency %d: the host was not dropped to one request at a time", conc)
		}
		if tm := pool.Timing(); tm.MaxInFlight > conc || f.MaxInFlight() > conc {
			t.Errorf("concurrency %d: %d in flight at the pool, %d at the fake", conc, tm.MaxInFlight, f.MaxInFlight())
		}
		return result{recordsOf(a), gapSet(a.Outcomes)}, logs.String(), inPause
	}
	want, _, _ := run(1)
	got, logs, inPause := run(4)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("429 storm at concurrency 4: %s %v; one at a time: %s %v", summary(got.recs), got.gaps, summary(want.recs), want.gaps)
	}
	if !strings.Contains(logs, `"host_concurrency":1`) || !strings.Contains(logs, `"status":429`) {
		t.Errorf("no retry line says the host is now read one request at a time: %s", logs)
	}
	if inPause > 0 {
		t.Errorf("%d requests reached the server inside the pause Retry-After asked for", inPause)
	}
}

// TestPoolLatencyFigures measures the fault matrix's pull request (every paged list 7 rows at
// 2 a page, reviews with their comments, tasks, statuses) against a forge 20 ms away, at
// concurrency 1 and 4 through a pool: requests, wall, and the pool's longest chain, logged
// (FORGECTX_LATENCY_FIGURES=1, -v; docs/request-pool.md). It asserts the same records and gaps.
func TestPoolLatencyFigures(t *testing.T) {
	if os.Getenv("FORGECTX_LATENCY_FIGURES") == "" {
		t.Skip("set FORGECTX_LATENCY_FIGURES=1 to measure")
	}
	const delay = 20 * time.Millisecond
	var want []string
	for _, conc := range []int{1, 4} {
		w := matrixWorld()
		f := httpfake.NewFaults(t, httpfake.ForgejoPaging)
		f.Now = ticking()
		world := w.serve(t, f)
		slow := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			time.Sleep(delay)
			resp, err := http.Get(world + r.URL.RequestURI())
			if err != nil {
				rw.WriteHeader(http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			for k, vs := range resp.Header {
				rw.Header()[k] = vs
			}
			rw.WriteHeader(resp.StatusCode)
			_, _ = io.Copy(rw, resp.Body)
		}))
		t.Cleanup(slow.Close)
		pool := forge.NewPool(conc, zerolog.Nop())
		cl, err := New(Options{APIURL: slow.URL + "/api/v1", Token: "secret-token", PageSize: matrixLimit,
			Transport: pool.Wrap(nil), Limiter: pool.RetryLimiter(), Concurrency: conc})
		if err != nil {
			t.Fatal(err)
		}
		a, err := cl.Acquire(context.Background(), forge.Ref{Forge: Forge, Repo: "Acme/Widgets", Number: 12}, matrixProfile)
		if err != nil {
			t.Fatal(err)
		}
		got := append([]string{summary(recordsOf(a))}, gapSet(a.Outcomes)...)
		if want == nil {
			want = got
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("concurrency %d: %v, want %v", conc, got, want)
		}
		tm := pool.Timing()
		d := float64(delay.Milliseconds())
		t.Logf("forgejo/matrix concurrency %d: %4d requests, wall %6d ms, max in flight %d, longest chain %4d, wall/(requests×delay) %.2f, wall/(chain×delay) %.2f",
			conc, tm.Requests, tm.WallMS, tm.MaxInFlight, tm.LongestChain,
			float64(tm.WallMS)/(float64(tm.Requests)*d), float64(tm.WallMS)/(float64(tm.LongestChain)*d))
	}
}
