package snapshot

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/snapshot/schema"
	"github.com/forgectx/forgectx/pkg/treefs"
)

// spillWriter writes the tree's files into a staging directory as they become final
// (AssembleTo), through the treefs.Writer every tree is written with.
type spillWriter struct {
	*treefs.Writer
	err error // the first write failure; reported when the tree is finished
}

// spill writes a file no later step reads (one without a schema: record files, check logs,
// order views) to the staging directory and returns it without its bytes, or keeps it in
// memory when it cannot be written (a repeated path stays for finish's duplicate check; any
// other failure is reported by finish).
func (a *asm) spill(path string, data []byte) File {
	if a.out == nil || a.out.err != nil || schema.ForPath(path) != "" {
		return File{Path: path, Data: data}
	}
	if err := a.out.Put(path, data); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			a.out.err = err
		}
		return File{Path: path, Data: data}
	}
	return File{Path: path, size: len(data), sum: sha256.Sum256(data), spilled: true}
}

// AssembleTo is Assemble writing the tree to dir: the record files, check logs and order
// views are written to a staging directory beside dir as soon as each is final and only
// their size and digest are kept, so a large tree is never held in memory whole. Once the
// whole tree is valid the remaining files and index.json (last) are written and the staging
// directory is renamed to dir; on any error the staging directory is removed and dir is left
// as it was. dir may not exist yet (its parent must) or must be an empty real directory, as
// for WriteDir. The bytes written are exactly those Assemble followed by WriteDir writes.
//
// The returned Tree has the index and every JSON document in memory, but not the spilled
// files' bytes: Tree.File reports them absent and WriteDir refuses the tree; Sums and the
// Summary are complete.
func AssembleTo(ctx context.Context, acq *acquisition.Acquisition, cfg Config, dir string) (*Tree, error) {
	if err := checkOutDir(dir); err != nil {
		return nil, err
	}
	parent, base := filepath.Split(filepath.Clean(dir))
	if parent == "" {
		parent = "."
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".assembling-")
	if err != nil {
		return nil, fmt.Errorf("snapshot: staging directory: %w", err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	tw, err := treefs.OpenWriter(tmp)
	if err != nil {
		return nil, fmt.Errorf("snapshot: staging directory: %w", err)
	}
	defer tw.Close()
	w := &spillWriter{Writer: tw}
	t, err := assemble(ctx, acq, cfg, w)
	if err != nil {
		return nil, err
	}
	for _, f := range t.Files {
		if !f.spilled {
			if err := w.Put(f.Path, f.Data); err != nil {
				return nil, fmt.Errorf("snapshot: %w", err)
			}
		}
	}
	if err := w.Put("index.json", t.Index); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("snapshot: staging directory: %w", err)
	}
	// os.Rename does not replace a directory: an empty dir (checked above) is removed first.
	if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
		if err := os.Remove(dir); err != nil {
			return nil, fmt.Errorf("snapshot: tree directory: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("snapshot: move the staged tree into place: %w", err)
	}
	done = true
	return t, nil
}

// MemoryLimit is the soft Go memory limit (runtime/debug.SetMemoryLimit) for assembling an
// acquisition of acquisitionBytes with AssembleTo: issue #23's bound of twice the acquisition
// plus 128 MiB, less 32 MiB for the memory the Go runtime does not count. With the record
// files streamed the live heap stays well below it (about 1.7× a 100k-record acquisition at
// its peak), so the collector runs a little more often instead of letting the heap grow to
// twice the live heap; it is soft, so a larger tree still assembles, with more collection.
func MemoryLimit(acquisitionBytes int64) int64 {
	return 2*acquisitionBytes + 96<<20
}

// checkOutDir applies WriteDir's rules to a tree directory without creating it.
func checkOutDir(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("snapshot: tree directory: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("snapshot: tree directory %s is a symlink; refusing to write through it", dir)
	case !fi.IsDir():
		return fmt.Errorf("snapshot: %s exists and is not a directory", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("snapshot: tree directory: %w", err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("snapshot: tree directory %s is not empty; refusing to write into it", dir)
	}
	return nil
}
