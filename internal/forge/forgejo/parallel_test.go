package forgejo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/httpfake"
)

// The parallel-read tests (docs/adapters.md, "What is read in parallel"): a large pull request
// at 7 rows a page — 120 issue comments, 30 reviews of two comments each, 24 Actions tasks
// and their statuses, 40 commenters with assorted roles — read at concurrency 1, 4 and 8
// through a transport that delays each request by a pseudo-random time, so requests complete
// in shuffled order. The acquisitions must be byte-identical; no run may have more requests
// in flight than its concurrency; a concurrency-1 run must make today's requests in today's
// order (test/fixtures/forgejo/parallel/requests-c1.txt, recorded from the sequential
// adapter).

const largePage = 7

var largeRoles = []string{"admin", "write", "read", "owner", "none"}

func largeUser(i int) map[string]any { return user(int64(1000+i), fmt.Sprintf("u%02d", i)) }

func largeWorld() world {
	w := world{reviewComments: map[int64][]any{}}
	for i := range 120 {
		ts := fmt.Sprintf("2026-09-09T10:%02d:%02dZ", i/60, i%60)
		w.comments = append(w.comments, comment(int64(20000+i), largeUser(i%40), fmt.Sprintf("comment %d", i), ts, ts))
	}
	for i := range 30 {
		ts := fmt.Sprintf("2026-09-09T11:%02d:00Z", i)
		rid := int64(3000 + i)
		w.reviews = append(w.reviews, review(rid, largeUser((i*3)%40), "COMMENT", fmt.Sprintf("review %d", i), headSHA, ts, false, 2))
		path := fmt.Sprintf("src/f%d.go", i)
		w.reviewComments[rid] = []any{
			reviewComment(rid*10+1, rid, largeUser((i*3)%40), nil, path, 10, 0, headSHA, "first", ts),
			reviewComment(rid*10+2, rid, largeUser((i*7+1)%40), nil, path, 10, 0, headSHA, "reply", fmt.Sprintf("2026-09-09T12:%02d:00Z", i)),
		}
	}
	for i := range 24 {
		ts := fmt.Sprintf("2026-09-09T13:%02d:00Z", i)
		status := "success"
		if i%3 == 0 {
			status = "failure"
		}
		w.tasks = append(w.tasks, taskRow(int64(50000+i), fmt.Sprintf("job %d", i), headSHA, status, ts, ts, ts))
	}
	w.statuses = actionsStatuses(w.tasks, headSHA)
	return w
}

// serveLarge starts a fake Forgejo for the large world: the lists through the fault injector
// (Forgejo's pagination headers), every permission lookup from the login's user.
func (w world) serveLarge(t testing.TB) string {
	f := httpfake.NewFaults(t, httpfake.ForgejoPaging)
	base := "/api/v1/repos/Acme/Widgets"
	f.List(base+"/issues/12/comments", w.comments...)
	f.List(base+"/pulls/12/reviews", w.reviews...)
	for _, r := range w.reviews {
		id := rowID(r)
		f.List(fmt.Sprintf("%s/pulls/12/reviews/%d/comments", base, id), w.reviewComments[id]...)
	}
	f.List(base+"/actions/tasks", w.tasks...).Envelope("workflow_runs", "total_count")
	f.List(base+"/commits/"+headSHA+"/status", w.statuses...).Envelope("statuses", "total_count")
	pr := pullScenario().exchanges[1].body
	users := map[string]map[string]any{"alice": alice, "bob": bob}
	for i := range 40 {
		users[fmt.Sprintf("u%02d", i)] = largeUser(i)
	}
	mux := http.NewServeMux()
	reply := func(v any) http.HandlerFunc {
		return func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(rw).Encode(v)
		}
	}
	mux.Handle("GET "+base, reply(repository))
	mux.Handle("GET "+base+"/pulls/12", reply(pr))
	mux.HandleFunc("GET "+base+"/collaborators/{login}/permission", func(rw http.ResponseWriter, r *http.Request) {
		u, ok := users[r.PathValue("login")]
		if !ok {
			t.Errorf("permission lookup for unknown login %q", r.PathValue("login"))
			http.NotFound(rw, r)
			return
		}
		role := largeRoles[int(u["id"].(int64))%len(largeRoles)]
		reply(map[string]any{"permission": role, "role_name": role, "user": u})(rw, r)
	})
	return f.Start(mux)
}

// largeAcquire reads the large pull request at concurrency conc through lat, behind a
// request pool of conc as a run's client is (the fan-out bounds the goroutines, declared
// pages are read ahead, and the pool bounds what is in flight).
func largeAcquire(t testing.TB, url string, conc int, lat *httpfake.Latency) []byte {
	t.Helper()
	lat.Next = http.DefaultTransport
	pool := forge.NewPool(conc, zerolog.Nop())
	cl, err := New(Options{APIURL: url + "/api/v1", Token: "secret-token", PageSize: largePage, Transport: pool.Wrap(lat),
		RetryMax: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond, Concurrency: conc})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := cl.Acquire(ctx, forge.Ref{Forge: Forge, Repo: "Acme/Widgets", Number: 12}, matrixProfile)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := acquisition.Write(&buf, a); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkParallel reads the large world at 1, 4 and 8 with shuffled answers (and the faults
// fail injects) and compares every acquisition with the sequential one.
func checkParallel(t *testing.T, fail func(*http.Request) int) []byte {
	url := largeWorld().serveLarge(t)
	seq := largeAcquire(t, url, 1, &httpfake.Latency{Fail: fail})
	for _, conc := range []int{1, 4, 8} {
		for seed := range uint64(2) {
			lat := &httpfake.Latency{Delay: httpfake.Jitter(seed+uint64(conc)*7, 3*time.Millisecond), Fail: fail}
			got := largeAcquire(t, url, conc, lat)
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
	seq := checkParallel(t, nil)
	if !bytes.Contains(seq, []byte(`"comment 119"`)) || bytes.Contains(seq, []byte(`"gaps"`)) {
		t.Error("the large world was not read whole")
	}
}

// Two sources failing at once (a reviews page, the tasks listing) and two failed permission
// lookups: the outcome is the sequential read's, whichever failure happens first.
func TestParallelFaultsMatchSequential(t *testing.T) {
	fail := func(r *http.Request) int {
		p, q := r.URL.Path, r.URL.Query()
		switch {
		case strings.HasSuffix(p, "/pulls/12/reviews") && q.Get("page") == "2":
			return http.StatusInternalServerError
		case strings.HasSuffix(p, "/actions/tasks") && q.Get("page") == "3":
			return http.StatusInternalServerError
		case strings.HasSuffix(p, "/reviews/3004/comments"):
			return http.StatusForbidden
		case strings.HasSuffix(p, "/collaborators/u05/permission"):
			return http.StatusInternalServerError
		case strings.HasSuffix(p, "/collaborators/u07/permission"):
			return http.StatusForbidden
		}
		return 0
	}
	seq := checkParallel(t, fail)
	var a struct {
		Outcomes acquisition.Outcomes `json:"outcomes"`
	}
	if err := json.Unmarshal(seq, &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Outcomes.Reviews) == 0 || len(a.Outcomes.Checks) == 0 || len(a.Outcomes.Actors) == 0 {
		t.Errorf("the faults left no gap: %+v", a.Outcomes)
	}
}

// At concurrency 1 the requests are today's, in today's order.
func TestSequentialRequestOrder(t *testing.T) {
	url := largeWorld().serveLarge(t)
	lat := &httpfake.Latency{}
	largeAcquire(t, url, 1, lat)
	got := strings.Join(lat.Sent(), "\n") + "\n"
	path := filepath.Join(fixtureRoot, "parallel", "requests-c1.txt")
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
		t.Errorf("concurrency-1 requests differ from %s:\n%s", path, firstDiff(got, string(want)))
	}
}

// firstDiff names the first request line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("request %d: got %q, want %q", i+1, gl, wl)
		}
	}
	return ""
}

// The sources are read at once, and permission lookups start while other sources are still
// being read (a commenter's lookup is sent before the last review's comments are requested).
func TestParallelReadOverlapsSourcesAndLookups(t *testing.T) {
	url := largeWorld().serveLarge(t)
	// The reviews' conversations and the tasks take long: the issue comments end well before.
	lat := &httpfake.Latency{Delay: func(r *http.Request) time.Duration {
		switch p := r.URL.Path; {
		case strings.HasSuffix(p, "/comments") && strings.Contains(p, "/reviews/"), strings.HasSuffix(p, "/actions/tasks"):
			return 20 * time.Millisecond
		case strings.HasSuffix(p, "/issues/12/comments"):
			return 2 * time.Millisecond
		}
		return time.Millisecond
	}}
	largeAcquire(t, url, 4, lat)
	sent := lat.Sent()
	if first, last := firstSent(sent, "/pulls/12/reviews?"), lastSent(sent, "/issues/12/comments?"); first < 0 || first > last {
		t.Errorf("reviews first requested at %d, after the last issue comments page (%d)", first, last)
	}
	if first, last := firstSent(sent, "/actions/tasks?"), lastSent(sent, "/issues/12/comments?"); first < 0 || first > last {
		t.Errorf("tasks first requested at %d, after the last issue comments page (%d)", first, last)
	}
	if first, last := firstSent(sent, "/collaborators/u"), lastSent(sent, "/comments"); first < 0 || first > last {
		t.Errorf("first commenter lookup at %d, after every source (%d)", first, last)
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

// latencyChain is the longest chain of dependent round trips of the large pull request, a
// listing's pages counted as one (what parallel pages make them): repository → pull request →
// reviews → one review's comments → a reviewer's permission.
const latencyChain = 5

// BenchmarkLatency reads the large pull request with a fixed 10 ms per request at concurrency
// 1 and 4, and reports the requests, the wall time, the wall time over the requests' summed
// delay (1: fully sequential) and over the longest dependent chain's delay (1: ideal).
func BenchmarkLatency(b *testing.B) {
	delay := httpfake.BenchDelay(10 * time.Millisecond)
	url := largeWorld().serveLarge(b)
	for _, conc := range []int{1, 4} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			var requests int
			var wall time.Duration
			for b.Loop() {
				lat := &httpfake.Latency{Delay: httpfake.Fixed(delay)}
				start := time.Now()
				largeAcquire(b, url, conc, lat)
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
