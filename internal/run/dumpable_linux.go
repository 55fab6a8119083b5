//go:build linux

package run

import "golang.org/x/sys/unix"

// HardenProcess marks the forgectx process non-dumpable. Its /proc/<pid>/environ (which still
// holds the forge token it was started with, whatever os.Unsetenv does) and its memory then
// belong to root and cannot be read or ptraced by other processes of the same user — such as
// an agent that a non-root job runs as forgectx's own user. `forgectx run` calls it first.
func HardenProcess() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// processDumpable reports the PR_GET_DUMPABLE state (for tests).
func processDumpable() (bool, error) {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return v != 0, err
}
