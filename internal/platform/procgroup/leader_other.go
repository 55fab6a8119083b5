//go:build !linux

package procgroup

import "os/exec"

// KillWhenLeaderExits does nothing where waitid(WNOWAIT) is not available: the caller's kill
// after Wait ends the group (after WaitDelay when a child holds the streams open).
func KillWhenLeaderExits(*exec.Cmd) {}
