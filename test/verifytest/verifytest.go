// Package verifytest provides real entity-context-snapshot v1 trees for the consumer tests
// (internal/snapshot/verify, internal/snapshot/stage, internal/snapshot/prompt, cmd/forgectx): the tree `forgectx demo` assembles from
// its embedded pull-request conversation, and the same conversation with one later reply.
// They were written by internal/snapshot's assembler and are stored byte for byte under testdata/,
// so consumer tests do not depend on the assembler's code while still exercising its output.
package verifytest

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

//go:embed all:testdata
var trees embed.FS

// Tree names.
const (
	Demo      = "demo"       // the `forgectx demo` tree
	DemoReply = "demo-reply" // the same conversation plus one later issue comment
	// GitLabReview is a tampered tree: a GitLab change proposal carrying one formal review
	// record and its relationship row, otherwise well formed. The assembler no longer
	// produces it (it drops reviews from a GitLab acquisition as invalid metadata), so it is
	// stored as written by an earlier assembler and is never regenerated; only verify's
	// gitlab_review rule reads it.
	GitLabReview = "gitlab-review"
)

// IndexSHA256 is the root index digest of each stored tree, as the assembler retained it
// (testdata/<name>.index.sha256, written with the tree by internal/snapshot/verify's
// TestStoredTreesAreTheAssemblers -update).
var IndexSHA256 = map[string]string{}

func init() {
	for _, name := range []string{Demo, DemoReply} {
		b, err := trees.ReadFile("testdata/" + name + ".index.sha256")
		if err != nil { // embedded at build time: cannot fail
			panic(err)
		}
		IndexSHA256[name] = strings.TrimSpace(string(b))
	}
}

// Files returns every file of a stored tree (index.json included) by tree-relative path.
func Files(t testing.TB, name string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	root := "testdata/" + name
	err := fs.WalkDir(trees, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := trees.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("verifytest: read tree %s: %v", name, err)
	}
	return out
}

// Write writes a stored tree into a new directory below t.TempDir() with the staging modes
// (directories 0700, files 0600) and returns its path.
func Write(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "context")
	WriteFiles(t, dir, Files(t, name))
	return dir
}

// WriteFiles writes files (tree-relative path → bytes) under dir, creating dir.
func WriteFiles(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for p, b := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
