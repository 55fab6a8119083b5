// Package treefs writes an entity-context-snapshot tree's bytes into a directory the way the
// spec's "Lifecycle and access" requires: directories 0700, files 0600, and nothing
// pre-existing reused or followed. Both the assembler (internal/snapshot) and the verified copy
// (internal/snapshot/verify) write trees through it, so the two cannot drift apart.
package treefs

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path"
	"strings"
)

// Sums maps each tree path except index.json to the SHA-256 of its bytes: the digests a copy
// of a tree that already passed verification is compared with (verify.CheckCopy).
type Sums map[string][sha256.Size]byte

// File is one tree file: a slash-separated relative path and its exact bytes.
type File struct {
	Path string
	Data []byte
}

// Write creates files and then index.json under dir, which must be an existing directory the
// caller has checked (empty, not a symlink), through one Writer. index.json goes last: a
// reader that sees it sees a complete tree. Errors name the path, never the content.
func Write(dir string, files []File, index []byte) (err error) {
	w, err := OpenWriter(dir)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := w.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	for _, f := range files {
		if err := w.Put(f.Path, f.Data); err != nil {
			return err
		}
	}
	return w.Put("index.json", index)
}

// Writer creates tree files one at a time under a directory. Every operation goes through an
// os.Root opened on it; parent directories are created with Mkdir 0700 and files with
// O_CREATE|O_EXCL 0600, so a symlink or file planted below the directory is never followed or
// overwritten. The assembler's staging directory (snapshot.AssembleTo) and Write both use it.
type Writer struct {
	root *os.Root
	made map[string]bool
}

// OpenWriter opens a Writer on dir, an existing directory the caller has checked.
func OpenWriter(dir string) (*Writer, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open tree directory: %w", err)
	}
	return &Writer{root: root, made: map[string]bool{".": true}}, nil
}

// Put creates the file p (slash-separated, relative) with data. Its error wraps fs.ErrExist
// when p already exists, and names the path, never the content.
func (w *Writer) Put(p string, data []byte) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "..") {
		return fmt.Errorf("refusing unsafe tree path")
	}
	var parents []string
	for d := path.Dir(p); !w.made[d]; d = path.Dir(d) {
		parents = append(parents, d)
	}
	for i := len(parents) - 1; i >= 0; i-- {
		if err := w.root.Mkdir(parents[i], 0o700); err != nil {
			return fmt.Errorf("create %s: %w", parents[i], err)
		}
		w.made[parents[i]] = true
	}
	f, err := w.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", p, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// Close closes the Writer's root.
func (w *Writer) Close() error { return w.root.Close() }
