//go:build unix

package prescript

import (
	"errors"
	"os"
	"syscall"
)

// openNoFollow opens path for reading without following a final symlink (ELOOP) and without
// blocking on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// isSymlinkErr reports the error O_NOFOLLOW gives for a symlink.
func isSymlinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }
