//go:build !unix

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
)

// setGroup does nothing where process groups are not available.
func setGroup(*exec.Cmd) {}

// signal kills the process itself (no groups here) for SIGKILL and ignores other signals.
func signal(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil || sig != syscall.SIGKILL {
		return nil
	}
	_ = cmd.Process.Kill()
	return nil
}

// kill kills the process.
func kill(cmd *exec.Cmd) error { return signal(cmd, syscall.SIGKILL) }

// terminate kills the child itself: without process groups and SIGTERM there is nothing
// gentler to send, and its children are not reached (docs/run.md states it).
func terminate(cmd *exec.Cmd) error { return kill(cmd) }

// setIdentity refuses: running a child as another user needs Unix credentials.
func setIdentity(*exec.Cmd, *Identity) error {
	return errors.New("running a program as another user is not supported on this platform")
}
