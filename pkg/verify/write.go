package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// WriteDir writes exactly the verified bytes to a new directory dir (which must not exist;
// its parent must) with directory mode 0700 and file mode 0600. Every file is created with
// O_EXCL through an os.Root opened on dir, so nothing pre-existing is reused or followed.
// index.json is written last: a reader that sees it sees a complete tree.
func (s *Snapshot) WriteDir(dir string) (err error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("verify: %s already exists; refusing to write into it", dir)
		}
		return fmt.Errorf("verify: create %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("verify: open %s: %w", dir, err)
	}
	defer func() {
		if cerr := root.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	made := map[string]bool{".": true}
	write := func(p string, data []byte) error {
		if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "..") {
			return fmt.Errorf("verify: refusing unsafe tree path")
		}
		var parents []string
		for d := path.Dir(p); !made[d]; d = path.Dir(d) {
			parents = append(parents, d)
		}
		for i := len(parents) - 1; i >= 0; i-- {
			if err := root.Mkdir(parents[i], 0o700); err != nil {
				return fmt.Errorf("verify: create %s: %w", parents[i], err)
			}
			made[parents[i]] = true
		}
		f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fmt.Errorf("verify: create %s: %w", p, err)
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return fmt.Errorf("verify: write %s: %w", p, err)
		}
		return f.Close()
	}
	for _, p := range s.paths {
		if err := write(p, s.files[p]); err != nil {
			return err
		}
	}
	return write("index.json", s.Index)
}
