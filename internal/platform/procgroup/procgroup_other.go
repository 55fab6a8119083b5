//go:build !unix

package procgroup

import (
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
