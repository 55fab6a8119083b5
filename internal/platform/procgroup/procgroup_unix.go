//go:build unix

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
)

// Set makes cmd start in its own process group (Setpgid), keeping any other attributes.
func Set(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// Signal sends sig to cmd's whole process group (cmd must have been started with Set). A group
// that is already gone, or a command that never started, is not an error.
func Signal(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// Kill sends SIGKILL to cmd's whole process group.
func Kill(cmd *exec.Cmd) error { return Signal(cmd, syscall.SIGKILL) }

// terminate asks the whole group to end (SIGTERM), so the child and its children can finish
// their writes before the grace runs out.
func terminate(cmd *exec.Cmd) error { return Signal(cmd, syscall.SIGTERM) }

// setIdentity makes cmd run as id with no supplementary groups.
func setIdentity(cmd *exec.Cmd, id *Identity) error {
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: id.UID, Gid: id.GID, Groups: []uint32{}}
	return nil
}
