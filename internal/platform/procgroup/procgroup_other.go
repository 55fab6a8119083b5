//go:build !unix

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
)

// Set does nothing where process groups are not available.
func Set(*exec.Cmd) {}

// Signal kills the process itself (no groups here) for SIGKILL and ignores other signals.
func Signal(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil || sig != syscall.SIGKILL {
		return nil
	}
	_ = cmd.Process.Kill()
	return nil
}

// Kill kills the process.
func Kill(cmd *exec.Cmd) error { return Signal(cmd, syscall.SIGKILL) }

// terminate kills the child itself: without process groups and SIGTERM there is nothing
// gentler to send, and its children are not reached (docs/run.md states it).
func terminate(cmd *exec.Cmd) error { return Kill(cmd) }

// setIdentity refuses: running a child as another user needs Unix credentials.
func setIdentity(*exec.Cmd, *Identity) error {
	return errors.New("running a program as another user is not supported on this platform")
}
