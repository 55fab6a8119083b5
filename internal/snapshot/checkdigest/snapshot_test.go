package checkdigest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/demo"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
)

// twoLogTree is the demo tree with its "build" check failed too (a compile error), written
// and opened as `forgectx prompt` opens a tree: it has two check logs.
func twoLogTree(t *testing.T) (*verify.Snapshot, string) {
	t.Helper()
	acq, prof, bots, err := demo.Inputs()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range acq.Checks {
		if acq.Checks[i].Name == "build" {
			acq.Checks[i].Conclusion = "failure"
			acq.Checks[i].Log = &acquisition.Log{Outcome: acquisition.LogFetched, Content: []byte(
				"2026-09-03T14:01:00.0000000Z ##[group]Run go build ./...\n" +
					"2026-09-03T14:01:01.0000000Z ##[endgroup]\n" +
					"2026-09-03T14:01:02.0000000Z # example.com/widgets/internal/api\n" +
					"2026-09-03T14:01:02.1000000Z internal/api/client.go:27:9: undefined: retryPolicy\n" +
					"2026-09-03T14:01:02.2000000Z internal/api/client.go:28:9: undefined: backoff\n" +
					"2026-09-03T14:01:03.0000000Z ##[error]Process completed with exit code 1.\n")}
			n++
		}
	}
	if n != 1 {
		t.Fatal("the demo has no build check")
	}
	tree, err := snapshot.Assemble(context.Background(), acq, snapshot.Config{Profile: prof, Category: demo.Category, Bots: bots, Filter: filter.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ctx")
	if err := tree.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	snap, rep, err := verify.Open(context.Background(), dir, verify.Options{IndexSHA256: tree.IndexSHA256})
	if err != nil || snap == nil {
		t.Fatalf("%v %v", err, rep.Violations)
	}
	return snap, dir
}

func TestFromSnapshot(t *testing.T) {
	snap, dir := twoLogTree(t)
	checks, err := FromSnapshot(snap, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range snap.Manifest.Records {
		if r.LogPath != "" {
			want = append(want, r.LogPath)
		}
	}
	if len(checks) != 2 || len(want) != 2 {
		t.Fatalf("%d digests for %d logs", len(checks), len(want))
	}
	byName := map[string]Check{}
	for i, c := range checks {
		if c.Path != want[i] {
			t.Errorf("digest %d is of %s, the manifest's record order has %s", i, c.Path, want[i])
		}
		byName[c.Name] = c
	}
	b, tst := byName["build"], byName["test (ubuntu-latest, go 1.26)"]
	if b.Conclusion != "failure" || b.Digest.Category != catCompile || b.Digest.Step != "go build ./..." || countKeys(b.Digest) != 3 {
		t.Errorf("build: %+v", b)
	}
	if tst.Conclusion != "failure" || tst.Digest.Category != catTest || tst.Digest.FirstError != "--- FAIL: TestRetryCapsDelay (0.30s)" {
		t.Errorf("test: %+v", tst)
	}

	// A log changed since verification is refused, never digested.
	if err := os.WriteFile(filepath.Join(dir, want[1]), []byte("--- FAIL: TestForged (0s)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := FromSnapshot(snap, Limits{}); !errors.Is(err, verify.ErrChanged) {
		t.Fatalf("changed log: %v", err)
	}
	if _, err := FromSnapshot(nil, Limits{}); err == nil {
		t.Fatal("an unverified snapshot must be refused")
	}
}

// The total bound: the first check keeps its lines, the second what is left, and says so.
func TestFromSnapshotTotalBound(t *testing.T) {
	snap, _ := twoLogTree(t)
	checks, err := FromSnapshot(snap, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	first := 0
	for _, l := range checks[0].Digest.Lines {
		first += len(l.Text)
	}
	bounded, err := FromSnapshot(snap, Limits{MaxTotalBytes: first + 40})
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, c := range bounded {
		for _, l := range c.Digest.Lines {
			size += len(l.Text)
		}
	}
	if size > first+40 || len(bounded[0].Digest.Lines) != len(checks[0].Digest.Lines) || bounded[1].Digest.OmittedLines <= checks[1].Digest.OmittedLines {
		t.Fatalf("total bound: %d bytes; second digest %+v", size, bounded[1].Digest)
	}
	if !strings.Contains(Render(bounded[1]), "more error line") {
		t.Errorf("no omission marker:\n%s", Render(bounded[1]))
	}

}
