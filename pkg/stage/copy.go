package stage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"

	"golang.org/x/sys/unix"

	"github.com/forgectx/forgectx/pkg/treefs"
	"github.com/forgectx/forgectx/pkg/verify"
)

// copyTree copies the host tree at src into dst, a new directory (its parent must exist),
// one file at a time: nothing of the tree is held in memory. The source is read the way
// verification reads it — the root opened O_DIRECTORY|O_NOFOLLOW, each entry classified with
// fstatat(AT_SYMLINK_NOFOLLOW) relative to its parent's descriptor, directories entered with
// openat(O_NOFOLLOW), files opened O_NOFOLLOW|O_NONBLOCK and re-checked on the descriptor —
// and a symlink, hard link or special file is refused with a *verify.Error naming the path
// and the rule (what verification would report), never followed or copied. Only the
// directories verification enters are descended (verify.TreeDirectory); any other is copied
// empty, so the copy's verification reports it exactly as the host tree's would.
//
// The copy is written through an os.Root on dst: directories 0700, files O_CREATE|O_EXCL 0600.
// Each file is copied up to its bound plus one byte and the tree up to its total bound plus
// one byte, so a hostile host tree cannot fill the disk and an oversized one is still reported
// by the copy's verification (file_too_large, too_many_files).
//
// Whatever the copy holds is verified afterwards (Seal): this walk only has to never follow
// a link and stay bounded.
func copyTree(ctx context.Context, src, dst string) error {
	var st unix.Stat_t
	if err := unix.Lstat(src, &st); err != nil {
		return fmt.Errorf("host tree: %w", err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return refused(".", verify.RuleSymlink, "the context root is a symlink")
	}
	fd, err := unix.Open(src, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		switch {
		case errors.Is(err, unix.ELOOP):
			return refused(".", verify.RuleSymlink, "the context root changed to a symlink while opening it")
		case errors.Is(err, unix.ENOTDIR):
			return refused(".", verify.RuleNotDirectory, "the context root is not a directory")
		}
		return fmt.Errorf("open host tree: %w", err)
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		unix.Close(fd)
		return fmt.Errorf("create %s: %w", dst, err)
	}
	root, err := os.OpenRoot(dst)
	if err != nil {
		unix.Close(fd)
		return fmt.Errorf("open %s: %w", dst, err)
	}
	defer root.Close()
	c := &copier{ctx: ctx, root: root}
	return c.dir(fd, ".")
}

type copier struct {
	ctx   context.Context // checked before each file: a cancelled run stops copying
	root  *os.Root
	files int
	total int64
}

// refused is the error for an entry the copy must not follow or reproduce.
func refused(p, rule, detail string) error {
	return &verify.Error{Report: verify.Report{Violations: []verify.Violation{verify.NewViolation(p, rule, detail)}}}
}

// dir copies the directory open at fd (consumed) to rel in the copy.
func (c *copier) dir(fd int, rel string) error {
	d := os.NewFile(uintptr(fd), rel)
	defer d.Close()
	names, err := d.Readdirnames(treefs.MaxFiles + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("list host tree %s: %w", rel, err)
	}
	sort.Strings(names)
	for _, name := range names {
		p := name
		if rel != "." {
			p = path.Join(rel, name)
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("inspect host tree %s: %w", p, err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			return refused(p, verify.RuleSymlink, "symlinks are not allowed anywhere in the tree")
		case unix.S_IFDIR:
			if err := c.root.Mkdir(p, 0o700); err != nil {
				return fmt.Errorf("create %s: %w", p, err)
			}
			if !verify.TreeDirectory(p) {
				continue // reported by the copy's verification, as by the host tree's
			}
			sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
					return refused(p, verify.RuleSymlink, "directory changed to a symlink while opening it")
				}
				return fmt.Errorf("open host tree %s: %w", p, err)
			}
			if err := c.dir(sub, p); err != nil {
				return err
			}
		case unix.S_IFREG:
			if st.Nlink > 1 {
				return refused(p, verify.RuleHardLink, fmt.Sprintf("regular file has %d links; hard links are not allowed", st.Nlink))
			}
			if err := c.file(fd, name, p, &st); err != nil {
				return err
			}
		default:
			return refused(p, verify.RuleSpecialFile, "only regular files and directories are allowed")
		}
	}
	return nil
}

// file copies one regular file, bounded.
func (c *copier) file(dirfd int, name, p string, lst *unix.Stat_t) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	c.files++
	if c.files > treefs.MaxFiles+1 {
		return nil // the copy already holds one file too many: its verification says so
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return refused(p, verify.RuleSymlink, "file changed to a symlink while opening it")
		}
		return fmt.Errorf("open host tree %s: %w", p, err)
	}
	in := os.NewFile(uintptr(fd), p)
	defer in.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("inspect host tree %s: %w", p, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return refused(p, verify.RuleSpecialFile, "file changed type while opening it")
	case st.Dev != lst.Dev || st.Ino != lst.Ino:
		return refused(p, verify.RuleReplaced, "file was replaced while opening it")
	case st.Nlink > 1:
		return refused(p, verify.RuleHardLink, fmt.Sprintf("regular file has %d links; hard links are not allowed", st.Nlink))
	}
	limit := int64(treefs.MaxFileBytes)
	if p == "index.json" {
		limit = treefs.MaxIndexBytes
	}
	limit = min(limit, max(treefs.MaxTotalBytes-c.total, 0)) + 1
	out, err := c.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", p, err)
	}
	// io.Copy of a LimitedReader over *os.File copies in the kernel (copy_file_range).
	n, err := io.Copy(out, io.LimitReader(in, limit))
	c.total += n
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy %s: %w", p, err)
	}
	return nil
}
