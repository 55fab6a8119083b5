package reviewrun

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/forgectx/forgectx/internal/platform/procgroup"
	"github.com/forgectx/forgectx/internal/snapshot/stage"
)

// interruptGuard turns SIGTERM and SIGINT into a cancellation of the review (acquisition,
// engine) instead of process termination, so that cleanup and the atomic result projection
// always run to their end: a completed raw result can never replace the validated
// projection/receipt boundary, and no session artifact outlives an interruption. The run ends
// (without posting) once both are done.
type interruptGuard struct {
	ch     chan os.Signal
	done   chan struct{}
	cancel context.CancelFunc
	mu     sync.Mutex
	sig    os.Signal
}

func guardSignals(cancel context.CancelFunc) *interruptGuard {
	g := &interruptGuard{ch: make(chan os.Signal, 2), done: make(chan struct{}), cancel: cancel}
	signal.Notify(g.ch, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for {
			select {
			case s := <-g.ch:
				g.mu.Lock()
				if g.sig == nil {
					g.sig = s
				}
				g.mu.Unlock()
				g.cancel()
			case <-g.done:
				return
			}
		}
	}()
	return g
}

// interrupted returns the first signal received, or nil.
func (g *interruptGuard) interrupted() os.Signal {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sig
}

// stop restores the default signal disposition (after cleanup and projection).
func (g *interruptGuard) stop() {
	signal.Stop(g.ch)
	close(g.done)
}

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
// for it within timeout. On cancellation or time-out the whole group gets SIGTERM, then
// SIGKILL after grace; after a normal exit the group is killed too, so a forked child cannot
// outlive the review and keep the MCP server's store open.
func runEngine(ctx context.Context, sp engineSpec) engineRun {
	ctx, cancel := context.WithTimeout(ctx, sp.timeout)
	defer cancel()
	argv := sp.argv
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr, cmd.Stdin = sp.env, sp.dir, sp.stdout, sp.stderr, nil
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	procgroup.Set(cmd)
	procgroup.KillWhenLeaderExits(cmd)
	if cmd.Err != nil {
		// The engine was not found: report that, not a failed check of a path that is not one.
		return engineRun{ExitCode: -1, Err: cmd.Err}
	}
	if sp.cred != nil {
		// A set-ID or file-capability binary would hand back what the credential drops.
		if err := stage.CheckAgentExecutable(cmd.Path); err != nil {
			return engineRun{ExitCode: -1, Err: err}
		}
		cmd.SysProcAttr.Credential = sp.cred
	}
	if err := cmd.Start(); err != nil {
		return engineRun{ExitCode: -1, Err: err}
	}
	if sp.cred != nil {
		// As forgectx run does: the started engine must hold no UID 0 and no write-overriding
		// capability (its /proc status, readable until it is reaped); otherwise it is killed.
		if err := stage.CheckAgentProcess(cmd.Process.Pid); err != nil {
			_ = procgroup.Kill(cmd)
			_ = cmd.Wait()
			return engineRun{ExitCode: -1, Err: err}
		}
	}
	grace := sp.grace
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-ctx.Done():
		_ = procgroup.Signal(cmd, syscall.SIGTERM)
		select {
		case err = <-waited:
		case <-time.After(grace):
			_ = procgroup.Kill(cmd)
			err = <-waited
		}
	}
	_ = procgroup.Kill(cmd)
	r := engineRun{ExitCode: cmd.ProcessState.ExitCode()}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.TimedOut = true
	case ctx.Err() != nil:
		r.Stopped = true
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		r.Err = err
	}
	return r
}
