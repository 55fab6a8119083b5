//go:build unix

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
)

// setGroup makes cmd start in its own process group (Setpgid), keeping any other attributes.
func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// signal sends sig to cmd's whole process group (cmd must have been started with setGroup). A
// group that is already gone, or a command that never started, is not an error.
func signal(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// kill sends SIGKILL to cmd's whole process group.
func kill(cmd *exec.Cmd) error { return signal(cmd, syscall.SIGKILL) }

// terminate asks the whole group to end (SIGTERM), so the child and its children can finish
// their writes before the grace runs out.
func terminate(cmd *exec.Cmd) error { return signal(cmd, syscall.SIGTERM) }

// setIdentity makes cmd run as id with no supplementary groups.
func setIdentity(cmd *exec.Cmd, id *Identity) error {
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: id.UID, Gid: id.GID, Groups: []uint32{}}
	return nil
}
