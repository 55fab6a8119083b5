//go:build !linux

package giteaserver

import "os/exec"

// dieWithParent has no portable equivalent; the server is only run on Linux (Require).
func dieWithParent(*exec.Cmd) {}
