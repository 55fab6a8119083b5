//go:build !unix

package prescript

import "os/exec"

// killTreeOnCancel keeps exec's default (kill the script process only) where process groups
// are not available.
func killTreeOnCancel(*exec.Cmd) {}
