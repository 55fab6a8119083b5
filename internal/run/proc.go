package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/platform/procgroup"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/pkg/prescript"
)

// procResult is how a host process (agent or post-script) ended.
type procResult struct {
	ExitCode  int  // -1 when it did not exit normally
	TimedOut  bool // its own timeout, or the run's total timeout, ended it
	Cancelled bool // the run was cancelled (SIGTERM/SIGINT to forgectx) while it ran
	StartErr  error
	// CheckErr is the privilege check's refusal (procgroup.CheckProcess); the process was killed.
	CheckErr error
	Duration time.Duration
}

func (p procResult) ok() bool {
	return p.StartErr == nil && p.CheckErr == nil && !p.TimedOut && !p.Cancelled && p.ExitCode == 0
}

// procSpec is one host process to run.
type procSpec struct {
	argv, env      []string
	dir            string
	stdout, stderr io.Writer
	timeout, grace time.Duration
	// identity is the agent's user when forgectx drops to it (ownership mode, or root with an
	// agent UID); nil runs as this process's user.
	identity *procgroup.Identity
	// unprivileged checks the started process (the agent's privileges); a refusal kills it.
	unprivileged bool
}

// runProc runs the process with exactly its env in its own process group (procgroup.Run).
// When ctx ends (cancellation) or the timeout passes, the group receives SIGTERM, then SIGKILL
// after grace; stragglers of the group are killed once the leader is reaped. parent's end is
// a cancellation (or, if its deadline passed, a time-out); the timeout is the process's own.
func runProc(parent context.Context, p procSpec) procResult {
	r := procgroup.Run(parent, procgroup.Spec{Argv: p.argv, Env: p.env, Dir: p.dir, Stdout: p.stdout, Stderr: p.stderr,
		Identity: p.identity, Unprivileged: p.unprivileged, Timeout: p.timeout, Grace: p.grace, WaitDelay: p.grace})
	res := procResult{ExitCode: r.ExitCode, Duration: r.Duration, CheckErr: r.CheckErr}
	switch {
	case r.StartErr != nil:
		// Keep why (not found on PATH, not executable, interpreter missing) for the status.
		res.StartErr = prescript.DescribeStart(p.argv[0], p.dir, r.StartErr)
		return res
	case r.Refused != nil:
		// The agent's pre-start check passed and the executable changed since: still refused.
		res.CheckErr = r.Refused
		return res
	}
	if r.CtxErr != nil && (res.ExitCode != 0 || errors.Is(r.WaitErr, exec.ErrWaitDelay)) {
		switch {
		case parent.Err() != nil && !errors.Is(parent.Err(), context.DeadlineExceeded):
			res.Cancelled = true
		default:
			res.TimedOut = true
		}
	}
	return res
}

// checkAgentExecutable resolves the agent program like exec does and refuses one that could
// regain privileges at exec (procgroup.CheckExecutable, which procgroup.Run applies again). A program that cannot be resolved at all is a
// *prescript.StartError (not found on PATH, not executable), not a privilege refusal.
func checkAgentExecutable(argv0 string, _ []string) error {
	path, err := exec.LookPath(argv0)
	if err != nil {
		return prescript.DescribeStart(argv0, "", err)
	}
	return procgroup.CheckExecutable(path)
}

// agentExecutableProblem is the status detail for checkAgentExecutable's refusal.
func agentExecutableProblem(err error) string {
	var se *prescript.StartError
	if errors.As(err, &se) {
		return "the agent could not be started: " + se.Reason
	}
	return "the agent executable could regain privileges (set-ID bit or file capabilities); the agent was not started"
}

// pickEnv returns NAME=value for each listed name set in environ (in the listed order).
func pickEnv(environ []string, names []string) []string {
	have := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			have[k] = v
		}
	}
	var out []string
	for _, n := range names {
		if v, ok := have[n]; ok {
			out = append(out, n+"="+v)
		}
	}
	return out
}

// withheldNames are the variables whose values the agent never receives: the token variable,
// the registered secrets, and every variable of environ with a forge credential name.
func withheldNames(environ []string, tokenEnv string, secrets []string) []string {
	names := append([]string{tokenEnv}, secrets...)
	for _, kv := range environ {
		if k, _, ok := strings.Cut(kv, "="); ok && harness.IsForgeCredentialName(k) {
			names = append(names, k)
		}
	}
	return names
}

// pickValues returns the non-empty values of the named variables and, for a multi-line value
// (a private key), each of its lines of at least filter.MinSecretEnvBytes, so a variable
// carrying one line of it is caught too.
func pickValues(environ []string, names []string) []string {
	var out []string
	for _, kv := range pickEnv(environ, names) {
		_, v, _ := strings.Cut(kv, "=")
		if v == "" {
			continue
		}
		out = append(out, v)
		if strings.ContainsAny(v, "\r\n") {
			for _, line := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
				if line = strings.TrimSpace(line); len(line) >= filter.MinSecretEnvBytes {
					out = append(out, line)
				}
			}
		}
	}
	return out
}

// scrub drops every entry whose value contains one of the withheld literal values (a forge
// token or a registered secret that some harness-listed variable happens to carry).
func scrub(env []string, withheld []string) ([]string, int) {
	var out []string
	dropped := 0
	for _, kv := range env {
		_, v, _ := strings.Cut(kv, "=")
		bad := false
		for _, w := range withheld {
			// Short values are compared whole: containment would match ordinary text.
			if w != "" && (v == w || len(w) >= filter.MinSecretEnvBytes && strings.Contains(v, w)) {
				bad = true
				break
			}
		}
		if bad {
			dropped++
			continue
		}
		out = append(out, kv)
	}
	return out, dropped
}

// lastLine tees a stream to the job log and keeps its last non-empty line (at most max bytes
// of it) for a one-line diagnostic.
type lastLine struct {
	mu   sync.Mutex
	to   io.Writer
	max  int
	cur  []byte
	last string
}

func newLastLine(to io.Writer, max int) *lastLine { return &lastLine{to: to, max: max} }

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.to != nil {
		_, _ = l.to.Write(p) // the job log is best effort; the process must not die of it
	}
	for _, b := range p {
		if b == '\n' {
			l.flush()
			continue
		}
		if len(l.cur) < l.max {
			l.cur = append(l.cur, b)
		}
	}
	return len(p), nil
}

func (l *lastLine) flush() {
	if s := strings.TrimSpace(string(l.cur)); s != "" {
		l.last = s
	}
	l.cur = l.cur[:0]
}

// Last returns the last non-empty line seen.
func (l *lastLine) Last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flush()
	return l.last
}

// describeExit is the one-line diagnostic of a failed host process: codes only, never output.
func describeExit(what string, p procResult, timeout time.Duration) string {
	switch {
	case p.StartErr != nil:
		var se *prescript.StartError
		if errors.As(p.StartErr, &se) {
			return fmt.Sprintf("%s could not be started: %s", what, se.Reason)
		}
		return fmt.Sprintf("%s could not be started", what)
	case p.Cancelled:
		return fmt.Sprintf("%s was stopped: the run was cancelled", what)
	case p.TimedOut:
		return fmt.Sprintf("%s timed out after %s", what, timeout)
	case p.ExitCode < 0:
		return fmt.Sprintf("%s was killed by a signal", what)
	}
	switch p.ExitCode {
	case 126, 127:
		// The shells' codes for "found but not executable" and "not found": usually a
		// `bash -c` command or an `env` shebang whose program is not in the image.
		return fmt.Sprintf("%s exited with code %d (a shell's code for a command %s)", what, p.ExitCode,
			map[int]string{126: "that is not executable", 127: "not found on PATH"}[p.ExitCode])
	}
	return fmt.Sprintf("%s exited with code %d", what, p.ExitCode)
}
