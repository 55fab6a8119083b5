package github_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

// The parallel-read tests (docs/adapters.md, "What is read in parallel"): the large scenario
// (1,000 comments, 120 reviews, 300 threads, 20 checks, 60 humans) replayed at concurrency 1,
// 4 and 8 through a transport that delays each request by a pseudo-random time, so requests
// complete in shuffled order. The acquisitions must be byte-identical; no run may have more
// requests in flight than its concurrency; a concurrency-1 run reads its sources one after
// another in a fixed order (test/fixtures/github/parallel/requests-c1.txt).

// largeAcquire replays the large scenario at concurrency conc through lat.
func largeAcquire(t testing.TB, s *ghscenario.Scenario, c *cassette.Cassette, conc int, lat *httpfake.Latency) ([]byte, *cassette.Replayer) {
	t.Helper()
	rp, err := cassette.NewReplayer(c)
	if err != nil {
		t.Fatal(err)
	}
	lat.Next = rp
	cl, err := github.New(github.Options{APIURL: c.Meta.APIURL, Transport: lat, Receipts: github.ReceiptsFromComments,
		RetryMax: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond, MaxRateLimitWait: time.Millisecond, Concurrency: conc})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := cl.Acquire(ctx, refOf(s), testProfile(kindOf(s)))
	if err != nil {
		t.Fatal(err)
	}
	return acqBytes(t, a), rp
}

func checkParallel(t *testing.T, fail func(*http.Request) int) []byte {
	s := ghscenario.Large()
	c := build(t, s)
	seq, _ := largeAcquire(t, s, c, 1, &httpfake.Latency{Fail: fail})
	for _, conc := range []int{1, 4, 8} {
		for seed := range uint64(2) {
			lat := &httpfake.Latency{Delay: httpfake.Jitter(seed+uint64(conc)*7, 3*time.Millisecond), Fail: fail}
			got, rp := largeAcquire(t, s, c, conc, lat)
			if string(got) != string(seq) {
				t.Errorf("concurrency %d seed %d: the acquisition differs from the sequential read", conc, seed)
			}
			if m := lat.MaxInFlight(); m > conc {
				t.Errorf("concurrency %d: %d requests in flight", conc, m)
			} else if conc > 1 && m < 2 {
				t.Errorf("concurrency %d: never more than %d request in flight: nothing was read in parallel", conc, m)
			}
			if un := rp.Unused(); fail == nil && (len(un) != 1 || !strings.Contains(un[0], s.OtherSHA)) {
				t.Errorf("concurrency %d: unused = %v, want only the other revision's check-run listing", conc, un)
			}
		}
	}
	return seq
}

func TestParallelReadIsDeterministic(t *testing.T) {
	checkParallel(t, nil)
}

// The reviews and check-run listings fail at once, and two permission lookups fail: the
// outcome is the sequential read's, whichever failure happens first.
func TestParallelFaultsMatchSequential(t *testing.T) {
	fail := func(r *http.Request) int {
		p := r.URL.Path
		switch {
		case strings.HasSuffix(p, "/pulls/5000/reviews"), strings.HasSuffix(p, "/check-runs"):
			return http.StatusForbidden
		case strings.HasSuffix(p, "/collaborators/user05/permission"), strings.HasSuffix(p, "/collaborators/user07/permission"):
			return http.StatusInternalServerError
		}
		return 0
	}
	seq := checkParallel(t, fail)
	var a struct {
		Outcomes acquisition.Outcomes `json:"outcomes"`
		Actors   []acquisition.Actor  `json:"actors"`
	}
	if err := json.Unmarshal(seq, &a); err != nil {
		t.Fatal(err)
	}
	unverified := 0
	for _, ac := range a.Actors {
		if ac.Login != nil && (*ac.Login == "user05" || *ac.Login == "user07") && !ac.RoleVerified {
			unverified++
		}
	}
	if len(a.Outcomes.Reviews) == 0 || len(a.Outcomes.Checks) == 0 || unverified != 2 {
		t.Errorf("the faults left no trace: %+v, %d failed lookups unverified", a.Outcomes, unverified)
	}
}

// Permission lookups start while other sources are still being read: with slow check logs,
// the first lookup is sent before the last log request.
func TestParallelLookupsStartBeforeEverySourceIsRead(t *testing.T) {
	s := ghscenario.Large()
	c := build(t, s)
	lat := &httpfake.Latency{Delay: func(r *http.Request) time.Duration {
		if strings.Contains(r.URL.Path, "/logs") || strings.Contains(r.URL.Path, "/jobs") {
			return 30 * time.Millisecond
		}
		return time.Millisecond
	}}
	largeAcquire(t, s, c, 4, lat)
	sent := lat.Sent()
	first, last := -1, -1
	for i, r := range sent {
		if strings.Contains(r, "/permission") && first < 0 {
			first = i
		}
		if strings.Contains(r, "/logs") || strings.Contains(r, "/jobs") {
			last = i
		}
	}
	if first < 0 || first > last {
		t.Errorf("first permission lookup at %d, after the last check request (%d)", first, last)
	}
}

// At concurrency 1 the sources are read one after another, always in the same order.
func TestSequentialRequestOrder(t *testing.T) {
	s := ghscenario.Large()
	c := build(t, s)
	var got string
	for seed := range uint64(2) {
		lat := &httpfake.Latency{Delay: httpfake.Jitter(seed, time.Millisecond)}
		largeAcquire(t, s, c, 1, lat)
		if m := lat.MaxInFlight(); m != 1 {
			t.Errorf("concurrency 1: %d requests in flight", m)
		}
		got = strings.Join(lat.Sent(), "\n") + "\n"
		path := filepath.Join(fixturesDir, "parallel", "requests-c1.txt")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
			for i := range min(len(g), len(w)) {
				if g[i] != w[i] {
					t.Fatalf("seed %d: concurrency-1 request %d: got %q, want %q (%s)", seed, i+1, g[i], w[i], path)
				}
			}
			t.Fatalf("seed %d: concurrency-1 requests: %d, want %d (%s)", seed, len(g), len(w), path)
		}
	}
}

// latencyChain is the longest chain of dependent round trips of the large scenario, a
// listing's pages counted as one (what parallel pages make them): entity → check runs →
// workflow runs → a run's jobs → a failed job's log location → the log.
const latencyChain = 6

// BenchmarkLatency replays the large scenario with a fixed 10 ms per request at concurrency 1
// and 4, and reports the requests, the wall time, the wall time over the requests' summed
// delay (1: fully sequential) and over the longest dependent chain's delay (1: ideal).
func BenchmarkLatency(b *testing.B) {
	delay := httpfake.BenchDelay(10 * time.Millisecond)
	s := ghscenario.Large()
	c := build(b, s)
	for _, conc := range []int{1, 4} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			var requests int
			var wall time.Duration
			for b.Loop() {
				lat := &httpfake.Latency{Delay: httpfake.Fixed(delay)}
				start := time.Now()
				largeAcquire(b, s, c, conc, lat)
				wall = time.Since(start)
				requests = len(lat.Sent())
			}
			b.ReportMetric(float64(requests), "requests")
			b.ReportMetric(float64(wall.Milliseconds()), "wall-ms")
			b.ReportMetric(float64(wall)/float64(time.Duration(requests)*delay), "wall/serial")
			b.ReportMetric(float64(wall)/float64(latencyChain*delay), "wall/chain")
		})
	}
}
