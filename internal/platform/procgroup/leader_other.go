//go:build !linux

package procgroup

import "os/exec"

// killWhenLeaderExits does nothing where waitid(WNOWAIT) is not available: the caller's kill
// after Wait ends the group (after WaitDelay when a child holds the streams open).
func killWhenLeaderExits(*exec.Cmd) {}
