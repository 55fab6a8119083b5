package stage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

const noFollow = syscall.O_NOFOLLOW

func ownerUID(fi fs.FileInfo) (int, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), true
	}
	return 0, false
}

func ownerGID(fi fs.FileInfo) (int, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Gid), true
	}
	return 0, false
}

// agentReplaceable returns the first ancestor of p through which a process running as
// uid:gid (with no supplementary groups, as Sealed.SysProcAttr starts the agent) could rename
// p away and put its own tree in its place: an ancestor the agent owns (an owner may rename
// anything inside, sticky bit or not), one it may write (world-writable, or group-writable by
// its group) without the sticky bit, or one that is not a real directory. A root-owned
// 0555/0444 copy is only agent-immutable if its directory entry is too. ACLs are not read.
func agentReplaceable(p string, uid, gid int) (string, bool) {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			return d, true
		}
		owner, ok1 := ownerUID(fi)
		group, ok2 := ownerGID(fi)
		if !ok1 || !ok2 {
			return d, true
		}
		perm, sticky := fi.Mode().Perm(), fi.Mode()&os.ModeSticky != 0
		if owner == uid || !sticky && (perm&0o002 != 0 || perm&0o020 != 0 && group == gid) {
			return d, true
		}
		if parent := filepath.Dir(d); parent == d {
			return "", false
		}
	}
}

// resolve returns the absolute, symlink-resolved form of p; a missing tail is resolved through
// its deepest existing ancestor, so a path that does not exist yet is compared by where it
// would be created.
func resolve(p string) (string, error) {
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var tail []string
	for cur := p; ; {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			for i := len(tail) - 1; i >= 0; i-- {
				r = filepath.Join(r, tail[i])
			}
			return r, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		tail = append(tail, filepath.Base(cur))
		cur = parent
	}
}

// within reports whether p equals root or lies below it (both resolved).
func within(p, root string) bool {
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// gitWorkTree finds the Git work tree containing dir (a directory with a .git entry), or "".
func gitWorkTree(dir string) string {
	d, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// forbiddenRoot is a directory staging paths must stay out of, and why.
type forbiddenRoot struct{ path, reason string }

func forbiddenRoots(o *Options) []forbiddenRoot {
	var roots []forbiddenRoot
	if v := o.Getenv("GITHUB_WORKSPACE"); v != "" {
		roots = append(roots, forbiddenRoot{v, "GITHUB_WORKSPACE, the repository checkout"})
	}
	if v := o.Getenv("CI_PROJECT_DIR"); v != "" {
		roots = append(roots, forbiddenRoot{v, "CI_PROJECT_DIR, the repository checkout"})
	}
	if wt := gitWorkTree(o.WorkDir); wt != "" {
		roots = append(roots, forbiddenRoot{wt, "the Git work tree of the working directory"})
	}
	for _, f := range o.Forbidden {
		if f != "" {
			roots = append(roots, forbiddenRoot{f, "a retained run-output or artifacts directory"})
		}
	}
	return roots
}

// checkPlacement refuses a Base or StateDir inside a forbidden root.
func checkPlacement(o *Options) error {
	paths := []string{o.Base, o.StateDir}
	for _, root := range forbiddenRoots(o) {
		r, err := resolve(root.path)
		if err != nil {
			return fmt.Errorf("stage: resolve %s: %w", root.path, err)
		}
		for _, p := range paths {
			rp, err := resolve(p)
			if err != nil {
				return fmt.Errorf("stage: resolve %s: %w", p, err)
			}
			if within(rp, r) {
				return &PlacementError{Path: p, Inside: root.path, Reason: root.reason}
			}
		}
	}
	fi, err := os.Stat(o.Base)
	if err != nil {
		return fmt.Errorf("stage: base directory: %w", err)
	}
	if !fi.IsDir() {
		return &PlacementError{Path: o.Base, Reason: "the base directory is not a directory"}
	}
	return checkStateRoot(o.StateDir)
}

// checkStateRoot is the state root's rule as Create will meet it: an existing root must be
// private (checkPrivateDir: a real directory, this user's, mode 0700); a missing one is
// created by Create with os.Mkdir, so its parent must be an existing directory.
func checkStateRoot(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		fi, perr := os.Stat(filepath.Dir(dir))
		if perr != nil || !fi.IsDir() {
			return &PlacementError{Path: dir, Reason: "the state directory does not exist and its parent is not an existing directory"}
		}
		return nil
	}
	return checkPrivateDir(dir)
}

// enforceHostModes sets directory mode 0700 and file mode 0600 on the freshly written host
// tree (nothing else has touched it yet) and refuses anything that is neither.
func enforceHostModes(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("stage: host tree: %w", err)
		}
		switch {
		case d.Type().IsDir():
			return os.Chmod(p, 0o700)
		case d.Type().IsRegular():
			return os.Chmod(p, 0o600)
		}
		return fmt.Errorf("stage: host tree holds a non-regular entry %s", p)
	})
}

// CheckPlacement is Create's placement rule on its own, for a caller that must refuse a bad
// Base or StateDir before it does anything visible (forgectx run checks it before the first
// forge write): the same definition, so the pre-flight and Create cannot disagree.
func CheckPlacement(opts Options) error {
	if err := opts.defaults(); err != nil {
		return err
	}
	return checkPlacement(&opts)
}
