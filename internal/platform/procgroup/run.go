package procgroup

import (
	"context"
	"io"
	"os"
	"os/exec"
	"time"
)

// Identity is the user and group a child runs as when forgectx runs as root. The child gets no
// supplementary groups, so the kernel clears every capability at execve.
type Identity struct {
	UID, GID uint32
}

// Spec is one child process to run.
type Spec struct {
	// Argv is the program and its arguments; Argv[0] is resolved on this process's PATH
	// like exec.Command does.
	Argv []string
	// Env is exactly the child's environment (nil: this process's, as with exec.Cmd).
	Env []string
	// Dir is the working directory; empty means this process's.
	Dir string
	// Stdin, Stdout and Stderr are the child's streams; nil means the null device.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Identity, when set, is the user the child runs as. Its executable is then refused
	// before the start when it could regain privileges at exec (CheckExecutable): a set-ID
	// bit or file capabilities would hand back what the identity drops.
	Identity *Identity
	// Unprivileged requires the started child to hold no privilege (CheckProcess: no UID 0,
	// no write-overriding capability); a child that does is killed and Result.CheckErr set.
	Unprivileged bool
	// Timeout bounds the child on top of ctx; zero or less means ctx alone.
	Timeout time.Duration
	// Grace is how long the group has between SIGTERM and SIGKILL once ctx ends or the
	// timeout passes; zero or less sends SIGKILL at once.
	Grace time.Duration
	// WaitDelay is how long to wait for the streams to close after the child exits (a
	// background child may hold them open) before closing them; zero waits for them.
	WaitDelay time.Duration
	// KillGroupOnExit kills the group as soon as the child itself exits (where the platform
	// can observe that without reaping it), so a background child holding a stream open
	// does not keep the wait busy.
	KillGroupOnExit bool
}

// Result is how the child ended.
type Result struct {
	// State is the reaped child's state; nil when it never started.
	State *os.ProcessState
	// ExitCode is State's exit code: -1 when the child did not start or did not exit normally.
	ExitCode int
	// StartErr is why the child could not be started (the raw exec error: not found, not
	// executable, interpreter missing).
	StartErr error
	// Refused is CheckExecutable's refusal of the program (with Identity); nothing started.
	Refused error
	// CheckErr is CheckProcess's refusal of the started child (with Unprivileged); the
	// child's group was killed.
	CheckErr error
	// WaitErr is exec's Wait error: an *exec.ExitError, exec.ErrWaitDelay, or a stream error.
	WaitErr error
	// Stopped reports that ctx ended or the timeout passed before the child was reaped, and
	// its group was signalled.
	Stopped bool
	// CtxErr is the error of ctx bounded by Timeout once the child was reaped:
	// context.DeadlineExceeded for a time-out, context.Canceled for a cancellation.
	CtxErr error
	// Duration runs from the start to the reaping.
	Duration time.Duration
}

// Run starts s.Argv once in its own process group and waits for it. When ctx ends or
// s.Timeout passes, the group receives SIGTERM, then SIGKILL after s.Grace; once the child is
// reaped the group is killed again, so a straggler it left behind does not outlive it.
func Run(ctx context.Context, s Spec) Result {
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	res := Result{ExitCode: -1}
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		res.StartErr = exec.ErrNotFound
		return res
	}
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Env, s.Dir, s.Stdin, s.Stdout, s.Stderr
	cmd.WaitDelay = s.WaitDelay
	setGroup(cmd)
	if s.Identity != nil && cmd.Err == nil {
		if err := CheckExecutable(cmd.Path); err != nil {
			res.Refused = err
			return res
		}
		if err := setIdentity(cmd, s.Identity); err != nil {
			res.StartErr = err
			return res
		}
	}
	if err := ctx.Err(); err != nil && cmd.Err == nil {
		// As exec.CommandContext: a context that already ended starts nothing.
		res.StartErr, res.CtxErr = err, err
		return res
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		res.StartErr = err
		return res
	}
	if s.KillGroupOnExit {
		killWhenLeaderExits(cmd)
	}
	if s.Unprivileged {
		if err := CheckProcess(cmd.Process.Pid); err != nil {
			res.CheckErr = err
			_ = kill(cmd)
		}
	}
	res.WaitErr, res.Stopped = wait(ctx, cmd, s.Grace)
	res.Duration = time.Since(start)
	_ = kill(cmd)
	res.State, res.ExitCode, res.CtxErr = cmd.ProcessState, cmd.ProcessState.ExitCode(), ctx.Err()
	return res
}

// wait reaps cmd. When ctx ends first the group gets SIGTERM (terminate), then SIGKILL after
// grace unless the child is reaped before; stopped reports that.
func wait(ctx context.Context, cmd *exec.Cmd, grace time.Duration) (err error, stopped bool) {
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err = <-waited:
		return err, false
	case <-ctx.Done():
	}
	if grace <= 0 {
		_ = kill(cmd)
		return <-waited, true
	}
	_ = terminate(cmd)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err = <-waited:
	case <-t.C:
		_ = kill(cmd)
		err = <-waited
	}
	return err, true
}
