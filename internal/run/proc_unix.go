//go:build unix

package run

import (
	"os"
	"syscall"
)

// openNoFollow opens path for reading without following a final symlink and without blocking
// on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// mkfifo makes a FIFO (tests).
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
