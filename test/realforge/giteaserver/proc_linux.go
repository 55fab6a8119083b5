package giteaserver

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the server if the test binary dies without running its
// cleanups (a go test -timeout panic, a SIGKILL): no orphaned Gitea keeps a port or a directory.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
