package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/checkdigest"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/internal/status"
)

// treeContext is the context block a final status comment and the job summary must show for a
// run that staged tree: the tree's gaps (as its index lists them) and its failed checks
// (conclusion failure or timed_out), by name, each with the digest of its log. It is the
// test's oracle, computed from the expected tree written to a directory of its own and opened
// as a consumer opens it.
func treeContext(t testing.TB, tree *snapshot.Tree) *status.Context {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tree")
	must(t, tree.WriteDir(dir))
	snap, rep, err := verify.Open(context.Background(), dir, verify.Options{IndexSHA256: tree.IndexSHA256})
	if err != nil || snap == nil {
		t.Fatalf("expected tree does not verify: %v %+v", err, rep.Violations)
	}
	c := &status.Context{}
	for _, g := range snap.Manifest.Gaps {
		c.Gaps = append(c.Gaps, status.Gap{Scope: g.Scope, Code: g.Code, Count: g.Count})
	}
	checks, err := checkdigest.FromSnapshot(snap, checkdigest.Limits{})
	must(t, err)
	type failed struct {
		path string
		fc   status.FailedCheck
	}
	var list []failed
	for _, ch := range checks {
		if ch.Conclusion == "failure" || ch.Conclusion == "timed_out" {
			list = append(list, failed{ch.Path, status.FailedCheck{Name: ch.Name, Category: string(ch.Digest.Category), FirstError: ch.Digest.FirstError}})
		}
	}
	for _, rec := range snap.Manifest.Records {
		if rec.Kind != "check" || rec.LogPath != "" {
			continue
		}
		b, err := snap.ReadFile(rec.MetadataPath)
		must(t, err)
		var md struct{ Name, Conclusion string }
		must(t, json.Unmarshal(b, &md))
		if md.Conclusion == "failure" || md.Conclusion == "timed_out" {
			list = append(list, failed{rec.MetadataPath, status.FailedCheck{Name: md.Name, NoLog: true}})
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].fc.Name != list[j].fc.Name {
			return list[i].fc.Name < list[j].fc.Name
		}
		return list[i].path < list[j].path
	})
	for _, f := range list {
		c.Failed = append(c.Failed, f.fc)
	}
	return c
}

// failedCheckPremise checks, independently of how the digest classifies, that the expected
// tree has failed checks and that each one's first error line is a line of a check log in the
// tree (so the comment shows the log's own words, not invented text).
func failedCheckPremise(t testing.TB, tree *snapshot.Tree, c *status.Context) {
	t.Helper()
	lines := map[string]bool{}
	for _, f := range tree.Files {
		if strings.HasPrefix(f.Path, "checks/") && strings.HasSuffix(f.Path, "/log.txt") {
			for _, l := range strings.Split(string(f.Data), "\n") {
				lines[l] = true
			}
		}
	}
	withLog := 0
	for _, fc := range c.Failed {
		if fc.NoLog {
			continue
		}
		withLog++
		if fc.Name == "" || fc.FirstError != "" && !lines[fc.FirstError] {
			t.Errorf("failed check %q: first error %q is not a line of a check log in the tree", fc.Name, fc.FirstError)
		}
	}
	if withLog == 0 {
		t.Fatal("test premise: the tree has no failed check with a log")
	}
}

// assertSummaryContext checks that a job summary lists every failed check of c by its
// sanitised name (up to the list bound) and carries c's partial-context line.
func assertSummaryContext(t testing.TB, summary string, c *status.Context) {
	t.Helper()
	if !strings.Contains(summary, fmt.Sprintf("**Failed checks** (%d)\n", len(c.Failed))) && len(c.Failed) > 0 {
		t.Errorf("job summary lacks the failed-check table:\n%s", summary)
	}
	for _, fc := range c.Failed[:min(len(c.Failed), status.MaxListedChecks)] {
		if name := status.SanitizeCheck(nil, fc).Name; !strings.Contains(summary, name) {
			t.Errorf("job summary does not name the failed check %q:\n%s", name, summary)
		}
	}
	if line := status.PartialLine(c.Gaps); line != "" && !strings.Contains(summary, "\n"+line+"\n") {
		t.Errorf("job summary lacks the partial-context line %q:\n%s", line, summary)
	}
}
