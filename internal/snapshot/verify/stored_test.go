package verify_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/demo"
	"github.com/forgectx/forgectx/test/verifytest"
)

var update = flag.Bool("update", false, "rewrite the stored trees under verifytest/testdata from today's assembler")

// storedTrees assembles the stored consumer-test trees: the `forgectx demo` conversation, and
// the same conversation plus one later issue comment.
func storedTrees(t *testing.T) map[string]*snapshot.Tree {
	t.Helper()
	out := map[string]*snapshot.Tree{}
	for _, name := range []string{verifytest.Demo, verifytest.DemoReply} {
		acq, prof, bots, err := demo.Inputs()
		if err != nil {
			t.Fatal(err)
		}
		if name == verifytest.DemoReply {
			acq.Comments = append(acq.Comments, acquisition.Comment{ID: "IC_kwDOLxDemo01c0098",
				Author:    acquisition.ActorRef{ID: str("U_kgDOAlice0001"), Login: str("alice")},
				CreatedAt: "2026-09-04T09:00:00Z", Body: "Rebased on main; ready for another look."})
		}
		tree, err := snapshot.Assemble(context.Background(), acq, snapshot.Config{Profile: prof, Category: demo.Category, Bots: bots, Filter: filter.New(nil)})
		if err != nil {
			t.Fatal(err)
		}
		out[name] = tree
	}
	return out
}

// The stored trees are exactly what today's assembler writes (golden files: regenerate with
// `go test ./internal/snapshot/verify -run TestStoredTreesAreTheAssemblers -update` when the assembler or
// the filter version changes its output on purpose). Stale trees would carry an old
// filter_version, which verify rightly rejects.
func TestStoredTreesAreTheAssemblers(t *testing.T) {
	for name, tree := range storedTrees(t) {
		dir := filepath.Join("verifytest", "testdata", name)
		if *update {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := tree.WriteDir(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir+".index.sha256", []byte(tree.IndexSHA256+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		stored := verifytest.Files(t, name)
		want := map[string][]byte{"index.json": tree.Index}
		for _, f := range tree.Files {
			want[f.Path] = f.Data
		}
		var diff []string
		for p, b := range want {
			if !bytes.Equal(stored[p], b) {
				diff = append(diff, p)
			}
		}
		for p := range stored {
			if _, ok := want[p]; !ok {
				diff = append(diff, p)
			}
		}
		sort.Strings(diff)
		if len(diff) > 0 || verifytest.IndexSHA256[name] != tree.IndexSHA256 {
			t.Errorf("stored tree %s differs from the assembler's in %d file(s) %v (digest %s, assembler %s); regenerate with -update",
				name, len(diff), diff, verifytest.IndexSHA256[name], tree.IndexSHA256)
		}
	}
}
