package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/forgectx/forgectx/pkg/treefs"
)

// WriteDir writes exactly the verified bytes to a new directory dir (which must not exist;
// its parent must) with directory mode 0700 and file mode 0600. Every file is created with
// O_EXCL through an os.Root opened on dir, so nothing pre-existing is reused or followed.
// index.json is written last: a reader that sees it sees a complete tree.
func (s *Snapshot) WriteDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("verify: %s already exists; refusing to write into it", dir)
		}
		return fmt.Errorf("verify: create %s: %w", dir, err)
	}
	files := make([]treefs.File, len(s.paths))
	for i, p := range s.paths {
		files[i] = treefs.File{Path: p, Data: s.files[p]}
	}
	if err := treefs.Write(dir, files, s.Index); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	return nil
}
