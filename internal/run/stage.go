package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/forgectx/forgectx/internal/platform/safeout"
	"github.com/forgectx/forgectx/internal/snapshot/stage"
	"github.com/forgectx/forgectx/pkg/cirelay"
	"github.com/forgectx/forgectx/pkg/prescript"
)

// Staging (spec "Lifecycle and access") is internal/snapshot/stage's: the host tree under Base with the
// retained index digest in a private state directory, Seal (root-index compare, the host tree
// copied into the agent's copy, made immutable, then that sealed copy verified), Cleanup and
// Scavenge. This file only places it.

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

// preflight applies, before anything is posted, the rules the run would otherwise only meet
// after the start status comment (docs/run.md: a configuration error posts nothing and exits
// 2). Each rule is internal/snapshot/stage's own definition, called early, so the two cannot drift.
func preflight(o *Options, c *config) error {
	if err := stage.CheckMode(stage.SealOptions{Mode: o.Immutability, AgentUID: o.AgentUID, AgentGID: o.AgentGID}); err != nil {
		return &ConfigError{Field: "--immutability/--agent-uid/--agent-gid", Rule: "cannot be enforced here", Err: err}
	}
	// As root, an agent without its own UID inherits UID 0, which procgroup.CheckProcess
	// refuses right after the start: refuse the configuration instead.
	if os.Geteuid() == 0 && o.AgentUID == 0 {
		return &ConfigError{Field: "--agent-uid/--agent-gid", Rule: "required when forgectx runs as root: the agent must never run as UID 0"}
	}
	// The placement rule includes the state root's ownership and mode: a state directory
	// another user could write is refused here, not after the start status comment.
	err := stage.CheckPlacement(stage.Options{Base: c.base, StateDir: c.state, Forbidden: o.ArtifactDirs, Getenv: o.Getenv})
	if err != nil {
		return &ConfigError{Field: "--tree-dir/--state-dir", Rule: "must be an existing directory outside the repository and run output, the state directory private to this user (0700)", Err: err}
	}
	// The decision relay fails the run when $GITHUB_OUTPUT cannot be appended to (a directory,
	// a device): the same rule, checked before the ⏳ start comment (--dotenv is checked by the
	// command the same way).
	if p, ok := cirelay.GitHubOutputPath(o.Getenv); ok {
		if err := safeout.CheckAppend(p, safeout.Options{}); err != nil {
			return &ConfigError{Field: "$GITHUB_OUTPUT", Rule: "must be a file forgectx can append the decision to", Err: err}
		}
	}
	if err := lookProgram("agent.command", "the agent", c.h.Agent.Command[0]); err != nil {
		return err
	}
	if ps := c.h.PreScript; ps != nil {
		if err := lookProgram("pre_script.command", "the pre-script", ps.Command[0]); err != nil {
			return err
		}
	}
	if ps := c.h.PostScript; ps != nil {
		return lookProgram("post_script.command", "the post-script", ps.Command[0])
	}
	return nil
}

// lookProgram refuses a program exec could not start (not found on PATH, missing, a
// directory, not executable): the same resolution exec.Command applies when the agent or a
// script is launched (the PATH of forgectx's own environment), so a typo in a harness command
// is exit 2 with nothing posted rather than a failed run with a receipt.
func lookProgram(field, what, argv0 string) error {
	if _, err := exec.LookPath(argv0); err != nil {
		reason := prescript.DescribeStart(argv0, "", err).Reason
		if reason == "" {
			reason = argv0 + " cannot be resolved"
		}
		return &ConfigError{Field: field, Rule: what + " cannot be started: " + reason}
	}
	return nil
}
