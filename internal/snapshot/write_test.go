package snapshot_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Lifecycle and access: the host tree uses directory mode 0700 and file mode 0600, holds
// exactly the tree's files, and is never written into a non-empty directory or through a
// symlink.
func TestWriteDirModesContentsAndRefusals(t *testing.T) {
	acq, cfg := demo(t)
	tree := assemble(t, acq, cfg)
	dir := filepath.Join(t.TempDir(), "context")
	if err := tree.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	want := treeMap(tree)
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, _ := os.Lstat(p)
		if d.IsDir() {
			if fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: directory mode %v, want 0700", p, fi.Mode().Perm())
			}
			return nil
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want a regular 0600 file", p, fi.Mode())
		}
		rel, _ := filepath.Rel(dir, p)
		b, _ := os.ReadFile(p)
		if !bytes.Equal(b, want[filepath.ToSlash(rel)]) {
			t.Errorf("%s: bytes differ from the tree", rel)
		}
		n++
		return nil
	})
	if err != nil || n != len(want) {
		t.Fatalf("wrote %d files, want %d (%v)", n, len(want), err)
	}

	// A non-empty directory is refused.
	if err := tree.WriteDir(dir); err == nil {
		t.Error("wrote into a non-empty directory")
	}
	// A symlinked tree directory is refused.
	target := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := tree.WriteDir(link); err == nil {
		t.Error("wrote through a symlinked directory")
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Error("files appeared behind the symlink")
	}
	// An existing empty directory is accepted and tightened to 0700.
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := tree.WriteDir(empty); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(empty); fi.Mode().Perm() != 0o700 {
		t.Errorf("existing directory left at %v", fi.Mode().Perm())
	}
	// A regular file in the way is refused.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	if err := tree.WriteDir(file); err == nil {
		t.Error("wrote over a regular file")
	}
}
