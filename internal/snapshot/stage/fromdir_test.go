package stage_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot/stage"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/test/verifytest"
)

// CreateFromDir (`forgectx stage create --from`) stages a tree on disk without holding it: the
// host tree is a byte-for-byte copy, the retained digest is the tree's, and it seals.
func TestCreateFromDirCopiesAndRetainsTheDigest(t *testing.T) {
	src := verifytest.Write(t, verifytest.Demo)
	want := verifytest.IndexSHA256[verifytest.Demo]
	for _, given := range []string{want, ""} {
		st, err := stage.CreateFromDir(context.Background(), testOpts(t), src, given)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Cleanup() })
		if st.IndexSHA256 != want {
			t.Fatalf("retained %s, want %s", st.IndexSHA256, want)
		}
		n := 0
		err = filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			a, _ := os.ReadFile(p)
			b, err := os.ReadFile(filepath.Join(st.HostDir, rel))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s differs in the host tree (%v)", rel, err)
			}
			n++
			return nil
		})
		if err != nil || n < 5 {
			t.Fatalf("walked %d files: %v", n, err)
		}
		dirs, files, _ := modes(t, st.HostDir)
		if len(dirs) != 1 || dirs[0o700] == 0 || len(files) != 1 || files[0o600] == 0 {
			t.Fatalf("host tree modes: dirs %v files %v", dirs, files)
		}
	}
}

// A tree that does not verify, a digest that is not the tree's, and a symlinked tree are
// refused with the verification's report, and nothing is left behind.
func TestCreateFromDirRefusals(t *testing.T) {
	tampered := verifytest.Write(t, verifytest.Demo)
	idx := filepath.Join(tampered, "index.json")
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(idx, bytes.Replace(b, []byte(`"gaps":`), []byte(`"gapz":`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	good := verifytest.Write(t, verifytest.Demo)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, src, digest, rule string
	}{
		{"tampered index", tampered, "", verify.RuleSchemaInvalid},
		{"other digest", good, strings.Repeat("ab", 32), verify.RuleIndexDigest},
		{"symlinked root", link, "", verify.RuleSymlink},
	} {
		o := testOpts(t)
		st, err := stage.CreateFromDir(context.Background(), o, c.src, c.digest)
		var verr *verify.Error
		if st != nil || !errors.As(err, &verr) || len(verr.Report.Violations) == 0 || verr.Report.Violations[0].Rule != c.rule {
			t.Fatalf("%s: %v, want a %s violation", c.name, err, c.rule)
		}
		ents, _ := os.ReadDir(o.Base)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "forgectx-ctx-") || strings.HasPrefix(e.Name(), ".forgectx-ctx-") {
				t.Errorf("%s: %s left in the base directory", c.name, e.Name())
			}
		}
		if states, _ := os.ReadDir(o.StateDir); len(states) != 0 {
			t.Errorf("%s: %d state entries left", c.name, len(states))
		}
	}
	if _, err := stage.CreateFromDir(context.Background(), testOpts(t), good, "NOT-HEX"); err == nil || !strings.Contains(err.Error(), "64 lowercase hexadecimal") {
		t.Fatalf("malformed digest: %v", err)
	}
}
