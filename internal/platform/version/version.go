// Package version reports the forgectx build version.
//
// Release builds set Version with -ldflags "-X github.com/forgectx/forgectx/internal/platform/version.Version=v1.2.3";
// other builds fall back to the module version recorded by the Go toolchain, then to "dev".
package version

import "runtime/debug"

// Version is the release version, set at link time. Empty means "not a release build".
var Version = ""

// String returns the version to print: the link-time version, else the module version from the
// build info, else "dev".
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
