//go:build !linux

package stage

import "errors"

var errUnsupported = errors.New("not supported on this platform")

func bindReadOnly(string, string) error    { return errUnsupported }
func mountedReadOnly(string) (bool, error) { return false, errUnsupported }
func unmount(string) error                 { return nil }
func makeRemovable(string)                 {}
