// Package snapshottest holds the checks every test that assembles a tree applies to it: the
// spec's "Compatibility" rule (every JSON document validates against the v1 schemas, here both
// the project's shipped bundle and the published one, which differ only by collection.json's
// admission) and the consumer-side verification with the retained index digest. The adapter,
// assembler and CLI tests call it instead of each keeping a copy.
package snapshottest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/schema"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
)

var (
	once    sync.Once
	project *schema.Bundle
	pub     *schema.Bundle
	loadErr error
)

// PublishedDir is the copy of the published v1 bundle the tests validate against.
func PublishedDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "test", "fixtures", "ecs-v1-published")
}

func bundles(t testing.TB) (*schema.Bundle, *schema.Bundle) {
	t.Helper()
	once.Do(func() {
		if project, loadErr = schema.Project(); loadErr != nil {
			return
		}
		pub, loadErr = schema.Load(os.DirFS(PublishedDir()))
	})
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return project, pub
}

// ValidateBundles validates every JSON document of tree against the project bundle and the
// published bundle. collection.json must carry admission.human_min_role, must be refused by
// the published bundle with it (the known difference) and accepted without it. It returns the
// number of documents validated.
func ValidateBundles(t testing.TB, tree *snapshot.Tree) int {
	t.Helper()
	proj, pub := bundles(t)
	n := 0
	for _, f := range append([]snapshot.File{{Path: "index.json", Data: tree.Index}}, tree.Files...) {
		name := schema.ForPath(f.Path)
		if name == "" {
			continue
		}
		n++
		if err := proj.Validate(name, f.Data); err != nil {
			t.Errorf("%s: project bundle: %v", f.Path, err)
		}
		data := f.Data
		if f.Path == "collection.json" {
			if pub.Validate(name, data) == nil {
				t.Errorf("collection.json with admission validated against the published bundle, which does not allow it")
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			if adm, _ := m["admission"].(map[string]any); adm == nil || adm["human_min_role"] == nil {
				t.Errorf("collection.json lacks admission.human_min_role")
			}
			delete(m, "admission")
			data, _ = json.Marshal(m)
		}
		if err := pub.Validate(name, data); err != nil {
			t.Errorf("%s: published bundle: %v", f.Path, err)
		}
	}
	if n < 7 {
		t.Errorf("only %d JSON documents validated; every tree has at least 7", n)
	}
	return n
}

// Verify writes tree into a fresh directory and runs the consumer-side verification with the
// retained index digest, failing the test on any violation or when verify did not read exactly
// the tree's files. It returns the report.
func Verify(t testing.TB, tree *snapshot.Tree) verify.Report {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "context")
	if err := tree.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	rep, err := verify.Dir(context.Background(), dir, verify.Options{IndexSHA256: tree.IndexSHA256})
	if err != nil {
		t.Fatal(err)
	}
	// Dir is the bounded-memory verify.Check; Load, which holds the bytes, must report exactly
	// the same on every tree a test builds.
	if _, lrep, err := verify.Load(context.Background(), dir, verify.Options{IndexSHA256: tree.IndexSHA256}); err != nil || !reflect.DeepEqual(lrep, rep) {
		t.Fatalf("verify.Load reports %+v (%v), verify.Dir (Check) %+v", lrep, err, rep)
	}
	if !rep.OK() {
		for _, v := range rep.Violations {
			t.Errorf("verify: %s", v)
		}
		t.FailNow()
	}
	if rep.IndexSHA256 != tree.IndexSHA256 || rep.Files != len(tree.Files)+1 {
		t.Fatalf("verify read %d files (index %s); the tree has %d (index %s)", rep.Files, rep.IndexSHA256, len(tree.Files)+1, tree.IndexSHA256)
	}
	return rep
}

// Check is ValidateBundles then Verify.
func Check(t testing.TB, tree *snapshot.Tree) verify.Report {
	t.Helper()
	ValidateBundles(t, tree)
	return Verify(t, tree)
}
