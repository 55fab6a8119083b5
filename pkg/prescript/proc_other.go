//go:build !unix

package prescript

import (
	"os"
)

// openNoFollow opens path for reading; readOutput checks the opened file is regular.
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

func isSymlinkErr(error) bool { return false }
