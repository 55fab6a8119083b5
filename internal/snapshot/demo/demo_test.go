package demo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The embedded demo is the change-proposal golden scenario: the demo's tree must equal the
// golden tree byte for byte (so the README's main job is covered by the golden test).
func TestDemoTreeEqualsChangeProposalGolden(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ctx")
	res, err := Run(context.Background(), Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	golden := "../../../test/golden/snapshot/change-proposal"
	n := 0
	err = filepath.WalkDir(golden, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(golden, p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s differs from the golden tree", rel)
		}
		n++
		return nil
	})
	if err != nil || n != res.Tree.Summary.Files {
		t.Fatalf("golden has %d files, demo %d (%v)", n, res.Tree.Summary.Files, err)
	}
	for _, name := range []string{"acquisition.json", "profile.json", "bots.json"} {
		a, _ := os.ReadFile(name)
		b, _ := os.ReadFile(filepath.Join("../../../test/fixtures/acquisition/change-proposal", name))
		if string(a) != string(b) {
			t.Errorf("%s: the embedded demo and the change-proposal fixture drifted apart", name)
		}
	}
}
