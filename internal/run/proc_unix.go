//go:build unix

package run

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/forgectx/forgectx/internal/platform/procgroup"
)

var (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// setProcessGroup puts the child in its own process group so that a signal reaches every
// process it started (internal/platform/procgroup, shared with `forgectx prescript`).
func setProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{}; procgroup.Set(cmd) }

// signalGroup signals the child's whole process group; a group that is already gone is not an
// error.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error { return procgroup.Signal(cmd, sig) }

// openNoFollow opens path for reading without following a final symlink and without blocking
// on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// mkfifo makes a FIFO (tests).
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
