package run

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/forgectx/forgectx/pkg/stage"
)

// Staging (spec "Lifecycle and access") is pkg/stage's: the host tree under Base with the
// retained index digest in a private state directory, Seal (root-index compare, verification
// into memory, agent-immutable copy from the verified bytes), Cleanup and Scavenge. This file
// only places it.

// stagePlaces returns the stage Base (where the host tree and the sandbox copy are created) and
// StateDir: Options.TreeDir / Options.StateDir, else $RUNNER_TEMP (GitHub Actions' per-job
// temporary directory, outside the workspace and emptied between jobs) and
// $RUNNER_TEMP/forgectx-stage, else the OS temporary directory and stage.DefaultStateDir().
func stagePlaces(o *Options) (base, state string) {
	base, state = o.TreeDir, o.StateDir
	rt := o.Getenv("RUNNER_TEMP")
	if base == "" {
		base = rt
	}
	if base == "" {
		base = os.TempDir()
	}
	if state == "" && rt != "" {
		state = filepath.Join(rt, "forgectx-stage")
	}
	if state == "" {
		state = stage.DefaultStateDir()
	}
	return base, state
}

// within reports whether p is dir or inside it (both cleaned, absolute).
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
