//go:build !linux

package run

// HardenProcess is a no-op where PR_SET_DUMPABLE does not exist.
func HardenProcess() error { return nil }
