//go:build linux

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// killWhenLeaderExits kills cmd's process group as soon as its leader (cmd itself) exits: a
// background child holding the captured stdout open would otherwise keep exec's Wait busy
// until WaitDelay. waitid(WNOWAIT) observes the exit without reaping. exec's own Wait may reap
// the leader first (this waitid then fails with ECHILD); the group is signalled either way —
// Linux does not reuse a PID while a process group of that ID still has members, which is
// exactly when the signal matters. Call it right after cmd.Start; it returns at once.
func killWhenLeaderExits(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	pid := cmd.Process.Pid
	go func() {
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil && !errors.Is(err, syscall.ECHILD) {
				return // cannot tell whether it exited: Wait's caller kills the group after reaping
			}
			_ = syscall.Kill(-pid, syscall.SIGKILL) // exited, or already reaped by Wait
			return
		}
	}()
}
