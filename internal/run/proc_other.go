//go:build !unix

package run

import (
	"os"
)

// openNoFollow opens path for reading (the Lstat before it and the Stat after it refuse what is
// not a regular file).
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

// mkfifo is unsupported without Unix FIFOs (tests skip).
func mkfifo(string) error { return os.ErrInvalid }
