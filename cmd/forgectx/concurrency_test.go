package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

// concurrencies are the --concurrency values every byte-identity check below runs at: one
// request at a time (the order of old), the default, and the maximum.
var concurrencies = []int{1, 4, 8}

// --concurrency outside 1..8 is a usage error (exit 2) naming the flag and the range, on every
// command that reads a forge, before anything is read.
func TestConcurrencyFlagOutOfRange(t *testing.T) {
	for _, cmd := range [][]string{
		{"snapshot", "--forge", "github", "--repo", "o/r", "--number", "1", "--profile", "p.json", "--category", "observation", "--out", "x"},
		{"run", "--harness", "h.yml"},
		{"status", "reconcile", "--agent", "a"},
		{"review-context", "acquire", "--store-dir", "s", "--api-url", "https://gitlab.example/api/v4", "--project", "1", "--mr", "1"},
		{"review-context", "run", "--harness", "h.yml", "--api-url", "https://gitlab.example/api/v4", "--project", "1", "--mr", "1"},
		{"rework", "input-gate", "--api-url", "https://forgejo.example/api/v1"},
	} {
		for _, v := range []string{"0", "9", "-1"} {
			args := append(append([]string(nil), cmd...), "--concurrency", v)
			code, _, stderr := runCLI(t, nil, "", args...)
			if code != exitUsage || !strings.Contains(stderr, "--concurrency") || !strings.Contains(stderr, "from 1 to 8") {
				t.Errorf("%s --concurrency %s: exit %d, stderr %q; want exit 2 naming --concurrency and 1 to 8", strings.Join(cmd[:2], " "), v, code, stderr)
			}
		}
	}
}

// replayCase is one recorded forge run the snapshot must reproduce at every concurrency.
type replayCase struct {
	name, forge, repo, dir, kind string
	number                       int
	profile                      func(t *testing.T) string
}

func replayCases(t *testing.T) []replayCase {
	var cases []replayCase
	for _, sc := range ghScenarios {
		cases = append(cases, replayCase{name: "github/" + sc.dir, forge: "github", repo: "octo-org/Hello-World", dir: filepath.Join(ghFixtures, sc.dir),
			kind: sc.kind, number: sc.number})
	}
	large := filepath.Join(t.TempDir(), "large")
	c, err := ghscenario.Build(ghscenario.Large())
	if err != nil {
		t.Fatal(err)
	}
	if err := cassette.Write(large, c); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, replayCase{name: "github/large", forge: "github", repo: "octo-org/Hello-World", dir: large, kind: "change_proposal", number: 5000})
	for _, fj := range []struct {
		dir, kind string
		number    int
	}{{"issue", "work_item", 7}, {"pull", "change_proposal", 12}} {
		cases = append(cases, replayCase{name: "forgejo/" + fj.dir, forge: "forgejo", repo: "Acme/Widgets",
			dir: filepath.Join("..", "..", "test", "fixtures", "forgejo", fj.dir), kind: fj.kind, number: fj.number})
	}
	cases = append(cases, replayCase{name: "gitlab/mr", forge: "gitlab", repo: "Acme/Platform/widgets", dir: gitlabCassette, number: 7,
		profile: func(t *testing.T) string {
			b, err := json.Marshal(gitlabProfile())
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(t.TempDir(), "profile.json")
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}})
	return cases
}

// snapshotDigest runs `forgectx snapshot` with extra and returns the index digest it printed.
func snapshotDigest(t *testing.T, env map[string]string, rc replayCase, extra ...string) string {
	t.Helper()
	prof := ""
	if rc.profile != nil {
		prof = rc.profile(t)
	} else {
		prof = ghProfile(t, rc.kind)
	}
	args := append([]string{"snapshot", "--forge", rc.forge, "--repo", rc.repo, "--number", strconv.Itoa(rc.number),
		"--profile", prof, "--category", "observation", "--bots", ghBots(t), "--out", filepath.Join(t.TempDir(), "ctx")}, extra...)
	code, stdout, stderr := runCLI(t, env, "", args...)
	if code != exitOK {
		t.Fatalf("%v: exit %d: %s", extra, code, stderr)
	}
	var res struct {
		IndexSHA256 string `json:"index_sha256"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || len(res.IndexSHA256) != 64 {
		t.Fatalf("stdout %q", stdout)
	}
	return res.IndexSHA256
}

// Every recorded run (the fixture cassettes of the three forges and GitHub's large scenario)
// replays into the same snapshot at --concurrency 1, 4 and 8: the same index digest, so the
// same tree bytes.
func TestSnapshotReplaySameTreeAtEveryConcurrency(t *testing.T) {
	for _, rc := range replayCases(t) {
		t.Run(rc.name, func(t *testing.T) {
			want := ""
			for _, n := range concurrencies {
				got := snapshotDigest(t, nil, rc, "--replay", rc.dir, "--concurrency", strconv.Itoa(n))
				if want == "" {
					want = got
				} else if got != want {
					t.Errorf("--concurrency %d: index %s, --concurrency 1 gave %s", n, got, want)
				}
			}
		})
	}
}

// Against a live server whose answers arrive in shuffled order (a random delay per request),
// every recorded run gives the same snapshot at --concurrency 1, 4 and 8 from the same
// requests (the same multiset), and the server never sees more requests at once than
// --concurrency. One server serves the three runs, so source.host (its port) is the same.
func TestSnapshotLiveShuffledSameTreeAtEveryConcurrency(t *testing.T) {
	if testing.Short() {
		t.Skip("live fake runs")
	}
	env := map[string]string{"FORGE_TOKEN": "t0ken-for-the-fake"}
	for _, rc := range replayCases(t) {
		t.Run(rc.name, func(t *testing.T) {
			c, err := cassette.Load(rc.dir)
			if err != nil {
				t.Fatal(err)
			}
			api, err := urlPath(c.Meta.APIURL)
			if err != nil {
				t.Fatal(err)
			}
			fake := httpfake.New(t)
			fake.Jitter(3*time.Millisecond, int64(len(rc.name)))
			want, wantReqs := "", ""
			for _, n := range concurrencies {
				before := len(fake.Served())
				fake.ExpectCassetteOptional(c)
				fake.ResetMaxInFlight()
				got := snapshotDigest(t, env, rc, "--api-url", fake.URL+api, "--token-env", "FORGE_TOKEN", "--concurrency", strconv.Itoa(n))
				served := fake.Served()[before:]
				sort.Strings(served)
				reqs := strings.Join(served, "\n")
				if want == "" {
					want, wantReqs = got, reqs
				} else {
					if got != want {
						t.Errorf("--concurrency %d: index %s, --concurrency 1 gave %s", n, got, want)
					}
					if reqs != wantReqs {
						t.Errorf("--concurrency %d: %d requests differ from the %d of --concurrency 1", n, len(served), strings.Count(wantReqs, "\n")+1)
					}
				}
				if m := fake.MaxInFlight(); m > n {
					t.Errorf("--concurrency %d: the server saw %d requests at once", n, m)
				}
			}
		})
	}
}

// urlPath is the path of a recorded API URL (the fake serves it under its own origin).
func urlPath(api string) (string, error) {
	i := strings.Index(api, "://")
	if i < 0 {
		return "", os.ErrInvalid
	}
	rest := api[i+3:]
	if j := strings.Index(rest, "/"); j >= 0 {
		return strings.TrimSuffix(rest[j:], "/"), nil
	}
	return "", nil
}

// --stats carries the pool's timing: at --concurrency 1 every request waits for the one
// before (the longest chain is every request, one in flight); at 4 the large scenario, served
// by a fake 5 ms away, keeps more than one request in flight, never more than 4, and its chain
// is shorter than its request count.
func TestStatsTimingMember(t *testing.T) {
	var large replayCase
	for _, rc := range replayCases(t) {
		if rc.name == "github/large" {
			large = rc
		}
	}
	c, err := cassette.Load(large.dir)
	if err != nil {
		t.Fatal(err)
	}
	api, err := urlPath(c.Meta.APIURL)
	if err != nil {
		t.Fatal(err)
	}
	fake := httpfake.New(t)
	fake.Latency(5 * time.Millisecond)
	for _, n := range []int{1, 4} {
		stats := filepath.Join(t.TempDir(), "stats.json")
		fake.ExpectCassetteOptional(c)
		snapshotDigest(t, map[string]string{"FORGE_TOKEN": "t0ken-for-the-fake"}, large, "--api-url", fake.URL+api, "--token-env", "FORGE_TOKEN",
			"--concurrency", strconv.Itoa(n), "--stats", stats)
		b, err := os.ReadFile(stats)
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Requests int `json:"requests"`
			Timing   *struct {
				Concurrency  int   `json:"concurrency"`
				WallMS       int64 `json:"wall_ms"`
				Requests     int   `json:"requests"`
				MaxInFlight  int   `json:"max_in_flight"`
				LongestChain int   `json:"longest_chain"`
			} `json:"timing"`
		}
		if err := json.Unmarshal(b, &st); err != nil || st.Timing == nil {
			t.Fatalf("stats without timing: %s (%v)", b, err)
		}
		tm := st.Timing
		if tm.Concurrency != n || tm.Requests != st.Requests || tm.WallMS < 0 {
			t.Errorf("--concurrency %d: timing %+v, requests %d", n, *tm, st.Requests)
		}
		switch {
		case n == 1 && (tm.MaxInFlight != 1 || tm.LongestChain != tm.Requests):
			t.Errorf("--concurrency 1: timing %+v, want one in flight and a chain of every request", *tm)
		case n > 1 && (tm.MaxInFlight < 2 || tm.MaxInFlight > n || tm.LongestChain >= tm.Requests):
			t.Errorf("--concurrency %d: timing %+v, want 2..%d in flight and a chain shorter than the requests", n, *tm, n)
		}
	}
}

// TestPoolLatencyFigures measures the pool against a forge 20 ms away (every answer of the
// live fake waits 20 ms): for GitHub's large scenario and the GitLab and Forgejo pull/merge
// request cassettes, at --concurrency 1 and 4, the requests, the wall time, wall ÷ (requests ×
// delay) and wall ÷ (longest chain × delay), from the --stats timing member. It asserts only
// that the snapshot is the same at both; the figures are logged (run with -v and
// FORGECTX_LATENCY_FIGURES=1; docs/request-pool.md).
func TestPoolLatencyFigures(t *testing.T) {
	if os.Getenv("FORGECTX_LATENCY_FIGURES") == "" {
		t.Skip("set FORGECTX_LATENCY_FIGURES=1 to measure (about a minute)")
	}
	const delay = 20 * time.Millisecond
	env := map[string]string{"FORGE_TOKEN": "t0ken-for-the-fake"}
	for _, rc := range replayCases(t) {
		if rc.name != "github/large" && rc.name != "gitlab/mr" && rc.name != "forgejo/pull" && rc.name != "github/pr" {
			continue
		}
		c, err := cassette.Load(rc.dir)
		if err != nil {
			t.Fatal(err)
		}
		api, err := urlPath(c.Meta.APIURL)
		if err != nil {
			t.Fatal(err)
		}
		fake := httpfake.New(t)
		fake.Latency(delay)
		digest := ""
		for _, n := range []int{1, 4} {
			fake.ExpectCassetteOptional(c)
			stats := filepath.Join(t.TempDir(), "stats.json")
			got := snapshotDigest(t, env, rc, "--api-url", fake.URL+api, "--token-env", "FORGE_TOKEN", "--concurrency", strconv.Itoa(n), "--stats", stats)
			if digest != "" && got != digest {
				t.Errorf("%s: --concurrency %d gave another snapshot", rc.name, n)
			}
			digest = got
			b, err := os.ReadFile(stats)
			if err != nil {
				t.Fatal(err)
			}
			var st struct {
				Timing struct {
					WallMS       int64 `json:"wall_ms"`
					Requests     int   `json:"requests"`
					MaxInFlight  int   `json:"max_in_flight"`
					LongestChain int   `json:"longest_chain"`
				} `json:"timing"`
			}
			if err := json.Unmarshal(b, &st); err != nil {
				t.Fatal(err)
			}
			tm := st.Timing
			d := float64(delay.Milliseconds())
			t.Logf("%-14s concurrency %d: %4d requests, wall %6d ms, max in flight %d, longest chain %4d, wall/(requests×delay) %.2f, wall/(chain×delay) %.2f",
				rc.name, n, tm.Requests, tm.WallMS, tm.MaxInFlight, tm.LongestChain,
				float64(tm.WallMS)/(float64(tm.Requests)*d), float64(tm.WallMS)/(float64(tm.LongestChain)*d))
		}
	}
}
