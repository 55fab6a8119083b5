//go:build unix

package prescript

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/forgectx/forgectx/internal/platform/procgroup"
)

// stopTreeOnCancel puts the script in its own process group; when the context ends
// (time-out, interrupt) the whole group gets SIGTERM, so the script and its children can
// finish their writes, then SIGKILL after grace unless the script was reaped first (reaped is
// closed after Wait; Run kills the group once more then). A timed-out script's children do
// not keep running or hold the captured streams open.
func stopTreeOnCancel(cmd *exec.Cmd, grace time.Duration, reaped <-chan struct{}) {
	procgroup.Set(cmd)
	cmd.Cancel = func() error {
		err := procgroup.Signal(cmd, syscall.SIGTERM)
		go func() {
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-t.C:
				_ = procgroup.Kill(cmd)
			case <-reaped:
			}
		}()
		return err
	}
}

// openNoFollow opens path for reading without following a final symlink (ELOOP) and without
// blocking on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// isSymlinkErr reports the error O_NOFOLLOW gives for a symlink.
func isSymlinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }
