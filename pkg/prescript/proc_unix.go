//go:build unix

package prescript

import (
	"os/exec"
	"syscall"
)

// killTreeOnCancel puts the script in its own process group and makes a cancelled context
// (timeout, interrupt) kill the whole group, so a timed-out script's children do not keep
// running or hold the captured streams open.
func killTreeOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
