package snapshot_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
)

// AssembleTo writes exactly the golden trees (every file, index.json included, and nothing
// else), returns the same index digest, sums and summary as Assemble, keeps no bytes of the
// record files it streamed, and leaves no staging directory behind.
func TestAssembleToWritesTheGoldenTrees(t *testing.T) {
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			sc := loadScenario(t, name)
			mem := assemble(t, clone(t, sc.acq), sc.cfg)
			parent := t.TempDir()
			dir := filepath.Join(parent, "context")
			tree, err := snapshot.AssembleTo(context.Background(), sc.acq, sc.cfg, dir)
			if err != nil {
				t.Fatalf("AssembleTo: %v", err)
			}
			// Lifecycle and access: directories 0700, regular files 0600, as WriteDir.
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					t.Fatal(err)
				}
				fi, _ := os.Lstat(p)
				if d.IsDir() && fi.Mode().Perm() != 0o700 || !d.IsDir() && (!fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600) {
					t.Errorf("%s: mode %v", p, fi.Mode())
				}
				return nil
			})
			want, got := readTree(t, filepath.Join(goldenDir, name)), readTree(t, dir)
			if len(got) != len(want) {
				t.Errorf("wrote %d files, the golden tree has %d", len(got), len(want))
			}
			for p, w := range want {
				if !bytes.Equal(got[p], w) {
					t.Errorf("%s: written bytes differ from the golden file", p)
				}
			}
			if tree.IndexSHA256 != mem.IndexSHA256 || !bytes.Equal(tree.Index, mem.Index) {
				t.Errorf("index digest %s, Assemble gives %s", tree.IndexSHA256, mem.IndexSHA256)
			}
			if tree.Summary.Bytes != mem.Summary.Bytes || tree.Summary.Files != mem.Summary.Files {
				t.Errorf("summary %d files / %d bytes, Assemble gives %d / %d", tree.Summary.Files, tree.Summary.Bytes, mem.Summary.Files, mem.Summary.Bytes)
			}
			ms, ts := mem.Sums(), tree.Sums()
			if len(ms) != len(ts) {
				t.Errorf("%d sums, want %d", len(ts), len(ms))
			}
			for p, s := range ms {
				if ts[p] != s {
					t.Errorf("%s: sum differs", p)
				}
			}
			held := 0
			for _, f := range tree.Files {
				if strings.HasSuffix(f.Path, ".md") {
					if f.Data != nil {
						t.Errorf("%s: record bytes kept in memory", f.Path)
					}
					if _, ok := tree.File(f.Path); ok {
						t.Errorf("%s: File reports a streamed record present", f.Path)
					}
				}
				if f.Data != nil {
					held++
				}
			}
			if held == len(tree.Files) {
				t.Error("nothing was streamed")
			}
			if err := tree.WriteDir(filepath.Join(parent, "again")); err == nil {
				t.Error("WriteDir wrote a tree whose record bytes it does not hold")
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 1 {
				t.Errorf("%d entries beside the tree, want only the tree (no staging directory)", len(ents))
			}
			rep, err := verify.Dir(context.Background(), dir, verify.Options{IndexSHA256: tree.IndexSHA256})
			if err != nil || !rep.OK() {
				t.Fatalf("verify: %v %+v", err, rep)
			}
		})
	}
}

// cancelWhenStaged is a context that reports cancellation once the staging directory holds a
// streamed record, so the abort comes after files were written.
type cancelWhenStaged struct {
	context.Context
	parent string
}

func (c cancelWhenStaged) Err() error {
	m, _ := filepath.Glob(filepath.Join(c.parent, ".context.assembling-*", "records", "*.md"))
	if len(m) > 0 {
		return context.Canceled
	}
	return nil
}

// The working directory itself (`forgectx snapshot --out .`), empty, is a valid tree
// directory: the staging directory goes beside it, not inside it, and the tree ends up there.
func TestAssembleToTheWorkingDirectory(t *testing.T) {
	acq, cfg := demo(t)
	want := assemble(t, clone(t, acq), cfg)
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	tree, err := snapshot.AssembleTo(context.Background(), acq, cfg, ".")
	if err != nil {
		t.Fatalf("AssembleTo(.): %v", err)
	}
	if tree.IndexSHA256 != want.IndexSHA256 {
		t.Fatalf("index %s, want %s", tree.IndexSHA256, want.IndexSHA256)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "index.json")); !bytes.Equal(got, want.Index) {
		t.Fatal("the tree's index.json is not in the directory")
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		t.Fatalf("%d entries beside the tree, want only the tree", len(ents))
	}
}

// Nothing is written before the whole tree is valid: an assembly aborted after record files
// were streamed leaves neither the tree directory nor its staging directory; an existing empty
// directory stays as it was; a non-empty or symlinked directory is refused before anything
// is written.
func TestAssembleToLeavesNothingOnFailure(t *testing.T) {
	acq, cfg := demo(t)
	for _, existing := range []bool{false, true} {
		parent := t.TempDir()
		dir := filepath.Join(parent, "context")
		if existing {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		_, err := snapshot.AssembleTo(cancelWhenStaged{context.Background(), parent}, clone(t, acq), cfg, dir)
		if ab := asAbort(t, err); ab.Code != snapshot.AbortFilterFailed {
			t.Fatalf("abort %s, want %s", ab.Code, snapshot.AbortFilterFailed)
		}
		ents, _ := os.ReadDir(parent)
		switch {
		case !existing && len(ents) != 0:
			t.Errorf("%d entries left after an aborted assembly (%s)", len(ents), ents[0].Name())
		case existing && (len(ents) != 1 || ents[0].Name() != "context"):
			t.Errorf("entries %v after an aborted assembly, want only the existing directory", ents)
		case existing:
			if in, _ := os.ReadDir(dir); len(in) != 0 {
				t.Errorf("the existing directory got %d entries", len(in))
			}
		}
	}

	parent := t.TempDir()
	full := filepath.Join(parent, "full")
	os.Mkdir(full, 0o700)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o600)
	if _, err := snapshot.AssembleTo(context.Background(), clone(t, acq), cfg, full); err == nil {
		t.Error("wrote into a non-empty directory")
	}
	link := filepath.Join(parent, "link")
	os.Symlink(t.TempDir(), link)
	if _, err := snapshot.AssembleTo(context.Background(), clone(t, acq), cfg, link); err == nil {
		t.Error("wrote through a symlinked directory")
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 2 {
		t.Errorf("%d entries, want the two refused ones only", len(ents))
	}
}
