//go:build linux

package procgroup

import "golang.org/x/sys/unix"

func getxattr(path, name string) (int, error) { return unix.Getxattr(path, name, nil) }
