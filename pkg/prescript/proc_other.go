//go:build !unix

package prescript

import (
	"os"
	"os/exec"
	"time"
)

// stopTreeOnCancel keeps exec's default (kill the script process only) where process groups
// are not available.
func stopTreeOnCancel(*exec.Cmd, time.Duration, <-chan struct{}) {}

// openNoFollow opens path for reading; readOutput checks the opened file is regular.
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

func isSymlinkErr(error) bool { return false }
