package treefs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteModesOrderAndNoFollow(t *testing.T) {
	dir := t.TempDir()
	files := []File{{Path: "records/a.md", Data: []byte("a\n")}, {Path: "views/reviews/b.order", Data: nil}}
	if err := Write(dir, files, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"records", "views", "views/reviews"} {
		fi, err := os.Lstat(filepath.Join(dir, p))
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v", p, fi.Mode(), err)
		}
	}
	for _, p := range []string{"records/a.md", "views/reviews/b.order", "index.json"} {
		fi, err := os.Lstat(filepath.Join(dir, p))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", p, fi.Mode(), err)
		}
	}
	// A planted symlink below dir is neither followed nor overwritten.
	dir2 := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir2, "records")); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir2, files, []byte("{}")); err == nil {
		t.Fatal("wrote through a planted symlink")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the tree: %v", ents)
	}
	if _, err := os.Lstat(filepath.Join(dir2, "index.json")); err == nil {
		t.Error("index.json written although the tree is incomplete")
	}
	for _, bad := range []string{"", "/abs", "../up", "a/../../b"} {
		if err := Write(t.TempDir(), []File{{Path: bad}}, nil); err == nil {
			t.Errorf("path %q accepted", bad)
		}
	}
}
