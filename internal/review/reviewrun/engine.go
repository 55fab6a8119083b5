package reviewrun

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/forgectx/forgectx/internal/platform/procgroup"
)

// engineRun is how the one review engine process ended.
type engineRun struct {
	ExitCode int
	TimedOut bool
	Stopped  bool // cancelled by an interruption
	Err      error
}

// engineSpec is the one engine start: argv with exactly env in dir, bounded by timeout, as
// cred when forgectx runs as root (nil: as this process's user).
type engineSpec struct {
	argv, env      []string
	dir            string
	stdout, stderr io.Writer
	timeout, grace time.Duration
	cred           *syscall.Credential
}

// runEngine starts argv once in its own process group with exactly env, in dir, and waits
// for it within timeout (procgroup.Run). On cancellation or time-out the whole group gets
// SIGTERM, then SIGKILL after grace; after a normal exit the group is killed too, so a forked
// child cannot outlive the review and keep the MCP server's store open. With cred, the engine
// must hold no privilege, as forgectx run's agent: a set-ID or file-capability binary is not
// started, and a started engine with UID 0 or a write-overriding capability is killed.
func runEngine(ctx context.Context, sp engineSpec) engineRun {
	spec := procgroup.Spec{Argv: sp.argv, Env: sp.env, Dir: sp.dir, Stdout: sp.stdout, Stderr: sp.stderr,
		Timeout: sp.timeout, Grace: sp.grace,
		// The engine's own exit ends the run: a background child it left holding stdout or
		// stderr is killed with its group instead of keeping the wait busy until the timeout.
		KillGroupOnExit: true}
	if sp.cred != nil {
		spec.Identity, spec.Unprivileged = &procgroup.Identity{UID: sp.cred.Uid, GID: sp.cred.Gid}, true
	}
	r := procgroup.Run(ctx, spec)
	for _, err := range []error{r.StartErr, r.Refused, r.CheckErr} {
		if err != nil {
			return engineRun{ExitCode: -1, Err: err}
		}
	}
	e := engineRun{ExitCode: r.ExitCode}
	switch {
	case errors.Is(r.CtxErr, context.DeadlineExceeded):
		e.TimedOut = true
	case r.CtxErr != nil:
		e.Stopped = true
	}
	var ee *exec.ExitError
	if r.WaitErr != nil && !errors.As(r.WaitErr, &ee) {
		e.Err = r.WaitErr
	}
	return e
}
