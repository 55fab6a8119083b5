package treefs

import (
	"errors"
	"path"

	"golang.org/x/sys/unix"
)

// EntryPath is the tree path of the entry name listed in the directory at tree path rel ("."
// for the root): the one spelling the host-tree copy and the verifying walk both report.
func EntryPath(rel, name string) string {
	if rel == "." {
		return name
	}
	return path.Join(rel, name)
}

// OpenDirAt opens the directory name below dirfd without following a symlink. swapped reports
// that the open failed because the entry is no longer a directory (a symlink or another node
// put in its place after it was inspected), which both callers report as a symlink violation
// rather than as an I/O error.
func OpenDirAt(dirfd int, name string) (fd int, swapped bool, err error) {
	fd, err = unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR), err
	}
	return fd, false, nil
}
