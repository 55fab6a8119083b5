package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/schema"
	"github.com/forgectx/forgectx/internal/snapshot/treefs"
)

// spillWriter writes the tree's files into a staging directory as they become final
// (AssembleTo), through the treefs.Writer every tree is written with. The writes run on one
// goroutine of their own, fed through a bounded queue: creating a hundred thousand files is
// mostly system-call time, and the assembler's own goroutine meanwhile goes on staging (with
// the filter workers busy on the next bodies), so the I/O is off the assembly's critical path.
// One writer keeps the treefs.Writer single-threaded and the files created in staging order.
type spillWriter struct {
	w     *treefs.Writer
	queue chan File
	done  chan struct{}
	// err is the first write failure, reported when the tree is finished. Only the writer
	// goroutine sets it, before it closes done; flush reads it after done.
	err error
}

// spillQueue bounds what is handed to the writer and not yet written: at most this many
// record files (a record is at most MaxRecordBytes), so the queue never holds more than a
// small part of the tree.
const spillQueue = 256

func newSpillWriter(w *treefs.Writer) *spillWriter {
	s := &spillWriter{w: w, queue: make(chan File, spillQueue), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for f := range s.queue {
			if s.err != nil {
				continue // drain: nothing more is written after a failure
			}
			// A repeated path (fs.ErrExist) is not a write failure: both entries stay in
			// the tree's file list, and finish's duplicate-path check aborts the assembly.
			if err := s.w.Put(f.Path, f.Data); err != nil && !errors.Is(err, fs.ErrExist) {
				s.err = err
			}
		}
	}()
	return s
}

// flush waits until every queued file is written and returns the first write failure. After
// it the queue is closed and the writer goroutine gone: later files (finish's documents, the
// index) are written through the treefs.Writer directly.
func (s *spillWriter) flush() error {
	if s.queue != nil {
		close(s.queue)
		<-s.done
		s.queue = nil
	}
	return s.err
}

// spill hands a file no later step reads (one without a schema: record files, check logs,
// order views) to the staging directory's writer and returns it without its bytes (only its
// size and digest, sum). After a write failure the writer drops what it is handed, and
// finish reports the failure, so the tree is never used.
func (a *asm) spill(path string, data []byte, sum [32]byte) File {
	if a.out == nil || a.out.queue == nil || schema.ForPath(path) != "" {
		return File{Path: path, Data: data, sum: sum}
	}
	a.out.queue <- File{Path: path, Data: data}
	return File{Path: path, size: len(data), sum: sum, spilled: true}
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
	// Absolute, so that "." or "out/.." names a real parent and base: the staging directory
	// goes beside dir, never inside it.
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot: tree directory: %w", err)
	}
	parent, base := filepath.Split(dir)
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
	w := newSpillWriter(tw)
	// On every path the writer goroutine has stopped before the staging directory is removed
	// (deferred calls run last-in first-out), so no file is created after the removal.
	defer w.flush()
	t, err := assemble(ctx, acq, cfg, w)
	if err != nil {
		return nil, err
	}
	for _, f := range t.Files {
		if !f.spilled {
			if err := tw.Put(f.Path, f.Data); err != nil {
				return nil, fmt.Errorf("snapshot: %w", err)
			}
		}
	}
	if err := tw.Put("index.json", t.Index); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("snapshot: staging directory: %w", err)
	}
	// A cancellation that arrives while the last files are written still wins: a cancelled
	// run never publishes a tree, however far its staging got.
	if err := ctx.Err(); err != nil {
		return nil, &AbortError{Scope: "filter", Code: AbortFilterFailed, Reason: "assembly cancelled", Err: err}
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
// acquisition of acquisitionBytes with AssembleTo: the documented bound of twice the acquisition
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
