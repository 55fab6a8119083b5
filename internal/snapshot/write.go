package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/forgectx/forgectx/internal/snapshot/treefs"
)

// Sums returns the SHA-256 of every file but index.json, by path: what a copy of the tree is
// compared with once written (verify.CheckCopy).
func (t *Tree) Sums() treefs.Sums {
	sums := make(treefs.Sums, len(t.Files))
	for _, f := range t.Files {
		sums[f.Path] = f.sum // computed once, by addFile, for the manifest
	}
	return sums
}

// WriteDir writes the tree under dir with directory mode 0700 and file mode 0600 (spec
// "Lifecycle and access"). dir may not exist yet (its parent must) or must be an empty real
// directory; WriteDir refuses a non-empty directory, a symlinked dir, and never follows a
// symlink below it: every operation goes through an os.Root opened on dir, directories are
// created with Mkdir and files with O_CREATE|O_EXCL, so nothing pre-existing is reused.
func (t *Tree) WriteDir(dir string) error {
	for _, f := range t.Files {
		if f.spilled {
			return fmt.Errorf("snapshot: this tree was written by AssembleTo and does not hold %s; it cannot be written again", f.Path)
		}
	}
	if err := checkOutDir(dir); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); errors.Is(err, fs.ErrExist) {
		err = os.Chmod(dir, 0o700) // the empty directory checkOutDir accepted
		if err != nil {
			return fmt.Errorf("snapshot: tree directory: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("snapshot: create tree directory: %w", err)
	}
	files := make([]treefs.File, len(t.Files))
	for i, f := range t.Files {
		files[i] = treefs.File{Path: f.Path, Data: f.Data}
	}
	if err := treefs.Write(dir, files, t.Index); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}
