//go:build !linux

package procgroup

import "errors"

// getxattr reports no attribute where extended attributes are not read (no file capabilities).
func getxattr(string, string) (int, error) { return 0, errors.New("not supported on this platform") }
