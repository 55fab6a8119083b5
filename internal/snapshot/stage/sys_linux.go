package stage

import (
	"errors"
	"strconv"

	"golang.org/x/sys/unix"
)

// bindReadOnly bind-mounts src at dst and remounts it read-only, nosuid, nodev (a bind mount
// ignores MS_RDONLY on the first call, hence the remount).
func bindReadOnly(src, dst string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	if err := unix.Mount("", dst, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		_ = unix.Unmount(dst, unix.MNT_DETACH)
		return err
	}
	return nil
}

func mountedReadOnly(dir string) (bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false, err
	}
	return st.Flags&unix.ST_RDONLY != 0, nil
}

// unmount detaches a mount at dir; "not a mount point" is success (nothing to undo).
func unmount(dir string) error {
	err := unix.Unmount(dir, unix.MNT_DETACH)
	if err == nil || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// makeRemovable makes every directory below (and including) root owner-writable so that
// os.RemoveAll can empty it without root: the sandbox copy is 0555, and a pre-script may have
// made host directories unwritable. Directories are opened with O_NOFOLLOW relative to their
// parent's descriptor, so a symlink planted in the tree is never followed out of it. The depth
// is bounded (the v1 tree is three levels deep).
func makeRemovable(root string) {
	fd, err := openRemovableDir(unix.AT_FDCWD, root)
	if err != nil {
		return
	}
	makeRemovableFD(fd, 0)
}

// openRemovableDir opens name (relative to dirfd) as a directory without following a symlink
// and makes it 0700 first, so that a directory a pre-script locked completely (mode 0: not
// even listable by its owner) can still be emptied. The chmod goes through an O_PATH handle
// (/proc/self/fd/N), which needs no permission on the directory and names exactly the inode
// that was opened: a name swapped for a symlink in between is never chmodded or entered.
func openRemovableDir(dirfd int, name string) (int, error) {
	pfd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(pfd)
	_ = unix.Chmod("/proc/self/fd/"+strconv.Itoa(pfd), 0o700)
	return unix.Openat(pfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

func makeRemovableFD(fd, depth int) {
	defer unix.Close(fd)
	_ = unix.Fchmod(fd, 0o700)
	if depth > 8 {
		return
	}
	buf := make([]byte, 8192)
	var names []string
	for {
		n, err := unix.ReadDirent(fd, buf)
		if err != nil || n <= 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
	for _, name := range names {
		var st unix.Stat_t
		if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		sub, err := openRemovableDir(fd, name)
		if err != nil {
			continue
		}
		makeRemovableFD(sub, depth+1)
	}
}
