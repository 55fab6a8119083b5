package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// WriteDir writes the tree under dir with directory mode 0700 and file mode 0600 (spec
// "Lifecycle and access"). dir may not exist yet (its parent must) or must be an empty real
// directory; WriteDir refuses a non-empty directory, a symlinked dir, and never follows a
// symlink below it: every operation goes through an os.Root opened on dir, directories are
// created with Mkdir and files with O_CREATE|O_EXCL, so nothing pre-existing is reused.
func (t *Tree) WriteDir(dir string) (err error) {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(dir, 0o700); err != nil {
			return fmt.Errorf("snapshot: create tree directory: %w", err)
		}
	case err != nil:
		return fmt.Errorf("snapshot: tree directory: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("snapshot: tree directory %s is a symlink; refusing to write through it", dir)
	case !fi.IsDir():
		return fmt.Errorf("snapshot: %s exists and is not a directory", dir)
	default:
		ents, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("snapshot: tree directory: %w", err)
		}
		if len(ents) > 0 {
			return fmt.Errorf("snapshot: tree directory %s is not empty; refusing to write into it", dir)
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("snapshot: tree directory: %w", err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("snapshot: open tree directory: %w", err)
	}
	defer func() {
		if cerr := root.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	made := map[string]bool{".": true}
	write := func(p string, data []byte) error {
		if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "..") {
			return fmt.Errorf("snapshot: refusing unsafe tree path")
		}
		var parents []string
		for d := path.Dir(p); !made[d]; d = path.Dir(d) {
			parents = append(parents, d)
		}
		for i := len(parents) - 1; i >= 0; i-- {
			if err := root.Mkdir(parents[i], 0o700); err != nil {
				return fmt.Errorf("snapshot: create %s: %w", parents[i], err)
			}
			made[parents[i]] = true
		}
		f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fmt.Errorf("snapshot: create %s: %w", p, err)
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return fmt.Errorf("snapshot: write %s: %w", p, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("snapshot: write %s: %w", p, err)
		}
		return nil
	}
	for _, f := range t.Files {
		if err := write(f.Path, f.Data); err != nil {
			return err
		}
	}
	// The root index goes last: a reader that sees it sees a complete tree.
	return write("index.json", t.Index)
}
