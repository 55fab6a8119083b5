//go:build !unix

package run

import (
	"os"
	"os/exec"
)

type signal int

var (
	sigTerm signal = 15
	sigKill signal = 9
)

func setProcessGroup(*exec.Cmd) {}

// signalGroup kills the child itself: without Unix process groups its children are not
// reached, which docs/run.md states.
func signalGroup(cmd *exec.Cmd, _ signal) error {
	if cmd.Process == nil {
		return nil
	}
	err := cmd.Process.Kill()
	if err != nil && err.Error() == os.ErrProcessDone.Error() {
		return nil
	}
	return err
}

// openNoFollow opens path for reading (the Lstat before it and the Stat after it refuse what is
// not a regular file).
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

// mkfifo is unsupported without Unix FIFOs (tests skip).
func mkfifo(string) error { return os.ErrInvalid }
