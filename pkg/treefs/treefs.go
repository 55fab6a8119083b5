// Package treefs writes an entity-context-snapshot tree's bytes into a directory the way the
// spec's "Lifecycle and access" requires: directories 0700, files 0600, and nothing
// pre-existing reused or followed. Both the assembler (pkg/snapshot) and the verified copy
// (pkg/verify) write trees through it, so the two cannot drift apart.
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
// caller has checked (empty, not a symlink). Every operation goes through an os.Root opened on
// dir; parent directories are created with Mkdir 0700 and files with O_CREATE|O_EXCL 0600, so
// a symlink or file planted below dir is never followed or overwritten. index.json goes last:
// a reader that sees it sees a complete tree. Errors name the path, never the content.
func Write(dir string, files []File, index []byte) (err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open tree directory: %w", err)
	}
	defer func() {
		if cerr := root.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	made := map[string]bool{".": true}
	write := func(p string, data []byte) error {
		if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "..") {
			return fmt.Errorf("refusing unsafe tree path")
		}
		var parents []string
		for d := path.Dir(p); !made[d]; d = path.Dir(d) {
			parents = append(parents, d)
		}
		for i := len(parents) - 1; i >= 0; i-- {
			if err := root.Mkdir(parents[i], 0o700); err != nil {
				return fmt.Errorf("create %s: %w", parents[i], err)
			}
			made[parents[i]] = true
		}
		f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
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
	for _, f := range files {
		if err := write(f.Path, f.Data); err != nil {
			return err
		}
	}
	return write("index.json", index)
}
