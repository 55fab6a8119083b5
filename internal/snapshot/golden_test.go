package snapshot_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/test/snapshottest"
)

var scenarios = []string{"change-proposal", "work-item", "bounds-hit", "rejected-records", "empty-sources"}

// Tree, Stable records, Ordering files, Canonical bytes: each scenario's complete tree is
// compared byte for byte with its golden copy (regenerate with go test -update).
func TestGoldenTreesAreByteIdentical(t *testing.T) {
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			sc := loadScenario(t, name)
			tree := assemble(t, sc.acq, sc.cfg)
			snapshottest.ValidateBundles(t, tree)
			dir := filepath.Join(goldenDir, name)
			if *update {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := tree.WriteDir(dir); err != nil {
					t.Fatal(err)
				}
				// Golden copies are repository files, readable by everyone.
				filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
					if d.IsDir() {
						return os.Chmod(p, 0o755)
					}
					return os.Chmod(p, 0o644)
				})
			}
			want := readTree(t, dir)
			got := map[string][]byte{"index.json": tree.Index}
			for _, f := range tree.Files {
				got[f.Path] = f.Data
			}
			for _, p := range sortedKeys(want) {
				g, ok := got[p]
				if !ok {
					t.Errorf("%s: missing from the assembled tree", p)
					continue
				}
				if !bytes.Equal(g, want[p]) {
					t.Errorf("%s: bytes differ from the golden file\n got: %q\nwant: %q", p, g, want[p])
				}
			}
			for _, p := range sortedKeys(got) {
				if _, ok := want[p]; !ok {
					t.Errorf("%s: not in the golden tree", p)
				}
			}
		})
	}
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatalf("golden tree %s: %v (run go test -update to create it)", dir, err)
	}
	return out
}

func sortedKeys(m map[string][]byte) []string {
	k := make([]string, 0, len(m))
	for p := range m {
		k = append(k, p)
	}
	sort.Strings(k)
	return k
}

var _ = snapshot.SchemaVersion
