package github_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/internal/forge/stats"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

var update = flag.Bool("update", false, "regenerate test/fixtures/github/<scenario> cassettes from test/ghscenario")

const fixturesDir = "../../../test/fixtures/github"

// testProfile selects every source applicable to kind, logs of failed checks, and the
// scenario maker's max_source_bytes.
func testProfile(kind string) acquisition.Profile {
	p := acquisition.Profile{
		EntityKind:        kind,
		IncludedSources:   []string{"entity", "comments", "agent_runs"},
		RecordSelection:   "oldest",
		CheckLogSelection: "none",
		Bounds: acquisition.Bounds{MaxRecordsPerSource: 5000, MaxSourceBytes: ghscenario.MaxSourceBytes, MaxRecordBytes: 65536,
			MaxLogBytes: 65536, MaxMetadataStringBytes: 1024, MaxLabels: 100},
	}
	if kind == acquisition.KindChangeProposal {
		p.IncludedSources = append(p.IncludedSources, "reviews", "checks", "check_logs")
		p.CheckLogSelection = "failed"
	}
	return p
}

// fastOptions make retries and waits test-sized; rate-limit waits stay real up to 2s so the
// tests can observe that Retry-After is honoured.
func fastOptions(apiURL string) github.Options {
	return github.Options{APIURL: apiURL, SourceHost: "github.com", Token: "ghp_testtoken000000000000000000000000",
		RetryMax: 3, RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond,
		MaxRateLimitWait: 2 * time.Second, Timeout: 2 * time.Second}
}

func kindOf(s *ghscenario.Scenario) string {
	if s.PR {
		return acquisition.KindChangeProposal
	}
	return acquisition.KindWorkItem
}

func refOf(s *ghscenario.Scenario) forge.Ref {
	return forge.Ref{Forge: "github", Repo: s.Owner + "/" + s.Repo, Number: s.Number}
}

func build(t testing.TB, s *ghscenario.Scenario) *cassette.Cassette {
	t.Helper()
	c, err := ghscenario.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// acquireFake runs Acquire against an httpfake server loaded with c (plus any faults the
// caller registered first, through setup). Every recorded exchange must be requested.
// A non-nil setup registers the cassette itself (so it can put faults before or after it).
func acquireFake(t *testing.T, s *ghscenario.Scenario, c *cassette.Cassette, setup func(*httpfake.Server, *cassette.Cassette), tweak func(*github.Options)) (*acquisition.Acquisition, *stats.Stats, error) {
	t.Helper()
	fake := httpfake.New(t)
	if setup != nil {
		setup(fake, c)
	} else {
		fake.ExpectCassette(c)
	}
	opts := fastOptions(fake.URL)
	if tweak != nil {
		tweak(&opts)
	}
	cl, err := github.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := cl.Acquire(ctx, refOf(s), testProfile(kindOf(s)))
	return a, cl.Stats(), err
}

// acquireReplay runs Acquire offline through a cassette.Replayer.
func acquireReplay(t testing.TB, s *ghscenario.Scenario, c *cassette.Cassette) (*acquisition.Acquisition, *stats.Stats, *cassette.Replayer) {
	t.Helper()
	rp, err := cassette.NewReplayer(c)
	if err != nil {
		t.Fatal(err)
	}
	// The receipt reader `forgectx snapshot --forge github` uses: receipts from the comments
	// listing (no extra request when comments are selected).
	cl, err := github.New(github.Options{APIURL: c.Meta.APIURL, Transport: rp, Receipts: github.ReceiptsFromComments,
		RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond, MaxRateLimitWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := cl.Acquire(ctx, refOf(s), testProfile(kindOf(s)))
	if err != nil {
		t.Fatal(err)
	}
	return a, cl.Stats(), rp
}

func acqBytes(t testing.TB, a *acquisition.Acquisition) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := acquisition.Write(&buf, a); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func loadFixture(t testing.TB, name string) *cassette.Cassette {
	t.Helper()
	c, err := cassette.Load(filepath.Join(fixturesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writeFixture(t testing.TB, name string, c *cassette.Cassette) {
	t.Helper()
	dir := filepath.Join(fixturesDir, name)
	// Only the cassette is regenerated here; acquisition.golden.json belongs to the replay test.
	if err := os.RemoveAll(filepath.Join(dir, "interactions")); err != nil {
		t.Fatal(err)
	}
	if err := cassette.Write(dir, c); err != nil {
		t.Fatal(err)
	}
}
