//go:build unix

package prescript

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"github.com/forgectx/forgectx/pkg/procgroup"
)

// killTreeOnCancel puts the script in its own process group and makes a cancelled context
// (timeout, interrupt) kill the whole group, so a timed-out script's children do not keep
// running or hold the captured streams open.
func killTreeOnCancel(cmd *exec.Cmd) {
	procgroup.Set(cmd)
	cmd.Cancel = func() error { return procgroup.Kill(cmd) }
}

// openNoFollow opens path for reading without following a final symlink (ELOOP) and without
// blocking on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// isSymlinkErr reports the error O_NOFOLLOW gives for a symlink.
func isSymlinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }
