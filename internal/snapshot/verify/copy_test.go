package verify_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/test/verifytest"
)

// CheckCopy accepts an exact copy of a verified tree and reports every way a copy can differ:
// one changed byte, a missing or an extra file, a symlink, a rewritten root index.
func TestCheckCopyFindsEveryDifference(t *testing.T) {
	ctx := context.Background()
	src := verifytest.Write(t, verifytest.Demo)
	snap, rep, err := verify.LoadChecked(t, ctx, src, verify.Options{})
	if err != nil || snap == nil {
		t.Fatal(err, rep.Violations)
	}
	sums := snap.Sums()
	paths := snap.Paths()
	if len(sums) != len(paths) || len(paths) < 5 {
		t.Fatalf("%d sums for %d paths", len(sums), len(paths))
	}
	fresh := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "copy")
		if err := snap.WriteDir(dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dir := fresh(t)
	got, err := verify.CheckCopy(ctx, dir, snap.IndexSHA256, sums, verify.Options{})
	if err != nil || !got.OK() {
		t.Fatalf("an exact copy was refused: %v %v", err, got.Violations)
	}
	if got.Files != len(paths)+1 || got.IndexSHA256 != snap.IndexSHA256 {
		t.Fatalf("report counts %d files, index %s", got.Files, got.IndexSHA256)
	}
	record := ""
	for _, p := range paths {
		if strings.HasPrefix(p, "records/") {
			record = p
		}
	}
	cases := []struct {
		name, rule, path string
		change           func(dir string) error
	}{
		{"one byte", verify.RuleSHA256, record, func(dir string) error {
			b, err := os.ReadFile(filepath.Join(dir, record))
			if err != nil {
				return err
			}
			b[len(b)-1] ^= 1
			return os.WriteFile(filepath.Join(dir, record), b, 0o600)
		}},
		{"missing", verify.RuleMissingFile, record, func(dir string) error { return os.Remove(filepath.Join(dir, record)) }},
		{"extra", verify.RuleExtraFile, "records/extra.md", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "records/extra.md"), []byte("x"), 0o600)
		}},
		{"symlink", verify.RuleSymlink, record, func(dir string) error {
			p := filepath.Join(dir, record)
			if err := os.Rename(p, p+".moved"); err != nil {
				return err
			}
			return os.Symlink(filepath.Base(p)+".moved", p)
		}},
		{"index", verify.RuleIndexDigest, "index.json", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "index.json"), []byte("{}"), 0o600)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := fresh(t)
			if err := c.change(dir); err != nil {
				t.Fatal(err)
			}
			got, err := verify.CheckCopy(ctx, dir, snap.IndexSHA256, sums, verify.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range got.Violations {
				if v.Rule == c.rule && v.Path == c.path {
					return
				}
			}
			t.Fatalf("want %s at %s, got %v", c.rule, c.path, got.Violations)
		})
	}
	if _, err := verify.CheckCopy(ctx, dir, "ABC", sums, verify.Options{}); err == nil {
		t.Fatal("a malformed retained digest was accepted")
	}
}
