package gitlab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/httpfake"
)

// The parallel-read tests (docs/adapters.md, "What is read in parallel"): a large merge request
// at 7 rows a page — 70 discussions (threads of up to three notes, some resolved) by 30
// authors, 6 pipelines of 9 jobs with a trace per failed job — read at concurrency 1, 4 and 8
// through a transport that delays each request by a pseudo-random time, so requests complete
// in shuffled order. The acquisitions must be byte-identical; no run may have more requests
// in flight than its concurrency; a concurrency-1 run must make today's requests in today's
// order (test/fixtures/gitlab/parallel/requests-c1.txt, recorded from the sequential adapter).

const glLargePage = 7

func glAuthor(i int) map[string]any {
	id := 2000 + i%30
	return map[string]any{"id": id, "username": fmt.Sprintf("g%02d", i%30), "name": "G", "state": "active"}
}

func glLargeWorld() glWorld {
	w := glWorld{jobs: map[int64][]any{}}
	for i := int64(0); i < 70; i++ {
		ts := fmt.Sprintf("2026-11-20T10:%02d:%02d.000Z", i/60, i%60)
		n := 1 + int(i%3)
		var notes []any
		for k := range n {
			note := glNote(70000+i*10+int64(k), ts)
			note["author"] = glAuthor(int(i) + k*7)
			if n > 1 {
				note["resolvable"] = true
				note["resolved"] = i%2 == 0
				if i%2 == 0 {
					note["resolved_by"] = glAuthor(int(i) + 3)
				}
			}
			notes = append(notes, note)
		}
		w.discussions = append(w.discussions, map[string]any{"id": fmt.Sprintf("%040x", 5000+i), "individual_note": n == 1, "notes": notes})
	}
	statuses := []string{"success", "failed", "success", "canceled", "skipped", "success", "failed", "manual", "success"}
	for p := int64(0); p < 6; p++ {
		pid := 900 + p
		ts := fmt.Sprintf("2026-11-20T11:%02d:00.000Z", p)
		w.pipelines = append(w.pipelines, glPipeline(pid, ts))
		for j := range int64(9) {
			w.jobs[pid] = append(w.jobs[pid], glJob(95000+p*100+j, pid, statuses[(p+j)%9], ts))
		}
	}
	return w
}

// serveLarge starts a fake GitLab for the large world: lists through the fault injector
// (GitLab's pagination headers), users and memberships made from the id.
func (w glWorld) serveLarge(t testing.TB) string {
	f := httpfake.NewFaults(t, httpfake.GitLabPaging)
	const p = "/api/v4/projects/42"
	f.List(p+"/merge_requests/7/discussions", w.discussions...)
	f.List(p+"/pipelines", w.pipelines...)
	for _, pl := range w.pipelines {
		id := pl.(map[string]any)["id"].(int64)
		f.List(fmt.Sprintf("%s/pipelines/%d/jobs", p, id), w.jobs[id]...)
	}
	mux := http.NewServeMux()
	file := func(rel string) http.HandlerFunc {
		b := fixture(t, rel)
		return func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Content-Type", "application/json")
			rw.Write(b)
		}
	}
	id := func(r *http.Request) int {
		n, err := strconv.Atoi(r.PathValue("id"))
		if err != nil {
			t.Errorf("id %q", r.PathValue("id"))
		}
		return n
	}
	reply := func(rw http.ResponseWriter, v any) {
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(v)
	}
	mux.Handle("GET "+p, file("common/project.json"))
	mux.Handle("GET "+p+"/merge_requests/7", file("mr/merge_request.json"))
	mux.HandleFunc("GET /api/v4/users/{id}", func(rw http.ResponseWriter, r *http.Request) {
		n := id(r)
		reply(rw, map[string]any{"id": n, "username": fmt.Sprintf("user%d", n), "name": "U", "state": "active", "bot": n%11 == 0})
	})
	mux.HandleFunc("GET "+p+"/members/all/{id}", func(rw http.ResponseWriter, r *http.Request) {
		n := id(r)
		levels := []int{10, 20, 30, 40, 50}
		reply(rw, map[string]any{"id": n, "username": fmt.Sprintf("user%d", n), "name": "U", "state": "active",
			"membership_state": "active", "access_level": levels[n%len(levels)]})
	})
	mux.HandleFunc("GET "+p+"/jobs/{id}/trace", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(rw, "trace of %s\n", r.PathValue("id"))
	})
	return f.Start(mux)
}

func glLargeProfile() acquisition.Profile {
	p := profileMR()
	p.IncludedSources = []string{"agent_runs", "check_logs", "checks", "comments", "entity", "reviews"}
	p.CheckLogSelection = "failed"
	return p
}

// glLargeAcquire reads the large merge request at concurrency conc through lat, behind a
// request pool of conc as a run's client is (the fan-out bounds the goroutines, declared
// pages are read ahead, and the pool bounds what is in flight).
func glLargeAcquire(t testing.TB, url string, conc int, lat *httpfake.Latency) []byte {
	t.Helper()
	lat.Next = http.DefaultTransport
	pool := forge.NewPool(conc, zerolog.Nop())
	c, err := New(Options{APIURL: url + "/api/v4", Token: testToken, RetryMax: 1, RetryWaitMin: time.Millisecond,
		RetryWaitMax: 2 * time.Millisecond, Log: zerolog.Nop(), HTTPClient: &http.Client{Transport: pool.Wrap(lat)}, Concurrency: conc})
	if err != nil {
		t.Fatal(err)
	}
	c.pageSize = glLargePage
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := c.Acquire(ctx, forge.Ref{Repo: "42", Number: 7}, glLargeProfile())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := acquisition.Write(&buf, a); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func glCheckParallel(t *testing.T, fail func(*http.Request) int) []byte {
	url := glLargeWorld().serveLarge(t)
	seq := glLargeAcquire(t, url, 1, &httpfake.Latency{Fail: fail})
	for _, conc := range []int{1, 4, 8} {
		for seed := range uint64(2) {
			lat := &httpfake.Latency{Delay: httpfake.Jitter(seed+uint64(conc)*7, 3*time.Millisecond), Fail: fail}
			got := glLargeAcquire(t, url, conc, lat)
			if !bytes.Equal(got, seq) {
				t.Errorf("concurrency %d seed %d: the acquisition differs from the sequential read", conc, seed)
			}
			if m := lat.MaxInFlight(); m > conc {
				t.Errorf("concurrency %d: %d requests in flight", conc, m)
			} else if conc > 1 && m < 2 {
				t.Errorf("concurrency %d: never more than %d request in flight: nothing was read in parallel", conc, m)
			}
		}
	}
	return seq
}

func TestParallelReadIsDeterministic(t *testing.T) {
	seq := glCheckParallel(t, nil)
	if !bytes.Contains(seq, []byte(`"trace of 95001\n"`)) && !bytes.Contains(seq, []byte(`"content_base64"`)) {
		t.Error("no trace was read")
	}
	var a struct {
		Outcomes acquisition.Outcomes `json:"outcomes"`
		Checks   []json.RawMessage    `json:"checks"`
		Comments []json.RawMessage    `json:"comments"`
	}
	if err := json.Unmarshal(seq, &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Checks) != 54 || len(a.Comments) != 139 || len(a.Outcomes.Comments)+len(a.Outcomes.Checks)+len(a.Outcomes.Actors) != 0 {
		t.Errorf("the large world was not read whole: %d checks, %d comments, %+v", len(a.Checks), len(a.Comments), a.Outcomes)
	}
}

// The discussions and the pipelines are read at once, and actor lookups start while the
// sources are still being read (an author's lookup is sent before the last job list or trace).
func TestParallelReadOverlapsSourcesAndLookups(t *testing.T) {
	url := glLargeWorld().serveLarge(t)
	// The checks take long (slow job lists and traces): the discussions end well before.
	lat := &httpfake.Latency{Delay: func(r *http.Request) time.Duration {
		switch p := r.URL.Path; {
		case strings.HasSuffix(p, "/jobs"), strings.HasSuffix(p, "/trace"):
			return 20 * time.Millisecond
		case strings.HasSuffix(p, "/discussions"):
			return 3 * time.Millisecond
		}
		return time.Millisecond
	}}
	glLargeAcquire(t, url, 4, lat)
	sent := lat.Sent()
	if first, last := firstSent(sent, "/pipelines?"), lastSent(sent, "/discussions?"); first < 0 || first > last {
		t.Errorf("pipelines first requested at %d, after the last discussions page (%d)", first, last)
	}
	if first, last := firstSent(sent, "/users/20"), max(lastSent(sent, "/jobs?"), lastSent(sent, "/trace")); first < 0 || first > last {
		t.Errorf("first author lookup at %d, after every source (%d)", first, last)
	}
}

func firstSent(sent []string, part string) int {
	for i, s := range sent {
		if strings.Contains(s, part) {
			return i
		}
	}
	return -1
}

func lastSent(sent []string, part string) int {
	for i := len(sent) - 1; i >= 0; i-- {
		if strings.Contains(sent[i], part) {
			return i
		}
	}
	return -1
}

// A discussions page, a pipeline's jobs, a user, a membership and a trace fail at once: the
// outcome is the sequential read's, whichever failure happens first.
func TestParallelFaultsMatchSequential(t *testing.T) {
	fail := func(r *http.Request) int {
		p, q := r.URL.Path, r.URL.Query()
		switch {
		case strings.HasSuffix(p, "/discussions") && q.Get("page") == "3":
			return http.StatusInternalServerError
		case strings.HasSuffix(p, "/pipelines/903/jobs"):
			return http.StatusForbidden
		case strings.HasSuffix(p, "/users/2005"), strings.HasSuffix(p, "/members/all/2008"):
			return http.StatusInternalServerError
		case strings.HasSuffix(p, "/jobs/95001/trace"):
			return http.StatusInternalServerError
		}
		return 0
	}
	seq := glCheckParallel(t, fail)
	var a struct {
		Outcomes acquisition.Outcomes `json:"outcomes"`
	}
	if err := json.Unmarshal(seq, &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Outcomes.Comments) == 0 || len(a.Outcomes.Checks) == 0 || len(a.Outcomes.Actors) == 0 {
		t.Errorf("the faults left no gap: %+v", a.Outcomes)
	}
}

// At concurrency 1 the requests are today's, in today's order.
func TestSequentialRequestOrder(t *testing.T) {
	url := glLargeWorld().serveLarge(t)
	lat := &httpfake.Latency{}
	glLargeAcquire(t, url, 1, lat)
	got := strings.Join(lat.Sent(), "\n") + "\n"
	path := filepath.Join(fixtureDir(t), "parallel", "requests-c1.txt")
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
				t.Fatalf("concurrency-1 request %d: got %q, want %q (%s)", i+1, g[i], w[i], path)
			}
		}
		t.Fatalf("concurrency-1 requests: %d, want %d (%s)", len(g), len(w), path)
	}
}

// glLatencyChain is the longest chain of dependent round trips of the large merge request, a
// listing's pages counted as one (what parallel pages make them): project → merge request →
// pipelines → a pipeline's jobs → a job's trace (or → discussions → a user → a membership).
const glLatencyChain = 5

// BenchmarkLatency reads the large merge request with a fixed 10 ms per request at
// concurrency 1 and 4, and reports the requests, the wall time, the wall time over the
// requests' summed delay (1: fully sequential) and over the longest dependent chain's delay
// (1: ideal).
func BenchmarkLatency(b *testing.B) {
	delay := httpfake.BenchDelay(10 * time.Millisecond)
	url := glLargeWorld().serveLarge(b)
	for _, conc := range []int{1, 4} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			var requests int
			var wall time.Duration
			for b.Loop() {
				lat := &httpfake.Latency{Delay: httpfake.Fixed(delay)}
				start := time.Now()
				glLargeAcquire(b, url, conc, lat)
				wall = time.Since(start)
				requests = len(lat.Sent())
			}
			b.ReportMetric(float64(requests), "requests")
			b.ReportMetric(float64(wall.Milliseconds()), "wall-ms")
			b.ReportMetric(float64(wall)/float64(time.Duration(requests)*delay), "wall/serial")
			b.ReportMetric(float64(wall)/float64(glLatencyChain*delay), "wall/chain")
		})
	}
}

// Per-item work never leaves a slot idle while it waits: from the first source to the last
// request, four requests are in flight almost all the time at concurrency 4 (90–94% measured).
// When a lookup submitted to a full fan-out ran in the goroutine that found it, the actor
// lookups (user, then membership) went four at a time and then one alone while the freed
// slots stayed empty: 76–79%.
func TestParallelReadKeepsTheSlotsBusy(t *testing.T) {
	bt := &busyTimeline{d: 25 * time.Millisecond}
	lat := &httpfake.Latency{Delay: bt.delay}
	url := glLargeWorld().serveLarge(t)
	glLargeAcquire(t, url, 4, lat)
	if got := bt.busy(4); got < 0.84 {
		t.Errorf("the four slots held a request %.0f%% of the time, want at least %.0f%%", 100*got, 100*0.84)
	}
}

// busyTimeline records when each request is sent (through a Latency's Delay, each request
// waiting d) to measure how full a concurrency-c run keeps its slots.
type busyTimeline struct {
	mu    sync.Mutex
	d     time.Duration
	start []time.Time
}

func (bt *busyTimeline) delay(*http.Request) time.Duration {
	bt.mu.Lock()
	bt.start = append(bt.start, time.Now())
	bt.mu.Unlock()
	return bt.d
}

// busy is the share of c slots that held a request, from the third request sent (the entity is
// read first, one request after the other) to the last one sent.
func (bt *busyTimeline) busy(c int) float64 {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	if len(bt.start) < 4 {
		return 0
	}
	from, to := bt.start[2], bt.start[len(bt.start)-1]
	var held time.Duration
	for _, s := range bt.start[2:] {
		end := s.Add(bt.d)
		if end.After(to) {
			end = to
		}
		if end.After(s) {
			held += end.Sub(s)
		}
	}
	return float64(held) / float64(time.Duration(c)*to.Sub(from))
}
