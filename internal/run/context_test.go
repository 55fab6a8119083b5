package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/demo"
)

// stagedDemo assembles the demo pull request into a directory as the snapshot phase does and
// returns a runner that staged it.
func stagedDemo(t *testing.T) (*runner, *snapshot.Tree, *strings.Builder) {
	t.Helper()
	acq, prof, bots, err := demo.Inputs()
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	r := &runner{c: &config{profile: prof, h: &harness.Harness{Agent: harness.Agent{Category: demo.Category}, Bots: bots}}, pipe: filter.New(nil),
		log: zerolog.New(&logs), res: &Result{}}
	dir := filepath.Join(t.TempDir(), "tree")
	tree, err := snapshot.AssembleTo(context.Background(), acq, r.assembleConfig(), dir)
	if err != nil {
		t.Fatal(err)
	}
	r.treeDir, r.retained, r.res.Summary = dir, tree.IndexSHA256, &tree.Summary
	return r, tree, &logs
}

// The report of a staged tree lists its failed checks by name, each failed check with a log
// once, with a first error line that ends a line of that log, and the tree's gaps.
func TestContextReportReadsTheStagedTree(t *testing.T) {
	r, tree, _ := stagedDemo(t)
	c := r.contextReport(context.Background())
	if len(c.Gaps) != len(tree.Summary.Gaps) {
		t.Errorf("gaps %+v, want the tree's %+v", c.Gaps, tree.Summary.Gaps)
	}
	if len(c.Failed) == 0 {
		t.Fatal("test premise: the demo has failed checks")
	}
	for i, fc := range c.Failed {
		if i > 0 && c.Failed[i-1].Name > fc.Name {
			t.Errorf("failed checks not sorted by name: %q before %q", c.Failed[i-1].Name, fc.Name)
		}
		if fc.NoLog || fc.FirstError == "" {
			continue
		}
		found := false
		for _, f := range tree.Files {
			if !strings.HasSuffix(f.Path, "/log.txt") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(r.treeDir, f.Path))
			if err != nil {
				t.Fatal(err)
			}
			// The digest strips a runner's timestamp prefix and colour codes, so the first
			// error is the end of one log line, never text spanning lines.
			for _, line := range strings.Split(string(b), "\n") {
				found = found || strings.HasSuffix(line, fc.FirstError)
			}
		}
		if !found {
			t.Errorf("%q: first error %q is not a line of a log in the tree", fc.Name, fc.FirstError)
		}
	}
}

// A tree that no longer matches the retained digest is not read: the report keeps the
// assembler's gaps, lists no check and the log names no content.
func TestContextReportRefusesAChangedTree(t *testing.T) {
	r, tree, logs := stagedDemo(t)
	r.retained = strings.Repeat("0", 64)
	c := r.contextReport(context.Background())
	if len(c.Failed) != 0 || len(c.Gaps) != len(tree.Summary.Gaps) {
		t.Errorf("report of an unverified tree = %+v", c)
	}
	if !strings.Contains(logs.String(), "staged tree not readable") {
		t.Errorf("not logged: %s", logs.String())
	}
}
