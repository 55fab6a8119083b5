package main

import (
	"io/fs"
	"os"

	"github.com/forgectx/forgectx/internal/platform/safeout"
)

// checkOutputFile is the pre-flight of a file output flag (--dotenv, --report, --stats): a path
// internal/platform/safeout would refuse (a directory, a device node, a FIFO, a dangling symlink, a missing
// or unwritable directory) is a bad flag value, exit 2, reported before any work is done — not
// after a script ran or a whole fetch finished. An empty path means the flag is unset.
func checkOutputFile(flagName, path string, o safeout.Options) error {
	if path == "" {
		return nil
	}
	if err := safeout.Check(path, o); err != nil {
		return usagef("%s %v", flagName, err)
	}
	return nil
}

// checkOutputDir is the pre-flight of a directory output flag (--out, --record): missing with
// an existing, writable parent, or a real directory (not a symlink); bad otherwise (exit 2).
func checkOutputDir(flagName, path string) error {
	if path == "" {
		return nil
	}
	if err := safeout.CheckDir(path); err != nil {
		return usagef("%s %v", flagName, err)
	}
	return nil
}

// checkSnapshotOutputs is `forgectx snapshot`'s output pre-flight: --out and --stats by the
// safe-output rule, and --record, which the cassette writer creates with its parents, must not
// already be something other than a real directory.
func checkSnapshotOutputs(out, stats, record string) error {
	if err := checkOutputDir("--out", out); err != nil {
		return err
	}
	if err := checkOutputFile("--stats", stats, safeout.Options{}); err != nil {
		return err
	}
	if record != "" {
		if fi, err := os.Lstat(record); err == nil && (fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir()) {
			return checkOutputDir("--record", record)
		}
	}
	return nil
}
