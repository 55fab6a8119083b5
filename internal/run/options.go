package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/lifecycle"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/stage"
)

// Environment variables forgectx run sets for the processes it starts (wire names,
// docs/run.md).
const (
	// EnvContextDir is the agent's verified read-only snapshot copy.
	EnvContextDir = "FORGECTX_CONTEXT_DIR"
	// EnvEventExcerpt is the distilled CI event (docs/distill.md) as one JSON object.
	EnvEventExcerpt = "FORGECTX_EVENT_EXCERPT"
	// EnvSnapshotDir is the host tree the pre- and post-script read.
	EnvSnapshotDir = "FORGECTX_SNAPSHOT_DIR"
	// EnvAgentStatus tells the post-script how the agent ended: success or failure (after a
	// time-out or a cancellation the post-script does not run).
	EnvAgentStatus = "FORGECTX_AGENT_STATUS"
)

// Exit codes of forgectx run: the lifecycle's.
const (
	ExitOK     = lifecycle.ExitOK     // success or skip
	ExitFailed = lifecycle.ExitFailed // failure, cancellation, time-out
	ExitConfig = lifecycle.ExitConfig // configuration error: nothing was posted
)

// Options configure one run. Zero values take the documented defaults; under GitHub Actions
// Repo, Number, APIURL and Kind default from the job environment.
//
// The fields every lifecycle shares (Harness, APIURL, TokenEnv, InsecureHTTP, Environ, Stdout,
// Stderr, Log, Now, KillGrace) are lifecycle.Common's. Here APIURL defaults to
// $GITHUB_API_URL, else the public API, and TokenEnv to GITHUB_TOKEN.
type Options struct {
	lifecycle.Common
	// HarnessPath is the harness file (docs/harness.md); Harness, when set, is used instead.
	HarnessPath string

	Forge  string // github (default), gitlab or forgejo
	Repo   string // OWNER/NAME; default $GITHUB_REPOSITORY
	Number int    // default: the event payload's issue or pull request number
	// Kind is work_item or change_proposal; default from the event (an issue_comment on a pull
	// request is a change_proposal), else the harness's only profile.
	Kind string
	// CommentAuthor is the login forgectx's own comments are attributed to (the status comment
	// lookup accepts only comments by it). Default under GitHub Actions: github-actions[bot].
	CommentAuthor string
	// CommentAuthorID is the Forgejo user id the token posts as (the automatic Forgejo Actions
	// token: -2); 0 asks GET /user. GitLab always asks GET /user (its tokens may).
	CommentAuthorID int64
	// DotenvPath, when set, also relays the decision as a GitLab dotenv report (pkg/cirelay).
	DotenvPath string
	// HeadSHA is the Git revision checked out for the run (the receipt's input_head_sha);
	// default $GITHUB_SHA. Empty or not a Git object ID: omitted.
	HeadSHA string
	// TreeDir is where the host tree and the agent's sandbox copy are created (internal/snapshot/stage Base);
	// default $RUNNER_TEMP, else the OS temporary directory. StateDir is the host-private stage
	// state (the retained index digest); default $RUNNER_TEMP/forgectx-stage, else
	// stage.DefaultStateDir(). Both must lie outside the workspace.
	TreeDir, StateDir string
	// ArtifactDirs are retained run-output or artifact directories (uploaded after the job):
	// no snapshot tree may be placed inside one. The workspace is always refused.
	ArtifactDirs []string
	// Replay, when set, is a cassette directory (docs/cassettes.md) the run reads the forge
	// from instead of the network: offline, no token needed, the recorded forge and API URL as
	// defaults. Its comment writes go to Posts (docs/run.md, "Trying a run offline").
	Replay string
	// Posts receives a replayed run's comment writes, one JSON Post per line (nil discards).
	// Unused by a live run.
	Posts io.Writer
	// Immutability selects how the agent's copy is made read-only (internal/snapshot/stage): auto (default),
	// ownership (forgectx runs as root, the agent as AgentUID:AgentGID) or bind-mount. When it
	// cannot be enforced the run fails before the agent starts.
	Immutability stage.Mode
	// AgentUID and AgentGID are the unprivileged identity the agent runs as in ownership mode.
	AgentUID, AgentGID int

	// Getenv reads one variable (default os.Getenv).
	Getenv func(string) string

	// PhaseHook, when set, is called at the start of each lifecycle phase with the run's
	// context and the phase's name (scavenge, status, snapshot, pre-script, relay, verify,
	// agent, post-script), before the phase does its work. It is a test seam only: the e2e
	// tests hold a run inside a phase until they have signalled it. `forgectx run` never sets
	// it (no flag or variable reaches it), so it is inert in production.
	PhaseHook func(ctx context.Context, phase string)
	// FinishTimeout bounds the status update and receipt after a cancellation or time-out
	// (default 5s: GitHub sends SIGKILL about 10s after cancelling).
	FinishTimeout time.Duration
}

// Statuses of a run (the receipt's status vocabulary): the lifecycle's.
const (
	StatusSuccess   = lifecycle.StatusSuccess
	StatusFailure   = lifecycle.StatusFailure
	StatusSkipped   = lifecycle.StatusSkipped
	StatusCancelled = lifecycle.StatusCancelled
	StatusTimedOut  = lifecycle.StatusTimedOut
)

// Result is what a run did: counts, codes and digests only.
type Result struct {
	Status string
	// Detail is the one-line diagnostic (failure), reason (skip) or "".
	Detail string
	// Decision is "proceed", "skip" or "" when the pre-script decision was not reached.
	Decision string
	// InputRevision is the receipt's input_revision; ReceiptID its id.
	InputRevision string
	ReceiptID     string
	// ReceiptPosted and StatusPosted say whether the forge writes succeeded.
	ReceiptPosted bool
	StatusPosted  bool
	AgentRan      bool
	// ContextDir is the verified read-only copy the agent was given ("" when it was not
	// launched); it no longer exists when Run returns. OutputsRelayed says whether status and
	// context-dir reached every relay target.
	ContextDir     string
	OutputsRelayed bool
	AgentDuration  time.Duration
	Summary        *snapshot.Summary
	// Cleanup lists cleanup failures (paths are run-private; no content).
	Cleanup []string
	// Scavenged counts abandoned run directories removed at start.
	Scavenged int
}

// ExitCode maps the outcome to the documented exit code.
func (r *Result) ExitCode() int {
	switch r.Status {
	case StatusSuccess, StatusSkipped:
		return ExitOK
	}
	return ExitFailed
}

// ConfigError is a configuration error detected before anything was posted: exit 2. It is
// forge.ConfigError (field and rule), the one type the providers' refusals also use.
type ConfigError = forge.ConfigError

// IsConfigError reports whether err is (or wraps) a *ConfigError (this package's or a
// provider's refusal of a flag or CI variable) or a harness validation error.
func IsConfigError(err error) bool {
	var c *ConfigError
	var h *harness.Error
	return errors.As(err, &c) || errors.As(err, &h)
}

// RunError is a run that ended failed, cancelled or timed out (exit 1). The status comment and
// receipt were attempted before it was returned.
type RunError struct {
	Status string
	Detail string
}

func (e *RunError) Error() string {
	if e.Detail == "" {
		return "run " + e.Status
	}
	return fmt.Sprintf("run %s: %s", e.Status, e.Detail)
}
