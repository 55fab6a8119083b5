package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/forgectx/forgectx/internal/snapshot/treefs"
)

// WriteDir writes exactly the verified bytes (see ReadFile) to a new directory dir (which must
// not exist; its parent must) with directory mode 0700 and file mode 0600. Every file is
// created with O_EXCL through an os.Root opened on dir (treefs.Writer), so nothing
// pre-existing is reused or followed.
// index.json is written last: a reader that sees it sees a complete tree.
func (s *Snapshot) WriteDir(dir string) (err error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("verify: %s already exists; refusing to write into it", dir)
		}
		return fmt.Errorf("verify: create %s: %w", dir, err)
	}
	// One file at a time, through ReadFile: a snapshot from Open reads each again (verified)
	// rather than holding them all.
	w, err := treefs.OpenWriter(dir)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer func() {
		if cerr := w.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("verify: %w", cerr)
		}
	}()
	for _, p := range s.paths {
		b, err := s.ReadFile(p)
		if err != nil {
			return err
		}
		if err := w.Put(p, b); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
	}
	idx, err := s.ReadFile("index.json")
	if err != nil {
		return err
	}
	if err := w.Put("index.json", idx); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	return nil
}
