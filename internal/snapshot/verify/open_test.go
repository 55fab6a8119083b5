package verify_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/test/verifytest"
)

// A snapshot from Open serves a record file only while the tree still holds its verified
// bytes: one changed after verification (a record, the index) is refused with ErrChanged and
// its path (File says false, WriteDir fails and writes no index.json), while the held
// documents are the bytes verified whatever the disk now says, and an unchanged file is still
// served.
func TestOpenRefusesAFileChangedAfterVerification(t *testing.T) {
	dir := verifytest.Write(t, verifytest.Demo)
	digest := verifytest.IndexSHA256[verifytest.Demo]
	snap, rep, err := verify.Open(context.Background(), dir, verify.Options{IndexSHA256: digest})
	if err != nil || !rep.OK() || snap == nil {
		t.Fatalf("open: %v %v", err, rep.Violations)
	}
	files := verifytest.Files(t, verifytest.Demo)
	var other string // another record file, left alone
	for p := range files {
		if strings.HasPrefix(p, "records/") && p != entityPath {
			other = p
			break
		}
	}
	const secret = "SECRET-CONTENT-MARKER"
	mutated := []byte(strings.Repeat("x", len(files[entityPath])-len(secret)) + secret)
	if err := os.WriteFile(filepath.Join(dir, entityPath), mutated, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "relations/reviews.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = snap.ReadFile(entityPath)
	if !errors.Is(err, verify.ErrChanged) || !strings.Contains(err.Error(), entityPath) || !strings.Contains(err.Error(), "sha256") || strings.Contains(err.Error(), secret) {
		t.Fatalf("changed record: %v", err)
	}
	if b, ok := snap.File(entityPath); ok || b != nil {
		t.Fatal("File served a changed record")
	}
	if b, err := snap.ReadFile(other); err != nil || string(b) != string(files[other]) {
		t.Fatalf("unchanged record: %v", err)
	}
	if b, ok := snap.File("relations/reviews.json"); !ok || string(b) != string(files["relations/reviews.json"]) {
		t.Fatal("a held document is not the verified bytes")
	}
	if _, err := snap.ReadFile("records/absent.md"); !errors.Is(err, verify.ErrNotInSnapshot) || snap.Has("records/absent.md") {
		t.Fatalf("absent path: %v", err)
	}
	out := filepath.Join(t.TempDir(), "copy")
	if err := snap.WriteDir(out); !errors.Is(err, verify.ErrChanged) {
		t.Fatalf("WriteDir of a changed tree: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(out, "index.json")); !os.IsNotExist(err) {
		t.Fatalf("WriteDir of a changed tree wrote index.json: %v", err)
	}
	// The index is not held either: read again, it must be the verified one.
	if b, err := snap.ReadFile("index.json"); err != nil || string(b) != string(files["index.json"]) {
		t.Fatalf("index.json: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), append([]byte(" "), files["index.json"]...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := snap.ReadFile("index.json"); !errors.Is(err, verify.ErrChanged) || !strings.Contains(err.Error(), "index.json") {
		t.Fatalf("changed index: %v", err)
	}
	// Put back, the file is served again: the check is of the bytes, not a latch.
	if err := os.WriteFile(filepath.Join(dir, entityPath), files[entityPath], 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := snap.ReadFile(entityPath); err != nil || string(b) != string(files[entityPath]) {
		t.Fatalf("restored record: %v", err)
	}
}

// WriteDir of a snapshot from Open writes the tree Load's snapshot writes, byte for byte, and
// the copy verifies against the retained digest.
func TestOpenWriteDirIsLoadsTree(t *testing.T) {
	dir := verifytest.Write(t, verifytest.DemoReply)
	digest := verifytest.IndexSHA256[verifytest.DemoReply]
	snap, _, err := verify.Open(context.Background(), dir, verify.Options{IndexSHA256: digest})
	if err != nil || snap == nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "copy")
	if err := snap.WriteDir(out); err != nil {
		t.Fatal(err)
	}
	got, want := readTree(t, out), verifytest.Files(t, verifytest.DemoReply)
	if len(got) != len(want) {
		t.Fatalf("%d files written, want %d", len(got), len(want))
	}
	for p, b := range want {
		if string(got[p]) != string(b) {
			t.Fatalf("%s differs", p)
		}
	}
	if rep, err := verify.Check(context.Background(), out, verify.Options{IndexSHA256: digest}); err != nil || !rep.OK() {
		t.Fatalf("copy: %v %v", err, rep.Violations)
	}
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
